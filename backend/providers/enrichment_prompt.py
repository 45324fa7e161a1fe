"""What every generative enricher asks its model (the OpenAI-compatible and OCI ones, the local LLM):
the messages for a chunk and for a page / document summary, and the JSON schemas their replies follow,
built once from the profile's enrichment settings, metadata schema and content types
(``backend.core.enrichment`` writes the prompts)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar, Mapping, Sequence

from backend.common.config import EnrichmentSettings, MetadataFieldSettings
from backend.core.enrichment import (
    SUMMARY_SCHEMA,
    EnrichmentInput,
    enrich_messages,
    enrichable_fields,
    reply_schema,
    summary_messages,
)


@dataclass(frozen=True)
class EnrichmentPrompt:
    content_types: tuple[str, ...]
    fields: dict[str, MetadataFieldSettings]
    questions: int
    #: what a chunk's reply must be: enums where the metadata schema has them
    schema: dict[str, Any]
    #: text each message carries at most; None: ``backend.core.enrichment``'s default
    max_chars: int | None = None
    summary_schema: ClassVar[Mapping[str, Any]] = SUMMARY_SCHEMA

    @classmethod
    def of(cls, settings: EnrichmentSettings, schema: Mapping[str, MetadataFieldSettings],
           content_types: Sequence[str], *, max_chars: int | None = None) -> EnrichmentPrompt:
        fields = enrichable_fields(schema)
        types = tuple(content_types)
        return cls(types, fields, settings.questions, reply_schema(types, fields, settings.questions), max_chars)

    def chunk_messages(self, item: EnrichmentInput) -> list[dict[str, str]]:
        return enrich_messages(item, self.content_types, self.fields, self.questions, **self._limit())

    def summary_messages(self, title: str, texts: Sequence[str]) -> list[dict[str, str]]:
        return summary_messages(title, texts, **self._limit())

    def _limit(self) -> dict[str, int]:
        return {} if self.max_chars is None else {"max_chars": self.max_chars}
