"""``VectorStore`` on Oracle AI Vector Search: the reads of a version's chunks, and its writes
through ``writes.OracleVectorWriter``.

Reads resolve the alias and its version in one statement and search that one
version in a second: a served version is immutable, so no read-only
transaction is needed. Dense search uses the version's own metric and keeps
the promise of ``k`` hits under filters (see ``search_plan``).
"""

from __future__ import annotations

import json
from typing import Any, Callable, Mapping, Sequence, TypeVar

import numpy as np
import structlog

from backend.common.config import OracleSettings
from backend.common.errors import EmbeddingModelMismatch, StoreError, VersionNotFound
from backend.core.types import (
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
    SummaryHit,
    SummaryKind,
    SummaryResult,
    Visibility,
)
from backend.core.vector_format import stamped_format
from backend.providers.enrichment_rows import summary_from_row, summary_kinds
from backend.providers.oracle_vs import search_plan, sql
from backend.providers.oracle_vs.binds import column_text, is_quantized, row_to_chunk, to_float32, vector_out
from backend.providers.oracle_vs.connection import OracleConnector
from backend.providers.oracle_vs.index_admin import OracleIndexAdmin
from backend.providers.oracle_vs.versions import VersionRow, json_value
from backend.providers.oracle_vs.query_model import QueryModelGate
from backend.providers.oracle_vs.writes import OracleVectorWriter

log = structlog.get_logger(__name__)
#: A search resolves the alias and reads the version in two statements: ORA-00942 / ORA-08103 mean the
#: version was dropped in between (``rag index gc`` after a rotation), so the read runs once more and
#: resolves the alias anew.
DROPPED_ORA = frozenset({"ORA-00942", "ORA-08103"})
#: The in-database embedding model does not exist (dropped by ``rag oracle load-model`` before it loads
#: the new one): ORA-40284 "model does not exist".
MODEL_MISSING = frozenset({40284})
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




class OracleVectors:
    """``VectorStore`` over a connector; reads the version catalog through the index admin's
    public reads (``admin.resolve_target``, ``admin.version_row``, ``admin.protection``)."""

    def __init__(self, connector: OracleConnector, settings: OracleSettings, admin: OracleIndexAdmin) -> None:
        self.connector = connector
        self.settings = settings
        self.admin = admin
        self.writer = OracleVectorWriter(connector, settings, admin)

    def ping(self) -> None:
        self.connector.ping()

    def resolve_retrieval(self, target: str) -> tuple[str, Mapping[str, Any] | None]:
        """One statement (alias and version in one round trip), so a rotation is never half seen."""
        with self.connector.connection("resolving a retrieval target") as con:
            row = self.admin.resolve_target(con.cursor(), target)
        return row.name, row.retrieval

    def max_writers(self) -> int:
        """The pool less one connection (for the run's reads and locks): writers lock the version's
        registry row only to bump it at commit (``writes``), so they load in parallel."""
        return max(1, self.settings.pool_max - 1)

    def write_documents(self, version: str, documents: Sequence[DocumentWrite], *, allow_served: bool = False) -> int:
        return self.writer.write_documents(version, documents, allow_served=allow_served)

    def delete_documents(self, version: str, doc_ids: Sequence[str], *, allow_served: bool = False) -> int:
        return self.writer.delete_documents(version, doc_ids, allow_served=allow_served)


    def asset_refs(self, version: str, *, visibility: Visibility | None = None) -> set[str]:
        return _reread(version, lambda: self._asset_refs_once(version, visibility))

    def _asset_refs_once(self, version: str, visibility: Visibility | None) -> set[str]:
        version = sql.oracle_name(version, "index_name")
        where, binds = sql.filter_clause((visibility.as_filter(),)) if visibility is not None else ("1=1", {})
        with self.connector.connection(f"reading the assets of {version}") as con:
            cur = con.cursor()
            self.admin.version_row(cur, version)
            cur.execute(sql.asset_refs_sql(version, where), binds)
            return {str(r[0]) for r in cur.fetchall()}

    def document_hashes(self, version: str) -> dict[str, str]:
        version = sql.oracle_name(version, "index_name")
        with self.connector.connection("reading") as con:
            cur = con.cursor()
            self.admin.version_row(cur, version)
            cur.execute(sql.document_hashes_sql(version))
            return {r[0]: r[1] for r in cur.fetchall()}

    def document_list(self, version: str) -> list[StoredDocument]:
        return _reread(version, lambda: self._document_list_once(version))

    def _document_list_once(self, version: str) -> list[StoredDocument]:
        version = sql.oracle_name(version, "index_name")
        with self.connector.connection("reading") as con:
            cur = con.cursor()
            self.admin.version_row(cur, version)
            cur.execute(sql.document_list_sql(version))
            return [StoredDocument(r[0], r[1], r[2], int(r[3])) for r in cur.fetchall()]

    def cached_vectors(self, model: str, text_hashes: Sequence[str]) -> dict[str, np.ndarray]:
        """Cached vectors by text hash; a row an int8 version wrote before review 4's N2 (scaled
        integers, ``binds.is_quantized``) is a miss, so the text is embedded again and the write
        replaces the row (``MERGE_CACHE_SQL``)."""
        out: dict[str, np.ndarray] = {}
        poisoned = 0
        unique = list(dict.fromkeys(text_hashes))
        with self.connector.connection("reading the embedding cache") as con:
            cur = con.cursor()
            for start in range(0, len(unique), 500):
                part = unique[start:start + 500]
                binds: dict[str, Any] = {"embed_model": model, **sql.in_binds("h", part)}
                cur.execute(sql.cached_vectors_sql(len(part)), binds)
                for text_hash, vector in cur.fetchall():
                    if is_quantized(vector):  # written by an int8 version before N2: embed again
                        poisoned += 1
                        continue
                    out[text_hash] = np.asarray(vector, dtype=np.float32)
        if poisoned:
            log.warning("store.embedding_cache_poisoned", model=model, rows=poisoned,
                        fix="the next write of each text replaces it; `rag oracle check` counts the rest")
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
        with self.connector.connection(f"searching {target}") as con:
            cur = con.cursor()
            v = self.admin.resolve_target(cur, target)
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
               columns: str, query: QueryVector | None = None) -> list[Any]:
        """Rows of these chunks (``sql.chunks_by_id_sql``), ``sql.IDS_PER_READ`` ids a statement, hidden
        ones left out by the same access condition every search applies (``query``: the ``distance``
        column's question, embedded as every vector read embeds it, ``_vector_rows``)."""
        where, binds = sql.filter_clause((visibility.as_filter(),) if visibility is not None else ())
        wanted = list(dict.fromkeys(chunk_ids))
        rows: list[Any] = []
        for start in range(0, len(wanted), sql.IDS_PER_READ):
            part = wanted[start:start + sql.IDS_PER_READ]
            statement = sql.chunks_by_id_sql(v.name, len(part), where, columns, v.distance)  # type: ignore[arg-type]
            part_binds = {**binds, **sql.in_binds("c", part)}
            if query is not None:
                rows += self._vector_rows(cur, v, query, statement, part_binds)
            else:
                cur.execute(statement, part_binds)
                rows += cur.fetchall()
        return rows

    def _read_by_id(self, version: str, chunk_ids: Sequence[str], visibility: Visibility | None, columns: str,
                    purpose: str, query: QueryVector | None = None) -> tuple[VersionRow, list[Any]]:
        """``_by_id`` on its own connection, the version resolved (and the query checked) first; once
        more if gc dropped the version it resolved meanwhile (``_reread``, review 4 M3)."""
        return _reread(version, lambda: self._read_by_id_once(version, chunk_ids, visibility, columns, purpose, query))

    def _read_by_id_once(self, version: str, chunk_ids: Sequence[str], visibility: Visibility | None, columns: str,
                         purpose: str, query: QueryVector | None = None) -> tuple[VersionRow, list[Any]]:
        sql.oracle_name(version, "retrieval target")
        with self.connector.connection(f"{purpose} of {version}") as con:
            cur = con.cursor()
            v = self.admin.resolve_target(cur, version)
            if query is not None:
                self._check_query(v, query)
            return v, self._by_id(cur, v, chunk_ids, visibility, columns, query)

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
        return {str(r[0]): column_text(r[1]) for r in rows}

    def _count(self, cur: Any, statement: str, binds: dict[str, Any]) -> int:
        cur.execute(statement, binds)
        return int(cur.fetchone()[0])

    def _dense(self, cur: Any, v: VersionRow, query: QueryVector, k: int, filters: Sequence[FieldFilter],
               where: str, fbinds: dict[str, Any], *, ids_only: bool = False) -> list[tuple[Any, ...]]:
        """The rows of the search plan that keeps the k-hits promise: the chunk columns and the
        distance last (``ids_only``: ``chunk_id, dist``). An HNSW version's filtered search is one
        statement (``search_plan``, ``filtered``); IVF counts the filter's rows first and widens."""
        idx = v.vector_index(self.settings.vector_index)
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
        # the JSON search index competes with the vector index for a filtered statement (review §2.8)
        transform = sql.index_names(v.name)[0] if self.settings.metadata_index else None

        def run(p: search_plan.SearchPlan) -> list[tuple[Any, ...]]:
            binds: dict[str, Any] = {**fbinds, "k": k}
            if p.mode == "candidates":
                statement = sql.candidate_search_sql(v.name, v.distance, where, idx.target_accuracy,  # type: ignore[arg-type]
                                                     ids_only=ids_only)
                binds["depth"] = p.depth
            else:
                statement = sql.dense_search_sql(v.name, v.distance, where,  # type: ignore[arg-type]
                                                 approx=p.mode in ("approx", "filtered"),
                                                 target_accuracy=idx.target_accuracy, ids_only=ids_only,
                                                 transform=transform if p.mode == "filtered" else None)
            return self._vector_rows(cur, v, query, statement, binds)

        rows, tried = search_plan.run_with_guarantee(
            run, plan, k=k, matching=matching if filters else total, total=total, factor=idx.candidate_factor)
        if len(tried) > 1:
            log.info("store.search_widened", version=v.name, plans=[f"{p.mode}:{p.depth}" for p in tried])
        return list(rows)

    @property
    def _query_gate(self) -> QueryModelGate:
        gate = self.__dict__.get("_gate")
        if gate is None:
            cfg = self.settings.query_embedding
            gate = self.__dict__["_gate"] = QueryModelGate(cfg.model_name, cfg.min_cosine)
        return gate

    def _vector_rows(self, cur: Any, v: VersionRow, query: QueryVector, statement: str,
                     binds: dict[str, Any]) -> list[tuple[Any, ...]]:
        """Rows of a statement with the ``:q`` query vector, however the question is embedded: by the
        statement itself (``VECTOR_EMBEDDING``) when ``v`` is cleared for it (``_embeds_in_database``),
        so the vector made here is never computed (a deferred ``QueryVector``; review 4, N5), or
        bound from ``query.values``. Every vector read (dense, candidates, questions, summaries,
        similarities) goes through here, so one search never mixes the two embeddings. A model that
        is gone (``rag oracle load-model`` dropping it to load it again) falls back to the bound
        vector for this read and makes the gate ask again (review 4, M2)."""
        import oracledb

        if self._embeds_in_database(cur, v, query):
            embedded, rebound = self._query_gate.statement(statement, binds, str(query.text))
            try:
                cur.execute(embedded, rebound)
                return list(cur.fetchall())
            except oracledb.DatabaseError as exc:
                code = getattr(exc.args[0] if exc.args else None, "code", None)
                if code not in MODEL_MISSING:
                    raise
                self._query_gate.forget(v.name)
                log.warning("store.query_model_missing", version=v.name, model=self._query_gate.model, code=code,
                            detail="searched with the query vector embedded here")
        cur.execute(statement, {**binds, "q": to_float32(query.values)})
        return list(cur.fetchall())

    def _embeds_in_database(self, cur: Any, v: VersionRow, query: QueryVector) -> bool:
        """``store.oracle.query_embedding``: whether this search embeds the question in the statement
        (on, the query's text known, and ``v`` passed its parity check for the model it holds)."""
        if not self.settings.query_embedding.enabled or not query.text:
            return False
        return self._query_gate.allows(cur, v.name, v.model)

    def search_questions(self, target: str, query: QueryVector, k: int, filters: Sequence[FieldFilter] = (), *,
                         visibility: Visibility | None = None) -> QuestionResult:
        return _reread(target, lambda: self._search_questions_once(target, query, k, filters, visibility))

    def _search_questions_once(self, target: str, query: QueryVector, k: int, filters: Sequence[FieldFilter],
                               visibility: Visibility | None) -> QuestionResult:
        """The parent chunk's filters and ACL in the WHERE, one row per chunk. With a vector index: the
        questions' approximate top ``k`` x ``candidate_factor`` first (``_QVIDX``), widened by the factor
        while fewer than ``k`` chunks survive, exact once the depth covers every question (as
        ``search_plan`` widens chunk candidates); without one, the exact statement."""
        filters, where, fbinds = _search_conditions(target, k, filters, visibility)
        with self.connector.connection(f"searching the questions of {target}") as con:
            cur = con.cursor()
            v = self.admin.resolve_target(cur, target)
            self._check_query(v, query)
            idx = v.vector_index(self.settings.vector_index)
            binds = {**fbinds, "k": k}
            depth = k * idx.candidate_factor if v.index_type in ("hnsw", "ivf") else 0
            total: int | None = None
            while True:
                if depth:
                    rows = self._vector_rows(cur, v, query, sql.question_search_sql(  # type: ignore[arg-type]
                        v.name, v.distance, where, approx=True, target_accuracy=idx.target_accuracy),  # type: ignore[arg-type]
                        {**binds, "depth": depth})
                else:
                    rows = self._vector_rows(cur, v, query, sql.question_search_sql(v.name, v.distance, where),  # type: ignore[arg-type]
                                             binds)
                if not depth or len(rows) >= k:
                    break
                if total is None:
                    total = self._count(cur, sql.question_count_sql(v.name), {})
                depth = depth * idx.candidate_factor if depth < total else 0  # covers every question: exact
                log.info("store.question_search_widened", version=v.name, depth=depth or "exact")
        hits = tuple(
            QuestionHit(row_to_chunk(r), sql.similarity(v.distance, float(r[10])), rank,  # type: ignore[arg-type]
                        str(r[8]), column_text(r[9]))
            for rank, r in enumerate(rows, start=1))
        return QuestionResult(target=target, version=v.name, hits=hits)

    def search_summaries(self, target: str, query: QueryVector, k: int, filters: Sequence[FieldFilter] = (), *,
                         kinds: Sequence[SummaryKind] = ("page_summary", "artifact_summary"),
                         visibility: Visibility | None = None) -> SummaryResult:
        return _reread(target, lambda: self._search_summaries_once(target, query, k, filters, kinds, visibility))

    def _search_summaries_once(self, target: str, query: QueryVector, k: int, filters: Sequence[FieldFilter],
                               kinds: Sequence[SummaryKind], visibility: Visibility | None) -> SummaryResult:
        filters, where, fbinds = _search_conditions(target, k, filters, visibility)
        wanted = summary_kinds(kinds)
        with self.connector.connection(f"searching the summaries of {target}") as con:
            cur = con.cursor()
            v = self.admin.resolve_target(cur, target)
            self._check_query(v, query)
            rows = self._vector_rows(cur, v, query, sql.summary_search_sql(v.name, v.distance, where,  # type: ignore[arg-type]
                                                                           len(wanted)),
                                     {**fbinds, **{f"kind{i}": kind for i, kind in enumerate(wanted)}, "k": k})
        hits = tuple(
            SummaryHit(summary_from_row(str(r[0]), str(r[1]), str(r[2]), r[3], column_text(r[4]),
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
        if not self.settings.lexical_index:
            raise StoreError("lexical search on Oracle needs store.oracle.lexical_index: true (an Oracle Text index)")
        where, binds = sql.filter_clause(filters)
        query = sql.text_query(text)
        with self.connector.connection(f"searching {target}") as con:
            cur = con.cursor()
            v = self.admin.resolve_target(cur, target)
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
        with self.connector.connection(f"reading vectors of {target}") as con:
            cur = con.cursor()
            v = self.admin.resolve_target(cur, target)
            cur.execute(sql.vectors_sql(v.name))
            rows = cur.fetchall()
        fmt = stamped_format(v.retrieval)
        matrix = np.vstack([vector_out(r[1], fmt) for r in rows]) if rows else np.zeros((0, v.dimension), np.float32)
        return [r[0] for r in rows], matrix



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
