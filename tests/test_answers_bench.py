"""``rag bench --section answers`` on a two-article SQuAD-format file: the golden set it
builds, and every figure and target it prints, through the real pipeline, store and model."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from backend.benchmarks import answers, squad
from backend.benchmarks.runner import RULES_CONFIG
from backend.common.config import DEFAULT_CONFIG
from backend.core.golden import load_golden_set

PARAGRAPHS = {
    "Harvard Crimson": ["The Harvard Crimson competes in 42 intercollegiate sports in the NCAA Division I Ivy League. "
                        "The Crimson play their home games at Harvard Stadium, which opened in 1903."],
    "Solar furnace": ["The solar furnace at Odeillo in France was completed in 1970. It uses 63 flat mirrors to "
                      "concentrate sunlight onto a target and reaches 3,500 degrees Celsius."],
}
QUESTIONS = {
    "Harvard Crimson": [("How many sports does the Harvard Crimson compete in?", "42"),
                        ("When did Harvard Stadium open?", "1903"),
                        ("How many sports does Yale compete in?", None),
                        ("When did Yale Bowl open?", None)],
    "Solar furnace": [("When was the Odeillo solar furnace completed?", "1970"),
                      ("How many flat mirrors does the furnace use?", "63"),
                      ("How many curved mirrors does the furnace use?", None),
                      ("What temperature does the Mont-Louis furnace reach?", None)],
}


def squad_file(path: Path) -> Path:
    data = []
    for title, paragraphs in PARAGRAPHS.items():
        qas = [{"id": f"{title[:3]}{i}", "question": q, "is_impossible": a is None,
                "answers": [] if a is None else [{"text": a, "answer_start": paragraphs[0].index(a)}]}
               for i, (q, a) in enumerate(QUESTIONS[title])]
        data.append({"title": title, "paragraphs": [{"context": paragraphs[0], "qas": qas}]})
    path.write_text(json.dumps({"version": "v2.0", "data": data}))
    return path


def test_the_squad_set_is_built_in_the_product_s_formats(tmp_path: Path) -> None:
    built = squad.build(squad_file(tmp_path / "s.json"), tmp_path / "out")
    assert (built.articles, built.answerable, built.unanswerable) == (2, 4, 4)
    golden = load_golden_set(built.golden)
    by_query = {q.query: q for q in golden.queries}
    yale = by_query["How many sports does Yale compete in?"]
    assert yale.expected_mode == "fallback" and not yale.expected_sources and yale.group == "squad-01"
    crimson = by_query["How many sports does the Harvard Crimson compete in?"]
    assert crimson.expected_mode == "rag" and crimson.must_contain == ("42",)
    assert crimson.expected_sources == {"squad-01": 1.0} and crimson.domain == "squad"
    doc = (tmp_path / "out" / json.loads(built.manifest.read_text().splitlines()[0])["path"]).read_text()
    assert doc.startswith("# Harvard Crimson\n\n")


def test_the_answers_section_prints_every_figure_and_target(tmp_path: Path, embedder: Any) -> None:
    section = answers.measure(RULES_CONFIG, embedder, tmp_path, source=squad_file(tmp_path / "s.json"), folds=2)
    names = [t[0] for t in section.targets]
    for wanted in ("off-topic (tuning set) answered fallback, default (evidence)",
                   "off-topic held out answered fallback, default (evidence)", "squad ROC AUC (answerability)",
                   "squad unanswerable answered rag (answerability)", "shipped sets mode accuracy, answerability held out",
                   "/chat p50: default / before"):
        assert wanted in names
    figures = section.figures
    assert figures["off-topic (tuning set), before"].startswith("rag ")
    # both off-topic sets, each with its own 100 % fallback target: tuned on one, reported on the other
    for name in ("off-topic (tuning set)", "off-topic held out"):
        assert "fallback" in figures[f"{name}, default (evidence)"] and "fallback" in figures[f"{name}, answerability"]
    assert set(figures["answerability block for a profile"]["weights"]) >= {"dense", "conflict", "unknown_words"}
    assert "MET" in section.render() or "MISSED" in section.render()


def test_the_answer_reader_section_prints_its_targets_side_by_side(tmp_path: Path, embedder: Any,
                                                                    monkeypatch: Any) -> None:
    """``rag bench --section answers`` (issue 42) on small sets: the shipped reader profile and the
    rules of issue 29 through the real chat path, the SQuAD articles the reader's card holds out, every target."""
    from backend.benchmarks import answer_decision as ad

    small = tmp_path / "small"
    small.mkdir()
    for name, rows in (("sample.jsonl", [
        {"id": "a", "query": "How many days of annual leave do full-time employees get per year?",
         "expected_sources": {"annual-leave": 1}, "expected_mode": "rag", "must_contain": ["25 days"]},
        {"id": "b", "query": "What is the capital of Peru?", "expected_sources": {}, "expected_mode": "fallback",
         "must_contain": []}]),
            ("off.jsonl", [{"id": "o", "query": "Write me a poem about cats", "expected_sources": {},
                            "expected_mode": "fallback", "must_contain": []}])):
        (small / name).write_text("".join(json.dumps(r) + "\n" for r in rows))
    (small / "blind.jsonl").write_text(json.dumps(
        {"id": "b-1", "domain": None, "query": "How many days off do full-timers get a year?", "kind": "paraphrase",
         "expected_mode": "rag", "expected_sources": {"annual-leave": 1}, "must_contain": ["25 days"], "note": ""})
        + "\n" + json.dumps({"id": "b-2", "domain": None, "query": "Who won the 1998 World Cup?", "kind": "offtopic",
                             "expected_mode": "fallback", "expected_sources": {}, "must_contain": [], "note": ""}) + "\n")
    monkeypatch.setattr(ad, "SHIPPED", (str(small / "sample.jsonl"),))
    monkeypatch.setattr(ad, "OFFTOPIC", str(small / "off.jsonl"))
    monkeypatch.setattr(ad, "OFFTOPIC_HELDOUT", str(small / "off.jsonl"))
    monkeypatch.setattr(ad, "BLIND_SETS", {"blind2": (str(small / "blind.jsonl"), str(small / "none.jsonl"))})
    monkeypatch.setattr(ad, "FOLLOWUPS", str(small / "none.jsonl"))
    monkeypatch.setattr(ad, "BLIND_DOMAINS", {})
    source = squad_file(tmp_path / "s.json")
    data = json.loads(source.read_text())
    data["data"][1]["title"] = "Solar energy"  # an article the committed reader's card holds out
    source.write_text(json.dumps(data))
    section = ad.measure(DEFAULT_CONFIG, embedder, tmp_path / "work", source=source)
    names = [t[0] for t in section.targets]
    for wanted in ("squad held out: ROC AUC of the decision score", "squad held out: unanswerable answered rag",
                   "blind2: answerable answered with the expected fact", "blind2: unanswerable or off-topic answered rag",
                   "shipped golden sets: mode accuracy (thresholds in-sample)", "/chat p50 (ms)", "/chat p95 (ms)",
                   "first streamed token p50 (ms)"):
        assert wanted in names, names
    figures = section.figures
    assert figures["squad held out, reader"].startswith("4 questions (2 unanswerable)")
    assert "answerable 1:" in figures["blind2 sets, reader"] and "answerable 1:" in figures["blind2 sets, rules"]
    assert figures["shipped golden sets, rules"].startswith("2 questions")
    assert "MET" in section.render() or "MISSED" in section.render()
