"""The ingest stage between chunking and embedding: enrich chunks, cached.

For each document of a group: every text chunk goes to the profile's ``Enricher`` unless
the cache holds its result (key: the enrichment input's content hash, ``prompt_version``,
the enricher's ``model_id``), in batches of ``enrichment.batch_size``. What comes back is
accepted against the typed schema (``backend.core.enrichment.accept``: invalid values
dropped and counted), merged into the chunk's metadata (the manifest's values win; a
content type the manifest did not give also picks the profile's embedding template), and
turned into ``HypotheticalQuestion`` rows; page and document summaries (cached the same
way) become ``Summary`` rows. The pipeline embeds all of them in its one batched call.
"""

from __future__ import annotations

import hashlib
import json
import time
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Mapping, Sequence

import structlog

from backend.common.config import ProfileSettings
from backend.common.errors import ConfigError, ProviderError
from backend.core.embedding_text import chunk_header, document_input, document_title
from backend.core.enrichment import (
    ChunkEnrichment,
    EnrichmentInput,
    accept,
    allowed_content_types,
    enriched_metadata,
    pages_of,
    question_rows,
    summary_rows,
)
from backend.core.ports import Enricher, EnrichmentCache
from backend.core.types import Chunk, HypotheticalQuestion, Summary
from backend.ingest.ingest_config import ConfigLike
from backend.ingest.report import IngestReport
from backend.ingest.targets import Enriched, Prepared, Target

log = structlog.get_logger(__name__)


#: ``enricher_for(profile)``: the profile's enricher (None while enrichment is off); the composition
#: root passes the provider registry's (ingest imports no provider)
EnricherFactory = Callable[[ProfileSettings], "Enricher | None"]



def no_enricher(profile: ProfileSettings) -> Enricher | None:
    """The enricher factory of a pipeline given none: fine while enrichment is off."""
    if profile.enrichment.provider == "none":
        return None
    raise ConfigError(f"enrichment.provider of the profile of {profile.index_name} is "
                      f"{profile.enrichment.provider!r} but this ingest was built without an enricher factory "
                      "(build it with Runtime.ingest, or pass enricher_for=)")


@dataclass
class EnrichmentStats:
    chunks_enriched: int = 0
    cache_hits: int = 0
    llm_calls: int = 0
    metadata_dropped: int = 0
    questions: int = 0
    summaries: int = 0
    seconds: float = 0.0


@dataclass(frozen=True)
class Enrichment:
    """What enriching one document's chunks gives: its chunks (metadata filled in) and the rows to embed."""

    chunks: list[Chunk]
    questions: list[HypotheticalQuestion] = field(default_factory=list)
    summaries: list[Summary] = field(default_factory=list)


def _input(chunk: Chunk, title: str) -> EnrichmentInput:
    meta = chunk.metadata
    headings = meta.get("heading_path")
    page = meta.get("page")
    return EnrichmentInput(chunk.chunk_id, chunk.text, title,
                           tuple(h for h in headings if isinstance(h, str)) if isinstance(headings, list) else (),
                           page if isinstance(page, int) else None,
                           {**{k: v for k, v in meta.items() if k not in ("char_start", "heading_path", "page")},
                            "source": chunk.source})


def _summary_key(title: str, texts: Sequence[str]) -> str:
    return hashlib.sha256(json.dumps({"summary_of": texts, "title": title}).encode()).hexdigest()


class EnrichmentStage:
    def __init__(self, settings: ConfigLike, profile: ProfileSettings, enricher: Enricher, cache: EnrichmentCache) -> None:
        self.profile = profile
        self.config = profile.enrichment
        self.schema = settings.retrieval.metadata_schema
        self.content_types = allowed_content_types(self.schema, profile.templates)
        self.enricher = enricher
        self.cache = cache
        self.stats = EnrichmentStats()

    # --- cached calls ------------------------------------------------------------------
    def _proposals(self, inputs: Sequence[EnrichmentInput]) -> list[ChunkEnrichment]:
        version, model = self.config.prompt_version, self.enricher.model_id
        keys = [i.content_key(self.config.questions) for i in inputs]
        known = self.cache.get_many(version, model, keys) if keys else {}
        self.stats.cache_hits += sum(1 for k in keys if k in known)
        todo = [(k, i) for k, i in dict(zip(keys, inputs)).items() if k not in known]
        fresh: dict[str, str] = {}
        for start in range(0, len(todo), self.config.batch_size):
            part = todo[start:start + self.config.batch_size]
            calls = self.enricher.calls
            for (key, _), proposal in zip(part, self.enricher.enrich([i for _, i in part])):
                fresh[key] = proposal.to_json()
            self.stats.llm_calls += self.enricher.calls - calls
            self.cache.put_many(version, model, {k: fresh[k] for k, _ in part if k in fresh})
        payloads = {**known, **fresh}
        return [ChunkEnrichment.from_json(payloads[k]) for k in keys]

    def _summary(self, title: str, texts: Sequence[str]) -> str:
        version, model = self.config.prompt_version, self.enricher.model_id
        key = _summary_key(title, texts)
        known = self.cache.get_many(version, model, [key])
        if key in known:
            self.stats.cache_hits += 1
            return str(json.loads(known[key])["summary"])
        calls = self.enricher.calls
        text = self.enricher.summarize(title, texts)
        self.stats.llm_calls += self.enricher.calls - calls
        self.cache.put_many(version, model, {key: json.dumps({"summary": text})})
        return text

    # --- one document ------------------------------------------------------------------
    def enrich(self, doc_id: str, source: str, metadata: dict[str, Any], chunks: Sequence[Chunk]) -> Enrichment:
        """Raises ``ProviderError`` when the enricher fails for good; the pipeline fails the document."""
        started = time.perf_counter()
        title = document_title(metadata, source)
        text_chunks = [c for c in chunks if c.chunk_type == "text"]
        proposals = dict(zip((c.chunk_id for c in text_chunks),
                             self._proposals([_input(c, title) for c in text_chunks])))
        out: list[Chunk] = []
        questions: list[HypotheticalQuestion] = []
        for chunk in chunks:
            proposal = proposals.get(chunk.chunk_id)
            if proposal is None:
                out.append(chunk)
                continue
            accepted = accept(proposal, self.schema, self.content_types, self.config.questions)
            self.stats.metadata_dropped += accepted.dropped
            out.append(self._apply(chunk, accepted.enrichment, title))
            questions += question_rows(chunk, accepted.enrichment.questions)
        summaries: list[Summary] = []
        if self.config.summaries and text_chunks:
            pages = [(key, covered, self._summary(title, [c.text for c in covered]))
                     for key, covered in pages_of(text_chunks)]
            basis = [text for _, _, text in pages if text.strip()] if len(pages) > 1 else [c.text for c in text_chunks]
            summaries = summary_rows(doc_id, pages, self._summary(title, basis), text_chunks)
        self.stats.chunks_enriched += len(proposals)
        self.stats.questions += len(questions)
        self.stats.summaries += len(summaries)
        self.stats.seconds += time.perf_counter() - started
        return Enrichment(out, questions, summaries)

    def _apply(self, chunk: Chunk, enrichment: ChunkEnrichment, title: str) -> Chunk:
        metadata = enriched_metadata(chunk.metadata, enrichment)
        embed_text = chunk.embed_text
        new_type = metadata.get("content_type")
        if new_type != chunk.metadata.get("content_type") and isinstance(new_type, str) and new_type in self.profile.templates:
            path = metadata.get("heading_path")
            headings = [h for h in path if isinstance(h, str)] if isinstance(path, list) else []
            embed_text = document_input(chunk.text, self.profile, new_type,
                                        chunk_header(self.profile, title, headings))
        return replace(chunk, metadata=metadata, embed_text=embed_text)


class EnrichStep:
    """The enrichment step: ``(items, target, report) -> list[Enriched]``. Each profile's stage is
    built once per run: its enricher by ``enricher_for`` (or one of ``enrichers``, which its owner
    closes), its cache the stores' ``enrichment_cache``. A document whose enricher fails for good is
    reported and left out of the write, like a document whose embedding fails."""

    def __init__(self, config: ConfigLike, enricher_for: EnricherFactory, cache: EnrichmentCache | None,
                 enrichers: Mapping[str, Enricher] | None = None) -> None:
        self.config, self.enricher_for, self.cache = config, enricher_for, cache
        self._enrichers: dict[str, Enricher | None] = dict(enrichers or {})
        self._injected = set(self._enrichers)
        self._stages: dict[str, EnrichmentStage] = {}

    def stage(self, target: Target) -> EnrichmentStage | None:
        """The profile's enrichment stage, or None when off."""
        name = target.profile_name
        if target.profile.enrichment.provider == "none" and self._enrichers.get(name) is None:
            return None
        if name not in self._stages:
            if name not in self._enrichers:
                self._enrichers[name] = self.enricher_for(target.profile)
            enricher = self._enrichers[name]
            if enricher is None:
                return None
            if self.cache is None:
                raise ConfigError(f"embeddings.profiles.{name}.enrichment is on but the store gives no enrichment "
                                  "cache (Stores.enrichment_cache)")
            self._stages[name] = EnrichmentStage(self.config, target.profile, enricher, self.cache)
        return self._stages[name]

    def __call__(self, items: Sequence[Prepared], target: Target, report: IngestReport) -> list[Enriched]:
        stage = self.stage(target)
        if stage is None:
            return [Enriched.plain(item) for item in items]
        kept = []
        for item in items:
            try:
                done = stage.enrich(item.entry.doc_id, item.doc.source, item.doc.metadata, item.chunks)
            except ProviderError as exc:
                report.fail(item.entry.path, exc)
                continue
            kept.append(Enriched(item, tuple(done.chunks), tuple(done.questions), tuple(done.summaries)))
        return kept

    def take_stats(self, target: Target) -> EnrichmentStats | None:
        """The target's enrichment counts since the last call (None when it does not enrich)."""
        stage = self.stage(target)
        if stage is None:
            return None
        stats, stage.stats = stage.stats, EnrichmentStats()
        return stats

    def close(self) -> None:
        """Close the enrichers built here (rebuilt on the next run); injected ones are their owner's."""
        for name in [n for n in self._enrichers if n not in self._injected]:
            closer = getattr(self._enrichers.pop(name), "close", None)
            if callable(closer):
                closer()
        self._stages.clear()  # the enrichment cache is the stores' (their owner closes it)
