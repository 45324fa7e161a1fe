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
from backend.core.enrichment import ChunkEnrichment, EnrichmentInput, parse_reply, parse_summary
from backend.providers.enrichment_prompt import EnrichmentPrompt


class JsonChatEnricher:
    def __init__(self, settings: EnrichmentSettings, schema: Mapping[str, MetadataFieldSettings],
                 content_types: Sequence[str]) -> None:
        self._settings = settings
        self._prompt = EnrichmentPrompt.of(settings, schema, content_types)
        self.calls = 0

    @property
    def _where(self) -> str:
        raise NotImplementedError

    def _ask(self, messages: list[dict[str, str]], name: str, schema: Mapping[str, Any]) -> str:
        raise NotImplementedError

    def enrich(self, items: Sequence[EnrichmentInput]) -> list[ChunkEnrichment]:
        out = []
        for item in items:
            text = self._ask(self._prompt.chunk_messages(item), "chunk_enrichment", self._prompt.schema)
            try:
                out.append(parse_reply(text))
            except ValueError as exc:
                raise ProviderError(f"{self._where}, chunk {item.chunk_id}: {exc}") from exc
        return out

    def summarize(self, title: str, texts: Sequence[str]) -> str:
        text = self._ask(self._prompt.summary_messages(title, texts), "summary", self._prompt.summary_schema)
        try:
            return parse_summary(text)
        except ValueError as exc:
            raise ProviderError(f"{self._where}: {exc}") from exc
