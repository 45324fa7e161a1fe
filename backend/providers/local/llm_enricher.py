"""``Enricher`` over the local generative model (``llm_runtime``: Gemma 3 270M GGUF).

One grammar-constrained call per chunk (the JSON schema of ``reply_schema``, enums
included, so the answer always has the right shape) and one per page/document summary.
The 270M model is a pretrained base model: docs/ENRICHMENT.md has the measured quality
and cost, which is why it is not the default.
"""

from __future__ import annotations

from pathlib import Path
from typing import Mapping, Sequence

import structlog

from backend.common.config import EnrichmentSettings, MetadataFieldSettings
from backend.common.errors import ProviderError
from backend.core.enrichment import ChunkEnrichment, EnrichmentInput, parse_reply, parse_summary
from backend.providers.enrichment_prompt import EnrichmentPrompt
from backend.providers.local.llm_runtime import MODEL_ID, LlamaRuntime

log = structlog.get_logger(__name__)


class LocalLlmEnricher:
    def __init__(self, settings: EnrichmentSettings, schema: Mapping[str, MetadataFieldSettings],
                 content_types: Sequence[str], model_dir: Path, runtime: LlamaRuntime | None = None) -> None:
        self._settings = settings
        self._prompt = EnrichmentPrompt.of(settings, schema, content_types, max_chars=settings.local.max_input_chars)
        self._runtime = runtime or LlamaRuntime(settings.local, model_dir)
        self.model_id = f"local_llm/{MODEL_ID}"
        self.calls = 0
        self.failures = 0

    def enrich(self, items: Sequence[EnrichmentInput]) -> list[ChunkEnrichment]:
        return [self._one(item) for item in items]

    def _one(self, item: EnrichmentInput) -> ChunkEnrichment:
        s = self._settings
        messages = self._prompt.chunk_messages(item)
        self.calls += 1
        text = self._runtime.chat_json(messages, self._prompt.schema, max_tokens=s.max_tokens, temperature=s.temperature)
        try:
            return parse_reply(text)
        except ValueError as exc:  # cut off by max_tokens: an empty proposal, counted, never a failed ingest
            self.failures += 1
            log.warning("enrich.local_llm_unparsed", chunk_id=item.chunk_id, reason=str(exc)[:200])
            return ChunkEnrichment()

    def summarize(self, title: str, texts: Sequence[str]) -> str:
        s = self._settings
        self.calls += 1
        text = self._runtime.chat_json(self._prompt.summary_messages(title, texts), self._prompt.summary_schema,
                                       max_tokens=min(s.max_tokens, 160), temperature=s.temperature)
        try:
            return parse_summary(text)
        except ValueError as exc:
            self.failures += 1
            log.warning("enrich.local_llm_unparsed", what="summary", reason=str(exc)[:200])
            return ""


__all__ = ["LocalLlmEnricher", "ProviderError"]
