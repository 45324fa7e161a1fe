"""The admin console's read model (backend/core/services/admin_console.py): the pure decisions
at their boundaries, and the views over a real SQLite store written with the real embedder."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from backend.common.errors import VersionNotFound
from backend.core.services import admin_console as console
from backend.core.versions import VersionNaming
from backend.core.types import Chunk, DocumentWrite, Feedback, VersionSpec, content_hash
from tests.conftest import make_settings

NAMING = VersionNaming()


# --- roles ----------------------------------------------------------------------------
@pytest.mark.parametrize(("name", "live", "rollback", "role"), [
    ("KB_X_V2", "KB_X_V2", "KB_X_V1", "live"),
    ("KB_X_V1", "KB_X_V2", "KB_X_V1", "rollback"),
    ("KB_X_V3", "KB_X_V2", "KB_X_V1", "candidate"),
    ("KB_X_V1", "KB_X_V3", "KB_X_V2", "older"),
    ("KB_X_V1", None, None, "candidate"),  # nothing served yet: every version waits for the gate
    ("KB_X", "KB_X_V2", None, "older"),  # a name without the suffix is number 1
])
def test_role_of(name: str, live: str | None, rollback: str | None, role: str) -> None:
    assert console.role_of(name, live, rollback, NAMING) == role


# --- changed_in -----------------------------------------------------------------------
def test_changed_in_is_the_start_of_the_unbroken_run_of_the_live_hash() -> None:
    series = [("V1", {"a": "h1", "b": "x"}), ("V2", {"a": "h2", "b": "x"}), ("V3", {"a": "h1", "b": "x", "c": "n"}),
              ("V4", {"a": "h1", "b": "x", "c": "n"})]
    # a went back to h1 in V3: the change was V3, not V1 where h1 was first seen
    assert console.changed_in("a", "V4", series) == "V3"
    assert console.changed_in("b", "V4", series) == "V1"  # unchanged since the oldest retained version
    assert console.changed_in("c", "V4", series) == "V3"  # new in V3
    assert console.changed_in("a", "V1", series) == "V1"  # the live version is the oldest


# --- per-query changes ----------------------------------------------------------------
def _q(qid: str, *, hit: float | None = 1.0, mode_correct: bool = True, rr: float | None = 1.0,
       ranked: list[str] | None = None) -> dict[str, Any]:
    return {"id": qid, "query": f"question {qid}", "expected_mode": "rag", "decided_mode": "rag" if mode_correct
            else "fallback", "mode_correct": mode_correct, "expected_sources": {"doc": 1.0},
            "ranked_doc_ids": ranked if ranked is not None else ["doc"], "hit_at_k": hit, "reciprocal_rank": rr}


@pytest.mark.parametrize(("candidate", "live", "change"), [
    (_q("a"), None, "new"),
    (_q("a"), _q("a"), "same"),
    (_q("a", hit=1.0), _q("a", hit=0.0, rr=0.0), "win"),  # retrieval found it now
    (_q("a", hit=0.0, rr=0.0), _q("a", hit=1.0), "loss"),
    (_q("a", mode_correct=True), _q("a", mode_correct=False), "win"),  # same hit, right mode now
    (_q("a", mode_correct=False), _q("a"), "loss"),
    (_q("a", rr=0.5), _q("a", rr=1.0), "loss"),  # tie on both, the expected document moved down
    (_q("a", rr=1.0), _q("a", rr=0.5), "win"),
    # one thing right on each side: the rank of the expected document decides
    (_q("a", hit=1.0, mode_correct=False), _q("a", hit=0.0, mode_correct=True, rr=0.0), "win"),
    (_q("a", hit=0.0, mode_correct=True, rr=0.0), _q("a", hit=1.0, mode_correct=False), "loss"),
])
def test_query_change(candidate: dict[str, Any], live: dict[str, Any] | None, change: str) -> None:
    assert console.query_change(candidate, live) == change


def test_fallback_queries_count_only_the_mode() -> None:
    no_sources = {"id": "f", "hit_at_k": None, "reciprocal_rank": None, "mode_correct": True}
    assert console.query_change(no_sources, {**no_sources, "mode_correct": False}) == "win"
    assert console.query_change(no_sources, dict(no_sources)) == "same"


def test_evaluation_view_pairs_queries_by_id_and_counts() -> None:
    report = {"version": "KB_X_V2", "created_at": "t2", "metrics": {"recall_at_k": 1.0},
              "gates": [{"name": "min_recall_at_k", "metric": "recall_at_k", "kind": "min", "value": 1.0,
                         "threshold": 0.6, "passed": True, "baseline": None}],
              "queries": [_q("a"), _q("b", hit=0.0, rr=0.0, ranked=["other", "x"]), _q("c")]}
    baseline = {"version": "KB_X_V1", "metrics": {"recall_at_k": 0.5},
                "queries": [_q("a", hit=0.0, rr=0.0, ranked=["x"]), _q("b")]}
    view = console.evaluation_view(report, baseline, None)
    changes = {q["id"]: q["change"] for q in view["queries"]}
    assert changes == {"a": "win", "b": "loss", "c": "new"}
    assert view["summary"] == {"wins": 1, "losses": 1, "same": 0, "new": 1}
    assert view["baseline_version"] == "KB_X_V1" and view["gates_passed"] is True
    a = next(q for q in view["queries"] if q["id"] == "a")
    assert a["candidate"]["rank"] == 1 and a["live"]["rank"] is None and a["live"]["hit"] is False
    assert console.evaluation_view(report, None, None)["summary"]["new"] == 3


# --- reports --------------------------------------------------------------------------
def _report(folder: Path, name: str, **payload: Any) -> Path:
    path = folder / name
    path.write_text(json.dumps(payload), encoding="utf-8")
    return path


def test_find_report_takes_the_newest_of_the_version_and_skips_the_rest(tmp_path: Path) -> None:
    _report(tmp_path, "eval_20260101T000000Z_KB_X_V2.json", version="KB_X_V2", created_at="2026-01-01", golden_sha256="g")
    _report(tmp_path, "eval_20260102T000000Z_KB_X_V2.json", version="KB_X_V2", created_at="2026-01-02", golden_sha256="h")
    _report(tmp_path, "eval_20260103T000000Z_KB_X_V2.json", version="KB_X_V2", created_at="2026-01-03", golden_sha256="g",
            role="baseline")
    _report(tmp_path, "eval_20260104T000000Z_KB_X_V22.json", version="KB_X_V22", created_at="2026-01-04")
    (tmp_path / "eval_20260105T000000Z_KB_X_V2_2.json").write_text("{not json", encoding="utf-8")
    assert console.find_report(tmp_path, "KB_X_V2")["created_at"] == "2026-01-03"
    assert console.find_report(tmp_path, "KB_X_V2", own=True)["created_at"] == "2026-01-02"
    assert console.find_report(tmp_path, "KB_X_V2", "g", own=True)["created_at"] == "2026-01-01"
    assert console.find_report(tmp_path, "KB_X_V3") is None
    assert console.find_report(tmp_path / "missing", "KB_X_V2") is None


def test_baseline_report_prefers_the_one_the_gate_wrote(tmp_path: Path) -> None:
    named = _report(tmp_path, "eval_1_KB_X_V1.json", version="KB_X_V1", created_at="1", golden_sha256="old")
    _report(tmp_path, "eval_2_KB_X_V1.json", version="KB_X_V1", created_at="2", golden_sha256="g")
    report = {"version": "KB_X_V2", "golden_sha256": "g", "baseline_report": str(named)}
    assert console.baseline_report(tmp_path, report, "KB_X_V1")["created_at"] == "1"
    assert console.baseline_report(tmp_path, {**report, "baseline_report": None}, "KB_X_V1")["created_at"] == "2"
    assert console.baseline_report(tmp_path, report, None) is None


# --- feedback -------------------------------------------------------------------------
def _feedback(domain: str | None, principal: str | None, rating: str = "up") -> Feedback:
    return Feedback(interaction_id=f"i-{domain}-{principal}", rating=rating, comment=None,  # type: ignore[arg-type]
                    expected_answer=None, query="q", mode="rag", version="KB_X_V1", domain=domain,
                    principal=principal, created_at="t")


def test_feedback_view_filters_by_knowledge_base_and_principal(tmp_path: Path) -> None:
    settings = make_settings(tmp_path, embeddings={"domains": {"coffee": {"index_name": "KB_COFFEE_V1",
                                                                          "alias_name": "KB_COFFEE"}}})
    rows = [_feedback(None, "alice"), _feedback("coffee", "alice"), _feedback("coffee", "bob", "down")]
    default = console.knowledge_base(settings, "default")
    coffee = console.knowledge_base(settings, "coffee")
    assert [f["interaction_id"] for f in console.feedback_view(rows, default)["feedback"]] == ["i-None-alice"]
    assert len(console.feedback_view(rows, coffee)["feedback"]) == 2
    assert [f["vote"] for f in console.feedback_view(rows, coffee, "bob")["feedback"]] == ["down"]


# --- knowledge bases and views over a real store --------------------------------------
def test_unknown_knowledge_base_is_404_naming_the_known_ones(tmp_path: Path) -> None:
    with pytest.raises(console.KnowledgeBaseNotFound) as err:
        console.knowledge_base(make_settings(tmp_path), "nope")
    assert err.value.http_status == 404 and "default" in err.value.user_message


def _doc(doc_id: str, text: str, embedder: Any) -> DocumentWrite:
    chunks = [Chunk(f"{doc_id}#0", doc_id, text, f"files/{doc_id}.md", 0), Chunk(f"{doc_id}#1", doc_id, text + " More.",
                                                                             f"files/{doc_id}.md", 1)]
    return DocumentWrite(doc_id, content_hash(text), chunks, embedder.embed_documents([c.text for c in chunks]))


def test_documents_and_versions_views(tmp_path: Path, embedder: Any) -> None:
    from backend.providers.sqlite_vs.store import SqliteVectorStore

    settings = make_settings(tmp_path, embeddings={"domains": {"pol": {"index_name": "KB_POL_V1",
                                                                       "alias_name": "KB_POL"}}})
    store = SqliteVectorStore(settings.resolve_path(settings.store.sqlite.path))
    try:
        spec = VersionSpec("KB_POL_V1", embedder.model_id, embedder.dimension, "cosine")
        store.create_version(spec)
        store.write_documents("KB_POL_V1", [_doc("leave", "Leave is 25 days.", embedder),
                                            _doc("vpn", "Use the VPN.", embedder)])
        kb = console.knowledge_base(settings, "pol")
        assert console.documents_view(store, kb, NAMING) == {"version": None, "documents": []}
        store.point_alias("KB_POL", "KB_POL_V1", reason="first")
        store.create_version(VersionSpec("KB_POL_V2", embedder.model_id, embedder.dimension, "cosine",
                                         parent="KB_POL_V1"))
        store.write_documents("KB_POL_V2", [_doc("leave", "Leave is 30 days.", embedder)])
        store.point_alias("KB_POL", "KB_POL_V2", reason="second")
        store.create_version(VersionSpec("KB_POL_V3", embedder.model_id, embedder.dimension, "cosine",
                                         parent="KB_POL_V2"))

        docs = console.documents_view(store, kb, NAMING)
        assert docs["version"] == "KB_POL_V2"
        assert docs["documents"] == [
            {"doc_id": "leave", "source": "files/leave.md", "chunks": 2, "changed_in": "KB_POL_V2", "pii": {}},
            {"doc_id": "vpn", "source": "files/vpn.md", "chunks": 2, "changed_in": "KB_POL_V1", "pii": {}}]

        view = console.versions_view(store, kb, NAMING)
        assert [(v["name"], v["role"]) for v in view["versions"]] == [
            ("KB_POL_V3", "candidate"), ("KB_POL_V2", "live"), ("KB_POL_V1", "rollback")]
        assert [h["reason"] for h in view["history"]] == ["second", "first"]
        summary = console.kb_summary(store, kb, NAMING)
        assert (summary["live"], summary["rollback"], summary["candidates"], summary["documents"]) == (
            "KB_POL_V2", "KB_POL_V1", ["KB_POL_V3"], 2)
        assert summary["golden"] is None and summary["managed"] is False
        with pytest.raises(console.EvaluationNotFound):
            console.version_evaluation(store, settings, kb, "KB_POL_V3")
        with pytest.raises(VersionNotFound):
            console.version_evaluation(store, settings, kb, "KB_POL_V9")
    finally:
        store.close()


def test_golden_view_marks_a_generated_set(tmp_path: Path) -> None:
    settings = make_settings(tmp_path, embeddings={"domains": {"pol": {"index_name": "KB_POL_V1",
                                                                       "alias_name": "KB_POL"}}})
    kb = console.knowledge_base(settings, "pol")
    assert kb.golden is None and console.golden_view(kb)["queries"] == []
    generated = tmp_path / "kb" / "pol" / "golden.generated.jsonl"
    generated.parent.mkdir(parents=True)
    generated.write_text(json.dumps({"id": "gen-1", "query": "How long is leave?", "expected_sources": ["leave"],
                                     "expected_mode": "rag", "generated": True}) + "\n", encoding="utf-8")
    kb = console.knowledge_base(settings, "pol")
    view = console.golden_view(kb)
    assert view["generated"] is True and view["queries"] == [
        {"id": "gen-1", "query": "How long is leave?", "expected_mode": "rag", "expected_sources": ["leave"]}]
    assert "golden_set" in view["how_to_replace"] and "rag feedback export" in view["how_to_replace"]
    default = console.golden_view(console.knowledge_base(settings, "default"))
    assert default["generated"] is False and len(default["queries"]) > 5
