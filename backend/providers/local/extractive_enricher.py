"""``Enricher`` without a generative model: offline, deterministic, milliseconds per chunk.

- summary: the chunk's most central sentence (the one sharing most content words with the
  rest of the chunk, earlier sentences winning ties);
- content type and enum metadata: rules over the profile's typed schema, i.e. the allowed
  value whose words occur most in the title, heading path, manifest metadata (source, tags,
  free fields) and text (manifest values are kept by the pipeline and always win);
- hypothetical questions: templates over the heading path (``What is <heading>?``) and the
  most central sentences (``What about <sentence>?``), so each question vector sits near one
  statement of the chunk;
- page and document summaries: the most central sentences of the page / document, in
  reading order.

Changing a rule changes results: bump ``enrichment.prompt_version`` with it (the cache key).
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Any, Mapping, Sequence

from backend.common.config import EnrichmentSettings, MetadataFieldSettings
from backend.core.enrichment import ChunkEnrichment, EnrichmentInput, enrichable_fields

RULES_VERSION = "1"
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(])|\n+")
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9'-]+|\d+(?:[.,]\d+)?")
_FIGURE = re.compile(r"\[FIGURE:[^\]]*\]")
_STOP = frozenset(
    "a an the and or of to in on for at by with from as is are was were be been being it its this that these those "
    "there their they them we our you your he she his her not no can may must will would should shall do does did "
    "has have had if then than so such any all each every per also more most other into over under up out about "
    "which who whom what when where how why".split())


def sentences(text: str) -> list[str]:
    """Sentences of a chunk, each once: at least four words, and a line without closing
    punctuation (a heading, a table row) only from eight words on; figure markers removed."""
    parts = (" ".join(p.split()) for p in _SENTENCE.split(_FIGURE.sub(" ", text)))
    kept = (p for p in parts if len(_WORD.findall(p)) >= (4 if p.endswith((".", "!", "?")) else 8))
    return list(dict.fromkeys(kept))


def _terms(text: str) -> list[str]:
    return [w for w in (m.lower() for m in _WORD.findall(text)) if w not in _STOP and len(w) > 2]


def central(texts: Sequence[str], n: int) -> list[str]:
    """Pure: the ``n`` sentences of ``texts`` sharing most content words with the whole,
    in reading order (ties to the earlier sentence)."""
    found = list(dict.fromkeys(s for t in texts for s in sentences(t)))
    if not found:
        return []
    weight = Counter(w for s in found for w in set(_terms(s)))
    scored = []
    for i, s in enumerate(found):
        terms = set(_terms(s))
        score = sum(weight[w] - 1 for w in terms) / (len(terms) ** 0.5 if terms else 1.0)
        scored.append((score, -i, s))
    best = sorted(scored, reverse=True)[:n]
    return [s for _, _, s in sorted(best, key=lambda x: -x[1])]


def _word_set(text: str) -> list[str]:
    return [w.lower() for w in re.split(r"[\s_/-]+", text) if w]


def best_values(values: Sequence[str], haystack: str, many: bool) -> list[str]:
    """Pure: allowed values whose words all occur in ``haystack`` (word boundaries, any case,
    singular or plural), most occurrences first; the single best one unless ``many``."""
    low = haystack.lower()
    counts = []
    for value in values:
        words = _word_set(value)
        stems = [w[:-1] if w.endswith("s") and len(w) > 3 else w for w in words]  # employees ~ employee
        hits = [len(re.findall(rf"\b{re.escape(w)}(?:s|es)?\b", low)) for w in stems]
        if words and all(hits):
            counts.append((min(hits), value))
    ranked = [v for _, v in sorted(counts, key=lambda x: -x[0])]
    return ranked if many else ranked[:1]


def _clause(sentence: str, limit: int = 160) -> str:
    text = sentence.rstrip(" .!?;:")
    text = text[:1].lower() + text[1:] if text[:2] != text[:2].upper() else text
    return text if len(text) <= limit else text[:limit].rsplit(" ", 1)[0]


def template_questions(item: EnrichmentInput, n: int) -> list[str]:
    """Pure: up to ``n`` questions, heading templates first, then one per central sentence."""
    out: list[str] = []
    headings = [" ".join(h.split()) for h in item.heading_path if h.strip()]
    if headings:
        out.append(f"What is {headings[-1]}?")
        if item.title and item.title.lower() != headings[-1].lower():
            out.append(f"What does {item.title} say about {headings[-1]}?")
    for sentence in central([item.text], n):
        out.append(f"What about {_clause(sentence)}?")
    return list(dict.fromkeys(out))[:n]


class ExtractiveEnricher:
    """Rule-based ``Enricher``; ``calls`` stays 0 (no generative request is ever made)."""

    def __init__(self, settings: EnrichmentSettings, schema: Mapping[str, MetadataFieldSettings],
                 content_types: Sequence[str]) -> None:
        self._questions = settings.questions
        self._fields = enrichable_fields(schema)
        self._content_types = tuple(content_types)
        self.model_id = f"extractive/{RULES_VERSION}"
        self.calls = 0

    def enrich(self, items: Sequence[EnrichmentInput]) -> list[ChunkEnrichment]:
        return [self._one(item) for item in items]

    def _one(self, item: EnrichmentInput) -> ChunkEnrichment:
        manifest = [v for value in item.metadata.values()
                    for v in (value if isinstance(value, (list, tuple)) else [value]) if isinstance(v, str)]
        context = " ".join([item.title, *item.heading_path, *manifest])
        haystack = f"{context}\n{context}\n{item.text}"  # where a passage stands counts twice
        content_type = next(iter(best_values(self._content_types, haystack, many=False)), None)
        metadata: dict[str, Any] = {}
        for name, spec in self._fields.items():
            if spec.type == "enum":
                found = best_values(spec.values, haystack, many=spec.multi)
                if found:
                    metadata[name] = found if spec.multi else found[0]
        summary = next(iter(central([item.text], 1)), " ".join(item.text.split())[:200])
        return ChunkEnrichment(summary, content_type, metadata, tuple(template_questions(item, self._questions)))

    def summarize(self, title: str, texts: Sequence[str]) -> str:
        return " ".join(central(texts, 3))
