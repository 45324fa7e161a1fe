"""Golden-set parsing and the consistency of the shipped golden sets."""

from __future__ import annotations

from pathlib import Path

import pytest

from backend.common.errors import EvaluationError
from backend.core.golden import load_golden_set
from backend.ingest.manifest import read_manifest
from tests.conftest import REPO, make_settings


def _write(tmp_path: Path, *lines: str) -> Path:
    path = tmp_path / "golden.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_list_of_sources_becomes_grade_one_and_missing_id_becomes_line_number(tmp_path: Path) -> None:
    path = _write(tmp_path,
                  '{"query": "How many leave days?", "expected_sources": ["annual-leave", "company-holidays-2026"], "expected_mode": "rag"}',
                  "# a comment",
                  "",
                  '{"id": "g2", "query": "Capital of Australia?", "expected_mode": "fallback", "must_contain": ["x"]}')
    golden = load_golden_set(path)
    assert [q.id for q in golden.queries] == ["line1", "g2"]
    assert golden.queries[0].expected_sources == {"annual-leave": 1.0, "company-holidays-2026": 1.0}
    assert golden.queries[1].expected_sources == {}
    assert golden.queries[1].counts_for_retrieval is False
    assert golden.queries[1].must_contain == ("x",)
    assert len(golden.sha256) == 64


def test_graded_sources_keep_their_grades(tmp_path: Path) -> None:
    path = _write(tmp_path, '{"query": "q", "expected_sources": {"a": 3, "b": 1}, "expected_mode": "hybrid", "domain": "handbook"}')
    query = load_golden_set(path).queries[0]
    assert query.expected_sources == {"a": 3.0, "b": 1.0}
    assert query.domain == "handbook"


def test_every_bad_line_is_reported_with_file_and_line(tmp_path: Path) -> None:
    path = _write(tmp_path,
                  '{"query": "ok", "expected_sources": ["a"], "expected_mode": "rag"}',
                  '{"query": "no sources", "expected_mode": "rag"}',
                  '{"query": "bad mode", "expected_sources": ["a"], "expected_mode": "maybe"}',
                  "{not json",
                  '{"query": "zero grade", "expected_sources": {"a": 0}, "expected_mode": "rag"}',
                  '{"query": "typo", "expected_source": ["a"], "expected_mode": "fallback"}',
                  "[1, 2]")
    with pytest.raises(EvaluationError) as info:
        load_golden_set(path)
    problems = info.value.context["problems"]
    assert [p.split(": ", 1)[0] for p in problems] == [f"{path}:{n}" for n in (2, 3, 4, 5, 6, 7)]
    assert "only expected_mode 'fallback' may omit it" in problems[0]
    assert "expected_mode" in problems[1] and "'rag', 'hybrid' or 'fallback'" in problems[1]
    assert "invalid JSON" in problems[2]
    assert "grade of 'a' must be > 0" in problems[3]
    assert "expected_source: unknown key" in problems[4]
    assert "expected a JSON object, got list" in problems[5]


def test_duplicate_ids_are_rejected(tmp_path: Path) -> None:
    line = '{"id": "same", "query": "q", "expected_sources": ["a"], "expected_mode": "rag"}'
    path = _write(tmp_path, line, line)
    with pytest.raises(EvaluationError, match=r"golden.jsonl:2: id 'same' is already used at line 1"):
        load_golden_set(path)


def test_empty_and_missing_files_are_errors(tmp_path: Path) -> None:
    with pytest.raises(EvaluationError, match="holds no queries"):
        load_golden_set(_write(tmp_path, "# only a comment"))
    with pytest.raises(EvaluationError, match="cannot read golden set"):
        load_golden_set(tmp_path / "missing.jsonl")


@pytest.mark.parametrize(("golden", "manifest", "queries", "fallbacks"), [
    # wave 3 added unanswerable look-alikes (12 sample, 10 handbook), all expected fallback without sources
    ("sample_golden.jsonl", "sample.jsonl", 80, 18),
    ("handbook_golden.jsonl", "handbook.jsonl", 51, 13),
])
def test_shipped_golden_sets_only_name_documents_their_manifest_assigns(
    tmp_path: Path, golden: str, manifest: str, queries: int, fallbacks: int
) -> None:
    settings = make_settings(tmp_path)
    doc_ids = {e.doc_id for e in read_manifest(REPO / "manifests" / manifest, settings, strict=True).entries}
    gs = load_golden_set(REPO / "data" / "golden" / golden)
    assert len(gs) == queries
    assert sum(1 for q in gs.queries if q.expected_mode == "fallback" and not q.expected_sources) == fallbacks
    named = {d for q in gs.queries for d in q.expected_sources}
    assert named <= doc_ids, named - doc_ids


def test_must_contain_phrases_occur_in_an_expected_source(tmp_path: Path) -> None:
    """A phrase the answer must contain has to exist in the corpus, or the check is unfair."""
    from backend.ingest.loaders import load_document

    settings = make_settings(tmp_path)
    entries = {e.doc_id: e for m in ("sample.jsonl", "handbook.jsonl")
               for e in read_manifest(REPO / "manifests" / m, settings, strict=True).entries}
    texts: dict[str, str] = {}
    for name in ("sample_golden.jsonl", "handbook_golden.jsonl"):
        for q in load_golden_set(REPO / "data" / "golden" / name).queries:
            for phrase in q.must_contain:
                found = []
                for doc_id in q.expected_sources:
                    if doc_id not in texts:
                        texts[doc_id] = " ".join(load_document(entries[doc_id].path, doc_id, settings).text.split())
                    found.append(phrase.casefold() in texts[doc_id].casefold())
                assert any(found), (q.id, phrase)
