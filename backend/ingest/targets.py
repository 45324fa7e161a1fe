"""The ingest records, in the order a document meets them, and the per-series run.

A manifest entry becomes ``Planned`` (entry and hash: it must be written), then ``Prepared``
(loaded, sanitized, chunked), then ``Enriched`` (metadata filled in, questions and summaries to
embed), then a ``DocumentWrite`` (``backend.core.types``: its rows with their vectors). Each
record is frozen: a stage returns new records and never edits what it was given, so a record
handed to a helper thread or pickled to a Ray worker means the same thing everywhere.

``TargetRun`` is one series being written (its version, the documents still to write) and
``EngineStats`` what an engine returns; ``Target`` says where a group of entries goes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import islice
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Protocol, Sequence

from backend.common.config import REPO_ROOT, EmbeddingSettings, ProfileSettings
from backend.common.errors import ConfigError
from backend.common.pii_findings import SanitizeOutcome
from backend.core.types import Chunk, HypotheticalQuestion, Summary
from backend.ingest.documents import LoadedDocument
from backend.ingest.embedding_batches import EmbeddingBatcher, EmbeddingStats
from backend.ingest.manifest import ManifestEntry


@dataclass(frozen=True)
class Target:
    """Where a group of manifest entries goes: a profile and its version table."""

    profile_name: str
    profile: ProfileSettings
    version: str
    #: ``--in-place``: the version may be one an alias serves
    allow_served: bool = False


@dataclass(frozen=True)
class Planned:
    """A document the planner found changed (or new): its manifest entry and the hash it will be
    stored with, in manifest order."""

    entry: ManifestEntry
    doc_hash: str


@dataclass(frozen=True)
class Prepared:
    """A document loaded, sanitized and chunked (``prepare.Preparer``)."""

    planned: Planned
    doc: LoadedDocument
    chunks: tuple[Chunk, ...]

    @property
    def entry(self) -> ManifestEntry:
        return self.planned.entry


@dataclass(frozen=True)
class Enriched:
    """A document after the enrichment step: its chunks (metadata filled in when a profile
    enriches) and the question and summary rows embedded with them."""

    prepared: Prepared
    chunks: tuple[Chunk, ...]
    questions: tuple[HypotheticalQuestion, ...] = ()
    summaries: tuple[Summary, ...] = ()

    @classmethod
    def plain(cls, prepared: Prepared) -> Enriched:
        """A document of a profile that does not enrich: its chunks as prepared."""
        return cls(prepared, prepared.chunks)

    @property
    def entry(self) -> ManifestEntry:
        return self.prepared.planned.entry


#: what an engine returns: its embedding batchers' counts summed, and the groups it committed
EngineStats = EmbeddingStats


@dataclass(frozen=True)
class TargetRun:
    """One series being written (``planner.Planner.start``): its version (``target.version``,
    ``target.allow_served``), the documents still to write in manifest order, and how to make an
    ``EmbeddingBatcher``. The fields are fixed; ``written`` and ``build`` collect what the run did."""

    series: str
    target: Target
    pending: Sequence[Planned]
    #: ``doc_id -> doc_hash`` the version held before this run (prune and carried counts)
    existing: dict[str, str]
    listed: set[str]
    parent: str | None
    prune: bool
    #: this series' entry of ``IngestReport.builds`` (written and pruned are added at the finish)
    build: dict[str, Any]
    group_size: int
    #: ``batcher(on_embedded)``: a batcher over the ingest's embedder and vector cache
    batcher: Callable[[Callable[[int], None] | None], EmbeddingBatcher]
    #: documents of the manifest already in the version before this run (unchanged hashes)
    done_before: int = 0
    #: documents listed for this series, readable or not (the "of M" of a cancel)
    total: int = 0
    #: doc ids written by this run (``embed_write.Writer.record`` adds them)
    written: set[str] = field(default_factory=set)

    def groups(self) -> Iterator[list[Planned]]:
        """The pending documents in groups of ``group_size`` (one store transaction each)."""
        it = iter(self.pending)
        while group := list(islice(it, self.group_size)):
            yield group


class TextSanitizer(Protocol):
    """The sanitize stage: PII redaction of many texts in one call (in this process, or the
    ``SanitizeWorker`` process that runs beside embedding)."""

    def sanitize(self, texts: Sequence[str], doc_ids: Sequence[str]) -> SanitizeOutcome: ...


def display_source(path: Path) -> str:
    """Repo-relative when possible, so stored sources do not depend on the checkout location;
    else the file name: a stored source is never an absolute server path. Entries read from a
    manifest carry their own (``ManifestEntry.source``: relative to the manifest's folder or
    allowed root), which :func:`entry_source` prefers."""
    return path.relative_to(REPO_ROOT).as_posix() if path.is_relative_to(REPO_ROOT) else path.name


def entry_source(entry: ManifestEntry) -> str:
    """What the entry's chunks store as ``source``."""
    return entry.source or display_source(entry.path)


def plan_targets(emb: EmbeddingSettings, entries: Iterable[ManifestEntry], profile: str | None,
                 domain_key: str | None) -> list[tuple[Target, list[ManifestEntry]]]:
    """Pure: entries grouped by version: ``--domain-key`` > ``--profile`` > the line's
    ``profiles`` > ``embeddings.default_profile``."""
    if domain_key is not None:
        domain = emb.domains.get(domain_key)
        if domain is None:
            raise ConfigError(f"--domain-key {domain_key!r} is not configured; known: {sorted(emb.domains)}")
        name = domain.profile or emb.default_profile
        return [(Target(name, emb.profiles[name], domain.index_name), list(entries))]
    if profile is not None and profile not in emb.profiles:
        raise ConfigError(f"--profile {profile!r} is not configured; known: {sorted(emb.profiles)}")
    groups: dict[str, list[ManifestEntry]] = {}
    for entry in entries:
        for name in [profile] if profile else (entry.profiles or (emb.default_profile,)):
            groups.setdefault(name, []).append(entry)
    if not groups:
        groups[profile or emb.default_profile] = []
    return [(Target(n, emb.profiles[n], emb.profiles[n].index_name), e) for n, e in groups.items()]
