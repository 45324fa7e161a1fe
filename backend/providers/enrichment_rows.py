"""A document's hypothetical questions and summaries, checked and paired with their vectors.

Both stores write these rows in the document's transaction; the checks live here once so
both refuse the same bad input with the same message (naming the document and the row).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from backend.common.errors import EmbeddingModelMismatch, StoreError
from backend.core.types import DocumentWrite, HypotheticalQuestion, Summary, Vector

SUMMARY_KINDS = ("page_summary", "artifact_summary")


@dataclass(frozen=True)
class Enrichment:
    """What one document carries besides its chunks, each row with its float32 vector."""

    questions: tuple[tuple[HypotheticalQuestion, Vector], ...]
    summaries: tuple[tuple[Summary, Vector], ...]


def _vectors(values: Vector | None, count: int, what: str, doc: DocumentWrite, version: str,
             dimension: int, model: str) -> np.ndarray:
    if count == 0:
        return np.zeros((0, dimension), dtype=np.float32)
    if values is None:
        raise StoreError(f"document {doc.doc_id}: {count} {what} but no {what[:-1]} vectors", doc_id=doc.doc_id)
    vectors = np.asarray(values, dtype=np.float32)
    if vectors.ndim != 2 or len(vectors) != count:
        raise StoreError(f"document {doc.doc_id}: {count} {what} but {len(vectors)} {what[:-1]} vectors",
                         doc_id=doc.doc_id)
    if vectors.shape[1] != dimension:
        raise EmbeddingModelMismatch(
            f"document {doc.doc_id}: {what[:-1]} vectors have {vectors.shape[1]} dimensions, version {version} "
            f"expects {dimension} ({model})", version=version)
    return vectors


def enrichment(doc: DocumentWrite, version: str, dimension: int, model: str) -> Enrichment:
    """Raise ``StoreError`` for a question of a chunk outside the document, a summary of another
    document, an unknown summary kind, a repeated id or a vector count that does not match;
    ``EmbeddingModelMismatch`` for vectors of another dimension."""
    chunk_ids = {c.chunk_id for c in doc.chunks}
    seen: set[str] = set()
    for q in doc.questions:
        if q.chunk_id not in chunk_ids:
            raise StoreError(f"document {doc.doc_id}: question {q.question_id!r} names chunk {q.chunk_id!r}, "
                             "which is not a chunk of this document", doc_id=doc.doc_id, question_id=q.question_id)
        if q.question_id in seen:
            raise StoreError(f"document {doc.doc_id}: question id {q.question_id!r} appears twice",
                             doc_id=doc.doc_id)
        seen.add(q.question_id)
    seen.clear()
    for s in doc.summaries:
        if s.doc_id != doc.doc_id:
            raise StoreError(f"document {doc.doc_id}: summary {s.summary_id!r} belongs to document {s.doc_id!r}",
                             doc_id=doc.doc_id, summary_id=s.summary_id)
        if s.kind not in SUMMARY_KINDS:
            raise StoreError(f"document {doc.doc_id}: summary {s.summary_id!r} has kind {s.kind!r}; expected "
                             f"one of {', '.join(SUMMARY_KINDS)}", doc_id=doc.doc_id, summary_id=s.summary_id)
        if s.summary_id in seen:
            raise StoreError(f"document {doc.doc_id}: summary id {s.summary_id!r} appears twice", doc_id=doc.doc_id)
        seen.add(s.summary_id)
    qv = _vectors(doc.question_vectors, len(doc.questions), "questions", doc, version, dimension, model)
    sv = _vectors(doc.summary_vectors, len(doc.summaries), "summaries", doc, version, dimension, model)
    return Enrichment(tuple(zip(doc.questions, qv)), tuple(zip(doc.summaries, sv)))


def summary_kinds(kinds: Sequence[str]) -> tuple[str, ...]:
    """The summary kinds a search asks for, each once; refuses none or an unknown one."""
    wanted = tuple(dict.fromkeys(kinds))
    if not wanted or any(kind not in SUMMARY_KINDS for kind in wanted):
        raise StoreError(f"summary kinds must be among {', '.join(SUMMARY_KINDS)}, got {list(kinds)}")
    return wanted


def chunk_ids_json(summary: Summary) -> str:
    return json.dumps(list(summary.chunk_ids), ensure_ascii=False)


def summary_from_row(summary_id: str, doc_id: str, kind: str, page: str | None, text: str, chunk_ids: str | None
                     ) -> Summary:
    ids = tuple(json.loads(chunk_ids)) if chunk_ids else ()
    return Summary(summary_id=summary_id, doc_id=doc_id, kind=kind, text=text, page=page,  # type: ignore[arg-type]
                   chunk_ids=tuple(str(i) for i in ids))


def check_ids_across(documents: Sequence[DocumentWrite]) -> None:
    """A question or summary id claimed by two documents of one write would keep only one row."""
    questions: dict[str, str] = {}
    summaries: dict[str, str] = {}
    for doc in documents:
        for q in doc.questions:
            if questions.setdefault(q.question_id, doc.doc_id) != doc.doc_id:
                raise StoreError(f"question id {q.question_id!r} appears in documents {questions[q.question_id]} and "
                                 f"{doc.doc_id}; question ids must be unique", question_id=q.question_id)
        for s in doc.summaries:
            if summaries.setdefault(s.summary_id, doc.doc_id) != doc.doc_id:
                raise StoreError(f"summary id {s.summary_id!r} appears in documents {summaries[s.summary_id]} and "
                                 f"{doc.doc_id}; summary ids must be unique", summary_id=s.summary_id)
