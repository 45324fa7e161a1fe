"""What the ingest stages pass along: a target version, a pending document, the sanitizer stage."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Protocol, Sequence

from backend.common.config import REPO_ROOT, EmbeddingSettings, ProfileSettings
from backend.common.errors import ConfigError
from backend.common.pii_findings import SanitizeOutcome
from backend.core.types import Chunk
from backend.ingest.documents import LoadedDocument
from backend.ingest.enrichment_stage import Enriched
from backend.ingest.manifest import ManifestEntry


@dataclass(frozen=True)
class Target:
    """Where a group of manifest entries goes: a profile and its version table."""

    profile_name: str
    profile: ProfileSettings
    version: str
    #: ``--in-place``: the version may be one an alias serves
    allow_served: bool = False


@dataclass
class Pending:
    """One document on its way through the stages, in manifest order."""

    entry: ManifestEntry
    doc_hash: str
    doc: LoadedDocument | None = None
    text: str = ""
    chunks: list[Chunk] = field(default_factory=list)
    enriched: Enriched | None = None


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
