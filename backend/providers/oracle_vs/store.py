"""Oracle AI Vector Search store: ``VectorStore`` + ``IndexAdmin`` + ``InteractionLog``.

Writes are an INSERT of the new chunks and an UPDATE of the stored ones, each
sent with ``executemany(..., batcherrors=True)`` and the text bound as a ``str``; a
failed row is reported by its offset, mapped back to its chunk id, and the
whole call rolls back (one commit per ``write_documents``). A write first locks
and bumps the version's registry row and refuses a protected (served) version.
Reads resolve the alias and its version in one statement and search that one
version in a second: a served version is immutable, so no read-only
transaction is needed. Dense search uses the version's own metric and keeps
the promise of ``k`` hits under filters (see ``search_plan``).
"""

from __future__ import annotations

import array
import json
from typing import Any, Callable, Sequence, TypeVar

import numpy as np
import structlog

from backend.common.config import OracleSettings
from backend.common.errors import ConfigError, EmbeddingModelMismatch, StoreError, VersionNotFound, VersionServed
from backend.core.types import (
    Candidates,
    Chunk,
    DocumentWrite,
    FieldFilter,
    Interaction,
    LockHolder,
    QueryVector,
    QuestionHit,
    QuestionResult,
    ScoredChunk,
    SearchResult,
    StoredDocument,
    SummaryHit,
    SummaryKind,
    SummaryResult,
    Visibility,
    content_hash,
)
from backend.core.vector_format import dequantize, quantize_int8, stamped_format
from backend.providers.enrichment_rows import (
    summary_kinds,
    Enrichment,
    check_ids_across,
    enrichment,
    summary_from_row,
)
from backend.providers.oracle_vs import search_plan, sql
from backend.providers.oracle_vs.connection import RESUMES, RESUMES_IN_PLACE, OracleConnector, Rollback, hints_in
from backend.providers.oracle_vs.conversations import OracleConversationLog
from backend.providers.oracle_vs.query_model import QueryModelGate
from backend.providers.oracle_vs.series_lock import OracleSeriesLease, OracleSeriesLocks
from backend.providers.oracle_vs.index_admin import (
    OracleIndexAdmin,
    VersionRow,
    json_safe,
    json_value,
    now_iso,
    oracledb_json,
)

log = structlog.get_logger(__name__)
#: A chunk text this large is a chunker misconfiguration, refused before it reaches the database.
MAX_TEXT_BYTES = 1_048_576
#: A search resolves the alias and reads the version in two statements: ORA-00942 / ORA-08103 mean the
#: version was dropped in between (``rag index gc`` after a rotation), so the read runs once more and
#: resolves the alias anew.
DROPPED_ORA = frozenset({"ORA-00942", "ORA-08103"})
_T = TypeVar("_T")


def _reread(target: str, read: Callable[[], _T]) -> _T:
    """``read()``, once more when the version it resolved was dropped meanwhile (``DROPPED_ORA``). A
    second failure means the version itself is going (a version named directly while gc drops it:
    its tables go before its registry row) or its table was dropped outside rag: the read says the
    version is gone (``VersionNotFound``, with the driver's error and hint), never a bare ORA error."""
    try:
        return read()
    except StoreError as exc:
        if exc.context.get("code") not in DROPPED_ORA:
            raise
        log.info("store.read_retried", target=target, code=exc.context.get("code"))
    try:
        return read()
    except StoreError as exc:
        if exc.context.get("code") not in DROPPED_ORA:
            raise
        raise VersionNotFound(f"{target!r} is gone: its table was dropped while it was read (`rag index gc` or "
                              f"`rag index drop`); {exc}", version=target, code=exc.context.get("code")) from exc


def to_float32(values: np.ndarray) -> array.array:
    """A FLOAT32 vector bind: ``array('f')`` maps to ``DB_TYPE_VECTOR`` in python-oracledb."""
    return array.array("f", np.ascontiguousarray(values, dtype=np.float32).tobytes())


def vector_bind(values: np.ndarray, vector_format: str) -> array.array:
    """A chunk vector bind in the version's format: int8 as ``array('b')`` (python-oracledb's INT8
    vector), each vector scaled by ``quantize_int8`` first, since Oracle only rounds."""
    if vector_format == "int8":
        return array.array("b", quantize_int8(np.asarray(values, dtype=np.float32)).tobytes())
    return to_float32(values)


def vector_out(value: Any, vector_format: str) -> np.ndarray:
    """A stored chunk vector as float32; an int8 one as the unit vector it points along."""
    raw = np.asarray(value, dtype=np.float32)
    return dequantize(raw) if vector_format == "int8" else raw


def _text(value: Any) -> str:
    """A string column as stored; NULL is how Oracle keeps ''."""
    if value is None:
        return ""
    return str(value.read() if hasattr(value, "read") else value)


def row_to_chunk(row: Sequence[Any]) -> Chunk:
    chunk_id, doc_id, chunk_index, chunk_type, source, text, chash, metadata = row[:8]
    return Chunk(chunk_id=chunk_id, doc_id=doc_id, text=_text(text), source=_text(source), chunk_index=int(chunk_index),
                 chunk_type=chunk_type, metadata=json_value(metadata) or {}, content_hash=chash)


def _signature(row: Any) -> tuple[Any, ...]:
    """What decides whether a stored chunk differs from the one being written."""
    if isinstance(row, dict):
        values = [row[c] for c in sql.COMPARED_COLUMNS]
    else:
        values = list(row[1:])
    *head, metadata, embedding = values
    meta = json.dumps(json_value(metadata), sort_keys=True, ensure_ascii=False)
    vec = np.asarray(embedding, dtype=np.float32).tobytes()
    return (*[_text(x) for x in head], meta, vec)


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


class OracleVectorStore(OracleIndexAdmin, OracleConversationLog):
    backend = "oracle"

    @classmethod
    def from_settings(cls, settings: OracleSettings) -> "OracleVectorStore":
        store = cls(OracleConnector.from_settings(settings), settings)
        try:
            store.ensure_catalog()
        except StoreError:
            store.close()
            raise
        return store

    def ping(self) -> None:
        self._db.ping()

    def close(self) -> None:
        self._db.close()

    def lock_series(self, series: str, holder: LockHolder, *, wait_s: float = 0.0) -> OracleSeriesLease:
        """``SeriesLocking``: a row lock held by a session of its own (``series_lock``). That session
        is a pool connection kept for the whole run, and an administrative step under it holds one more for
        its own lock (``admin_lock``) while it works on a third: a smaller pool would starve the run itself."""
        if self._settings.pool_max < 3:
            raise ConfigError("store.oracle.pool_max must be at least 3: a run keeps one connection to hold the "
                              f"writer lock of series {series}, an administrative step one more for its own lock, "
                              "and works with the others")
        return OracleSeriesLocks(self._db).lock_series(series, holder, wait_s=wait_s)

    # --- writes --------------------------------------------------------------------
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

    def _guard(self, cur: Any, version: str, allow_served: bool) -> tuple[str, int]:
        """Lock the version's registry row, bump its generation and refuse a protected version, inside
        the write transaction: ``(model, dimension)``. The bump is rolled back with everything else when
        the write changes nothing. A rotation locks the same row (``point_alias``), so whichever commits
        first wins: a write after a rotation sees the alias and stops here."""
        model, dimension = cur.var(str, 512), cur.var(int)  # embed_model is VARCHAR2(512)
        cur.execute(sql.BUMP_GENERATION_SQL, {"name": version, "r_model": model, "r_dimension": dimension})
        if not model.getvalue():
            raise self._not_found(version)
        if not allow_served:
            reasons = self._protection(cur, version)
            if reasons:
                raise VersionServed(
                    f"{version} is served ({', '.join(reasons)}): served versions are immutable. Ingest into a "
                    "new version (it starts as a copy of this one) and promote it", version=version,
                    reasons=reasons)
        return str(model.getvalue()[0]), int(dimension.getvalue()[0])

    def _format_stamp(self, cur: Any, version: str) -> dict[str, str] | None:
        """``{"vector_format": "int8"}`` for an int8 version, else None: read once per version and process
        (a version never changes format, ``_existing``), so a float32 store pays one registry read per version."""
        formats: dict[str, str] = self.__dict__.setdefault("_formats", {})
        if version not in formats:
            row = self._find_version(cur, version)
            formats[version] = stamped_format(row.retrieval if row else None)
        return {"vector_format": formats[version]} if formats[version] != "float32" else None

    def write_documents(self, version: str, documents: Sequence[DocumentWrite], *, allow_served: bool = False) -> int:
        """Round trips: the guard (1 + 1 unless ``allow_served``), stored chunks (1 per 500 documents),
        DELETE of dropped chunks (1, if any), INSERT of new chunks (1, if any), UPDATE of stored ones (1, if
        any), embedding cache (1), commit (1)."""
        version = sql.oracle_name(version, "index_name")
        _check_chunk_ids(documents)
        check_ids_across(documents)
        merged = obsolete = 0
        with self._db.transaction(f"writing to {version}", then=RESUMES_IN_PLACE if allow_served else RESUMES) as con:
            cur = con.cursor()
            model, dimension = self._guard(cur, version, allow_served)
            v = VersionRow(version, model, dimension, "cosine", "none", None, "", None,
                           retrieval=self._format_stamp(cur, version))
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
                    stored_q.setdefault(doc_id, []).append(_question_signature(row_id, detail, _text(text), vector))
                else:
                    stored_s.setdefault(doc_id, []).append(_summary_signature(
                        row_id, detail, page, _text(text), json_value(chunk_ids) or [], vector))
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
        """Vectors into the embedding cache. Two ingests of the same text race on its key: the second
        MERGE fails that row with ORA-00001, which must not roll back the document write (the vector
        is in the cache either way), so rows are sent with ``batcherrors`` and ORA-00001 is ignored.
        Rows go sorted by ``text_hash``: two ingests inserting the same keys in document order could each
        wait on the other's uncommitted key (ORA-00060); in one global order they never cross (L1)."""
        import oracledb

        cache = {r["embed_hash"]: r["embedding"] for r in rows}
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
        with self._db.transaction(f"deleting from {version}",
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

    def asset_refs(self, version: str, *, visibility: Visibility | None = None) -> set[str]:
        version = sql.oracle_name(version, "index_name")
        where, binds = sql.filter_clause((visibility.as_filter(),)) if visibility is not None else ("1=1", {})
        with self._db.connection(f"reading the assets of {version}") as con:
            cur = con.cursor()
            self._version_row(cur, version)
            cur.execute(sql.asset_refs_sql(version, where), binds)
            return {str(r[0]) for r in cur.fetchall()}

    def document_hashes(self, version: str) -> dict[str, str]:
        version = sql.oracle_name(version, "index_name")
        with self._db.connection("reading") as con:
            cur = con.cursor()
            self._version_row(cur, version)
            cur.execute(sql.document_hashes_sql(version))
            return {r[0]: r[1] for r in cur.fetchall()}

    def document_list(self, version: str) -> list[StoredDocument]:
        version = sql.oracle_name(version, "index_name")
        with self._db.connection("reading") as con:
            cur = con.cursor()
            self._version_row(cur, version)
            cur.execute(sql.document_list_sql(version))
            return [StoredDocument(r[0], r[1], r[2], int(r[3])) for r in cur.fetchall()]

    def cached_vectors(self, model: str, text_hashes: Sequence[str]) -> dict[str, np.ndarray]:
        out: dict[str, np.ndarray] = {}
        unique = list(dict.fromkeys(text_hashes))
        with self._db.connection("reading the embedding cache") as con:
            cur = con.cursor()
            for start in range(0, len(unique), 500):
                part = unique[start:start + 500]
                binds: dict[str, Any] = {"embed_model": model, **sql.in_binds("h", part)}
                cur.execute(sql.cached_vectors_sql(len(part)), binds)
                for text_hash, vector in cur.fetchall():
                    out[text_hash] = np.asarray(vector, dtype=np.float32)
        return out

    # --- reads ---------------------------------------------------------------------
    def _check_query(self, v: VersionRow, query: QueryVector) -> None:
        if not query.fits(v.model, v.dimension):
            raise EmbeddingModelMismatch(
                f"query embedded with {query.model} ({query.dimension} dims) but {v.name} holds vectors from "
                f"{v.model} ({v.dimension} dims); embed the query with the version's model (or declare both "
                "runtimes in embeddings.local.compatible_runtimes)", version=v.name)

    def _dense_read(self, target: str, query: QueryVector, k: int, filters: Sequence[FieldFilter],
                    visibility: Visibility | None, *, ids_only: bool = False) -> tuple[VersionRow, list[Any]]:
        return _reread(target, lambda: self._dense_read_once(target, query, k, filters, visibility,
                                                             ids_only=ids_only))

    def _dense_read_once(self, target: str, query: QueryVector, k: int, filters: Sequence[FieldFilter],
                         visibility: Visibility | None, *, ids_only: bool = False) -> tuple[VersionRow, list[Any]]:
        filters, where, fbinds = _search_conditions(target, k, filters, visibility)
        # no read-only transaction: the alias is resolved by one statement and the search is another on
        # the one version it named (a served version is immutable), so two round trips, not four
        with self._db.connection(f"searching {target}") as con:
            cur = con.cursor()
            v = self._resolve_target(cur, target)
            self._check_query(v, query)
            return v, self._dense(cur, v, query, k, filters, where, fbinds, ids_only=ids_only)

    def search(self, target: str, query: QueryVector, k: int, filters: Sequence[FieldFilter] = (), *,
               visibility: Visibility | None = None) -> SearchResult:
        v, rows = self._dense_read(target, query, k, filters, visibility)
        hits = tuple(
            ScoredChunk(row_to_chunk(r), sql.similarity(v.distance, float(r[8])), rank, v.distance)  # type: ignore[arg-type]
            for rank, r in enumerate(rows, start=1)
        )
        return SearchResult(target=target, version=v.name, hits=hits, strategy="dense")

    def dense_candidates(self, target: str, query: QueryVector, k: int, filters: Sequence[FieldFilter] = (), *,
                         visibility: Visibility | None = None) -> Candidates:
        """``search``'s plan and statements, selecting ``chunk_id`` and the distance only."""
        v, rows = self._dense_read(target, query, k, filters, visibility, ids_only=True)
        hits = tuple((str(r[0]), sql.similarity(v.distance, float(r[1]))) for r in rows)  # type: ignore[arg-type]
        return Candidates(target, v.name, hits, v.distance)  # type: ignore[arg-type]

    def _by_id(self, cur: Any, v: VersionRow, chunk_ids: Sequence[str], visibility: Visibility | None,
               columns: str, extra: dict[str, Any] | None = None) -> list[Any]:
        """Rows of these chunks (``sql.chunks_by_id_sql``), ``sql.IDS_PER_READ`` ids a statement, hidden
        ones left out by the same access condition every search applies."""
        where, binds = sql.filter_clause((visibility.as_filter(),) if visibility is not None else ())
        wanted = list(dict.fromkeys(chunk_ids))
        rows: list[Any] = []
        for start in range(0, len(wanted), sql.IDS_PER_READ):
            part = wanted[start:start + sql.IDS_PER_READ]
            cur.execute(sql.chunks_by_id_sql(v.name, len(part), where, columns, v.distance),  # type: ignore[arg-type]
                        {**binds, **(extra or {}), **sql.in_binds("c", part)})
            rows += cur.fetchall()
        return rows

    def _read_by_id(self, version: str, chunk_ids: Sequence[str], visibility: Visibility | None, columns: str,
                    purpose: str, query: QueryVector | None = None) -> tuple[VersionRow, list[Any]]:
        """``_by_id`` on its own connection, the version resolved (and the query checked) first."""
        sql.oracle_name(version, "retrieval target")
        with self._db.connection(f"{purpose} of {version}") as con:
            cur = con.cursor()
            v = self._resolve_target(cur, version)
            extra = None
            if query is not None:
                self._check_query(v, query)
                extra = {"q": to_float32(query.values)}
            return v, self._by_id(cur, v, chunk_ids, visibility, columns, extra)

    def similarities(self, version: str, query: QueryVector, chunk_ids: Sequence[str], *,
                     visibility: Visibility | None = None) -> dict[str, float]:
        v, rows = self._read_by_id(version, chunk_ids, visibility, "distance", "scoring chunks", query)
        return {str(r[0]): sql.similarity(v.distance, float(r[1])) for r in rows}  # type: ignore[arg-type]

    def fetch_chunks(self, version: str, chunk_ids: Sequence[str], *,
                     visibility: Visibility | None = None) -> dict[str, Chunk]:
        _, rows = self._read_by_id(version, chunk_ids, visibility, "chunk", "reading chunks")
        return {c.chunk_id: c for c in map(row_to_chunk, rows)}

    def chunk_vectors(self, version: str, chunk_ids: Sequence[str], *,
                      visibility: Visibility | None = None) -> dict[str, np.ndarray]:
        v, rows = self._read_by_id(version, chunk_ids, visibility, "vector", "reading vectors")
        return {str(r[0]): vector_out(r[1], stamped_format(v.retrieval)) for r in rows}

    def chunk_texts(self, version: str, chunk_ids: Sequence[str], *,
                    visibility: Visibility | None = None) -> dict[str, str]:
        _, rows = self._read_by_id(version, chunk_ids, visibility, "text", "reading chunk texts")
        return {str(r[0]): _text(r[1]) for r in rows}

    def _count(self, cur: Any, statement: str, binds: dict[str, Any]) -> int:
        cur.execute(statement, binds)
        return int(cur.fetchone()[0])

    def _dense(self, cur: Any, v: VersionRow, query: QueryVector, k: int, filters: Sequence[FieldFilter],
               where: str, fbinds: dict[str, Any], *, ids_only: bool = False) -> list[tuple[Any, ...]]:
        """The rows of the search plan that keeps the k-hits promise: the chunk columns and the
        distance last (``ids_only``: ``chunk_id, dist``). An HNSW version's filtered search is one
        statement (``search_plan``, ``filtered``); IVF counts the filter's rows first and widens."""
        idx = v.vector_index(self._settings.vector_index)
        counts: dict[str, int] = {}

        def total() -> int:
            if "total" not in counts:
                counts["total"] = self._count(cur, sql.count_matching_sql(v.name, "1=1"), {})
            return counts["total"]

        def matching() -> int:
            if "matching" not in counts:
                counts["matching"] = self._count(cur, sql.count_matching_sql(v.name, where), fbinds)
            return counts["matching"]

        index_type = v.index_type if v.index_type in ("hnsw", "ivf") else "none"
        if search_plan.needs_count(index_type, bool(filters)) and matching() == 0:
            return []
        plan = search_plan.first_plan(k=k, filtered=bool(filters), matching=counts.get("matching"),
                                      index_type=index_type, threshold=idx.exact_filter_threshold,
                                      factor=idx.candidate_factor)
        q = to_float32(query.values)
        in_database = self._embeds_in_database(cur, v, query)
        # the JSON search index competes with the vector index for a filtered statement (review §2.8)
        transform = sql.index_names(v.name)[0] if self._settings.metadata_index else None

        def run(p: search_plan.SearchPlan) -> list[tuple[Any, ...]]:
            binds: dict[str, Any] = {**fbinds, "q": q, "k": k}
            if p.mode == "candidates":
                statement = sql.candidate_search_sql(v.name, v.distance, where, idx.target_accuracy,  # type: ignore[arg-type]
                                                     ids_only=ids_only)
                binds["depth"] = p.depth
            else:
                statement = sql.dense_search_sql(v.name, v.distance, where,  # type: ignore[arg-type]
                                                 approx=p.mode in ("approx", "filtered"),
                                                 target_accuracy=idx.target_accuracy, ids_only=ids_only,
                                                 transform=transform if p.mode == "filtered" else None)
            if in_database:  # the question embedded by the statement itself (query_model)
                statement, binds = self._query_gate.statement(statement, binds, str(query.text))
            cur.execute(statement, binds)
            return list(cur.fetchall())

        rows, tried = search_plan.run_with_guarantee(
            run, plan, k=k, matching=matching if filters else total, total=total, factor=idx.candidate_factor)
        if len(tried) > 1:
            log.info("store.search_widened", version=v.name, plans=[f"{p.mode}:{p.depth}" for p in tried])
        return list(rows)

    @property
    def _query_gate(self) -> QueryModelGate:
        gate = self.__dict__.get("_gate")
        if gate is None:
            cfg = self._settings.query_embedding
            gate = self.__dict__["_gate"] = QueryModelGate(cfg.model_name, cfg.min_cosine)
        return gate

    def _embeds_in_database(self, cur: Any, v: VersionRow, query: QueryVector) -> bool:
        """``store.oracle.query_embedding``: whether this search embeds the question in the statement
        (on, the query's text known, and ``v`` passed its parity check for the model it holds)."""
        if not self._settings.query_embedding.enabled or not query.text:
            return False
        return self._query_gate.allows(cur, v.name, v.model)

    def search_questions(self, target: str, query: QueryVector, k: int, filters: Sequence[FieldFilter] = (), *,
                         visibility: Visibility | None = None) -> QuestionResult:
        """The parent chunk's filters and ACL in the WHERE, one row per chunk. With a vector index: the
        questions' approximate top ``k`` x ``candidate_factor`` first (``_QVIDX``), widened by the factor
        while fewer than ``k`` chunks survive, exact once the depth covers every question (as
        ``search_plan`` widens chunk candidates); without one, the exact statement."""
        filters, where, fbinds = _search_conditions(target, k, filters, visibility)
        with self._db.connection(f"searching the questions of {target}") as con:
            cur = con.cursor()
            v = self._resolve_target(cur, target)
            self._check_query(v, query)
            idx = v.vector_index(self._settings.vector_index)
            binds = {**fbinds, "q": to_float32(query.values), "k": k}
            depth = k * idx.candidate_factor if v.index_type in ("hnsw", "ivf") else 0
            total: int | None = None
            while True:
                if depth:
                    cur.execute(sql.question_search_sql(v.name, v.distance, where, approx=True,  # type: ignore[arg-type]
                                                        target_accuracy=idx.target_accuracy), {**binds, "depth": depth})
                else:
                    cur.execute(sql.question_search_sql(v.name, v.distance, where), binds)  # type: ignore[arg-type]
                rows = cur.fetchall()
                if not depth or len(rows) >= k:
                    break
                if total is None:
                    total = self._count(cur, sql.question_count_sql(v.name), {})
                depth = depth * idx.candidate_factor if depth < total else 0  # covers every question: exact
                log.info("store.question_search_widened", version=v.name, depth=depth or "exact")
        hits = tuple(
            QuestionHit(row_to_chunk(r), sql.similarity(v.distance, float(r[10])), rank,  # type: ignore[arg-type]
                        str(r[8]), _text(r[9]))
            for rank, r in enumerate(rows, start=1))
        return QuestionResult(target=target, version=v.name, hits=hits)

    def search_summaries(self, target: str, query: QueryVector, k: int, filters: Sequence[FieldFilter] = (), *,
                         kinds: Sequence[SummaryKind] = ("page_summary", "artifact_summary"),
                         visibility: Visibility | None = None) -> SummaryResult:
        filters, where, fbinds = _search_conditions(target, k, filters, visibility)
        wanted = summary_kinds(kinds)
        with self._db.connection(f"searching the summaries of {target}") as con:
            cur = con.cursor()
            v = self._resolve_target(cur, target)
            self._check_query(v, query)
            cur.execute(sql.summary_search_sql(v.name, v.distance, where, len(wanted)),  # type: ignore[arg-type]
                        {**fbinds, **{f"kind{i}": kind for i, kind in enumerate(wanted)},
                         "q": to_float32(query.values), "k": k})
            rows = cur.fetchall()
        hits = tuple(
            SummaryHit(summary_from_row(str(r[0]), str(r[1]), str(r[2]), r[3], _text(r[4]),
                                        json.dumps(json_value(r[5]) or [])),
                       sql.similarity(v.distance, float(r[6])), rank)  # type: ignore[arg-type]
            for rank, r in enumerate(rows, start=1))
        return SummaryResult(target=target, version=v.name, hits=hits)

    def _lexical(self, target: str, text: str, k: int, filters: Sequence[FieldFilter],
                 visibility: Visibility | None, *, ids_only: bool) -> tuple[VersionRow, list[Any]]:
        return _reread(target, lambda: self._lexical_once(target, text, k, filters, visibility, ids_only=ids_only))

    def _lexical_once(self, target: str, text: str, k: int, filters: Sequence[FieldFilter],
                      visibility: Visibility | None, *, ids_only: bool) -> tuple[VersionRow, list[Any]]:
        """The Oracle Text search's version and rows (the chunk columns or ``chunk_id``, the score last)."""
        sql.oracle_name(target, "retrieval target")
        if k <= 0:
            raise StoreError(f"k must be positive, got {k}")
        filters = (*filters, visibility.as_filter()) if visibility is not None else tuple(filters)
        if not self._settings.lexical_index:
            raise StoreError("lexical search on Oracle needs store.oracle.lexical_index: true (an Oracle Text index)")
        where, binds = sql.filter_clause(filters)
        query = sql.text_query(text)
        with self._db.connection(f"searching {target}") as con:
            cur = con.cursor()
            v = self._resolve_target(cur, target)
            if not query:
                return v, []
            fetch = sql.lexical_fetch(k)
            cur.execute(sql.lexical_search_sql(v.name, where, ids_only=ids_only, fetch=fetch),
                        {**binds, "query": query, "n": fetch})
            top = sql.lexical_top(cur.fetchall(), k, fetch)
            if top is not None:
                return v, list(top)
            # ties at the cut run past the fetched rows: the exact (slower) statement decides
            cur.execute(sql.lexical_search_sql(v.name, where, ids_only=ids_only), {**binds, "query": query, "k": k})
            return v, list(cur.fetchall())

    def lexical_search(self, target: str, text: str, k: int, filters: Sequence[FieldFilter] = (), *,
                       visibility: Visibility | None = None) -> SearchResult:
        v, rows = self._lexical(target, text, k, filters, visibility, ids_only=False)
        hits = tuple(
            ScoredChunk(row_to_chunk(r), float(r[8]), rank, v.distance, lexical_score=float(r[8]))  # type: ignore[arg-type]
            for rank, r in enumerate(rows, start=1)
        )
        return SearchResult(target=target, version=v.name, hits=hits, strategy="lexical")

    def lexical_candidates(self, target: str, text: str, k: int, filters: Sequence[FieldFilter] = (), *,
                           visibility: Visibility | None = None) -> Candidates:
        v, rows = self._lexical(target, text, k, filters, visibility, ids_only=True)
        return Candidates(target, v.name, tuple((str(r[0]), float(r[1])) for r in rows), v.distance)  # type: ignore[arg-type]

    def version_vectors(self, target: str) -> tuple[list[str], np.ndarray]:
        """All chunk ids and vectors of a version, for recall checks against exact search."""
        sql.oracle_name(target, "retrieval target")
        with self._db.connection(f"reading vectors of {target}") as con:
            cur = con.cursor()
            v = self._resolve_target(cur, target)
            cur.execute(sql.vectors_sql(v.name))
            rows = cur.fetchall()
        fmt = stamped_format(v.retrieval)
        matrix = np.vstack([vector_out(r[1], fmt) for r in rows]) if rows else np.zeros((0, v.dimension), np.float32)
        return [r[0] for r in rows], matrix

    # --- interactions (CHAT_INTERACTIONS, RESP_MODE per seed 004) ---------------------
    def record_interaction(self, interaction: Interaction) -> None:
        with self._db.transaction("recording an interaction") as con:
            cur = con.cursor()
            cur.setinputsizes(decision_explain=oracledb_json())
            cur.execute(
                "INSERT INTO CHAT_INTERACTIONS (created_at, question, resp_mode, used_llm, domain_key, retrieval_target, "
                "latency_ms, conversation_id, decision_explain, principal) VALUES (:created_at, :question, :resp_mode, "
                ":used_llm, :domain_key, :retrieval_target, :latency_ms, :conversation_id, :decision_explain, "
                ":principal)",
                {"created_at": interaction.created_at or now_iso(), "question": interaction.question,
                 "resp_mode": interaction.resp_mode, "used_llm": interaction.used_llm, "domain_key": interaction.domain,
                 "retrieval_target": interaction.retrieval_target, "latency_ms": float(interaction.latency_ms),
                 "conversation_id": interaction.conversation_id,
                 "decision_explain": json_safe(interaction.decision_explain), "principal": interaction.principal},
            )

    def interactions(self, limit: int = 100) -> list[Interaction]:
        with self._db.connection("reading interactions") as con:
            cur = con.cursor()
            cur.execute(
                "SELECT question, resp_mode, used_llm, domain_key, retrieval_target, latency_ms, "
                f"{sql.json_text('decision_explain', 'decision_explain')}, "
                "conversation_id, created_at, principal FROM CHAT_INTERACTIONS ORDER BY id DESC FETCH FIRST :n ROWS ONLY",
                {"n": int(limit)})
            rows = cur.fetchall()
        return [Interaction(question=_text(r[0]), resp_mode=r[1], used_llm=_text(r[2]), domain=r[3], retrieval_target=r[4],
                            latency_ms=float(r[5]), decision_explain=json_value(r[6]) or {}, conversation_id=r[7],
                            created_at=r[8], principal=r[9]) for r in rows]

    def count_interactions(self) -> int:
        with self._db.connection("counting interactions") as con:
            cur = con.cursor()
            cur.execute("SELECT COUNT(*) FROM CHAT_INTERACTIONS")
            return int(cur.fetchone()[0])


def _search_conditions(target: str, k: int, filters: Sequence[FieldFilter], visibility: Visibility | None
                       ) -> tuple[tuple[FieldFilter, ...], str, dict[str, Any]]:
    """What every vector search checks first (the target's name, ``k``), and its WHERE clause.
    Access control is one more JSON_EXISTS condition on rag_acl in the same WHERE as the filters:
    the search plan treats it as a filter, so hidden rows never take one of the k slots."""
    sql.oracle_name(target, "retrieval target")
    if k <= 0:
        raise StoreError(f"k must be positive, got {k}")
    filters = (*filters, visibility.as_filter()) if visibility is not None else tuple(filters)
    where, binds = sql.filter_clause(filters)
    return filters, where, binds
