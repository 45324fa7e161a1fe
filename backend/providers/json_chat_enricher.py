"""What the remote enrichers share: prompts, reply schema and the parsing of a JSON chat reply.

An adapter supplies ``_ask(messages, name, schema)`` (one schema-constrained chat call with
its pacing and retries) and ``_where`` (where the call went, for error messages). A reply
that is not the JSON asked for is a ``ProviderError`` naming the chunk: a configured model
that answers garbage is a broken configuration, not a chunk to skip.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from backend.common.config import EnrichmentSettings, MetadataFieldSettings
from backend.common.errors import ProviderError
from backend.core.enrichment import (
    SUMMARY_SCHEMA,
    ChunkEnrichment,
    EnrichmentInput,
    enrich_messages,
    enrichable_fields,
    parse_reply,
    parse_summary,
    reply_schema,
    summary_messages,
)


class JsonChatEnricher:
    def __init__(self, settings: EnrichmentSettings, schema: Mapping[str, MetadataFieldSettings],
                 content_types: Sequence[str]) -> None:
        self._settings = settings
        self._fields = enrichable_fields(schema)
        self._content_types = tuple(content_types)
        self._schema = reply_schema(self._content_types, self._fields, settings.questions)
        self.calls = 0

    @property
    def _where(self) -> str:
        raise NotImplementedError

    def _ask(self, messages: list[dict[str, str]], name: str, schema: Mapping[str, Any]) -> str:
        raise NotImplementedError

    def enrich(self, items: Sequence[EnrichmentInput]) -> list[ChunkEnrichment]:
        out = []
        for item in items:
            messages = enrich_messages(item, self._content_types, self._fields, self._settings.questions)
            text = self._ask(messages, "chunk_enrichment", self._schema)
            try:
                out.append(parse_reply(text))
            except ValueError as exc:
                raise ProviderError(f"{self._where}, chunk {item.chunk_id}: {exc}") from exc
        return out

    def summarize(self, title: str, texts: Sequence[str]) -> str:
        text = self._ask(summary_messages(title, texts), "summary", SUMMARY_SCHEMA)
        try:
            return parse_summary(text)
        except ValueError as exc:
            raise ProviderError(f"{self._where}: {exc}") from exc
