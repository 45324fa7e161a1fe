"""What exactly is embedded, as pure functions.

The stored text of a chunk is never changed; what the model sees is the
profile's document prefix, then the content-type template (seed 000), then the
contextual header (document title and heading path, ``chunk_headers``), then the
chunk text. Queries get the profile's query prefix. Because the result is the
whole embedded string, its hash is a safe key for the embedding cache.
"""

from __future__ import annotations

from pathlib import PurePath
from typing import Mapping, Sequence

from backend.common.config import ProfileSettings

#: profile fields that never shape what is embedded, so never in a document's fingerprint
#: (``enrichment`` shapes it, but enters the fingerprint on its own terms: ``enrichment_fingerprint``)
_NOT_EMBEDDED = frozenset({"index_name", "query_prefix", "fusion", "lexical", "enrichment"})
_HEADER_FIELDS = frozenset({"chunk_headers", "header_template"})


def profile_fingerprint_exclude(profile: ProfileSettings) -> set[str]:
    """Profile fields left out of a document's fingerprint. The header fields count only
    while headers are on, and ``ocr_pictures`` only while on, so documents ingested before
    they existed keep their hash."""
    return set(_NOT_EMBEDDED | (frozenset() if profile.chunk_headers else _HEADER_FIELDS)
               | (frozenset() if profile.ocr_pictures else {"ocr_pictures"}))


def chunk_header(profile: ProfileSettings, title: str, headings: Sequence[str]) -> str:
    """The contextual header of one chunk, or "" when ``chunk_headers`` is off."""
    if not profile.chunk_headers:
        return ""
    text = profile.header_template.format(title=" ".join(title.split()),
                                          headings=" > ".join(" ".join(h.split()) for h in headings if h.strip()))
    return "\n".join(line for line in text.splitlines() if line.strip())


def document_title(metadata: Mapping[str, object], source: str) -> str:
    """The manifest's ``title`` metadata, else the source file's stem."""
    title = metadata.get("title")
    return title if isinstance(title, str) and title.strip() else PurePath(source).stem


def document_input(text: str, profile: ProfileSettings, content_type: str | None = None, header: str = "") -> str:
    template = profile.templates.get(content_type or "", "") if content_type else ""
    body = "\n".join(part for part in (template, header, text) if part) if (template or header) else text
    return f"{profile.document_prefix}{body}"


def query_input(question: str, profile: ProfileSettings) -> str:
    return f"{profile.query_prefix}{question}"


def content_type_of(metadata: Mapping[str, object]) -> str | None:
    value = metadata.get("content_type")
    return value if isinstance(value, str) else None
