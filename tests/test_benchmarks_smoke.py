"""``rag bench`` runs end to end on a small collection in the CISI file format.

Figures are never asserted against times (no timed unit tests); this checks that
each section runs the real pipeline, store and model, reports every figure the
docs quote, and evaluates its targets. The CISI parser is checked on the same
files, so the full benchmark cannot silently read an empty collection.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from backend.benchmarks import runner
from backend.benchmarks.cisi import load_documents, load_qrels, load_queries
from backend.common.config import DEFAULT_CONFIG
from tests.ingest.helpers import TOPICS


@pytest.fixture(scope="module")
def collection(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("mini-cisi")
    docs, queries, rels = [], [], []
    for n in range(1, 33):
        topic = TOPICS[n % len(TOPICS)]
        docs.append(f".I {n}\n.T\nNotes on {topic} number {n}\n.A\nAuthor, A.\n.W\n"
                    f"   The {topic} policy explains rules for {topic} in\nsection {n} of the staff handbook.\n.X\n{n}\t5\t{n}")
    for q, topic in enumerate(TOPICS[:4], start=1):
        queries.append(f".I {q}\n.W\nWhat are the rules for {topic}?\nExplain the {topic} policy.")
        rels += [f"{q:>6} {n:>6}\t0\t0.000000" for n in range(1, 33) if TOPICS[n % len(TOPICS)] == topic]
    (folder / "CISI.ALL").write_text("\n".join(docs) + "\n", encoding="latin-1")
    (folder / "CISI.QRY").write_text("\n".join(queries) + "\n", encoding="latin-1")
    (folder / "CISI.REL").write_text("\n".join(rels) + "\n", encoding="latin-1")
    return folder


def test_parser_reads_titles_abstracts_queries_and_judgements(collection: Path) -> None:
    documents, queries, qrels = load_documents(collection), load_queries(collection), load_qrels(collection)
    assert len(documents) == 32 and len(queries) == 4
    assert documents["3"] == ("Notes on onboarding number 3\nThe onboarding policy explains rules for onboarding in "
                              "section 3 of the staff handbook.")
    assert queries["1"] == "What are the rules for vacation? Explain the vacation policy."
    assert qrels["1"] == {"16", "32"}


def test_every_section_but_http_reports_its_figures_and_targets(collection: Path) -> None:
    lines: list[str] = []
    sections = runner.run(collection, (500, 1000), ("ingest", "quality", "latency"), DEFAULT_CONFIG,
                          emit=lines.append)
    by_title = {s.title.split(" (")[0]: s for s in sections}
    assert set(by_title) == {"Ingestion overhead", "Retrieval quality", "Query latency and scale"}

    ingest = by_title["Ingestion overhead"]
    assert ingest.figures["chunks ingested"] == 32
    assert ingest.figures["bare embedder chunks/s (batches of 64)"] > 0
    assert ingest.figures["sanitizer alone chunks/s"] > 0
    assert [t[0] for t in ingest.targets] == ["pipeline/best bare ratio, sanitize off",
                                              "redact/off ingest ratio, worker process"]

    quality = by_title["Retrieval quality"]
    assert quality.figures["judged queries"] == 4
    for name in ("baseline BM25 (bm25s, English stop words)", "baseline bare all-MiniLM-L6-v2 exact cosine",
                 "product dense", "product lexical", "product fusion"):
        assert 0.0 < quality.figures[name] <= 1.0, name
    assert [t[0] for t in quality.targets[3:5]] == ["chosen settings, held-out half nDCG@10 (issue 21 target)",
                                                    "chosen settings, all judged nDCG@10 (issue 21 target)"]
    assert 0.0 < quality.figures["best option nDCG@10 (chosen on the judged queries; reference)"] <= 1.0
    # settings are chosen on the odd query ids (1, 3) and judged on the even ones (2, 4)
    assert quality.figures["held-out split"].startswith("tune on 2 odd query ids, judge on 2 even ids")
    assert "wins" in quality.figures["chosen: held-out nDCG@10 (plain fusion)"]
    assert "x)" in quality.figures["cost ms/query, plain fusion vs chosen (median of interleaved runs)"]
    for label in ("fusion rrf d1/l1 depth100", "fusion score d0.7/l0.3 depth100 rerank sentences@20",
                  "fusion rrf d1/l1 depth100 headers"):
        assert "wins" in quality.figures[f"option {label}"], label
    assert quality.figures["option fusion rrf d1/l1 depth100"].startswith(f"{quality.figures['product fusion']:.4f}")
    # issue 20: every strategy on a version enriched offline (questions and summaries), with its cost
    for strategy in ("dense", "lexical", "fusion", "hyde", "hyde_fusion", "hierarchical", "enriched_fusion"):
        ndcg, recall, ms = (float(x) for x in
                            quality.figures[f"enriched (extractive) {strategy} nDCG@10 / recall@10 / ms per query"]
                            .split(" / "))
        assert 0.0 <= ndcg <= 1.0 and 0.0 <= recall <= 1.0 and ms > 0, strategy
    assert "product fusion recall@10" in quality.figures
    questions, summaries = (int(x) for x in quality.figures["enriched (extractive) questions / summaries stored"]
                            .split(" / "))
    assert questions >= 32 and summaries >= 32  # at least one question and one summary per document
    assert quality.figures["enriched (extractive) LLM calls per 1k chunks"] == 0.0
    assert quality.figures["enriched (extractive) texts embedded per chunk"] > 1
    assert quality.targets[-1][0].startswith("best enriched strategy (")

    latency = by_title["Query latency and scale"]
    for size in ("    500", "   1000"):
        assert latency.figures[f"{size} chunks: store/NumPy p50 ratio"] > 0
        assert "p99=" in latency.figures[f"{size} chunks: filtered search ms (1/13 match)"]
        assert latency.figures[f"{size} chunks: store size MB"] > 0
    assert "p50 growth 500 -> 1000 (x2 data)" in latency.figures
    assert "p50=" in latency.figures["   1000 chunks: GET /search ms, chosen"]
    assert latency.figures["   1000 chunks: /search p50 chosen / plain fusion"] > 0
    assert "1000 chunks: /search p50 chosen / default (dense)" in [t[0] for t in latency.targets]
    assert lines[0].startswith("machine: ") and lines[-1].startswith("total seconds: ")


def test_embed_section_compares_the_three_local_runtimes_on_the_same_texts(collection: Path) -> None:
    [section] = runner.run(collection, (), ("embed",), DEFAULT_CONFIG, emit=lambda line: None)
    figures = section.figures
    assert figures["texts (CISI abstracts), calls of"] == "32, 64"
    for name in ("torch fp32", "onnx fp32", "onnx int8"):
        assert figures[f"{name}: bare chunks/s"] > 0
        assert figures[f"{name}: pipeline chunks/s (3x300 docs, sanitize off)"] > 0
        assert figures[f"{name}: peak RSS MB (own process, one call)"] > 100
        assert 0.0 < figures[f"{name}: CISI nDCG@10 (exact cosine)"] <= 1.0
        for kind in ("CISI query ms p50 / p95", "chat question ms p50 / p95 (interleaved)",
                     "chat question ms p50 / p95 (own process)"):
            p50, p95 = (float(x) for x in figures[f"{name}: {kind}"].split(" / "))
            assert 0 < p50 <= p95
    mean, low = (float(x) for x in figures["onnx fp32: cosine vs torch fp32 mean / min"].split(" (")[0].split(" / "))
    assert low > 0.9999 and mean >= low
    assert figures["onnx int8: stamp"].endswith("@onnx-int8")
    assert [t[0] for t in section.targets] == ["onnx int8 pipeline / torch fp32 pipeline chunks/s",
                                               "onnx int8 single chat question p50 ms (own process)",
                                               "onnx int8 |nDCG@10 - torch fp32|"]


def test_tune_on_a_cisi_folder_measures_headers_and_applies_nothing(collection: Path) -> None:
    import json

    from click.testing import CliRunner

    from backend.cli.main import cli

    result = CliRunner().invoke(cli, ["tune", "--cisi", str(collection), "--rerank-n", "5", "--json"],
                                catch_exceptions=False)
    assert result.exit_code == 0, result.output
    body = json.loads(result.stdout)
    labels = {r["label"]: r for r in body["results"]}
    assert body["queries"] == 4 and body["applied"] is False
    assert {"dense headers", "fusion rrf d1/l1 depth100", "fusion score d0.7/l0.3 depth100 rerank sentences@5"} <= \
        set(labels)
    assert all(0.0 < r["ndcg_at_10"] <= 1.0 for r in body["results"])
    assert "chunk_headers" in body["suggested_config"]


def test_scale_section_times_search_end_to_end_with_the_index_and_exact(embedder: Any, settings: Any) -> None:
    """Issue 33: GET /search (dense) on the real app, index on and off, and the 1.5x target
    (here against the smaller size run, as 1M is against 100k)."""
    from backend.benchmarks import ann_scale
    from backend.common.config import SqliteAnnSettings

    section = ann_scale.measure((1000, 2000), SqliteAnnSettings(min_vectors=500), queries=20, embedder=embedder,
                                app_settings=settings, http_queries=5, today=1000)
    for n in ("    1000", "    2000"):
        assert section.figures[f"{n} x 384: path used"] == "hnsw"
        for path in ("index", "exact"):
            assert section.figures[f"{n} x 384: /search dense p50 ms, {path}"] > 0
        assert section.figures[f"{n} x 384: /search dense path, index / exact"] == "hnsw / exact"
    names = [t[0] for t in section.targets]
    assert names[-1] == "e2e /search p50 at 2000 with index / at 1000 exact"
    assert section.targets[-1][1] > 0
    assert "/search: the real app" in section.notes[0]


def test_the_index_on_real_embeddings_serves_and_is_checked_against_exact(embedder: Any, collection: Path) -> None:
    """Issue 33: the largest real-embedding set (here the mini collection, the project's docs/ and no
    SQuAD file; the first 400 texts, the index built from 200 rows)."""
    from backend.benchmarks import ann_real
    from backend.common.config import SqliteAnnSettings

    corpus, questions = ann_real.texts(collection, Path("/nonexistent/squad.json"))
    assert len(corpus) > 1000 and len(set(corpus)) == len(corpus) and len(questions) == 4
    section = ann_real.measure(embedder, SqliteAnnSettings(min_vectors=200), collection,
                               Path("/nonexistent/squad.json"), limit=400)
    assert section.figures["path used"] == "hnsw"
    assert 0.9 <= section.figures["recall@10 vs exact"] <= 1.0
    assert [t[0] for t in section.targets][-1] == "real embeddings (400): the index served the searches"


def test_the_http_section_measures_v1_beside_chat_in_one_run(embedder: Any, tmp_path: Path) -> None:
    """A few requests per route: both answer without errors and the ratio target is reported."""
    from backend.benchmarks import serving

    section = serving.measure(DEFAULT_CONFIG, embedder, tmp_path, clients=2, per_client=3)
    assert (section.figures["requests"], section.figures["errors"]) == (6, 0)
    assert section.figures["/v1/chat/completions latency ms"].startswith("p50=")
    assert [(name, op, goal) for name, _, op, goal, _ in section.targets] == [
        ("p50 /v1/chat/completions / p50 /chat", "<=", 1.2)]


def test_kb_folder_section_serves_a_generated_folder_and_promotes_its_edit(embedder: Any, tmp_path: Path) -> None:
    """Issue 48: one run of `rag bench --section kb-folder` (the section makes ten)."""
    from backend.benchmarks import kb_folder

    edit = kb_folder.generate(tmp_path / "a", 4811)
    again = kb_folder.generate(tmp_path / "b", 4811)
    files = sorted(p.name for p in (tmp_path / "a").iterdir())
    assert files == ["contacts.html", "expenses.txt", "it-faq.html", "on-call-rota.txt", "onboarding-checklist.docx",
                     "price-list.pdf", "remote-work.md", "travel-policy.md"]
    assert edit == again and edit["old"] in (tmp_path / "a" / "travel-policy.md").read_text()
    assert (tmp_path / "a" / "travel-policy.md").read_text() == (tmp_path / "b" / "travel-policy.md").read_text()
    section = kb_folder.measure(DEFAULT_CONFIG, embedder, runs=1)
    assert section.figures["kb create served (runs)"] == "1 of 1"
    assert section.figures["edit promoted without --force (runs)"] == "1 of 1"
    assert [(t[0], t[1], t[4]) for t in section.targets] == [
        ("kb create ends served (share of runs)", 1.0, True), ("edit promoted without --force (share of runs)", 1.0, True)]


@pytest.mark.slow  # four syncs through the gate: minutes on 2 busy cores
def test_connectors_section_syncs_a_table_and_reports_its_targets(embedder: Any) -> None:
    """Issue 46: `rag bench --section connectors` on a small table (the section's default is 10,000 rows)."""
    from backend.benchmarks import connectors

    section = connectors.measure(DEFAULT_CONFIG, embedder, items=120)
    assert section.figures["initial sync: items / embedded / seconds"].startswith("120 / 120 / ")
    assert section.figures["no-change sync: status / embedded / seconds"].startswith("up_to_date / 0 / ")
    assert section.figures["readers of 120 items changed: permission-only / embedded / seconds"].startswith("120 / 0 / ")
    names = [t[0] for t in section.targets]
    assert names == ["no-change sync embeds nothing (embeddings)", "no-change sync seconds",
                     "1% changed: sync ingest / ingesting only those items",
                     "permission-only change embeds nothing (embeddings)"]
    by_name = {t[0]: t for t in section.targets}
    assert by_name["no-change sync embeds nothing (embeddings)"][4] and by_name[
        "permission-only change embeds nothing (embeddings)"][4]
