"""What exactly is embedded, as pure functions.

The stored text of a chunk is never changed; what the model sees is the
profile's document prefix, then the content-type template (seed 000), then the
chunk text. Queries get the profile's query prefix. Because the result is the
whole embedded string, its hash is a safe key for the embedding cache.
"""

from __future__ import annotations

from typing import Mapping

from backend.common.config import ProfileSettings


def document_input(text: str, profile: ProfileSettings, content_type: str | None = None) -> str:
    template = profile.templates.get(content_type or "", "") if content_type else ""
    body = f"{template}\n{text}" if template else text
    return f"{profile.document_prefix}{body}"


def query_input(question: str, profile: ProfileSettings) -> str:
    return f"{profile.query_prefix}{question}"


def content_type_of(metadata: Mapping[str, object]) -> str | None:
    value = metadata.get("content_type")
    return value if isinstance(value, str) else None
