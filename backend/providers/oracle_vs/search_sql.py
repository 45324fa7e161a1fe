"""Statements that search a version: metadata filters as a WHERE clause, dense (exact, approximate,
filtered-HNSW, candidate-widening), lexical (Oracle Text), question (HyDE) and summary searches, reads
by chunk id, and the distance-to-similarity conversion."""

from __future__ import annotations

import re
from typing import Any, Sequence

from backend.common.identifiers import validate_identifier
from backend.core.types import Distance, FieldFilter
from backend.providers.oracle_vs.sql_names import (
    CHUNK_COLUMNS, chunk_select, in_marks, json_text, metric, questions_table, summaries_table, version_table,
)


#: Filterable fields that are real columns rather than JSON members.
COLUMN_FIELDS = frozenset({"chunk_id", "doc_id", "chunk_type", "source"})


def question_search_sql(version: str, distance: Distance, where: str, *, approx: bool = False,
                        target_accuracy: int | None = None) -> str:
    """Top ``:k`` distinct parent chunks by their best question. The filter (over alias ``t``, the
    chunk table) applies to the parent chunk inside the query, so a hidden chunk's questions never
    take a slot; ``ROW_NUMBER`` keeps each chunk's best question only. The distance is computed once
    per question, in the inner select, and the window orders by it.

    ``approx``: the inner select is the questions' top ``:depth`` by ``FETCH APPROX`` (the version's
    ``_QVIDX``, L4), the join, filter and window over those candidates only; the caller widens
    ``:depth`` while fewer than ``k`` chunks come back, and ends with the exact form (no ``:depth``)."""
    t = version_table(version)
    m = metric(distance)
    cols = ", ".join(c.strip() for c in CHUNK_COLUMNS.split(","))
    if approx:
        accuracy = f" WITH TARGET ACCURACY {int(target_accuracy)}" if target_accuracy is not None else ""
        fetch = f" ORDER BY dist FETCH APPROX FIRST :depth ROWS ONLY{accuracy}"
    else:
        fetch = ""
    return (
        f"SELECT {cols}, question_id, question_text, dist FROM ("
        f"SELECT {chunk_select('t')}, c.question_id AS question_id, c.question_text AS question_text, c.dist AS dist, "
        "ROW_NUMBER() OVER (PARTITION BY c.chunk_id ORDER BY c.dist, c.question_id) AS rn FROM ("
        f"SELECT q.question_id AS question_id, q.chunk_id AS chunk_id, q.text AS question_text, "
        f"VECTOR_DISTANCE(q.embedding, :q, {m}) AS dist FROM {questions_table(t)} q{fetch}) c "
        f"JOIN {t} t ON t.chunk_id = c.chunk_id WHERE {where}"
        f") x WHERE x.rn = 1 ORDER BY x.dist, x.chunk_id FETCH FIRST :k ROWS ONLY"
    )


def question_count_sql(version: str) -> str:
    """The number of questions of a version (when a HyDE search comes back short)."""
    return f"SELECT COUNT(*) FROM {questions_table(version)}"


def summary_search_sql(version: str, distance: Distance, where: str, kinds: int) -> str:
    """Top ``:k`` summaries of the kinds bound as ``:kind0`` ...; a summary passes when a chunk of
    its document passes ``where`` (over alias ``t``): as visible as its document."""
    if not 1 <= kinds <= 2:
        raise ValueError(f"summary_search_sql takes 1 or 2 kinds, got {kinds}")
    t = version_table(version)
    marks = ", ".join(f":kind{i}" for i in range(kinds))
    return (
        f"SELECT s.summary_id, s.doc_id, s.kind, s.page, s.text, {json_text('s.chunk_ids', 'chunk_ids')}, "
        f"VECTOR_DISTANCE(s.embedding, :q, {metric(distance)}) AS dist FROM {summaries_table(t)} s "
        f"WHERE s.kind IN ({marks}) AND s.doc_id IN (SELECT t.doc_id FROM {t} t WHERE {where}) "
        f"ORDER BY dist, s.summary_id FETCH FIRST :k ROWS ONLY"
    )


def asset_refs_sql(version: str, where: str = "1=1") -> str:
    """Every ``image_ref`` in the chunks' metadata; ``[*]`` in lax mode reads a string or a list alike.
    ``where`` (a ``filter_clause`` over alias ``t``) keeps only chunks a reader may see."""
    return (f"SELECT DISTINCT r.image_ref FROM {version_table(version)} t, JSON_TABLE(t.metadata, '$.image_ref[*]' "
            f"COLUMNS (image_ref VARCHAR2(4000) PATH '$')) r WHERE r.image_ref IS NOT NULL AND {where}")


def filter_clause(filters: Sequence[FieldFilter], alias: str = "t") -> tuple[str, dict[str, Any]]:
    """``(where_clause, binds)``; ``1=1`` when there are no filters.

    JSON members use ``JSON_EXISTS`` with a path filter and a ``PASSING`` bind;
    in lax mode ``$.f?(@ == $v)`` matches a scalar or any element of an array,
    so ``any_of`` works on both shapes. Dates are ISO strings and compare as text.
    """
    validate_identifier(alias, "table alias")
    clauses: list[str] = []
    binds: dict[str, Any] = {}

    def bind(value: str) -> str:
        name = f"f{len(binds)}"
        binds[name] = value
        return name

    for f in filters:
        field = validate_identifier(f.field, "filter field")
        col = f"{alias}.{field}" if field in COLUMN_FIELDS else None
        scalar = col or f"JSON_VALUE({alias}.metadata, '$.{field}' RETURNING VARCHAR2(4000))"

        def member(values: Sequence[str]) -> str:
            names = [bind(v) for v in values]
            if col:
                return f"{col} IN ({', '.join(':' + n for n in names)})"
            cond = " || ".join(f"@ == ${n}" for n in names)
            passing = ", ".join(f':{n} AS "{n}"' for n in names)
            return f"JSON_EXISTS({alias}.metadata, '$.{field}?({cond})' PASSING {passing})"

        if f.any_of:
            clauses.append(member(f.any_of))
        for value in f.all_of:
            clauses.append(member([value]))
        if f.gte is not None:
            clauses.append(f"{scalar} >= :{bind(f.gte)}")
        if f.lte is not None:
            clauses.append(f"{scalar} <= :{bind(f.lte)}")
    return (" AND ".join(clauses) if clauses else "1=1"), binds


def count_matching_sql(version: str, where: str) -> str:
    return f"SELECT COUNT(*) FROM {version_table(version)} t WHERE {where}"


def dense_search_sql(version: str, distance: Distance, where: str, *, approx: bool,
                     target_accuracy: int | None = None, ids_only: bool = False,
                     transform: str | None = None) -> str:
    """Top ``:k`` rows by ``VECTOR_DISTANCE``; filters inside the same query.

    ``approx`` uses the vector index (``FETCH APPROX``); without it the search is
    exact, which is what guarantees ``k`` hits under a selective filter. ``ids_only``:
    ``chunk_id, dist`` only (fusion's candidates; no text or metadata crosses the wire).

    ``transform`` (a vector index name): the native filtered HNSW search (review §2.8), one
    statement with the filters in the ``WHERE`` of the ``FETCH APPROX``, hinted
    ``/*+ VECTOR_INDEX_TRANSFORM(t <index>) */``. Oracle's HNSW plans evaluate such a filter before
    the graph scan (pre-filter) or during it (in-filter), never after it, so the index yields ``k``
    matching rows; the hint forces the transformation and leaves the filter type to the optimizer
    (AI Vector Search User's Guide 23ai, "Optimizer Plans for HNSW Vector Indexes" and "Vector Index
    Hints": the filter types are PRE_FILTER_WITH/WITHOUT_JOIN_BACK and IN_FILTER_WITH/WITHOUT_JOIN_BACK
    for HNSW; POST_FILTER_WITHOUT_JOIN_BACK is IVF's only). Without the hint a JSON search index on
    the same table can win the costing and the vector index go unused (langchain-oracledb issue
    #130, fixed by the same hint).
    """
    hint = f"/*+ VECTOR_INDEX_TRANSFORM(t {validate_identifier(transform, 'index name').upper()}) */ " \
        if transform else ""
    if approx:
        # an approximate search may order by the distance alone, or the index is not used
        order = "ORDER BY dist FETCH APPROX FIRST :k ROWS ONLY"
        if target_accuracy is not None:
            order += f" WITH TARGET ACCURACY {int(target_accuracy)}"
    else:
        if transform:
            raise ValueError("a VECTOR_INDEX_TRANSFORM hint belongs to an approximate search")
        order = "ORDER BY dist, t.chunk_id FETCH FIRST :k ROWS ONLY"
    return (
        f"SELECT {hint}{'t.chunk_id' if ids_only else chunk_select('t')}, "
        f"VECTOR_DISTANCE(t.embedding, :q, {metric(distance)}) AS dist FROM {version_table(version)} t WHERE {where} {order}"
    )


def candidate_search_sql(version: str, distance: Distance, where: str, target_accuracy: int | None = None, *,
                         ids_only: bool = False) -> str:
    """Approximate top ``:depth`` candidates first, the filter after, then the best ``:k``.

    Used for non-selective filters: widening ``:depth`` until ``k`` candidates
    survive the filter keeps the index in play without losing hits.
    """
    accuracy = f" WITH TARGET ACCURACY {int(target_accuracy)}" if target_accuracy is not None else ""
    # the filter reads any column, so the inner select keeps them all; ids_only narrows the result
    return (
        f"SELECT {'t.chunk_id' if ids_only else chunk_select('t')}, t.dist FROM ("
        f"SELECT {CHUNK_COLUMNS}, VECTOR_DISTANCE(embedding, :q, {metric(distance)}) AS dist FROM {version_table(version)} "
        f"ORDER BY dist FETCH APPROX FIRST :depth ROWS ONLY{accuracy}) t "
        f"WHERE {where} ORDER BY t.dist, t.chunk_id FETCH FIRST :k ROWS ONLY"
    )


def lexical_fetch(k: int) -> int:
    """Rows the score-sorted lexical read fetches for a top-``k``: at least ``2k`` (room for ties at
    the cut), rounded up to a power of two and at least 16, so the ``FIRST_ROWS(n)`` hint (a literal
    in the statement text) takes a handful of values, not one per ``k``."""
    return max(16, 1 << (2 * max(k, 1) - 1).bit_length())


def lexical_search_sql(version: str, where: str, *, ids_only: bool = False, fetch: int | None = None) -> str:
    """Oracle Text top rows, the score last. With ``fetch`` (``lexical_fetch(k)``, bind ``:n``): the
    fast path, ``/*+ FIRST_ROWS(fetch) */ ... ORDER BY SCORE(1) DESC`` with no other sort key, so the
    domain index returns score-sorted rows and stops early; ties are broken by ``chunk_id`` in Python
    (``lexical_top``). Without it (bind ``:k``): the exact form ordered by ``score DESC, chunk_id``,
    which scores and sorts every match; used only when ties at the cut run past the fetched rows."""
    cols = f"{'t.chunk_id' if ids_only else chunk_select('t')}, SCORE(1) AS score FROM {version_table(version)} t"
    match = f"WHERE CONTAINS(t.text, :query, 1) > 0 AND {where}"
    if fetch is None:
        return f"SELECT {cols} {match} ORDER BY score DESC, t.chunk_id FETCH FIRST :k ROWS ONLY"
    return f"SELECT /*+ FIRST_ROWS({int(fetch)}) */ {cols} {match} ORDER BY SCORE(1) DESC FETCH FIRST :n ROWS ONLY"


def lexical_top(rows: Sequence[Sequence[Any]], k: int, fetch: int) -> list[Sequence[Any]] | None:
    """The top ``k`` of a fast-path read (``chunk_id`` first, the score last), by score descending
    then ``chunk_id`` (Python's code-point order is Oracle's binary order of AL32UTF8 text), exactly
    what the tie-broken statement returns; ``None`` when that cannot be known from these rows: all
    ``fetch`` rows came back and the last one still ties with the ``k``-th, so a row left on the
    server may share the cut score with a smaller ``chunk_id``."""
    ranked = sorted(rows, key=lambda r: (-float(r[-1]), str(r[0])))
    if len(rows) >= fetch and len(ranked) > k and float(ranked[-1][-1]) >= float(ranked[k - 1][-1]):
        return None
    return ranked[:k]


#: Chunk ids one by-id read binds (Oracle allows 1000 expressions in an IN list).
IDS_PER_READ = 500
#: What a by-id read selects: the whole chunk, its text only, its distance to ``:q``, or its vector.
BY_ID_COLUMNS = ("chunk", "text", "distance", "vector")


def chunks_by_id_sql(version: str, count: int, where: str, columns: str = "chunk",
                     distance: Distance = "cosine") -> str:
    """``count`` chunks by id (binds ``:c0`` ...), filtered by ``where`` (filters and access control
    over alias ``t``): the whole chunk, ``chunk_id, text``, or ``chunk_id, dist`` (``VECTOR_DISTANCE``
    to ``:q``): fusion reads rows for its final hits only, and similarities for lexical-only ids."""
    if not 1 <= count <= IDS_PER_READ:
        raise ValueError(f"chunks_by_id_sql reads 1..{IDS_PER_READ} chunks at a time, got {count}")
    if columns not in BY_ID_COLUMNS:
        raise ValueError(f"columns must be one of {', '.join(BY_ID_COLUMNS)}, got {columns!r}")
    selected = {"chunk": chunk_select("t"), "text": "t.chunk_id, t.text",
                "distance": f"t.chunk_id, VECTOR_DISTANCE(t.embedding, :q, {metric(distance)}) AS dist",
                "vector": "t.chunk_id, t.embedding"}[columns]
    marks = in_marks("c", count)
    return f"SELECT {selected} FROM {version_table(version)} t WHERE t.chunk_id IN ({marks}) AND {where}"


def text_query(text: str) -> str:
    """User text as an Oracle Text query: each word braced (no operators), ACCUMulated
    so documents matching more words rank higher."""
    words = re.findall(r"\w+", text.lower())
    return " ACCUM ".join(f"{{{w}}}" for w in dict.fromkeys(words))


def similarity(distance: Distance, raw: float) -> float:
    """``VECTOR_DISTANCE`` to the port's similarity: cosine 1 - d; DOT returns the
    negated dot product, so -d; euclidean -d. Higher is always better."""
    if distance == "cosine":
        return 1.0 - raw
    if distance in ("dot", "euclidean"):
        return -raw
    raise ValueError(f"unsupported distance {distance!r}")
