"""Parallel writers into one candidate version: the real pipeline's write and accounting over the
real Oracle adapter (python-oracledb's API served by the stateful stand-in of
``tests/providers/oracle_fake.py``, which models the registry row lock writers used to queue on),
and the embedded store, which takes one writer."""

from __future__ import annotations

import threading
import types
from pathlib import Path
from typing import Any

import pytest

from backend.common.config import load_settings
from backend.common.errors import StoreError
from backend.common.progress import ProgressTracker
from backend.ingest.group_writer import GroupWriter
from backend.ingest.pipeline import IngestPipeline
from backend.ingest.report import IngestReport
from backend.ingest.targets import TargetRun
from tests.providers.oracle_fake import CatalogDb, catalog_store
from tests.providers.test_oracle_vs import doc


def run_for(version: str) -> TargetRun:
    target = types.SimpleNamespace(version=version, allow_served=False)
    return TargetRun("KB", target, [], {}, set(), None, False, {}, 2, lambda _: None)  # type: ignore[arg-type]


class Overlap(CatalogDb):
    """Counts how many write transactions are open (first chunk INSERT to commit) at once."""

    def __init__(self) -> None:
        super().__init__()
        self.open: set[int | None] = set()
        self.most = 0
        self.gate = threading.Lock()

    def _start_race(self, statement: str) -> None:
        if statement.startswith("INSERT INTO KB_V1 (chunk_id"):
            with self.gate:
                self.open.add(self._running.session)
                self.most = max(self.most, len(self.open))
            threading.Event().wait(0.05)  # the array DML takes a while on a server
        super()._start_race(statement)

    def rollback(self, session: int | None = None) -> None:
        with self.gate:
            self.open.discard(session)
        super().rollback(session)

    def commit(self, session: int | None = None) -> None:
        with self.gate:
            self.open.discard(session)
        super().commit(session)


@pytest.fixture()
def oracle_pipeline(tmp_path: Path, embedder: Any) -> tuple[Overlap, IngestPipeline]:
    db = Overlap()
    db.add_version("KB_V1")
    store = catalog_store(db, pool_max=4)
    return db, IngestPipeline.from_settings(load_settings(env={}), store, embedder, progress=False)


def test_oracle_groups_are_written_at_once_and_counted_in_order(oracle_pipeline: tuple[Overlap, IngestPipeline]) -> None:
    db, pipeline = oracle_pipeline
    run, report, progress = run_for("KB_V1"), IngestReport(manifest="m.jsonl"), ProgressTracker()
    with GroupWriter(pipeline.stages.write, run, report, progress, writers=3,
                     store_writers=pipeline.stores.vectors.max_writers()) as writer:
        assert writer.writers == 3
        for g in range(8):
            writer.submit([doc(f"d{g}a", 2), doc(f"d{g}b", 1)], documents=2)
            assert writer.in_flight <= 3  # back-pressure: never more groups in flight than writers
    assert db.most >= 2  # transactions of several writers were open at once
    assert report.documents_written == 16 and report.chunks_written == 24
    assert run.written == {f"d{g}{x}" for g in range(8) for x in "ab"}
    assert progress.snapshot().documents == 16
    assert db.tables["KB_V1"] == 24 and db.versions["KB_V1"][8] == 8  # one generation bump per group


def test_a_failed_write_stops_the_run_after_the_others_finish(oracle_pipeline: tuple[Overlap, IngestPipeline]) -> None:
    db, pipeline = oracle_pipeline
    run, report = run_for("KB_V1"), IngestReport(manifest="m.jsonl")
    db.fail_on(r"^INSERT INTO KB_V1 \(chunk_id", 12899, row=0)  # one group's chunk is refused by the server
    with pytest.raises(StoreError, match="ORA-12899"):
        with GroupWriter(pipeline.stages.write, run, report, ProgressTracker(), writers=3, store_writers=3) as writer:
            for g in range(4):
                writer.submit([doc(f"d{g}", 2)], documents=1)
    assert not db.open  # nothing left half-open
    committed = db.tables["KB_V1"] // 2  # the groups submitted before the failure surfaced, less the failed one
    assert 1 <= committed <= 3
    assert report.documents_written == len(run.written) == committed  # what committed is counted, nothing else


def test_the_embedded_store_writes_with_one_and_says_so(tmp_path: Path, embedder: Any) -> None:
    from backend.providers.registry import build_stores

    settings = load_settings(overrides={"store": {"sqlite": {"path": str(tmp_path / "rag.sqlite")}}}, env={})
    stores = build_stores(settings)
    try:
        assert stores.vectors.max_writers() == 1
        pipeline = IngestPipeline.from_settings(settings, stores, embedder, progress=False)
        report = IngestReport(manifest="m.jsonl")
        with GroupWriter(pipeline.stages.write, run_for("KB_V1"), report, ProgressTracker(), writers=4,
                         store_writers=stores.vectors.max_writers()) as writer:
            assert writer.writers == 1 and writer._pool is None
        assert report.notes == ["4 writers asked for; this store writes with 1"]
    finally:
        stores.close()

