"""``VectorStore`` on the SQLite file: writing documents and every read the searches make.

A version's vectors are read once per generation into an in-memory matrix (``matrices``) and
searched exactly with NumPy, or through the version's HNSW index once ``finish_load`` built one;
metadata filters and access control narrow the candidate rowids in one indexed query first, so
``k`` visible matching hits come back whenever they exist. An alias is resolved inside the same
read transaction as the search, so a concurrent rotation yields the old or the new version.
"""

from __future__ import annotations

import json
import sqlite3
from contextlib import contextmanager
from typing import Any, Iterator, Mapping, Sequence

import numpy as np

from backend.common.errors import EmbeddingModelMismatch, StoreError
from backend.common.identifiers import validate_identifier
from backend.core.types import (
    ACL_FIELD,
    Candidates,
    Chunk,
    DocumentWrite,
    FieldFilter,
    QueryVector,
    QuestionHit,
    QuestionResult,
    ScoredChunk,
    SearchResult,
    StoredDocument,
    Summary,
    SummaryHit,
    SummaryKind,
    SummaryResult,
    Visibility,
    content_hash,
)
from backend.providers.enrichment_rows import (
    SUMMARY_KINDS,
    Enrichment,
    check_ids_across,
    chunk_ids_json,
    enrichment,
    summary_from_row,
    summary_kinds,
)
from backend.providers.sqlite_vs import ann, catalog, dense, reads, schema
from backend.providers.sqlite_vs.connection import SqliteDatabase
from backend.providers.sqlite_vs.filters import filter_sql
from backend.providers.sqlite_vs.matrices import VersionMatrices


def check_chunk_ids(documents: Sequence[DocumentWrite]) -> None:
    """A chunk id claimed twice in one write would silently keep only one of the chunks."""
    seen: dict[str, str] = {}
    for doc in documents:
        for c in doc.chunks:
            if c.chunk_id in seen:
                raise StoreError(
                    f"chunk_id {c.chunk_id!r} appears twice in one write (documents {seen[c.chunk_id]} and "
                    f"{doc.doc_id}); chunk ids must be unique",
                    chunk_id=c.chunk_id,
                )
            seen[c.chunk_id] = doc.doc_id


class SqliteVectors:
    """``VectorStore`` over one ``SqliteDatabase``; shares the version matrices with the index admin."""

    def __init__(self, db: SqliteDatabase, matrices: VersionMatrices) -> None:
        self.db = db
        self.matrices = matrices

    def ping(self) -> None:
        """Raise ``StoreUnavailable`` unless the file answers (the readiness check)."""
        self.db.ping()

    def resolve_retrieval(self, target: str) -> tuple[str, Mapping[str, Any] | None]:
        validate_identifier(target, "retrieval target")
        with self.db.read() as con:
            row = catalog.resolve_target(con, target)
        return str(row["name"]), json.loads(row["retrieval"]) if row["retrieval"] else None

    def max_writers(self) -> int:
        """SQLite has one writer: parallel writers would only queue on its lock."""
        return 1

    def write_documents(self, version: str, documents: Sequence[DocumentWrite], *, allow_served: bool = False) -> int:
        validate_identifier(version, "index_name")
        check_chunk_ids(documents)
        check_ids_across(documents)
        written = 0
        with self.db.write() as con:
            vrow = catalog.version_row(con, version)
            t = vrow["name"]
            catalog.check_writable(con, t, allow_served)
            changed = False
            for doc in documents:
                vectors = np.asarray(doc.vectors, dtype=np.float32)
                if len(doc.chunks) != len(vectors):
                    raise StoreError(f"document {doc.doc_id}: {len(doc.chunks)} chunks but {len(vectors)} vectors")
                if len(vectors) and vectors.shape[1] != vrow["dimension"]:
                    raise EmbeddingModelMismatch(
                        f"document {doc.doc_id}: vectors have {vectors.shape[1]} dimensions, version {t} "
                        f"expects {vrow['dimension']} ({vrow['model']})",
                        version=t,
                    )
                rows = [
                    (
                        c.chunk_id, c.doc_id, doc.doc_hash, c.chunk_index, c.chunk_type, c.source, c.text,
                        c.content_hash, content_hash(c.text_to_embed),
                        json.dumps(dict(c.metadata), sort_keys=True, ensure_ascii=False), v.tobytes(),
                    )
                    for c, v in zip(doc.chunks, vectors)
                ]
                extra = enrichment(doc, t, vrow["dimension"], vrow["model"])
                old = con.execute(
                    f"SELECT chunk_id, doc_id, doc_hash, chunk_index, chunk_type, source, text, content_hash, "
                    f"embed_hash, metadata, embedding FROM {t} WHERE doc_id = ? ORDER BY chunk_index, chunk_id",
                    (doc.doc_id,),
                ).fetchall()
                same_chunks = [tuple(r) for r in old] == sorted(rows, key=lambda r: (r[3], r[0]))
                same_extra = self._replace_enrichment(con, t, doc.doc_id, extra, dry_run=True)
                if same_chunks and same_extra:
                    continue
                changed = True
                if not same_extra:
                    self._replace_enrichment(con, t, doc.doc_id, extra)
                if same_chunks:
                    continue
                con.execute(f"DELETE FROM {t}_fts WHERE rowid IN (SELECT rowid FROM {t} WHERE doc_id = ?)", (doc.doc_id,))
                con.execute(f"DELETE FROM {t} WHERE doc_id = ?", (doc.doc_id,))
                for r in rows:
                    # chunk_id is unique across the version: a chunk that moved documents is replaced
                    con.execute(f"DELETE FROM {t}_fts WHERE rowid IN (SELECT rowid FROM {t} WHERE chunk_id = ?)", (r[0],))
                    con.execute(f"DELETE FROM {t} WHERE chunk_id = ?", (r[0],))
                    cur = con.execute(
                        f"INSERT INTO {t}(chunk_id, doc_id, doc_hash, chunk_index, chunk_type, source, text, "
                        "content_hash, embed_hash, metadata, embedding) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                        r,
                    )
                    con.execute(f"INSERT INTO {t}_fts(rowid, text) VALUES (?, ?)", (cur.lastrowid, r[6]))
                written += len(rows)
            if changed:
                con.execute("UPDATE rag_versions SET generation = generation + 1 WHERE name = ?", (t,))
        return written

    @staticmethod
    def _replace_enrichment(con: sqlite3.Connection, t: str, doc_id: str, extra: Enrichment, *,
                            dry_run: bool = False) -> bool:
        """Make the document's questions and summaries exactly ``extra``. With ``dry_run`` only
        compare: True when the stored rows already are ``extra`` (nothing to write)."""
        q_rows = sorted((q.question_id, q.chunk_id, doc_id, q.text, np.asarray(v, np.float32).tobytes())
                        for q, v in extra.questions)
        s_rows = sorted((s.summary_id, doc_id, s.kind, s.page, s.text, chunk_ids_json(s),
                         np.asarray(v, np.float32).tobytes()) for s, v in extra.summaries)
        if dry_run:
            stored_q = [tuple(r) for r in con.execute(
                f"SELECT {schema.QUESTION_COLUMNS} FROM {t}_questions WHERE doc_id = ? ORDER BY question_id",
                (doc_id,))]
            stored_s = [tuple(r) for r in con.execute(
                f"SELECT {schema.SUMMARY_COLUMNS} FROM {t}_summaries WHERE doc_id = ? ORDER BY summary_id",
                (doc_id,))]
            return stored_q == q_rows and stored_s == s_rows
        con.execute(f"DELETE FROM {t}_questions WHERE doc_id = ?", (doc_id,))
        con.execute(f"DELETE FROM {t}_summaries WHERE doc_id = ?", (doc_id,))
        # a chunk that moved here from another document takes its questions along, never two sets
        con.executemany(f"DELETE FROM {t}_questions WHERE chunk_id = ?", sorted({(r[1],) for r in q_rows}))
        con.executemany(f"DELETE FROM {t}_questions WHERE question_id = ?", [(r[0],) for r in q_rows])
        con.executemany(f"DELETE FROM {t}_summaries WHERE summary_id = ?", [(r[0],) for r in s_rows])
        con.executemany(f"INSERT INTO {t}_questions({schema.QUESTION_COLUMNS}) VALUES (?,?,?,?,?)", q_rows)
        con.executemany(f"INSERT INTO {t}_summaries({schema.SUMMARY_COLUMNS}) VALUES (?,?,?,?,?,?,?)", s_rows)
        return True

    def delete_documents(self, version: str, doc_ids: Sequence[str], *, allow_served: bool = False) -> int:
        validate_identifier(version, "index_name")
        deleted = 0
        with self.db.write() as con:
            t = catalog.version_row(con, version)["name"]
            catalog.check_writable(con, t, allow_served)
            for doc_id in doc_ids:
                con.execute(f"DELETE FROM {t}_fts WHERE rowid IN (SELECT rowid FROM {t} WHERE doc_id = ?)", (doc_id,))
                deleted += con.execute(f"DELETE FROM {t} WHERE doc_id = ?", (doc_id,)).rowcount
                con.execute(f"DELETE FROM {t}_questions WHERE doc_id = ?", (doc_id,))
                con.execute(f"DELETE FROM {t}_summaries WHERE doc_id = ?", (doc_id,))
            if deleted:
                con.execute("UPDATE rag_versions SET generation = generation + 1 WHERE name = ?", (t,))
        return deleted

    def document_hashes(self, version: str) -> dict[str, str]:
        validate_identifier(version, "index_name")
        with self.db.read() as con:
            t = catalog.version_row(con, version)["name"]
            return {r[0]: r[1] for r in con.execute(f"SELECT doc_id, MIN(doc_hash) FROM {t} GROUP BY doc_id")}

    def document_list(self, version: str) -> list[StoredDocument]:
        validate_identifier(version, "index_name")
        with self.db.read() as con:
            t = catalog.version_row(con, version)["name"]
            return [StoredDocument(r[0], r[1], r[2], int(r[3])) for r in con.execute(
                f"SELECT doc_id, MIN(doc_hash), MIN(source), COUNT(*) FROM {t} GROUP BY doc_id ORDER BY doc_id")]

    def asset_refs(self, version: str, *, visibility: Visibility | None = None) -> set[str]:
        validate_identifier(version, "index_name")
        with self.db.read() as con:
            t = catalog.version_row(con, version)["name"]
            if visibility is None:
                return {str(r[0]) for r in con.execute(
                    f"SELECT DISTINCT value FROM {t}_facets WHERE field = 'image_ref'")}
            # only the images cited by a chunk the reader may see
            marks = ",".join("?" * len(visibility.labels))
            return {str(r[0]) for r in con.execute(
                f"SELECT DISTINCT value FROM {t}_facets WHERE field = 'image_ref' AND rid IN "
                f"(SELECT rid FROM {t}_facets WHERE field = ? AND value IN ({marks}))",
                (ACL_FIELD, *visibility.labels))}

    def cached_vectors(self, model: str, text_hashes: Sequence[str]) -> dict[str, np.ndarray]:
        """Looks in every version built with ``model`` (newest first) by ``embed_hash``."""
        out: dict[str, np.ndarray] = {}
        wanted = list(dict.fromkeys(text_hashes))
        with self.db.read() as con:
            tables = [r[0] for r in con.execute(
                "SELECT name FROM rag_versions WHERE model = ? ORDER BY created_at DESC", (model,))]
            for table in tables:
                t = validate_identifier(table, "index_name")
                missing = [h for h in wanted if h not in out]
                for start in range(0, len(missing), 500):
                    part = missing[start:start + 500]
                    marks = ",".join("?" * len(part))
                    for r in con.execute(f"SELECT embed_hash, embedding FROM {t} WHERE embed_hash IN ({marks})", part):
                        out[r[0]] = np.frombuffer(r[1], dtype=np.float32)
                if len(out) == len(wanted):
                    break
        return out

    def _dense_best(self, con: sqlite3.Connection, vrow: sqlite3.Row, query: QueryVector, k: int,
                    filters: Sequence[FieldFilter]) -> tuple[dense.Matrix, np.ndarray, np.ndarray, ann.Plan]:
        """The top-``k`` chunks passing ``filters``: their positions in the version's matrix and
        their similarities, best first (ties by position, i.e. by rowid), and how they were found."""
        t = vrow["name"]
        reads.check_query(vrow, query)
        m = self.matrices.matrix(con, vrow)
        allowed: np.ndarray | None = None
        if filters:
            where, params = filter_sql(filters, t)
            allowed = np.sort(np.fromiter(
                (r[0] for r in con.execute(f"SELECT t.rowid FROM {t} AS t WHERE {where}", params)), dtype=np.int64
            ))
        best, sims, how = self.matrices.ranked(vrow, "", m, query, k, allowed)
        return m, best, sims, how

    @contextmanager
    def _resolved(self, target: str) -> Iterator[tuple[sqlite3.Connection, sqlite3.Row]]:
        """One read transaction and the version row ``target`` (an alias or a version) resolves to
        in it: every read of one call sees that version and nothing written after."""
        with self.db.read() as con:
            yield con, catalog.resolve_target(con, target)

    def _visible(self, version: str, chunk_ids: Sequence[str], visibility: Visibility | None,
                 query: QueryVector | None = None) -> tuple[sqlite3.Row, dense.Matrix, np.ndarray]:
        """The version row, its cached matrix and the matrix positions of these chunks (those
        ``visibility`` may see, in rowid order); ``query`` is checked against the version first."""
        validate_identifier(version, "retrieval target")
        with self._resolved(version) as (con, vrow):
            if query is not None:
                reads.check_query(vrow, query)
            m = self.matrices.matrix(con, vrow)
            rowids = reads.visible_rowids(con, vrow["name"], m, chunk_ids, visibility)
        return vrow, m, np.searchsorted(m.rowids, rowids)

    def search(self, target: str, query: QueryVector, k: int, filters: Sequence[FieldFilter] = (), *,
               visibility: Visibility | None = None) -> SearchResult:
        filters = reads.search_conditions(target, k, filters, visibility)
        with self._resolved(target) as (con, vrow):
            t = vrow["name"]
            m, best, sims, how = self._dense_best(con, vrow, query, k, filters)
            rowids = m.rowids[best].tolist()
            chunks = reads.fetch(con, t, rowids)
            hits = tuple(
                ScoredChunk(chunks[rid], score, rank, vrow["distance"])
                for rank, (rid, score) in enumerate(zip(rowids, sims.tolist()), start=1)
            )
        return SearchResult(target=target, version=t, hits=hits, strategy="dense", dense_index=how.explain())

    def dense_candidates(self, target: str, query: QueryVector, k: int, filters: Sequence[FieldFilter] = (), *,
                         visibility: Visibility | None = None) -> Candidates:
        """``search``'s ranking; chunk ids come from the cached matrix, so no row is read."""
        filters = reads.search_conditions(target, k, filters, visibility)
        with self._resolved(target) as (con, vrow):
            m, best, sims, how = self._dense_best(con, vrow, query, k, filters)
            assert m.ids is not None
            hits = tuple(zip(m.ids[best].tolist(), sims.tolist()))
        return Candidates(target, vrow["name"], hits, vrow["distance"], dense_index=how.explain())

    def similarities(self, version: str, query: QueryVector, chunk_ids: Sequence[str], *,
                     visibility: Visibility | None = None) -> dict[str, float]:
        """Scores the rows of exactly these chunks, as ``search`` restricted to them by a filter would
        (the same rows in the same rowid order)."""
        vrow, m, positions = self._visible(version, chunk_ids, visibility, query)
        sims = dense.scores(m.vectors[positions], query.values.astype(np.float32), vrow["distance"])
        assert m.ids is not None
        return dict(zip(m.ids[positions].tolist(), sims.tolist()))

    def chunk_vectors(self, version: str, chunk_ids: Sequence[str], *,
                      visibility: Visibility | None = None) -> dict[str, np.ndarray]:
        """The stored vectors of these chunks, from the cached matrix (no row read)."""
        _, m, positions = self._visible(version, chunk_ids, visibility)
        assert m.ids is not None
        return {c: np.array(m.vectors[p], dtype=np.float32)
                for c, p in zip(m.ids[positions].tolist(), positions.tolist())}

    def fetch_chunks(self, version: str, chunk_ids: Sequence[str], *,
                     visibility: Visibility | None = None) -> dict[str, Chunk]:
        validate_identifier(version, "retrieval target")
        with self._resolved(version) as (con, vrow):
            rowids = reads.visible_rowids(con, vrow["name"], self.matrices.matrix(con, vrow), chunk_ids, visibility)
            return {c.chunk_id: c for c in reads.fetch(con, vrow["name"], rowids.tolist()).values()}

    def chunk_texts(self, version: str, chunk_ids: Sequence[str], *,
                    visibility: Visibility | None = None) -> dict[str, str]:
        validate_identifier(version, "retrieval target")
        with self._resolved(version) as (con, vrow):
            t = vrow["name"]
            m = self.matrices.matrix(con, vrow)
            rowids = reads.visible_rowids(con, t, m, chunk_ids, visibility)
            assert m.ids is not None
            chunk_of = dict(zip(rowids.tolist(), m.ids[np.searchsorted(m.rowids, rowids)].tolist()))
            out: dict[str, str] = {}
            for start in range(0, len(rowids), 500):
                part = rowids[start:start + 500].tolist()
                out.update((chunk_of[rid], text) for rid, text in reads.tuples(
                    con, f"SELECT rowid, text FROM {t} WHERE rowid IN ({','.join('?' * len(part))})", part))
            return out

    def search_questions(self, target: str, query: QueryVector, k: int, filters: Sequence[FieldFilter] = (), *,
                         visibility: Visibility | None = None) -> QuestionResult:
        filters = reads.search_conditions(target, k, filters, visibility)
        with self._resolved(target) as (con, vrow):
            t = vrow["name"]
            reads.check_query(vrow, query)
            m = self.matrices.matrix(con, vrow, "questions")
            allowed: np.ndarray | None = None
            if filters:
                # the parent chunk's facets decide, in the same indexed query as a chunk search
                where, params = filter_sql(filters, t, alias="c")
                allowed = reads.allowed(con, f"SELECT q.rowid FROM {t}_questions AS q JOIN {t} AS c "
                                             f"ON c.chunk_id = q.chunk_id WHERE {where}", params)
            visible = len(m.rowids) if allowed is None else len(allowed)
            depth = k * 4
            while True:  # several questions of one chunk can fill the top: widen until k parents
                best, sims, _ = self.matrices.ranked(vrow, "questions", m, query, depth, allowed)
                picked = reads.best_per_chunk(con, t, m.rowids[best].tolist())
                if len(picked) >= k or depth >= visible:
                    break
                depth *= 4
            picked = picked[:k]
            chunks = reads.fetch_chunks(con, t, [p[1] for p in picked])
            score = {int(m.rowids[i]): float(s) for i, s in zip(best, sims)}
            hits = tuple(
                QuestionHit(chunks[chunk_id], score[rid], rank, question_id, question)
                for rank, (rid, chunk_id, question_id, question) in enumerate(
                    (p for p in picked if p[1] in chunks), start=1)
            )
        return QuestionResult(target=target, version=t, hits=hits)

    def search_summaries(self, target: str, query: QueryVector, k: int, filters: Sequence[FieldFilter] = (), *,
                         kinds: Sequence[SummaryKind] = ("page_summary", "artifact_summary"),
                         visibility: Visibility | None = None) -> SummaryResult:
        filters = reads.search_conditions(target, k, filters, visibility)
        wanted = summary_kinds(kinds)
        with self._resolved(target) as (con, vrow):
            t = vrow["name"]
            reads.check_query(vrow, query)
            m = self.matrices.matrix(con, vrow, "summaries")
            allowed: np.ndarray | None = None
            if filters or len(wanted) < len(SUMMARY_KINDS):
                # a summary is as visible as its document: some chunk of it passes the same conditions
                where, params = filter_sql(filters, t, alias="c")
                allowed = reads.allowed(
                    con, f"SELECT s.rowid FROM {t}_summaries AS s WHERE s.kind IN ({','.join('?' * len(wanted))}) "
                         f"AND s.doc_id IN (SELECT c.doc_id FROM {t} AS c WHERE {where})", [*wanted, *params])
            best, sims, _ = self.matrices.ranked(vrow, "summaries", m, query, k, allowed)
            rowids = m.rowids
            ids = [int(r) for r in rowids[best]]
            rows: dict[int, Summary] = {}
            if ids:
                marks = ",".join("?" * len(ids))
                for r in con.execute(f"SELECT rowid, summary_id, doc_id, kind, page, text, chunk_ids FROM "
                                     f"{t}_summaries WHERE rowid IN ({marks})", ids):
                    rows[r[0]] = summary_from_row(r[1], r[2], r[3], r[4], r[5], r[6])
            hits = tuple(SummaryHit(rows[int(rowids[i])], float(score), rank)
                         for rank, (i, score) in enumerate(zip(best, sims), start=1))
        return SummaryResult(target=target, version=t, hits=hits)

    @contextmanager
    def _lexical_rows(self, target: str, text: str, k: int, filters: Sequence[FieldFilter],
                      visibility: Visibility | None
                      ) -> Iterator[tuple[sqlite3.Connection, sqlite3.Row, list[tuple[int, float]]]]:
        """The read transaction and version row of ``_resolved``, with the top-``k`` full-text
        matches ``(rowid, score)`` that ``filters`` and ``visibility`` leave (``reads.lexical_rows``)."""
        conditions = reads.search_conditions(target, k, filters, visibility)
        with self._resolved(target) as (con, vrow):
            yield con, vrow, reads.lexical_rows(con, vrow["name"], text, k, conditions)

    def lexical_search(self, target: str, text: str, k: int, filters: Sequence[FieldFilter] = (), *,
                       visibility: Visibility | None = None) -> SearchResult:
        with self._lexical_rows(target, text, k, filters, visibility) as (con, vrow, rows):
            t = vrow["name"]
            chunks = reads.fetch(con, t, [rid for rid, _ in rows])
            hits = tuple(
                ScoredChunk(chunks[rid], score, rank, vrow["distance"], lexical_score=score)
                for rank, (rid, score) in enumerate((r for r in rows if r[0] in chunks), start=1)
            )
        return SearchResult(target=target, version=t, hits=hits, strategy="lexical")

    def lexical_candidates(self, target: str, text: str, k: int, filters: Sequence[FieldFilter] = (), *,
                           visibility: Visibility | None = None) -> Candidates:
        with self._lexical_rows(target, text, k, filters, visibility) as (con, vrow, rows):
            m = self.matrices.matrix(con, vrow)  # cached per generation; fusion's dense side reads it anyway
        # chunk ids by rowid from the matrix: no row read (a rowid without a chunk is dropped)
        rowids = np.fromiter((rid for rid, _ in rows), dtype=np.int64, count=len(rows))
        positions = np.minimum(np.searchsorted(m.rowids, rowids), max(len(m.rowids) - 1, 0))
        assert m.ids is not None
        known = (m.rowids[positions] == rowids).tolist() if len(m.rowids) else [False] * len(rows)
        ids = m.ids[positions].tolist() if len(m.rowids) else []
        hits = tuple((ids[i], score) for i, (_, score) in enumerate(rows) if known[i])
        return Candidates(target, vrow["name"], hits, vrow["distance"])

    def version_vectors(self, target: str) -> tuple[list[str], np.ndarray]:
        """All chunk ids and raw vectors of a version (benchmarks compare against this)."""
        with self.db.read() as con:
            t = catalog.resolve_target(con, target)["name"]
            rows = con.execute(f"SELECT chunk_id, embedding FROM {t} ORDER BY rowid").fetchall()
        ids = [r[0] for r in rows]
        return ids, np.vstack([np.frombuffer(r[1], dtype=np.float32) for r in rows]) if rows else np.zeros((0, 0), np.float32)
