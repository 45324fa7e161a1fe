"""Retrieval settings are stamped on each version at ingest and served from it: a changed
config reaches users only through a new version and the gate, a rollback brings the old
settings back, and the gate evaluates a candidate with the candidate's own settings.
Real files, the real model, the real SQLite store, the real Flask app."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest

from backend.api.app import create_app
from backend.runtime import build_services
from backend.common.config import Settings
from backend.core.services.promotion import rollback
from backend.core.services.version_status import render_version, version_row
from backend.core.ranking_metrics import ranked_doc_ids
from backend.core.services.search_service import SearchRequest, SearchService
from backend.ingest.pipeline import IngestPipeline
from backend.providers.sqlite_vs.store import SqliteVectorStore
from tests.eval.lifecycle import ALIAS, FIGURE_Q, GOLDEN, LEAVE_Q, VERSION, lifecycle_settings, write_kb
from tests.promoting import promote

V2 = "KB_LC_V2"
QUESTIONS = [q["query"] for q in GOLDEN] + [
    "booking annual leave in the portal", "scan every receipt", "badge number and one-time code",
    "assembly point in the car park", LEAVE_Q, FIGURE_Q]
#: live config "A" (what V1 is built with) and "B" (the changed fusion weights and lexical analysis)
FUSION_A = {"strategy": "fusion", "fusion": {"dense_weight": 1.0, "lexical_weight": 1.0}}
FUSION_B = {"strategy": "fusion", "fusion": {"dense_weight": 0.0, "lexical_weight": 1.0},
            "lexical": {"stop_words": "english"}}


class Deployment:
    """One store; a process started with config A and one with config B, both serving it."""

    def __init__(self, tmp_path: Path, embedder: Any) -> None:
        self.root = tmp_path / "kb"
        self.manifest = write_kb(self.root)
        self.a: Settings = lifecycle_settings(tmp_path, self.root, retrieval=FUSION_A)
        self.b: Settings = lifecycle_settings(tmp_path, self.root, retrieval=FUSION_B)
        self.store = SqliteVectorStore(self.a.resolve_path(self.a.store.sqlite.path))
        self.embedder = embedder
        self.client_a = create_app(self.a, build_services(self.a, store=self.store, embedder=embedder)).test_client()
        self.client_b = create_app(self.b, build_services(self.b, store=self.store, embedder=embedder)).test_client()

    def ingest(self, settings: Settings) -> Any:
        report = IngestPipeline.from_settings(settings, self.store, self.embedder).run(self.manifest)
        assert report.ok, (report.failures, report.manifest_errors)
        return report

    def search(self, client: Any, question: str) -> tuple[list[str], dict[str, Any]]:
        response = client.get("/search", query_string={"q": question, "top_k": 6})
        assert response.status_code == 200, response.get_json()
        body = response.get_json()
        return [h["chunk_id"] for h in body["hits"]], body["details"]

    def served(self, client: Any) -> dict[str, list[str]]:
        return {q: self.search(client, q)[0] for q in QUESTIONS}

    def order_under(self, settings: Settings, version: str) -> dict[str, list[str]]:
        """What ``settings`` give on ``version`` when applied directly (not from a stamp)."""
        profile = settings.embeddings.profiles[settings.embeddings.default_profile]
        service = SearchService(self.store, self.embedder, profile, settings.retrieval)
        return {q: [h.chunk.chunk_id for h in service.search(SearchRequest(q, version, 6)).hits] for q in QUESTIONS}


@pytest.fixture
def dep(tmp_path: Path, embedder: Any) -> Any:
    built = Deployment(tmp_path, embedder)
    yield built
    built.store.close()


def test_changed_fusion_weights_reach_users_only_through_a_new_version_the_gate_and_rollback(dep: Deployment) -> None:
    assert dep.ingest(dep.a).builds[0]["action"] == "create"
    assert promote(dep.a, dep.store, dep.embedder).promoted
    order_a = dep.served(dep.client_a)
    order_b = dep.order_under(dep.b, VERSION)
    assert order_a == dep.order_under(dep.a, VERSION)
    assert any(order_a[q] != order_b[q] for q in QUESTIONS), "configs A and B must rank differently to test anything"

    # a process restarted with config B still serves V1 with V1's stamped settings
    assert dep.served(dep.client_b) == order_a
    _, details = dep.search(dep.client_b, LEAVE_Q)
    assert details["fusion"]["lexical_weight"] == 1.0 and details["fusion"]["dense_weight"] == 1.0
    assert details["lexical"]["stop_words"] == "none"
    assert details["retrieval_settings"]["source"] == "version stamp"
    assert details["retrieval_settings"]["version"] == VERSION
    chat = dep.client_b.post("/chat", json={"question": LEAVE_Q}).get_json()
    assert chat["decision_explain"]["retrieval_settings"]["stamp"]["fusion"]["dense_weight"] == 1.0

    # ingest under B: no document changed, yet the served version cannot take the new settings
    report = dep.ingest(dep.b)
    [build] = report.builds
    assert (build["action"], build["version"], build["parent"], build["carried"]) == ("new_version", V2, VERSION, 4)
    assert "fusion.dense_weight: 1.0 -> 0.0" in build["reason"] and "lexical.stop_words" in build["reason"]
    assert (report.documents_written, report.embeddings_computed) == (0, 0)
    assert dep.store.get_version(V2).retrieval["fusion"]["dense_weight"] == 0.0
    assert dep.store.get_version(VERSION).retrieval["fusion"]["dense_weight"] == 1.0
    assert "fusion rrf k=60 0.0:1.0" in render_version(version_row(dep.store.get_version(V2), "candidate"))
    assert dep.store.resolve_alias(ALIAS) == VERSION and dep.served(dep.client_b) == order_a

    # the gate, run by the process with config A, evaluates V2 with V2's settings (B)
    result = promote(dep.a, dep.store, dep.embedder, force=True)
    assert (result.promoted, result.version, result.previous) == (True, V2, VERSION)
    b_on_v2 = dep.order_under(dep.b, V2)
    profile = dep.b.embeddings.profiles[dep.b.embeddings.default_profile]
    direct = SearchService(dep.store, dep.embedder, profile, dep.b.retrieval)
    depth = max(dep.a.evaluation.search_depth, dep.a.evaluation.k, 10, dep.a.retrieval.top_k)
    for q in result.report.queries:
        expected = ranked_doc_ids(h.chunk.doc_id for h in direct.search(SearchRequest(q.query, V2, depth)).hits)
        assert q.ranked_doc_ids == expected

    # both processes now serve V2 with B's settings, whatever their own config says
    assert dep.served(dep.client_a) == b_on_v2 and dep.served(dep.client_b) == b_on_v2
    assert dep.search(dep.client_a, LEAVE_Q)[1]["fusion"]["dense_weight"] == 0.0

    # rollback brings the old settings back with the old version
    assert rollback(dep.store, ALIAS).version == VERSION
    assert dep.served(dep.client_b) == order_a
    assert dep.search(dep.client_b, LEAVE_Q)[1]["fusion"]["dense_weight"] == 1.0


def test_a_version_without_a_stamp_follows_the_live_config_and_is_not_rebuilt_for_it(dep: Deployment) -> None:
    dep.ingest(dep.a)
    assert promote(dep.a, dep.store, dep.embedder).promoted
    con = sqlite3.connect(dep.a.resolve_path(dep.a.store.sqlite.path))  # as a release before stamps wrote it
    con.execute("UPDATE rag_versions SET retrieval = NULL")
    con.commit()
    con.close()
    assert dep.store.get_version(VERSION).retrieval is None
    assert dep.served(dep.client_b) == dep.order_under(dep.b, VERSION)
    _, details = dep.search(dep.client_b, LEAVE_Q)
    assert details["retrieval_settings"] == {"source": "live config", "version": VERSION, "stamped": False,
                                             "stamp": None}
    assert details["fusion"]["dense_weight"] == 0.0
    assert dep.ingest(dep.b).builds[0]["action"] == "up_to_date"


def test_an_unserved_candidate_takes_the_new_settings_and_its_evaluation_goes_stale(dep: Deployment) -> None:
    dep.ingest(dep.a)
    before = dep.store.get_version(VERSION)
    dep.store.record_evaluation(VERSION, {"generation": before.generation, "metrics": {}})
    assert dep.store.get_version(VERSION).evaluation_current
    report = dep.ingest(dep.b)
    assert report.builds[0]["action"] == "resume" and report.embeddings_computed == 0
    after = dep.store.get_version(VERSION)
    assert after.retrieval["fusion"]["dense_weight"] == 0.0 and after.generation == before.generation + 1
    assert not after.evaluation_current
    again = dep.ingest(dep.b)
    assert dep.store.get_version(VERSION).generation == after.generation, again.builds


def test_rag_ingest_update_alias_with_only_new_settings_hands_a_stamped_copy_to_the_gate(dep: Deployment,
                                                                                       tmp_path: Path) -> None:
    from click.testing import CliRunner

    from backend.cli.main import cli
    from tests.ingest.helpers import write_config

    dep.ingest(dep.a)
    assert promote(dep.a, dep.store, dep.embedder).promoted
    config = write_config(tmp_path, dep.root, name="b.yaml", db="rag.sqlite", retrieval=FUSION_B, evaluation={
        "golden_set": str(dep.b.evaluation.golden_set), "reports_dir": str(tmp_path / "reports"),
        "gates": dep.b.evaluation.gates.model_dump()},
        embeddings={"profiles": {"sample": dep.b.embeddings.profiles["sample"].model_dump(mode="json")}})
    run = CliRunner().invoke(cli, ["--config", str(config), "ingest", str(dep.manifest), "--update-alias"])
    assert "new version built from KB_LC_V1, 4 documents carried" in run.stdout, run.output
    assert "fusion.lexical_weight" not in run.stdout and "fusion.dense_weight: 1.0 -> 0.0" in run.stdout
    candidate = dep.store.get_version(V2)
    assert candidate.retrieval["fusion"]["dense_weight"] == 0.0 and candidate.evaluation_current
    # the four golden questions still find their documents with B's settings: every gate passes
    assert candidate.evaluation["gates_passed"] is True and run.exit_code == 0, run.output
    assert "promoted: KB_ACTIVE -> KB_LC_V2 (previous: KB_LC_V1)" in run.stdout
    assert dep.store.resolve_alias(ALIAS) == V2
    assert dep.search(dep.client_a, LEAVE_Q)[1]["retrieval_settings"]["version"] == V2
    listing = CliRunner().invoke(cli, ["--config", str(config), "index", "list"]).stdout
    assert any("KB_LC_V2" in line and "retrieval: strategy fusion, fusion rrf k=60 0.0:1.0" in line
               for line in listing.splitlines()), listing
