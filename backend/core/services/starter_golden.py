"""A starter golden set made from a knowledge base's own documents.

Why: a knowledge base without golden questions of its own would be gated against another's
(the sample set): recall 0, refused, or, worse, promoted by a gate that never asked about one of
its files. A starter set asks about its own files, offline (no LLM): for a few informative
sentences of each document, a question whose answer is that sentence (the sentence with its most
distinctive term asked for, the asked phrase first as a person asks it: ``Employees receive 25 days
of leave`` -> ``How many days of leave do employees receive?``; ``Visitors must sign in at the
reception desk`` -> ``At which desk must visitors sign in?``), expecting that document and the
``rag`` mode, and that term in the answer. spaCy's parse
(the sanitizer's offline model) picks the term among numbers and the nouns of noun chunks and
replaces its whole chunk, so a question reads as a person would ask it; a sentence that makes no
such question (a table row, an imperative, "They are ...") is skipped; plus off-topic questions (from ``data/golden/offtopic.jsonl``, minus any that share a
content word with the knowledge base) that must fall back. It is an easy set: it proves the new
files are indexed, found and answered, not that users' real questions are. Every row says
``"generated": true`` and its id starts with ``gen-``, so reports and the admin page tell it from
a real set, and the user is told how to replace it (a domain's ``golden_set``) and grow it
(``rag feedback export``).

The decisions are pure functions of the chunks' texts and their parse (``Parsed``, copied out of
spaCy; the question maker is ``sentence_questions``); the same chunks and model give the same file.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence

from backend.common.config import Settings
from backend.core.sentence_segments import split_sentences
from backend.core.golden import GoldenQuery, GoldenSet, load_golden_set
from backend.core.lexical_query import ENGLISH_STOP_WORDS
from backend.core.ports import VectorStore
from backend.core.sentence_questions import CLAUSE_SPLIT, SPACY_MODEL, WORD, ask, is_number, parse_sentences


GENERATED_NAME = "golden.generated.jsonl"
OFFTOPIC_SET = "data/golden/offtopic.jsonl"
PER_DOC = 3
#: questions about the new sentences of a document changed since the live version
CHANGED_PER_DOC = 2
MAX_QUESTIONS = 24
#: one off-topic question answered rag still passes a 0.15 abstention gate (1/7)
OFFTOPIC = 7
#: chunk ids are ``<doc_id>::<n>`` (backend.ingest.chunkers); read this many per round trip
_CHUNK_BATCH = 64
_MAX_CHUNKS_PER_DOC = 512
#: captions and labels are not sentences a person asks about
_LABEL = re.compile(r"^(figure|fig\.|table|image|picture|chart)\s*\d*\s*[:.]", re.IGNORECASE)
_MIN_WORDS, _MAX_WORDS = 6, 40
#: a table row or a run of labels ("Variant: NWA-C400", "Owner: Field Engineering · Last reviewed: ...")
_TABLE_ROW = re.compile(r"[·|]|^(?:\S+\s+){0,3}\S*[A-Za-z]:\s")


@dataclass(frozen=True)
class DocText:
    """A document's chunk texts in order, and the heading of its first chunk (if any)."""

    doc_id: str
    texts: tuple[str, ...]
    topic: str = ""


def starter_path(settings: Settings, key: str) -> Path:
    """Where the starter set of knowledge base ``key`` lives (its workspace)."""
    return settings.resolve_path(settings.knowledge_bases.dir) / key / GENERATED_NAME


def is_generated(golden: GoldenSet | Path | str) -> bool:
    """True when the golden set was generated (every row says ``"generated": true``)."""
    queries = golden.queries if isinstance(golden, GoldenSet) else load_golden_set(golden).queries
    return bool(queries) and all(q.generated for q in queries)


def read_documents(store: VectorStore, version: str, *, max_docs: int | None = None) -> list[DocText]:
    """The text chunks of each document of ``version``, through the store port (``document_hashes``
    names the documents, ``fetch_chunks`` reads ``<doc_id>::0``, ``::1``... until one is missing)."""
    out = []
    for doc_id in sorted(store.document_hashes(version))[:max_docs]:
        texts: list[str] = []
        topic = ""
        for start in range(0, _MAX_CHUNKS_PER_DOC, _CHUNK_BATCH):
            ids = [f"{doc_id}::{n}" for n in range(start, start + _CHUNK_BATCH)]
            found = store.fetch_chunks(version, ids)
            for cid in ids:
                chunk = found.get(cid)
                if chunk is None:
                    break
                if chunk.chunk_type == "text":
                    texts.append(chunk.text)
                    if not topic:
                        path = chunk.metadata.get("heading_path") or []
                        topic = str(path[-1]) if path else ""
            if len(found) < len(ids):
                break
        out.append(DocText(doc_id, tuple(texts), topic))
    return out


def content_words(text: str) -> list[str]:
    """Lower-cased words that carry meaning (no stop words, no single letters) (pure)."""
    return [w for w in (m.group(0).lower().strip("'’-") for m in WORD.finditer(text))
            if w and w not in ENGLISH_STOP_WORDS and (len(w) > 2 or any(c.isdigit() for c in w))]


def _document_frequency(docs: Sequence[DocText]) -> dict[str, int]:
    df: dict[str, int] = {}
    for doc in docs:
        for word in set(content_words(" ".join(doc.texts))):
            df[word] = df.get(word, 0) + 1
    return df


#: ``questions -> keep?`` one flag per question: False for one holding a value the PII sanitizer flags
PiiFree = Callable[[Sequence[str]], list[bool]]


def _candidates(doc: DocText, df: Mapping[str, int], model: str = SPACY_MODEL,
                keep: PiiFree | None = None) -> list[tuple[int, int, str, str]]:
    """``(score, position, question, term)`` of each informative sentence of a document that makes a
    good question (its sentences parsed by ``model``); with ``keep``, only the questions it keeps
    (none that shows a value the sanitizer flagged: the set is shown in the admin console)."""
    kept: list[tuple[int, str]] = []
    position = 0
    seen: set[str] = set()
    for text in doc.texts:
        for sentence in split_sentences(text):
            for part in CLAUSE_SPLIT.split(sentence):  # "...; ..." asks about each clause alone
                position += 1
                words = part.split()
                clean = " ".join(words)
                if not _MIN_WORDS <= len(words) <= _MAX_WORDS or clean in seen or clean.endswith("?") \
                        or _LABEL.match(clean) or _TABLE_ROW.search(clean):
                    continue
                seen.add(clean)
                kept.append((position, clean))
    out = []
    for (position, clean), parsed in zip(kept, parse_sentences([c for _, c in kept], model) if kept else []):
        made = ask(parsed, df)
        if made is None:
            continue
        question, term = made
        distinctive = min(sum(1 for w in set(content_words(clean)) if df.get(w, 0) <= 1), 6)
        score = distinctive + (2 if is_number(term) else 0) - (3 if len(question.split()) > 24 else 0)
        out.append((score, position, question, term))
    if keep is not None and out:
        out = [c for c, kept in zip(out, keep([f"{q} {t}" for _, _, q, t in out])) if kept]
    return out


def starter_queries(docs: Sequence[DocText], offtopic: Iterable[GoldenQuery], *, per_doc: int = PER_DOC,
                    max_questions: int = MAX_QUESTIONS, offtopic_count: int = OFFTOPIC,
                    model: str = SPACY_MODEL, keep: PiiFree | None = None,
                    df: Mapping[str, int] | None = None) -> list[dict[str, Any]]:
    """The starter set's rows (pure): up to ``per_doc`` questions a document, taken one per
    document per round so that ``max_questions`` covers as many documents as it can, then
    ``offtopic_count`` off-topic questions sharing no content word with the documents. A document
    is parsed only when a round reaches it, so 24 questions over 10,000 documents parse a few dozen
    of them, not all. ``df``: the document frequencies to judge words by (default: ``docs``'; a set
    extended with new documents judges them against the whole knowledge base)."""
    df = _document_frequency(docs) if df is None else df
    picks: dict[str, list[tuple[int, int, str, str]]] = {}

    def picked(doc: DocText) -> list[tuple[int, int, str, str]]:
        if doc.doc_id not in picks:
            ranked = sorted(_candidates(doc, df, model, keep), key=lambda c: (-c[0], c[1]))[:per_doc]
            picks[doc.doc_id] = sorted(ranked, key=lambda c: c[1])
        return picks[doc.doc_id]

    rows: list[dict[str, Any]] = []
    for round_ in range(per_doc):
        for doc in docs:
            if len(rows) >= max_questions:
                break
            chosen = picked(doc)
            if round_ >= len(chosen):
                continue
            _, _, question, term = chosen[round_]
            rows.append({"id": f"gen-{_id_part(doc.doc_id)}-{round_ + 1}", "query": question,
                         "expected_sources": [doc.doc_id], "expected_mode": "rag", "must_contain": [term],
                         "generated": True})
    vocabulary = set(df)
    taken = 0
    for q in offtopic:
        if taken >= offtopic_count:
            break
        if q.expected_mode != "fallback" or set(content_words(q.query)) & vocabulary:
            continue
        rows.append({"id": f"gen-offtopic-{_id_part(q.id or str(taken))}", "query": q.query,
                     "expected_sources": [], "expected_mode": "fallback", "generated": True})
        taken += 1
    return rows


def extend_rows(rows: Sequence[Mapping[str, Any]], docs: Sequence[DocText], offtopic: Iterable[GoldenQuery], *,
                per_doc: int = PER_DOC, max_questions: int = MAX_QUESTIONS,
                previous: Mapping[str, DocText] | None = None, model: str = SPACY_MODEL,
                keep: PiiFree | None = None) -> list[dict[str, Any]]:
    """An existing starter set brought up to date with the documents (pure): rows about documents
    that are gone, or whose answer term their changed document no longer holds, are dropped; the
    others are kept as they are (the same questions, so a candidate and the live version are
    compared on them); documents no row asks about get questions, at least one each even past
    ``max_questions``: a gate must test every new or changed file, never ask about old text.
    ``previous``: the live version's documents; a document whose text changed since gets questions
    about sentences that are new in it (``CHANGED_PER_DOC``), so an edit is asked about too, and
    only a document the live version lacks is new (one it carried that no row asks about, because
    ``max_questions`` was reached when the set was written, is not asked about at every sync: on a
    10,000-document knowledge base that made a 1 % sync's gate ask 5,860 questions); a changed one no
    kept row asks about is asked about as a new one. Without ``previous`` every document no row asks
    about counts as new. Only the new and changed documents are parsed."""
    texts = {d.doc_id: " ".join(d.texts) for d in docs}
    kept = [dict(r) for r in rows if r.get("expected_mode") == "fallback" or _still_answered(r, texts)]
    asked = {doc for r in kept for doc in (r.get("expected_sources") or ())}
    new_docs = [d for d in docs if d.doc_id not in asked
                and (previous is None or d.doc_id not in previous or previous[d.doc_id].texts != d.texts)]
    df = _document_frequency(docs)
    kept_queries = {k["query"] for k in kept}
    kept = kept + [r for r in _changed_rows(docs, previous or {}, model, keep, df) if r["query"] not in kept_queries]
    if not new_docs:
        return [r for r in kept if r.get("expected_mode") != "fallback"] + \
            [r for r in kept if r.get("expected_mode") == "fallback"]
    doc_rows = sum(1 for r in kept if r.get("expected_mode") != "fallback")
    budget = max(max_questions - doc_rows, len(new_docs))
    fresh = starter_queries(new_docs, (), per_doc=per_doc, max_questions=len(new_docs) * per_doc, model=model,
                            keep=keep, df=df)
    order = {d.doc_id: i for i, d in enumerate(new_docs)}
    fresh.sort(key=lambda r: (int(r["id"].rsplit("-", 1)[1]), order[r["expected_sources"][0]]))
    taken = {r["id"] for r in kept}
    added = [r for r in fresh if r["id"] not in taken][:budget]
    questions = [r for r in kept if r.get("expected_mode") != "fallback"] + added
    fallbacks = [r for r in kept if r.get("expected_mode") == "fallback"]
    if not fallbacks:
        fallbacks = [r for r in starter_queries(docs, offtopic, per_doc=0, model=model) if r["expected_mode"] == "fallback"]
    return questions + fallbacks


def _changed_rows(docs: Sequence[DocText], previous: Mapping[str, DocText], model: str = SPACY_MODEL,
                  keep: PiiFree | None = None, df: Mapping[str, int] | None = None) -> list[dict[str, Any]]:
    """Questions about the sentences a changed document gained since ``previous`` (pure)."""
    df = _document_frequency(docs) if df is None else df
    rows: list[dict[str, Any]] = []
    for doc in docs:
        before = previous.get(doc.doc_id)
        if before is None or before.texts == doc.texts:
            continue
        old = {" ".join(s.split()) for text in before.texts for s in split_sentences(text)}
        fresh = DocText(doc.doc_id, tuple(s for text in doc.texts for s in split_sentences(text)
                                          if " ".join(s.split()) not in old))
        ranked = sorted(_candidates(fresh, df, model, keep), key=lambda c: (-c[0], c[1]))[:CHANGED_PER_DOC]
        for _, _, question, term in sorted(ranked, key=lambda c: c[1]):
            digest = hashlib.sha256(question.encode("utf-8")).hexdigest()[:8]
            rows.append({"id": f"gen-{_id_part(doc.doc_id)}-c{digest}", "query": question,
                         "expected_sources": [doc.doc_id], "expected_mode": "rag", "must_contain": [term],
                         "generated": True})
    return rows


def _still_answered(row: Mapping[str, Any], texts: Mapping[str, str]) -> bool:
    """A generated question still fits: its document is there and holds every answer term."""
    sources = [d for d in (row.get("expected_sources") or ()) if d in texts]
    return bool(sources) and all(any(term in texts[d] for d in sources) for term in row.get("must_contain") or ())


def _id_part(value: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "-", value).strip("-")[:80] or "x"


def render(rows: Sequence[Mapping[str, Any]], *, version: str) -> str:
    """The file's text: a comment saying what it is and how to replace it, then one row a line."""
    head = (f"# Starter golden set GENERATED from the documents of {version} (every row has \"generated\": true).\n"
            "# It checks that the new files are found and answered; replace it with real questions: set the\n"
            "# knowledge base's golden_set (docs/KNOWLEDGE_BASES.md). Grow it with `rag feedback export`.\n")
    return head + "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)


def read_rows(path: Path) -> list[dict[str, Any]]:
    """The JSON rows of a golden file as written (comments and blank lines skipped)."""
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()
            if line.strip() and not line.lstrip().startswith("#")]


def pii_free(settings: Settings) -> PiiFree | None:
    """With sanitizing on (audit or redact), a filter that keeps only the questions in which the
    sanitizer finds nothing (read whole, as questions are): a generated question must never show
    a value it flagged, in the admin console or a report. None when sanitizing is off."""
    if not settings.sanitize.enabled:
        return None
    from backend.common.sanitizer import sanitize_if_enabled

    audit = settings.sanitize.model_copy(update={"mode": "audit"})

    def keep(texts: Sequence[str]) -> list[bool]:
        found = sanitize_if_enabled(list(texts), audit, doc_ids=[str(n) for n in range(len(texts))], ner_scope="full")
        flagged = {int(f.doc_id) for f in found.findings}
        return [n not in flagged for n in range(len(texts))]

    return keep


def write_starter(settings: Settings, store: VectorStore, version: str, key: str, *,
                  live: str | None = None) -> tuple[Path, str]:
    """Make the starter set of ``key`` fit ``version``'s documents and write it (atomically) to its
    workspace: ``written`` (there was none), ``extended`` (documents were added or removed since)
    or ``kept``. ``live``: the version the alias serves, whose documents tell what changed. A set
    that is no longer generated (a person edited it) is kept as it is.
    ``EvaluationError`` (from loading it back) when the documents gave no question at all."""
    path = starter_path(settings, key)
    if path.exists() and not is_generated(path):
        return path, "kept"
    offtopic = load_golden_set(settings.resolve_path(OFFTOPIC_SET)).queries
    docs = read_documents(store, version)
    if path.exists():
        before = read_rows(path)
        served = docs if live == version else read_documents(store, live) if live else None
        previous = None if served is None else {d.doc_id: d for d in served}
        rows = extend_rows(before, docs, offtopic, previous=previous, model=settings.sanitize.spacy_model,
                           keep=pii_free(settings))
        if rows == before:
            return path, "kept"
        action = "extended"
    else:
        rows, action = starter_queries(docs, offtopic, model=settings.sanitize.spacy_model,
                                       keep=pii_free(settings)), "written"
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(render(rows, version=version), encoding="utf-8")
    tmp.replace(path)
    load_golden_set(path)  # what is written must load: the gate reads it next
    return path, action
