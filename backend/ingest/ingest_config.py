"""The settings slice an ingest reads, frozen: what shapes chunks, hashes, versions and limits.

Why a slice and not ``Settings``: the pipeline (and the loader worker it pickles its config to)
should depend on the areas it reads, so a change to chat, API or evaluation settings cannot
change an ingest, and a test can see at a glance what an ingest is configured by.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Union

from backend.common.config import (
    REPO_ROOT,
    AccessSettings,
    DocxSettings,
    EmbeddingSettings,
    IngestSettings,
    LoggingSettings,
    RetrievalSettings,
    SanitizeSettings,
    Settings,
)


@dataclass(frozen=True)
class IngestConfig:
    ingest: IngestSettings
    embeddings: EmbeddingSettings
    sanitize: SanitizeSettings
    docx: DocxSettings
    #: the retrieval stamp recorded on each version, and the metadata schema manifests are checked against
    retrieval: RetrievalSettings
    #: default ACL labels of manifest lines without ``acl``
    access: AccessSettings
    #: the loader worker configures its logging from it
    logging: LoggingSettings

    @classmethod
    def of(cls, settings: Settings) -> IngestConfig:
        return cls(ingest=settings.ingest, embeddings=settings.embeddings, sanitize=settings.sanitize,
                   docx=settings.docx, retrieval=settings.retrieval, access=settings.access, logging=settings.logging)

    @staticmethod
    def resolve_path(value: str) -> Path:
        """A configured path, relative to the repository root (as ``Settings.resolve_path``)."""
        p = Path(value).expanduser()
        return p if p.is_absolute() else (REPO_ROOT / p)


#: what the manifest reader, the loaders and the loader worker accept: the slice, or the whole settings
ConfigLike = Union[IngestConfig, Settings]
