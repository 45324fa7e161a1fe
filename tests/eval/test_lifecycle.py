"""The version lifecycle end to end, on real files, the real model and the real store:
a served version is never written, every change is a new version that only the
gate promotes, rollback restores old content and old figures, gc keeps what an
alias needs, and a killed build leaves the served version alone."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from backend.api.app import create_app
from backend.runtime import build_services
from backend.cli.main import cli
from backend.common.config import Settings
from backend.common.errors import GateFailed
from backend.core.services.promotion import collect_garbage, rollback
from backend.ingest.pipeline import IngestPipeline
from backend.providers.sqlite_vs.store import SqliteVectorStore
from tests.eval.lifecycle import (
    ALIAS,
    FIGURE_Q,
    LEAVE_Q,
    VERSION,
    Edition,
    files,
    lifecycle_settings,
    table_rows,
    write_kb,
)
from tests.fixtures.docx import make_fixtures as mk
from tests.ingest.helpers import write_config
from tests.promoting import promote


class KB:
    """One knowledge base: its settings, store, pipeline and a /chat client over it."""

    def __init__(self, tmp_path: Path, embedder: Any, **overrides: Any) -> None:
        self.root = tmp_path / "kb"
        self.manifest = write_kb(self.root)
        self.settings: Settings = lifecycle_settings(tmp_path, self.root, **overrides)
        self.db = self.settings.resolve_path(self.settings.store.sqlite.path)
        self.assets = self.settings.resolve_path(self.settings.docx.assets_dir)
        self.store = SqliteVectorStore(self.db)
        self.embedder = embedder
        services = build_services(self.settings, store=self.store, embedder=embedder)
        self.client = create_app(self.settings, services).test_client()

    def ingest(self, edition: Edition | None = None, **options: Any) -> Any:
        if edition is not None:
            write_kb(self.root, edition)
        return IngestPipeline.from_settings(self.settings, self.store, self.embedder).run(self.manifest, **options)

    def promote(self, **options: Any) -> Any:
        return promote(self.settings, self.store, self.embedder, **options)

    def ask(self, question: str) -> dict[str, Any]:
        """What a reader sees of an answer, without timings."""
        response = self.client.post("/chat", json={"question": question})
        assert response.status_code == 200, response.get_json()
        body = response.get_json()
        return {"answer": body["answer"], "mode": response.headers["X-Answer-Mode"],
                "citations": [(c["chunk_id"], c["image_ref"]) for c in body["citations"]],
                "retrieved": [(r["chunk_id"], r["similarity"]) for r in body["retrieved_chunks_metadata"]]}

    def figure(self) -> tuple[str, bytes]:
        """The image the figure question cites, as /assets serves it."""
        refs = [ref for _, ref in self.ask(FIGURE_Q)["citations"] if ref]
        assert refs, "the figure question cites no figure"
        image = self.client.get(f"/assets/{refs[0]}")
        assert image.status_code == 200
        return refs[0], image.get_data()


@pytest.fixture
def kb(tmp_path: Path, embedder: Any) -> Any:
    built = KB(tmp_path, embedder)
    yield built
    built.store.close()


def _live(kb: KB) -> KB:
    report = kb.ingest()
    assert report.ok and report.builds[0]["action"] == "create"
    assert kb.promote().promoted
    return kb


def test_reingest_of_a_served_version_builds_the_next_and_leaves_the_served_one_byte_identical(kb: KB) -> None:
    _live(kb)
    rows, assets = table_rows(kb.db, VERSION), files(kb.assets)
    answer, (old_ref, old_image) = kb.ask(LEAVE_Q), kb.figure()
    assert "25 days" in answer["answer"]

    report = kb.ingest(Edition(days=30, color=mk.BLUE))
    [build] = report.builds
    assert (build["action"], build["version"], build["parent"], build["carried"]) == (
        "new_version", "KB_LC_V2", VERSION, 2)
    assert (report.documents_written, report.skipped_unchanged) == (2, 2)
    assert "from KB_LC_V1, 2 documents carried with their vectors" in report.render()

    assert kb.store.resolve_alias(ALIAS) == VERSION
    assert table_rows(kb.db, VERSION) == rows
    assert {ref: data for ref, data in files(kb.assets).items() if ref in assets} == assets
    assert kb.ask(LEAVE_Q) == answer and kb.figure() == (old_ref, old_image)

    result = kb.promote()
    assert (result.promoted, result.version, result.previous) == (True, "KB_LC_V2", VERSION)
    assert "30 days" in kb.ask(LEAVE_Q)["answer"]
    new_ref, new_image = kb.figure()
    assert new_ref != old_ref and new_image != old_image

    change = rollback(kb.store, ALIAS)
    assert (change.version, change.previous) == (VERSION, "KB_LC_V2")
    assert kb.ask(LEAVE_Q) == answer and kb.figure() == (old_ref, old_image)


def test_after_a_rollback_the_next_version_is_built_from_the_live_one(kb: KB) -> None:
    """Issue 49 M4: V2 (30 days) promoted then rolled back; an unrelated new document (one
    manifest line, as an upload is) used to be built on V2, so the 30 days came back with it.
    It is built from V1, the version served, and says so; V2 stays as the rollback target."""
    _live(kb)
    kb.ingest(Edition(days=30, color=mk.BLUE))
    assert kb.promote().promoted
    rollback(kb.store, ALIAS)
    assert kb.store.resolve_alias(ALIAS) == VERSION
    (kb.root / "parking.md").write_text("# Parking\n\nThe staff garage opens at 7:00 on working days.\n")
    one = kb.root / "parking.jsonl"
    one.write_text(json.dumps({"path": "parking.md", "doc_id": "parking"}) + "\n")
    report = IngestPipeline.from_settings(kb.settings, kb.store, kb.embedder).run(one)
    [build] = report.builds
    assert (build["action"], build["version"], build["parent"]) == ("new_version", "KB_LC_V3", VERSION)
    assert build["reason"] == ("KB_LC_V2 is KB_ACTIVE rollback; KB_LC_V1 is served: changes go into a new version "
                               "built from KB_LC_V1, without KB_LC_V2's content")
    v1, v2, v3 = (kb.store.document_hashes(v) for v in (VERSION, "KB_LC_V2", "KB_LC_V3"))
    assert v3 == {**v1, "parking": v3["parking"]} and v3["leave"] != v2["leave"]
    assert kb.store.get_version("KB_LC_V3").parent == VERSION  # the console's "built from"
    # once more: V3 is now a candidate of the live version, so the next change resumes it
    (kb.root / "parking.md").write_text("# Parking\n\nThe staff garage opens at 6:30 on working days.\n")
    again = IngestPipeline.from_settings(kb.settings, kb.store, kb.embedder).run(one)
    assert (again.builds[0]["action"], again.builds[0]["version"]) == ("resume", "KB_LC_V3")


def test_an_unchanged_corpus_builds_no_version_and_embeds_nothing(kb: KB) -> None:
    _live(kb)
    before = [(v.name, v.generation) for v in kb.store.list_versions()]
    again = kb.ingest()
    assert again.builds[0]["action"] == "up_to_date" and again.version == VERSION
    assert (again.documents_written, again.embeddings_computed, again.skipped_unchanged) == (0, 0, 4)
    assert [(v.name, v.generation) for v in kb.store.list_versions()] == before
    assert kb.promote().notes == (f"{ALIAS} already serves {VERSION}; nothing to do",)


def test_prune_and_failed_files_go_into_the_candidate_never_the_served_version(kb: KB) -> None:
    _live(kb)
    rows = table_rows(kb.db, VERSION)
    lines = kb.manifest.read_text().splitlines()
    kb.manifest.write_text("\n".join([*lines[:2], json.dumps({"path": "missing.txt", "doc_id": "gone"})]) + "\n")
    (kb.root / "leave.md").write_text("# Annual leave\n\nEvery employee receives 27 days.\n")
    report = kb.ingest(prune=True)
    assert report.failed == 0 and report.manifest_errors  # missing file: a bad manifest line, so no prune
    assert report.builds[0]["version"] == "KB_LC_V2"
    assert table_rows(kb.db, VERSION) == rows
    kb.manifest.write_text("\n".join(lines[:2]) + "\n")
    pruned = kb.ingest(prune=True)
    assert (pruned.builds[0]["action"], pruned.builds[0]["version"], pruned.documents_pruned) == (
        "resume", "KB_LC_V2", 2)
    assert sorted(kb.store.document_hashes("KB_LC_V2")) == ["leave", "vpn"]
    assert table_rows(kb.db, VERSION) == rows


def test_a_failing_gate_keeps_the_old_version_served_and_exits_non_zero(kb: KB, tmp_path: Path) -> None:
    _live(kb)
    write_kb(kb.root, Edition(broken=True))
    config = write_config(tmp_path, kb.root, name="cli.yaml", db="rag.sqlite", evaluation={
        "golden_set": str(tmp_path / "golden.jsonl"), "reports_dir": str(tmp_path / "reports"),
        "gates": kb.settings.evaluation.gates.model_dump()},
        embeddings={"profiles": {"sample": kb.settings.embeddings.profiles["sample"].model_dump(mode="json")}})
    run = CliRunner().invoke(cli, ["--config", str(config), "ingest", str(kb.manifest), "--update-alias"])
    assert run.exit_code == 3, run.output
    assert "new version built from KB_LC_V1, 2 documents carried" in run.stdout
    assert "gate max_regression     FAIL  ndcg_at_10 regression" in run.stdout
    assert "KB_LC_V2 was not promoted to KB_ACTIVE (still serving KB_LC_V1)" in run.stderr
    assert kb.store.resolve_alias(ALIAS) == VERSION
    candidate = kb.store.get_version("KB_LC_V2")
    assert candidate.evaluation["gates_passed"] is False and candidate.evaluation_current
    listing = CliRunner().invoke(cli, ["--config", str(config), "index", "list"]).stdout
    assert any(line.split()[:3] == ["+", "KB_LC_V2", "candidate"] and "gates=FAIL" in line
               for line in listing.splitlines()), listing
    with pytest.raises(GateFailed):
        kb.promote()


def test_in_place_needs_its_flag_and_a_changed_version_is_evaluated_again(kb: KB, tmp_path: Path) -> None:
    _live(kb)
    evaluated = kb.store.get_version(VERSION)
    assert evaluated.evaluation_current
    report = kb.ingest(Edition(days=40), in_place=True)
    assert (report.builds[0]["action"], report.version) == ("in_place", VERSION)
    assert "40 days" in kb.ask(LEAVE_Q)["answer"]
    changed = kb.store.get_version(VERSION)
    assert changed.generation > evaluated.generation and not changed.evaluation_current
    again = kb.promote()
    assert again.notes[-1] == f"{VERSION} changed since its last evaluation (written in place): evaluated again"
    assert kb.store.get_version(VERSION).evaluation_current
    assert [v.name for v in kb.store.list_versions()] == [VERSION]


def test_gc_never_drops_a_live_or_rollback_version_and_removes_only_images_nobody_cites(kb: KB) -> None:
    _live(kb)
    for n, color in enumerate([mk.BLUE, mk.GREEN, mk.GREY, (250, 200, 0)], start=2):
        kb.ingest(Edition(days=25 + n, color=color))
        assert kb.promote().promoted  # each promotion keeps the newest 3 of the series
    assert sorted(v.name for v in kb.store.list_versions()) == ["KB_LC_V3", "KB_LC_V4", "KB_LC_V5"]
    rollback(kb.store, ALIAS)  # live V4, rollback target V5
    cited = {v.name: kb.store.asset_refs(v.name) for v in kb.store.list_versions()}
    assert len(set().union(*cited.values())) == 3
    one = kb.settings.model_copy(update={"evaluation": kb.settings.evaluation.model_copy(update={"keep_versions": 1})})
    assert collect_garbage(kb.store, one, dry_run=True).dropped == ("KB_LC_V3",)
    assert set(files(kb.assets)) == set().union(*cited.values())
    result = collect_garbage(kb.store, one)
    assert result.dropped == ("KB_LC_V3",)
    assert sorted(v.name for v in kb.store.list_versions()) == ["KB_LC_V4", "KB_LC_V5"]
    assert set(result.assets_removed) == cited["KB_LC_V3"]
    assert set(files(kb.assets)) == cited["KB_LC_V4"] | cited["KB_LC_V5"]
    assert kb.figure()[0] in cited["KB_LC_V4"]
    assert rollback(kb.store, ALIAS).version == "KB_LC_V5" and kb.figure()[0] in cited["KB_LC_V5"]


def _changed_documents(db: Path, version: str, parent: str) -> int:
    try:
        con = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=1)
        try:
            return int(con.execute(f"SELECT COUNT(DISTINCT doc_id) FROM {version} WHERE doc_hash NOT IN "
                                   f"(SELECT doc_hash FROM {parent})").fetchone()[0])
        finally:
            con.close()
    except sqlite3.Error:
        return 0


@pytest.mark.slow
def test_a_killed_build_leaves_the_served_version_untouched_and_the_next_run_resumes_it(
    tmp_path: Path, embedder: Any
) -> None:
    from tests.ingest.helpers import write_corpus, write_manifest

    docs = 24
    corpus = tmp_path / "corpus"
    write_corpus(corpus, docs, sentences=6)
    manifest = write_manifest(corpus / "manifest.jsonl", [{"dir": "."}])
    sections = {"ingest": {"allowed_roots": [str(corpus)], "progress": False, "documents_per_transaction": 1},
                "embeddings": {"profiles": {"sample": {"index_name": "KB_K_V1", "chunker": {
                    "kind": "char", "size": 200, "overlap": 20}}}, "domains": {},
                               "batching": {"batch_size": 4, "rate_limit_per_min": 300}}}
    config = write_config(tmp_path, corpus, db="kill.sqlite", **sections)
    db = tmp_path / "kill.sqlite"
    first = CliRunner().invoke(cli, ["--config", str(config), "ingest", str(manifest)])
    assert first.exit_code == 0, first.output
    store = SqliteVectorStore(db)
    store.point_alias("KB_ACTIVE", "KB_K_V1")
    served = table_rows(db, "KB_K_V1")
    for path in sorted(corpus.glob("doc_*.txt")):
        path.write_text(path.read_text() + "Amended in the second edition.\n")

    proc = subprocess.Popen([sys.executable, "-m", "backend.cli.main", "--config", str(config), "ingest",
                             str(manifest)], cwd=Path(__file__).resolve().parents[2],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 240
    while _changed_documents(db, "KB_K_V2", "KB_K_V1") < 3 and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)
    partial = _changed_documents(db, "KB_K_V2", "KB_K_V1")
    assert proc.returncode == -signal.SIGKILL and 3 <= partial < docs
    assert table_rows(db, "KB_K_V1") == served and store.resolve_alias("KB_ACTIVE") == "KB_K_V1"

    rerun = CliRunner().invoke(cli, ["--config", str(config), "ingest", str(manifest), "--json"])
    assert rerun.exit_code == 0, rerun.output
    resumed = json.loads(rerun.stdout)
    assert resumed["builds"][0]["action"] == "resume" and resumed["version"] == "KB_K_V2"
    assert (resumed["skipped_unchanged"], resumed["documents_written"]) == (partial, docs - partial)
    assert _changed_documents(db, "KB_K_V2", "KB_K_V1") == docs
    assert table_rows(db, "KB_K_V1") == served
    store.close()
