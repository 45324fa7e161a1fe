"""``write_documents`` / ``delete_documents`` on Oracle: what changed is written, nothing else.

Writes are an INSERT of the new chunks and an UPDATE of the stored ones, each
sent with ``executemany(..., batcherrors=True)`` and the text bound as a ``str``; a
failed row is reported by its offset, mapped back to its chunk id, and the
whole call rolls back (one commit per ``write_documents``).

A write reads the version's registry row first (no lock) and refuses a protected (served)
version before it writes anything; it locks and bumps that row *last*, just before the commit,
and checks the protection again under the lock. A rotation locks the same row, so whichever
commits first wins, as before; holding the lock only for the bump and the commit lets several
writers (``max_writers``, the Ray engine's ``--ray-writers``) load one candidate version at once
instead of queueing for the row for their whole transaction. Their chunks never collide (each
writes whole documents); two of them may merge the same embedding-cache key, which the second
tolerates (ORA-00001 means the row is there).
"""

from __future__ import annotations

import json
from typing import Any, Sequence

import numpy as np
import structlog

from backend.common.config import OracleSettings
from backend.common.errors import EmbeddingModelMismatch, StoreError, VersionServed
from backend.core.types import DocumentWrite, content_hash
from backend.core.vector_format import stamped_format
from backend.providers.enrichment_rows import Enrichment, check_ids_across, enrichment
from backend.providers.oracle_vs import sql
from backend.providers.oracle_vs.binds import column_text, to_float32, vector_bind
from backend.providers.oracle_vs.connection import RESUMES, RESUMES_IN_PLACE, OracleConnector, Rollback, hints_in
from backend.providers.oracle_vs.index_admin import OracleIndexAdmin
from backend.providers.oracle_vs.versions import VersionRow, json_safe, json_value

log = structlog.get_logger(__name__)
#: A chunk text this large is a chunker misconfiguration, refused before it reaches the database.
MAX_TEXT_BYTES = 1_048_576


def _signature(row: Any) -> tuple[Any, ...]:
    """What decides whether a stored chunk differs from the one being written."""
    if isinstance(row, dict):
        values = [row[c] for c in sql.COMPARED_COLUMNS]
    else:
        values = list(row[1:])
    *head, metadata, embedding = values
    meta = json.dumps(json_value(metadata), sort_keys=True, ensure_ascii=False)
    vec = np.asarray(embedding, dtype=np.float32).tobytes()
    return (*[column_text(x) for x in head], meta, vec)


def _question_signature(question_id: str, chunk_id: str, text: str, vector: Any) -> tuple[Any, ...]:
    return (question_id, chunk_id, text, np.asarray(vector, dtype=np.float32).tobytes())


def _summary_signature(summary_id: str, kind: str, page: str | None, text: str, chunk_ids: Sequence[str],
                       vector: Any) -> tuple[Any, ...]:
    # Oracle keeps '' as NULL: an empty page reads back as None
    return (summary_id, kind, page or None, text, tuple(str(c) for c in chunk_ids),
            np.asarray(vector, dtype=np.float32).tobytes())


def _check_chunk_ids(documents: Sequence[DocumentWrite]) -> None:
    """A chunk id claimed twice in one write: the second row would overwrite the first."""
    seen: dict[str, str] = {}
    for doc in documents:
        for c in doc.chunks:
            if c.chunk_id in seen:
                raise StoreError(f"chunk_id {c.chunk_id!r} appears twice in one write (documents {seen[c.chunk_id]} "
                                 f"and {doc.doc_id}); chunk ids must be unique", chunk_id=c.chunk_id)
            seen[c.chunk_id] = doc.doc_id


def batch_error_chunks(errors: Sequence[Any], rows: Sequence[dict[str, Any]]) -> list[str]:
    """``chunk_id: message`` for each failed row of an ``executemany`` batch."""
    return [f"{rows[e.offset]['chunk_id']}: {str(e.message).strip()}" for e in errors]


class OracleVectorWriter:
    """The write half of ``OracleVectors``: one transaction per call, the version row locked first."""

    def __init__(self, connector: OracleConnector, settings: OracleSettings, admin: OracleIndexAdmin) -> None:
        self.connector = connector
        self.settings = settings
        self.admin = admin

    def _rows(self, v: VersionRow, documents: Sequence[DocumentWrite]) -> list[dict[str, Any]]:
        rows: list[dict[str, Any]] = []
        for doc in documents:
            vectors = np.asarray(doc.vectors, dtype=np.float32)
            if len(doc.chunks) != len(vectors):
                raise StoreError(f"document {doc.doc_id}: {len(doc.chunks)} chunks but {len(vectors)} vectors")
            if len(vectors) and vectors.shape[1] != v.dimension:
                raise EmbeddingModelMismatch(
                    f"document {doc.doc_id}: vectors have {vectors.shape[1]} dimensions, version {v.name} "
                    f"expects {v.dimension} ({v.model})", version=v.name)
            for c, vec in zip(doc.chunks, vectors):
                if len(c.text.encode("utf-8")) > MAX_TEXT_BYTES:
                    raise StoreError(f"chunk {c.chunk_id} of {doc.doc_id}: text is over {MAX_TEXT_BYTES} bytes; "
                                     "lower the profile's chunker size", chunk_id=c.chunk_id)
                rows.append({
                    "chunk_id": c.chunk_id, "doc_id": doc.doc_id, "doc_hash": doc.doc_hash,
                    "chunk_index": c.chunk_index, "chunk_type": c.chunk_type, "source": c.source, "text": c.text,
                    "content_hash": c.content_hash,
                    "metadata": json_safe(c.metadata),
                    "embedding": vector_bind(vec, stamped_format(v.retrieval)),
                    # the cache keeps what the embedder made, whatever the version stores (N2)
                    "cache_vector": to_float32(vec),
                    "embed_hash": content_hash(c.text_to_embed),
                })
        return rows

    def _stored_chunks(self, cur: Any, version: str, doc_ids: Sequence[str]) -> dict[str, dict[str, tuple[Any, ...]]]:
        """``doc_id -> chunk_id -> signature`` of what is stored, up to 500 documents per round trip."""
        stored: dict[str, dict[str, tuple[Any, ...]]] = {d: {} for d in doc_ids}
        unique = list(stored)
        for start in range(0, len(unique), sql.DOCS_PER_READ):
            part = unique[start:start + sql.DOCS_PER_READ]
            cur.execute(sql.doc_chunks_sql(version, len(part)), sql.in_binds("d", part))
            for r in cur.fetchall():
                stored.setdefault(r[-1], {})[r[0]] = _signature(r[:-1])
        return stored

    def _check(self, cur: Any, version: str, allow_served: bool) -> VersionRow:
        """Before any write, without a lock: the version exists and, unless ``allow_served``, is not
        protected, so a write into a served version is refused having written nothing."""
        row = self.admin.find_version(cur, version)
        if row is None:
            raise self.admin.not_found(version)
        if not allow_served:
            self._refuse_protected(cur, version)
        return row

    def _refuse_protected(self, cur: Any, version: str) -> None:
        reasons = self.admin.protection(cur, version)
        if reasons:
            raise VersionServed(
                f"{version} is served ({', '.join(reasons)}): served versions are immutable. Ingest into a "
                "new version (it starts as a copy of this one) and promote it", version=version, reasons=reasons)

    def _guard(self, cur: Any, version: str, allow_served: bool) -> None:
        """Last in the write transaction: lock the version's registry row, bump its generation and
        check the protection again. A rotation locks the same row (``point_alias``), so whichever
        commits first wins: a rotation that committed while this write ran is seen here and the whole
        write rolls back; one that comes later waits for this commit."""
        model, dimension = cur.var(str, 512), cur.var(int)  # embed_model is VARCHAR2(512)
        cur.execute(sql.BUMP_GENERATION_SQL, {"name": version, "r_model": model, "r_dimension": dimension})
        if not model.getvalue():
            raise self.admin.not_found(version)
        if not allow_served:
            self._refuse_protected(cur, version)

    def write_documents(self, version: str, documents: Sequence[DocumentWrite], *, allow_served: bool = False) -> int:
        """Round trips: the check (1 + 1 unless ``allow_served``), stored chunks (1 per 500 documents),
        DELETE of dropped chunks (1, if any), INSERT of new chunks (1, if any), UPDATE of stored ones (1, if
        any), embedding cache (1), the guard (1 + 1 unless ``allow_served``), commit (1)."""
        version = sql.oracle_name(version, "index_name")
        _check_chunk_ids(documents)
        check_ids_across(documents)
        merged = obsolete = 0
        with self.connector.transaction(f"writing to {version}", then=RESUMES_IN_PLACE if allow_served else RESUMES) as con:
            cur = con.cursor()
            row = self._check(cur, version, allow_served)
            fmt = stamped_format(row.retrieval)
            v = VersionRow(version, row.model, row.dimension, "cosine", "none", None, "", None,
                           retrieval={"vector_format": fmt} if fmt != "float32" else None)
            rows, stale, existing = self._changes(cur, v, documents)
            if stale:
                cur.executemany(sql.delete_chunk_sql(version), [{"chunk_id": c} for c in stale])
            if rows:
                failed = self._write_chunks(cur, version, rows, existing)
                if failed:
                    raise StoreError(
                        f"{len(failed)} of {len(rows)} chunks could not be written to {version} "
                        f"(nothing was committed): " + "; ".join(failed[:10]) + hints_in(failed),
                        version=version, failed=failed)
                self._cache(cur, v.model, rows)
            extra = self._enrichment_changes(cur, v, documents)
            if extra:
                self._replace_enrichment(cur, version, extra)
            merged, obsolete = len(rows), len(stale)
            if not rows and not stale and not extra:
                raise Rollback()  # nothing changed: the generation stays where it was
            self._guard(cur, version, allow_served)
        log.info("store.documents_written", version=version, documents=len(documents), chunks=merged,
                 removed=obsolete)
        return merged

    def _enrichment_changes(self, cur: Any, v: VersionRow, documents: Sequence[DocumentWrite]
                            ) -> list[tuple[DocumentWrite, Enrichment]]:
        """The documents whose questions or summaries differ from what is stored (1 round trip per
        500 documents); each with its checked rows."""
        planned = [(doc, enrichment(doc, v.name, v.dimension, v.model)) for doc in documents]
        stored_q: dict[str, list[tuple[Any, ...]]] = {}
        stored_s: dict[str, list[tuple[Any, ...]]] = {}
        unique = list(dict.fromkeys(doc.doc_id for doc in documents))
        for start in range(0, len(unique), sql.DOCS_PER_READ):
            part = unique[start:start + sql.DOCS_PER_READ]
            cur.execute(sql.doc_enrichment_sql(v.name, len(part)), sql.in_binds("e", part))
            for kind, row_id, detail, page, text, chunk_ids, vector, doc_id in cur.fetchall():
                if kind == "question":
                    stored_q.setdefault(doc_id, []).append(_question_signature(row_id, detail, column_text(text), vector))
                else:
                    stored_s.setdefault(doc_id, []).append(_summary_signature(
                        row_id, detail, page, column_text(text), json_value(chunk_ids) or [], vector))
        changed = []
        for doc, extra in planned:
            want_q = sorted(_question_signature(q.question_id, q.chunk_id, q.text, vec) for q, vec in extra.questions)
            want_s = sorted(_summary_signature(x.summary_id, x.kind, x.page, x.text, list(x.chunk_ids), vec)
                            for x, vec in extra.summaries)
            if want_q != sorted(stored_q.get(doc.doc_id, [])) or want_s != sorted(stored_s.get(doc.doc_id, [])):
                changed.append((doc, extra))
        return changed

    @staticmethod
    def _replace_enrichment(cur: Any, version: str, changed: Sequence[tuple[DocumentWrite, Enrichment]]) -> None:
        """Delete the documents' questions and summaries (and the questions of chunks that moved in
        from another document), then insert the new rows: a few ``executemany`` round trips."""
        import oracledb

        docs = [{"doc_id": doc.doc_id} for doc, _ in changed]
        for statement in sql.delete_enrichment_sql(version):
            cur.executemany(statement, docs)
        questions: list[dict[str, Any]] = [{"question_id": q.question_id, "chunk_id": q.chunk_id, "doc_id": doc.doc_id, "text": q.text,
                      "embedding": to_float32(vec)} for doc, extra in changed for q, vec in extra.questions]
        summaries: list[dict[str, Any]] = [{"summary_id": x.summary_id, "doc_id": doc.doc_id, "kind": x.kind, "page": x.page,
                      "text": x.text, "chunk_ids": list(x.chunk_ids), "embedding": to_float32(vec)}
                     for doc, extra in changed for x, vec in extra.summaries]
        moved = sorted({str(q["chunk_id"]) for q in questions})
        if moved:
            cur.executemany(sql.delete_chunk_questions_sql(version), [{"chunk_id": c} for c in moved])
        batches: tuple[tuple[str, list[dict[str, Any]], dict[str, Any]], ...] = (
            (sql.insert_question_sql(version), questions, {"embedding": oracledb.DB_TYPE_VECTOR}),
            (sql.insert_summary_sql(version), summaries,
             {"embedding": oracledb.DB_TYPE_VECTOR, "chunk_ids": oracledb.DB_TYPE_JSON}),
        )
        for statement, rows, sizes in batches:
            if not rows:
                continue
            cur.setinputsizes(**sizes)  # text stays a str: a CLOB bind is a temporary LOB per row (C5)
            cur.executemany(statement, rows, batcherrors=True)
            errors = cur.getbatcherrors()
            if errors:
                key = "question_id" if "question_id" in rows[0] else "summary_id"
                raise StoreError(f"{len(errors)} of {len(rows)} {key[:-3]}s could not be written to {version} "
                                 "(nothing was committed): " + "; ".join(
                                     f"{rows[e.offset][key]}: {str(e.message).strip()}" for e in errors[:10]),
                                 version=version)

    def _changes(self, cur: Any, v: VersionRow, documents: Sequence[DocumentWrite]
                 ) -> tuple[list[dict[str, Any]], list[str], set[str]]:
        """(rows to write, chunk ids to delete, ids of the rows to write that stay stored after the
        delete: an UPDATE, the others an INSERT); an unchanged document needs neither."""
        planned = [(doc, self._rows(v, [doc])) for doc in documents]
        stored = self._stored_chunks(cur, v.name, [doc.doc_id for doc in documents])
        rows: list[dict[str, Any]] = []
        stale: list[str] = []
        for doc, doc_rows in planned:
            existing = stored.get(doc.doc_id, {})
            keep = {r["chunk_id"] for r in doc_rows}
            stale.extend(sorted(set(existing) - keep))
            rows.extend(r for r in doc_rows if existing.get(r["chunk_id"]) != _signature(r))
        held = {c for chunks in stored.values() for c in chunks} - set(stale)
        return rows, stale, {r["chunk_id"] for r in rows} & held

    @staticmethod
    def _write_chunks(cur: Any, version: str, rows: list[dict[str, Any]], existing: set[str]) -> list[str]:
        """INSERT the new chunks and UPDATE the stored ones (one ``executemany`` each, with ``batcherrors``),
        the text bound as a ``str``: no temporary LOB per row, whatever a text's length (C5). A chunk held
        by a document outside this write (moved in from it) fails its INSERT with ORA-00001 and is updated
        instead. ``chunk_id: message`` for each row that could not be written."""
        failed: list[str] = []
        inserts = [r for r in rows if r["chunk_id"] not in existing]
        updates = [r for r in rows if r["chunk_id"] in existing]
        if inserts:
            cur.setinputsizes(**sql.chunk_input_sizes())
            cur.executemany(sql.insert_chunk_sql(version), [sql.chunk_binds(r) for r in inserts], batcherrors=True)
            errors = cur.getbatcherrors()
            moved = {e.offset for e in errors if getattr(e, "code", None) == 1}
            updates += [inserts[i] for i in sorted(moved)]
            failed += batch_error_chunks([e for e in errors if e.offset not in moved], inserts)
        if updates:
            cur.setinputsizes(**sql.chunk_input_sizes())
            cur.executemany(sql.update_chunk_sql(version), [sql.chunk_binds(r) for r in updates], batcherrors=True)
            failed += batch_error_chunks(cur.getbatcherrors(), updates)
        return failed

    @staticmethod
    def _cache(cur: Any, model: str, rows: list[dict[str, Any]]) -> None:
        """Vectors into the embedding cache: the embedder's float32 vectors, never a version's bind (an
        int8 version binds scaled integers, which a float32 build of the model must not reuse; review 4,
        N2). The vector format is therefore not part of the key: every row is the model's own output.
        Two ingests of the same text race on its key: the second
        MERGE fails that row with ORA-00001, which must not roll back the document write (the vector
        is in the cache either way), so rows are sent with ``batcherrors`` and ORA-00001 is ignored.
        Rows go sorted by ``text_hash``: two ingests inserting the same keys in document order could each
        wait on the other's uncommitted key (ORA-00060); in one global order they never cross (L1)."""
        import oracledb

        cache = {r["embed_hash"]: r["cache_vector"] for r in rows}
        binds = [{"embed_model": model, "text_hash": h, "embedding": cache[h]} for h in sorted(cache)]
        cur.setinputsizes(embedding=oracledb.DB_TYPE_VECTOR)
        cur.executemany(sql.MERGE_CACHE_SQL, binds, batcherrors=True)
        errors = [e for e in cur.getbatcherrors() if getattr(e, "code", None) != 1]
        if errors:
            messages = [str(e.message).strip() for e in errors]
            raise StoreError("the embedding cache could not be written (nothing was committed): "
                             + "; ".join(f"{binds[e.offset]['text_hash'][:12]}: {m}"
                                         for e, m in zip(errors[:5], messages)) + hints_in(messages))

    def delete_documents(self, version: str, doc_ids: Sequence[str], *, allow_served: bool = False) -> int:
        """Round trips: the guard (1 + 1 unless ``allow_served``), one ``executemany`` DELETE, commit."""
        version = sql.oracle_name(version, "index_name")
        deleted = 0
        with self.connector.transaction(f"deleting from {version}",
                                  then=RESUMES_IN_PLACE if allow_served else RESUMES) as con:
            cur = con.cursor()
            self._guard(cur, version, allow_served)
            if doc_ids:
                cur.executemany(sql.delete_document_sql(version), [{"doc_id": d} for d in doc_ids],
                                arraydmlrowcounts=True)
                deleted = int(sum(cur.getarraydmlrowcounts()))
                if deleted:
                    for statement in sql.delete_enrichment_sql(version):
                        cur.executemany(statement, [{"doc_id": d} for d in doc_ids])
            if deleted == 0:
                raise Rollback()  # nothing changed: the generation stays where it was
        return deleted
