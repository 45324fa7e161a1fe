"""``RayEngine``: the pending documents of one version through Ray Data, written by the driver.

The dataset is the pending documents in manifest order, one row each; two ``map_batches``
stages run in actor pools (``stages.PrepareStage``: load, sanitize, chunk; ``stages.EmbedStage``:
embed, one model per actor, loaded once). The driver reads the rows back in order
(``preserve_order``) and commits them in groups of ``ingest.documents_per_transaction`` with
the ``Writer`` stage (``GroupWriter``): one writer, the same transactions as the single-process engine, so
the version, its chunk ids and texts are the same whichever engine wrote them. Cancellation is
checked after each group, as in one process; ``finish_target`` (prune, ``finish_load``) and the
gate are the caller's, unchanged.

Failures: a document that fails to load or embed is reported and left out, as in one process.
A worker process that dies (killed, out of memory) is restarted by Ray and its batch retried
(Ray Data's defaults for actor pools); an error raised by a stage's code is not retried and
stops the run as it would in one process. When the run stops (that error, the cluster lost,
``RayEngineError``), the candidate keeps what was written: the same command resumes it (written
documents' hashes match).

Not done here yet: enrichment (``profile.enrichment``; the default engine does it). The embedding
cache is read only by actors that see the driver's SQLite file (``Stages.worker_cache``, opened
with the ``vector_cache`` factory); elsewhere every pending text is embedded (unchanged documents
are still skipped by hash before anything runs).
"""

from __future__ import annotations

import time
from typing import Any, Iterator

import structlog

from backend.common.config import ProfileSettings
from backend.common.errors import ConfigError, RagError
from backend.common.progress import Progress
from backend.common.pii_findings import PiiFinding
from backend.core.types import DocumentWrite
from backend.ingest.group_writer import GroupWriter
from backend.ingest.ingest_config import IngestConfig
from backend.ingest.ray_engine.cluster import Connection, connect, require_ray
from backend.ingest.ray_engine.stages import (
    COLUMN,
    EmbedderFactory,
    EmbedStage,
    PrepareStage,
    Row,
    VectorCacheFactory,
    pack,
    unpack,
)
from backend.ingest.report import IngestReport
from backend.ingest.stages import Stages
from backend.ingest.targets import EngineStats, TargetRun

log = structlog.get_logger(__name__)

#: how long the run waits for its actors to start (more actors asked for than the cluster has CPUs)
WAIT_FOR_ACTORS_S = 300


class RayEngineError(RagError):
    """The Ray engine stopped (a worker lost past its retries, the cluster gone); resumable."""

    code = "ray_engine_error"


def enrichment_refusal(profile_name: str, profile: ProfileSettings) -> str | None:
    """Why this profile cannot be ingested with the Ray engine yet, or None."""
    provider = profile.enrichment.provider
    if provider == "none":
        return None
    return (f"embeddings.profiles.{profile_name}.enrichment.provider is {provider!r}: the Ray engine does not "
            "enrich yet; ingest this profile with the default engine (leave out --engine)")


class RayEngine:
    """``IngestEngine`` on Ray Data. ``address``: a Ray cluster (None: start Ray on this machine,
    ``num_cpus`` CPUs); ``actors``: embedding actors (default: one per CPU of the cluster), each
    reserving one CPU and running its model on one thread; ``prepare_actors``: actors that load,
    sanitize and chunk (they reserve no CPU: give more of them when sanitizing is on).
    ``embedder_factory`` builds the model inside each actor and ``vector_cache`` opens the driver's
    embedding cache there (module-level functions of the composition root, so they pickle; without
    ``vector_cache`` every pending text is embedded).
    """

    def __init__(self, embedder_factory: EmbedderFactory, *, address: str | None = None, actors: int | None = None,
                 prepare_actors: int = 1, num_cpus: int | None = None, writers: int = 1,
                 vector_cache: VectorCacheFactory | None = None) -> None:
        require_ray()
        if actors is not None and actors < 1:
            raise ConfigError(f"--ray-actors must be at least 1, got {actors}")
        if prepare_actors < 1:
            raise ConfigError(f"--ray-prepare-actors must be at least 1, got {prepare_actors}")
        if writers < 1:
            raise ConfigError(f"--ray-writers must be at least 1, got {writers}")
        self.embedder_factory = embedder_factory
        self.vector_cache = vector_cache
        self.address, self.actors, self.prepare_actors = address, actors, prepare_actors
        self.writers = writers
        #: the driver's SQLite file, whose embedding cache the embedding actors read (None: no cache)
        self._cache_db: str | None = None
        self.num_cpus = num_cpus
        self._connection: Connection | None = None
        #: seconds of the last connect and of the last target's start (first document out of the stages)
        self.timings: dict[str, float] = {}

    def connection(self) -> Connection:
        """Connected on first use and kept for every target of the run (``close`` ends it)."""
        if self._connection is None:
            started = time.perf_counter()
            self._connection = connect(self.address, num_cpus=self.num_cpus)
            self.timings["connect_s"] = time.perf_counter() - started
        return self._connection

    def close(self) -> None:
        if self._connection is not None:
            self._connection.close()
            self._connection = None

    def __enter__(self) -> RayEngine:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def process(self, stages: Stages, run: TargetRun, report: IngestReport, progress: Progress) -> EngineStats:
        target = run.target
        refusal = enrichment_refusal(target.profile_name, target.profile)
        if refusal is not None:
            raise ConfigError(refusal)
        stats = EngineStats()
        if not run.pending:
            return stats
        self._cache_db = stages.worker_cache
        done = False
        try:
            self._process(stages, run, report, progress, stats)
            done = True
        finally:
            if not done:  # cancelled or failed: finish_target will not run, the report still counts
                report.add_engine_stats(stats)
        return stats

    def _process(self, stages: Stages, run: TargetRun, report: IngestReport, progress: Progress,
                 stats: EngineStats) -> None:
        findings: list[PiiFinding] = []
        group: list[DocumentWrite] = []
        documents = 0
        with GroupWriter(stages.write, run, report, progress, writers=self.writers,
                         store_writers=stages.write.max_writers()) as writer:
            for row in self._rows(stages.prepare.config, run):
                if row.scratch is not None:
                    report.absorb(row.scratch)
                findings += row.findings
                stats.computed += row.computed
                stats.retries += row.retries
                progress.embedded(row.computed)
                if row.write is not None:
                    group.append(row.write)
                documents += 1
                if documents == run.group_size:
                    self._commit(stages, writer, group, documents, findings, stats)
                    group, documents, findings = [], 0, []
            if documents:
                self._commit(stages, writer, group, documents, findings, stats)

    @staticmethod
    def _commit(stages: Stages, writer: GroupWriter, writes: list[DocumentWrite], documents: int,
                findings: list[PiiFinding], stats: EngineStats) -> None:
        if findings:  # before the rows: an audit line is never missing for a written document
            from backend.common.sanitizer import write_findings

            config = stages.prepare.config
            write_findings(config.resolve_path(config.sanitize.audit_path), findings)
            log.info("ingest.pii_findings", findings=len(findings), documents=documents)
        writer.submit(writes, documents)
        stats.groups += 1
        if writer.in_flight and stages.cancel.requested(writer.run.series) is not None:
            writer.drain()  # what the writers in flight commit is counted before the cancel says how much is written
        stages.cancel(writer.run, writer.report)

    def _rows(self, config: IngestConfig, run: TargetRun) -> Iterator[Row]:
        """The documents after both stages, in manifest order."""
        ray = require_ray()
        self.timings.pop("first_document_s", None)
        cpus = self.connection().cpus
        actors = self.actors or cpus
        dataset = self._dataset(ray, config, run, actors)
        log.info("ingest.ray_started", version=run.target.version, documents=len(run.pending), cpus=cpus,
                 embed_actors=actors, prepare_actors=self.prepare_actors)
        started = time.perf_counter()
        rows = dataset.iter_rows()
        try:
            for value in rows:
                self.timings.setdefault("first_document_s", time.perf_counter() - started)
                yield unpack(value[COLUMN])
        except ray.exceptions.RayError as exc:
            raise _engine_error(exc, run) from exc
        finally:
            close = getattr(rows, "close", None)
            if callable(close):
                close()  # stops the dataset's executor when the driver stops early (cancel, error)

    def _dataset(self, ray: Any, config: IngestConfig, run: TargetRun, actors: int) -> Any:
        from ray.data import ActorPoolStrategy, DataContext

        context = DataContext.get_current()
        context.execution_options.preserve_order = True  # manifest order: the same groups as one process
        context.raise_original_map_exception = True  # a stage's SanitizerError, not a wrapper around it
        context.wait_for_min_actors_s = WAIT_FOR_ACTORS_S
        size = run.group_size
        rows = [{COLUMN: pack(Row(seq, planned))} for seq, planned in enumerate(run.pending)]
        dataset = ray.data.from_items(rows, override_num_blocks=max(1, -(-len(rows) // size)))
        dataset = dataset.map_batches(
            PrepareStage, fn_constructor_args=(config, run.target, self.embedder_factory), batch_size=size,
            batch_format="numpy", compute=ActorPoolStrategy(size=self.prepare_actors), num_cpus=0)
        return dataset.map_batches(
            EmbedStage, fn_constructor_args=(config, run.target, self.embedder_factory, 1, self._cache_db,
                                             self.vector_cache),
            batch_size=size,
            batch_format="numpy", compute=ActorPoolStrategy(size=actors), num_cpus=1)


def _engine_error(exc: BaseException, run: TargetRun) -> RagError:
    """The user's error when a stage raised one (a ``SanitizerError``, a ``ConfigError``), else a
    ``RayEngineError`` saying the candidate is resumable."""
    seen: set[int] = set()
    cause: BaseException | None = exc
    while cause is not None and id(cause) not in seen:
        if isinstance(cause, RagError):
            return cause
        seen.add(id(cause))
        cause = getattr(cause, "cause", None) or cause.__cause__
    first = (str(exc).strip().splitlines() or [type(exc).__name__])[0][:300]
    return RayEngineError(f"the Ray engine stopped: {type(exc).__name__}: {first}; version {run.target.version} keeps "
                          "the documents written so far: run the same command to resume", version=run.target.version)
