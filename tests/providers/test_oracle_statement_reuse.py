"""Review 2026-11 §1.2 L6, L7, L9: statements that keep Oracle's fast paths and reuse their text.

* L6: the lexical top-k asks Oracle Text for score-sorted rows (``/*+ FIRST_ROWS(n) */ ... ORDER BY
  SCORE(1) DESC``, no second sort key) and breaks ties by ``chunk_id`` in Python, with the same
  result as the old ``ORDER BY score DESC, t.chunk_id`` statement (which it falls back to only when
  ties at the cut run past the fetched rows).
* L7: IN lists are padded with ``None`` to 8/32/128/500 binds, so 1..500 ids use at most 4
  statement texts per shape; NULL never matches in IN, so the rows are the same.
* L9: ``finish_load`` counts a version once and records the counts with its build, so listing
  versions scans no rows; ``counts_sql`` serializes metadata into a VARCHAR2 (no temporary LOB per
  row) unless it is over 4,000 bytes.
"""

from __future__ import annotations

import random
import sqlite3
from typing import Any, Callable

import pytest

from backend.core.types import VersionSpec
from backend.providers.oracle_vs import enrichment_cache, sql
from tests.providers.oracle_fake import CatalogDb, catalog_store
from tests.providers.test_oracle_vs import V1, RecordingDb, make_store, registry

# --- L7: IN lists padded to buckets --------------------------------------------------------
SHAPES: dict[str, Callable[[int], str]] = {
    "chunks_by_id_sql": lambda n: sql.chunks_by_id_sql("KB_V1", n, "1=1", "vector"),
    "doc_chunks_sql": lambda n: sql.doc_chunks_sql("KB_V1", n),
    "doc_enrichment_sql": lambda n: sql.doc_enrichment_sql("KB_V1", n),
    "cached_vectors_sql": sql.cached_vectors_sql,
    "enrichment_cache.select_sql": enrichment_cache.select_sql,
}


@pytest.mark.parametrize("builder", SHAPES.values(), ids=list(SHAPES))
def test_one_to_500_ids_use_at_most_four_statement_texts(builder: Callable[[int], str]) -> None:
    texts = {builder(n) for n in range(1, 501)}
    assert len(texts) <= len(sql.IN_BUCKETS) == 4


def test_padded_binds_fill_every_mark_with_none_after_the_values() -> None:
    for n in (1, 7, 8, 9, 32, 33, 128, 129, 500):
        binds = sql.in_binds("c", [f"id{i}" for i in range(n)])
        assert len(binds) == sql.in_size(n) >= n
        assert [binds[f"c{i}"] for i in range(n)] == [f"id{i}" for i in range(n)]
        assert all(binds[f"c{i}"] is None for i in range(n, len(binds)))
        statement = sql.chunks_by_id_sql("KB_V1", n, "1=1", "vector")
        assert statement.count(":c") == len(binds)
    with pytest.raises(ValueError):
        sql.in_size(501)
    with pytest.raises(ValueError):
        sql.in_size(0)


def test_padded_in_lists_return_the_same_rows_as_exact_ones() -> None:
    """The real statements run on SQLite, which has SQL's IN semantics: a NULL in the list matches
    nothing (``x IN (.., NULL)`` is NULL, not true, for the other values)."""
    db = sqlite3.connect(":memory:")
    db.execute("CREATE TABLE KB_V1 (chunk_id TEXT PRIMARY KEY, embedding BLOB, metadata TEXT)")
    db.executemany("INSERT INTO KB_V1 VALUES (?, ?, '{}')", [(f"doc#{i}", bytes([i % 256])) for i in range(600)])
    db.execute("CREATE TABLE RAG_EMBEDDING_CACHE (embed_model TEXT, text_hash TEXT, embedding BLOB)")
    db.executemany("INSERT INTO RAG_EMBEDDING_CACHE VALUES ('m', ?, x'01')", [(f"h{i}",) for i in range(0, 600, 2)])
    rng = random.Random(7)
    for n in (1, 2, 8, 9, 31, 100, 129, 499, 500):
        wanted = rng.sample([f"doc#{i}" for i in range(700)], n)  # some ids exist, some do not
        exact = ", ".join("?" for _ in wanted)
        expected = sorted(db.execute(f"SELECT chunk_id FROM KB_V1 WHERE chunk_id IN ({exact})", wanted).fetchall())
        got = sorted(r[:1] for r in db.execute(sql.chunks_by_id_sql("KB_V1", n, "1=1", "vector"),
                                              sql.in_binds("c", wanted)).fetchall())
        assert got == expected
        hashes = [f"h{i}" for i in rng.sample(range(700), n)]
        expected_h = sorted(h for h in hashes if int(h[1:]) % 2 == 0 and int(h[1:]) < 600)
        got_h = sorted(r[0] for r in db.execute(sql.cached_vectors_sql(n),
                                                {"embed_model": "m", **sql.in_binds("h", hashes)}).fetchall())
        assert got_h == expected_h


def test_the_store_binds_reads_by_id_into_a_bucket_and_keeps_the_rows() -> None:
    stored = {f"doc#{i}": i for i in range(0, 40, 3)}

    def chunks(binds: dict[str, Any]) -> list[tuple[Any, ...]]:  # IN semantics: None matches nothing
        return [(v, [0.0, 0.0, float(stored[v])]) for k, v in binds.items()
                if k.startswith("c") and v is not None and v in stored]

    db = RecordingDb([*registry(V1), _when_in("t.chunk_id, t.embedding", chunks)])
    ids = [f"doc#{i}" for i in range(20)]
    got = make_store(db).chunk_vectors("KB_V1", ids)
    assert sorted(got) == sorted(i for i in ids if i in stored)
    [statement] = [s for s in db.statements() if "t.chunk_id, t.embedding" in s]
    assert statement.count(":c") == 32  # 20 ids in the 32 bucket


def _when_in(fragment: str, rows: Callable[[dict[str, Any]], list[tuple[Any, ...]]]) -> Any:
    def rule(statement: str, binds: dict[str, Any]) -> list[tuple[Any, ...]] | None:
        return rows(binds) if fragment in statement else None
    return rule


# --- L6: the lexical top-k on the score-sorted path -----------------------------------------
def test_lexical_search_asks_for_score_sorted_rows_with_a_first_rows_hint() -> None:
    db = RecordingDb([*registry(V1), _when_in("SCORE(1)", lambda b: [("c1", 3.0)])])
    make_store(db).lexical_candidates("KB_V1", "vacation", 10)
    [statement] = [s for s in db.statements() if "SCORE(1)" in s]
    n = sql.lexical_fetch(10)
    assert statement.startswith(f"SELECT /*+ FIRST_ROWS({n}) */ t.chunk_id, SCORE(1) AS score FROM KB_V1 t ")
    assert statement.endswith("ORDER BY SCORE(1) DESC FETCH FIRST :n ROWS ONLY")
    assert "chunk_id FETCH" not in statement


def test_lexical_fetch_leaves_room_for_ties_and_takes_few_values() -> None:
    assert all(sql.lexical_fetch(k) >= 2 * k for k in range(1, 1000))
    assert len({sql.lexical_fetch(k) for k in range(1, 201)}) <= 6


def _text_server(scores: dict[str, float], rng: random.Random) -> Callable[[str, dict[str, Any]], Any]:
    """Oracle Text as the store sees it: the fast statement returns rows by score with ties in any
    order (the domain index's), the exact one by score then chunk_id."""
    def rule(statement: str, binds: dict[str, Any]) -> list[tuple[Any, ...]] | None:
        if "SCORE(1)" not in statement:
            return None
        rows = [(c, s) for c, s in scores.items()]
        if "FIRST_ROWS" in statement:
            rng.shuffle(rows)
            rows.sort(key=lambda r: -r[1])  # stable: ties stay shuffled
            return rows[:binds["n"]]
        return sorted(rows, key=lambda r: (-r[1], r[0]))[:binds["k"]]
    return rule


@pytest.mark.parametrize("seed", range(40))
def test_lexical_ties_are_broken_by_chunk_id_exactly_as_the_old_statement(seed: int) -> None:
    rng = random.Random(seed)
    scores = {f"c{rng.randrange(10_000):05d}": float(rng.choice([2, 3, 3, 5, 5, 5, 8]))
              for _ in range(rng.randrange(1, 80))}
    k = rng.randrange(1, 30)
    db = RecordingDb([*registry(V1), _text_server(scores, rng)])
    got = make_store(db).lexical_candidates("KB_V1", "vacation", k).hits
    assert list(got) == sorted(scores.items(), key=lambda r: (-r[1], r[0]))[:k]


def test_ties_at_the_cut_beyond_the_fetched_rows_fall_back_to_the_exact_statement() -> None:
    scores = {f"c{i:03d}": 4.0 for i in range(100)}  # 100 rows tie: the fast read cannot decide
    db = RecordingDb([*registry(V1), _text_server(scores, random.Random(1))])
    got = make_store(db).lexical_candidates("KB_V1", "vacation", 5)
    statements = [s for s in db.statements() if "SCORE(1)" in s]
    assert len(statements) == 2 and "FIRST_ROWS" in statements[0]
    assert statements[1].endswith("ORDER BY score DESC, t.chunk_id FETCH FIRST :k ROWS ONLY")
    assert [c for c, _ in got.hits] == ["c000", "c001", "c002", "c003", "c004"]


def test_one_statement_when_the_fetched_rows_settle_the_cut() -> None:
    scores = {**{f"a{i}": 9.0 for i in range(3)}, **{f"b{i:03d}": 1.0 for i in range(100)}}
    db = RecordingDb([*registry(V1), _text_server(scores, random.Random(2))])
    got = make_store(db).lexical_candidates("KB_V1", "vacation", 3).hits
    assert [c for c, _ in got] == ["a0", "a1", "a2"]
    assert len([s for s in db.statements() if "SCORE(1)" in s]) == 1


def test_lexical_top_decides_only_from_rows_that_settle_the_cut() -> None:
    rows = [("c3", 5.0), ("c1", 5.0), ("c2", 4.0), ("c0", 4.0)]
    assert sql.lexical_top(rows, 2, fetch=16) == [("c1", 5.0), ("c3", 5.0)]  # all matches fetched
    assert sql.lexical_top(rows, 2, fetch=4) == [("c1", 5.0), ("c3", 5.0)]  # last row below the cut
    assert sql.lexical_top(rows, 3, fetch=4) is None  # the 3rd ties with the last fetched row


# --- L9: counts without a temporary LOB per row, COUNT(*) where a count is all --------------
def test_counts_serialize_metadata_to_varchar2_and_use_a_lob_only_when_it_does_not_fit() -> None:
    statement = sql.counts_sql("KB_V1")
    assert ("COALESCE(LENGTH(JSON_SERIALIZE(metadata RETURNING VARCHAR2(4000) NULL ON ERROR)), "
            "DBMS_LOB.GETLENGTH(JSON_SERIALIZE(metadata RETURNING CLOB)))") in statement
    assert statement.count("RETURNING CLOB") == 1
    assert sql.row_count_sql("KB_V1") == "SELECT COUNT(*) FROM KB_V1"


def test_finish_load_counts_once_and_listing_reads_the_recorded_counts() -> None:
    """L9: ``finish_load`` counts the version once (``counts_sql``: no LOB per row) and records the
    counts with the build; listing and reading the version then scan nothing until a write moves
    its generation, after which that version alone is counted again. Fails on 3d43f20 (before this
    change: ``finish_load`` counted with ``COUNT(*)`` and every listing ran ``counts_sql``)."""
    db = CatalogDb()
    db.add_version("KB_V0", rows=5)
    store = catalog_store(db, vector_index={"type": "hnsw"})
    store.ensure_catalog()
    store.create_version(VersionSpec("KB_V1", "mini-lm", 3, "cosine", parent="KB_V0"))
    db.log.clear()
    store.finish_load("KB_V1")
    counts = [s for s in db.statements() if "COUNT(" in s]
    assert counts == [sql.counts_sql("KB_V1")]
    assert any(s.startswith("CREATE VECTOR INDEX") for s in db.statements())  # 5 rows: the index is built
    store.finish_load("KB_V0")
    db.log.clear()
    listed = {v.name: (v.chunk_count, v.doc_count, v.size_bytes) for v in store.list_versions()}
    assert listed == {"KB_V0": (5, 5, 5 * 3 * 4 + 500), "KB_V1": (5, 5, 5 * 3 * 4 + 500)}
    assert store.get_version("KB_V1").chunk_count == 5
    assert not [s for s in db.statements() if "COUNT(" in s]  # O(versions): registry reads only
    db.tables["KB_V1"] = 7  # a write (committed by another client) adds two chunks and moves the generation
    db.versions["KB_V1"] = [*db.versions["KB_V1"][:8], db.versions["KB_V1"][8] + 1, *db.versions["KB_V1"][9:]]
    db.log.clear()
    listed = {v.name: v.chunk_count for v in store.list_versions()}
    assert listed == {"KB_V0": 5, "KB_V1": 7}
    assert [s for s in db.statements() if "COUNT(" in s] == [sql.counts_sql("KB_V1")]
