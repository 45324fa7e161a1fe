"""Ray engine against the single-process pipeline: the same corpus, the same machine, one run.

The CISI abstracts (as text files, the ingestion section's corpus and ``cisi`` profile) are
ingested into fresh stores by ``IngestPipeline`` with its default engine and with ``RayEngine``
on a Ray started on this machine with every core, in interleaved rounds so load from other
jobs on a shared machine hits both alike; the figures are the medians. Ray's own start
(``ray.init``: a cluster is started once and serves many runs) is reported apart; each Ray
run includes starting its actors and loading their models, as a ``rag ingest --engine ray``
run against a running cluster does. Both runs must write the same chunk ids and texts.
"""

from __future__ import annotations

import sqlite3
import statistics
import time
from pathlib import Path
from typing import Any, Callable

from backend.benchmarks import ingestion
from backend.benchmarks.stats import Section
from backend.common.config import EmbeddingSettings
from backend.core.ports import Embedder, Stores
from backend.ingest.pipeline import IngestPipeline
from backend.providers.sqlite_vs.store import SqliteVectorStore
from backend.runtime import worker_cache_db, worker_embedder, worker_vector_cache

ROUNDS = 2
#: the target: the Ray engine on one machine keeps this share of the single process's throughput
MIN_RATIO = 0.85


def _chunks(path: Path) -> list[tuple[str, str]]:
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return con.execute(f"SELECT chunk_id, text FROM {ingestion.CISI_VERSION} ORDER BY chunk_id").fetchall()
    finally:
        con.close()


def _run(base: Path, corpus: Path, manifest: Path, store_path: Path, embedder: Any, engine: Any) -> tuple[float, Any]:
    settings = ingestion.bench_settings(base, corpus, store_path, False)
    store = SqliteVectorStore(store_path)
    try:
        pipeline = IngestPipeline.from_settings(settings, store, embedder, progress=False, engine=engine,
                                                worker_cache=worker_cache_db(Stores.of(store)))
        start = time.perf_counter()
        report = pipeline.run(manifest, profile=ingestion.CISI_PROFILE)
        seconds = time.perf_counter() - start
    finally:
        store.close()
    if not report.ok:
        raise RuntimeError(f"benchmark ingest failed: {report.failures[:3]} {report.manifest_errors[:3]}")
    return seconds, report


def measure(base: Path, embedder: Any, documents: dict[str, str], work: Path, *, rounds: int = ROUNDS,
            factory: Callable[[EmbeddingSettings], Embedder] = worker_embedder) -> Section:
    from backend.ingest.ray_engine import RayEngine

    section = Section("Ray engine vs one process (CISI, 1 chunk per abstract, fresh stores, Ray on this machine)")
    corpus = work / "ray-corpus"
    manifest = ingestion.write_corpus(documents, corpus)
    embedder.embed_documents(["warm-up"] * 8)
    local_s: list[float] = []
    ray_s: list[float] = []
    first: list[float] = []
    chunks = docs = 0
    with RayEngine(factory, vector_cache=worker_vector_cache) as engine:
        engine.connection()
        section.figures["Ray start on this machine (ray.init) seconds"] = round(engine.timings["connect_s"], 1)
        cpus = engine.connection().cpus
        for r in range(rounds):
            for name in ("local", "ray") if r % 2 == 0 else ("ray", "local"):  # each goes first in turn
                seconds, got = _run(base, corpus, manifest, work / f"{name}{r}.sqlite", embedder,
                                    engine if name == "ray" else None)
                if name == "ray":
                    ray_s.append(seconds)
                    ray_report = got
                    first.append(engine.timings.get("first_document_s", 0.0))
                else:
                    local_s.append(seconds)
                    report = got
            chunks, docs = report.chunks_written, report.documents_written
            if (ray_report.chunks_written, ray_report.documents_written) != (chunks, docs):
                raise RuntimeError(f"round {r}: the engines wrote different counts: {report.counts()} vs "
                                   f"{ray_report.counts()}")
        same = _chunks(work / "local0.sqlite") == _chunks(work / "ray0.sqlite")
    med = statistics.median
    ratios = [lo / ra for lo, ra in zip(local_s, ray_s)]
    section.figures["documents / chunks per run"] = f"{docs} / {chunks}"
    section.figures["Ray CPUs (embedding actors, one model thread each)"] = cpus
    section.figures[f"single process docs/s (median of {rounds})"] = round(docs / med(local_s), 1)
    section.figures[f"single process chunks/s (median of {rounds})"] = round(chunks / med(local_s), 1)
    section.figures[f"Ray engine docs/s (median of {rounds})"] = round(docs / med(ray_s), 1)
    section.figures[f"Ray engine chunks/s (median of {rounds})"] = round(chunks / med(ray_s), 1)
    section.figures["Ray actors' start, first document out (median) seconds"] = round(med(first), 1)
    section.figures["Ray engine docs/s after its first document (median)"] = round(
        med([docs / max(total - start, 1e-9) for total, start in zip(ray_s, first)]), 1)
    section.figures["Ray/single throughput per round"] = " ".join(f"{x:.3f}" for x in ratios)
    section.figures["same chunk ids and texts (round 0)"] = same
    section.target("Ray/single-process throughput, same corpus", med(ratios), ">=", MIN_RATIO)
    section.notes.append("each round runs both engines back to back, each going first in turn; a Ray run includes "
                         "its actors' start (models loaded once per actor); on a shared machine the ratio moves "
                         "with load")
    return section
