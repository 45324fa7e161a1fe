"""Ingestion overhead: the whole pipeline against the bare embedder, same chunks, same run.

The CISI documents are written as text files with a manifest and ingested through
``IngestPipeline`` (load, normalise, sanitize, chunk, embed, write) into a fresh
store, so no embedding cache helps. The bare embedder then embeds exactly the
chunk texts the pipeline embedded, in the same batch size. Stage times come from
wrapping the pipeline's stage methods on the instance, which changes nothing
inside it.
"""

from __future__ import annotations

import json
import statistics
import time
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from backend.benchmarks.stats import Section
from backend.common.config import Settings, load_settings
from backend.ingest.pipeline import IngestPipeline
from backend.runtime import enricher_factory
from backend.providers.sqlite_vs.store import SqliteVectorStore

STAGES = ("load", "render", "sanitize", "chunk", "embed", "write")
CISI_PROFILE = "cisi"
CISI_VERSION = "CISI_BENCH_V1"


def write_corpus(documents: dict[str, str], folder: Path) -> Path:
    """One ``.txt`` per CISI document plus a manifest; returns the manifest path."""
    docs = folder / "docs"
    docs.mkdir(parents=True, exist_ok=True)
    lines = []
    for doc_id, text in documents.items():
        (docs / f"{doc_id}.txt").write_text(text, encoding="utf-8")
        lines.append(json.dumps({"path": f"docs/{doc_id}.txt", "doc_id": doc_id, "tags": ["cisi"]}))
    manifest = folder / "cisi.jsonl"
    manifest.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return manifest


def bench_settings(base: Path, folder: Path, store_path: Path, sanitize: bool, worker: bool = True) -> Settings:
    """The default profile plus a ``cisi`` profile that keeps each abstract in one chunk
    (as the bare-model baseline sees it)."""
    overrides: dict[str, Any] = {
        "store": {"sqlite": {"path": str(store_path)}},
        "ingest": {"allowed_roots": [str(folder)], "progress": False},
        "sanitize": {"enabled": sanitize, "mode": "redact", "audit_path": str(folder / "audit.jsonl"), "worker": worker},
        "embeddings": {"profiles": {CISI_PROFILE: {
            "index_name": CISI_VERSION, "distance": "cosine",
            "chunker": {"kind": "conditional", "size": 1200, "overlap": 150, "min_chars_before_split": 6000},
        }}},
    }
    return load_settings(base, overrides=overrides, env={})


@dataclass
class IngestRun:
    seconds: float
    chunks: int
    embedded: int
    stage_seconds: dict[str, float]
    store: SqliteVectorStore
    #: the texts of each embed-stage call, in order (one call per transaction group)
    embed_calls: list[list[str]]

    @property
    def embed_texts(self) -> list[str]:
        return [text for call in self.embed_calls for text in call]


def run_pipeline(settings: Settings, embedder: Any, manifest: Path) -> IngestRun:
    store = SqliteVectorStore(settings.resolve_path(settings.store.sqlite.path))
    pipeline = IngestPipeline.from_settings(settings, store, embedder, progress=False,
                                         enricher_for=enricher_factory(settings))
    stage_seconds: dict[str, float] = defaultdict(float)
    embed_calls: list[list[str]] = []

    def timer(name: str, original: Any) -> Any:
        def timed(*args: Any, **kwargs: Any) -> Any:
            if name == "embed":
                embed_calls.append(list(args[0]))
            start = time.perf_counter()
            try:
                return original(*args, **kwargs)
            finally:
                stage_seconds[name] += time.perf_counter() - start
        return timed

    for name in STAGES:
        if name != "embed" and hasattr(pipeline, name):
            setattr(pipeline, name, timer(name, getattr(pipeline, name)))
    # the embed stage is the embedder's calls, however the pipeline reaches them (on the instance,
    # restored afterwards: the bare baselines call the same object)
    own = vars(embedder).get("embed_documents")
    embedder.embed_documents = timer("embed", embedder.embed_documents)
    before = getattr(embedder, "texts_embedded", 0)
    start = time.perf_counter()
    try:
        report = pipeline.run(manifest, profile=CISI_PROFILE)
    finally:
        if own is None:
            del embedder.embed_documents
        else:
            embedder.embed_documents = own
    seconds = time.perf_counter() - start
    if not report.ok:
        raise RuntimeError(f"benchmark ingest failed: {report.failures[:3]} {report.manifest_errors[:3]}")
    embedded = getattr(embedder, "texts_embedded", 0) - before
    return IngestRun(seconds, report.chunks_written, embedded, dict(stage_seconds), store, embed_calls)


def measure(base_config: Path, embedder: Any, documents: dict[str, str], work: Path) -> tuple[Section, IngestRun]:
    section = Section("Ingestion overhead (CISI, 1 chunk per abstract, fresh store)")
    manifest = write_corpus(documents, work / "corpus")
    embedder.embed_documents(["warm-up"] * 8)
    plain = run_pipeline(bench_settings(base_config, work / "corpus", work / "plain.sqlite", False), embedder, manifest)
    batch = load_settings(base_config, env={}).embeddings.batching.batch_size
    texts = plain.embed_texts
    start = time.perf_counter()
    for i in range(0, len(texts), batch):
        embedder.embed_documents(texts[i:i + batch])
    bare_cps = len(texts) / (time.perf_counter() - start)
    # the same texts in the same calls as the pipeline made (one per transaction group):
    # smaller calls pad less, so this can beat batch_size batches on CPU
    start = time.perf_counter()
    for call in plain.embed_calls:
        for i in range(0, len(call), batch):
            embedder.embed_documents(call[i:i + batch])
    bare_calls_cps = len(texts) / (time.perf_counter() - start)
    best_bare = max(bare_cps, bare_calls_cps)
    pipe_cps = plain.chunks / plain.seconds
    section.figures["chunks ingested"] = plain.chunks
    section.figures["embeddings computed by the pipeline"] = plain.embedded
    section.figures[f"bare embedder chunks/s (batches of {batch})"] = round(bare_cps, 1)
    mean_call = len(texts) / max(len(plain.embed_calls), 1)
    section.figures[f"bare embedder chunks/s (the pipeline's calls, {mean_call:.0f} texts each)"] = round(
        bare_calls_cps, 1)
    section.figures["pipeline chunks/s (sanitize off)"] = round(pipe_cps, 1)
    for stage, secs in plain.stage_seconds.items():
        section.figures[f"  stage {stage} seconds"] = round(secs, 2)
    other = plain.seconds - sum(plain.stage_seconds.values())
    section.figures["  outside stages (planning, hashing) seconds"] = round(other, 2)
    section.target("pipeline/best bare ratio, sanitize off", pipe_cps / best_bare, ">=", 0.85)

    _sanitize_rounds(section, base_config, embedder, manifest, work, list(documents.values()))
    return section, plain


#: interleaved rounds of (off, redact with the worker, redact in-process); the medians are reported
SANITIZE_ROUNDS = 3


def _sanitize_rounds(section: Section, base_config: Path, embedder: Any, manifest: Path, work: Path,
                     texts: list[str]) -> None:
    """Sanitize on vs off in interleaved rounds, so load from other jobs on a shared machine hits
    every mode alike; each round gives its own ratios and the medians are the figures.

    The analyzer is built (in the worker process and in this one) before the first
    round, as the embedder is warmed before the first run: the rounds measure
    throughput, not the one-off model load (a few seconds per ``rag ingest``).
    """
    from backend.common.sanitizer import ner_token_share, sanitize_if_enabled
    from backend.ingest import sanitize_worker

    def settings(name: str, sanitize: bool, worker: bool = True) -> Settings:
        return bench_settings(base_config, work / "corpus", work / f"{name}.sqlite", sanitize, worker=worker)

    warm = settings("warm", True).sanitize
    sanitize_worker.worker_for(warm).sanitize(["warm-up"], ["warm-up"])
    sanitize_if_enabled(["warm-up"], warm, doc_ids=["warm-up"])
    off_cps, worker_cps, inline_cps, analyzer_cps, embed_cps, worker_ratio, inline_ratio = ([] for _ in range(7))
    for r in range(SANITIZE_ROUNDS):
        runs = [run_pipeline(settings(f"off{r}", False), embedder, manifest),
                run_pipeline(settings(f"worker{r}", True), embedder, manifest),
                run_pipeline(settings(f"inline{r}", True, worker=False), embedder, manifest)]
        for run in runs:
            run.store.close()
        off, worker, inline = runs
        off_cps.append(off.chunks / off.seconds)
        worker_cps.append(worker.chunks / worker.seconds)
        inline_cps.append(inline.chunks / inline.seconds)
        worker_ratio.append(worker_cps[-1] / off_cps[-1])
        inline_ratio.append(inline_cps[-1] / off_cps[-1])
        analyzer_cps.append(inline.chunks / max(inline.stage_seconds.get("sanitize", 0.0), 1e-9))
        embed_cps.append(inline.embedded / max(inline.stage_seconds.get("embed", 0.0), 1e-9))
    med = statistics.median
    n = SANITIZE_ROUNDS
    section.figures[f"pipeline chunks/s (sanitize off, median of {n} rounds)"] = round(med(off_cps), 1)
    section.figures[f"pipeline chunks/s (sanitize redact, worker process, median of {n})"] = round(med(worker_cps), 1)
    section.figures[f"pipeline chunks/s (sanitize redact, in-process, median of {n})"] = round(med(inline_cps), 1)
    section.figures["sanitizer alone chunks/s"] = round(med(analyzer_cps), 1)
    section.figures[f"NER reads this share of the tokens (ner_scope {warm.ner_scope})"] = round(
        ner_token_share(texts, warm), 3)
    section.figures["embedder inside the in-process runs chunks/s"] = round(med(embed_cps), 1)
    section.figures["redact/off ratio per round, worker process"] = " ".join(f"{x:.3f}" for x in worker_ratio)
    section.figures["redact/off ratio per round, in-process"] = " ".join(f"{x:.3f}" for x in inline_ratio)
    section.figures[f"redact/off ingest ratio, in-process (median of {n})"] = round(med(inline_ratio), 3)
    section.target("redact/off ingest ratio, worker process", round(med(worker_ratio), 3), ">=", 0.8)
    section.notes.append(
        "with the worker, PII analysis of the next group runs in another process while this group embeds; "
        "each round runs off, worker, in-process back to back in one process; on a shared 2-core machine the "
        "ratio moves with load"
    )
