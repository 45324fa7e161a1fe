"""Hypothetical questions and summaries on Oracle, without a server.

The live contract (``tests/contracts/vector_store.py::EnrichmentTest``) runs against Oracle
Database 23ai in ``test_oracle_vs.py`` when ``RAG_TEST_ORACLE_DSN`` is set. Here, as for the
rest of the adapter: every new statement goes through the Oracle-dialect parse check of
``test_oracle_sql_parse.py``, and the store's calls are recorded by the same stand-ins to
pin what runs in which transaction, with which binds.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pytest

from backend.common.errors import StoreError
from backend.core.types import (
    DocumentWrite,
    FieldFilter,
    HypotheticalQuestion,
    QueryVector,
    Summary,
    VersionSpec,
    Visibility,
)
from backend.providers.oracle_vs import sql
from tests.providers.oracle_fake import CatalogDb, catalog_store
from tests.providers.test_oracle_sql_parse import FILTERS, SqlCheckError, check
from tests.providers.test_oracle_vs import V1, RecordingDb, doc, make_store, registry, when

Q = QueryVector(np.ones(3, np.float32), "mini-lm")


def statements() -> list[str]:
    out: list[str] = []
    out.append(sql.MISSING_ENRICHMENT_SQL)
    for name in ("KB_V1", "kb_sample_v1"):
        out += sql.enrichment_ddl(name, 384) + sql.drop_enrichment_ddl(name) + sql.copy_enrichment_sql(name, "KB_V0")
        out += sql.empty_enrichment_sql(name) + sql.delete_enrichment_sql(name)
        out += [sql.insert_question_sql(name), sql.insert_summary_sql(name), sql.delete_chunk_questions_sql(name),
                sql.doc_enrichment_sql(name, 1), sql.doc_enrichment_sql(name, sql.DOCS_PER_READ)]
    for distance in ("cosine", "dot", "euclidean"):
        for filters in FILTERS.values():
            where, _ = sql.filter_clause(filters)
            out.append(sql.question_search_sql("KB_V1", distance, where))  # type: ignore[arg-type]
            out.append(sql.question_search_sql("KB_V1", distance, where, approx=True,  # type: ignore[arg-type]
                                               target_accuracy=95))
            out.append(sql.summary_search_sql("KB_V1", distance, where, 1))  # type: ignore[arg-type]
            out.append(sql.summary_search_sql("KB_V1", distance, where, 2))  # type: ignore[arg-type]
    return out


@pytest.mark.parametrize("statement", sorted(set(statements())), ids=lambda s: re.sub(r"\W+", "_", s[:60]))
def test_every_enrichment_statement_is_valid_oracle_sql(statement: str) -> None:
    assert check(statement) == "sqlglot"


@pytest.mark.parametrize("statement,good,bad", [
    (sql.question_search_sql("KB_V1", "cosine", "1=1"), "PARTITION BY c.chunk_id", "PARTITION c.chunk_id"),
    (sql.question_search_sql("KB_V1", "cosine", "1=1", approx=True, target_accuracy=90),
     "FROM KB_V1_QUESTIONS q ORDER BY dist FETCH", "FROM KB_V1_QUESTIONS q ORDER dist FETCH"),
    (sql.question_search_sql("KB_V1", "cosine", "1=1"), ") x WHERE x.rn = 1", ") x WHERE x.rn = = 1"),
    (sql.summary_search_sql("KB_V1", "dot", "1=1", 2), "s.kind IN (:kind0, :kind1)", "s.kind IN (:kind0, :kind1"),
    (sql.enrichment_ddl("KB_V1", 3)[0], "VECTOR(3, FLOAT32)", "VECTOR(3, FLOAT33)"),
    (sql.enrichment_ddl("KB_V1", 3)[3], "CHECK (kind IN", "CHECK (kind IN IN"),
    (sql.doc_enrichment_sql("KB_V1", 2), "UNION ALL", "UNION ALL ALL"),
])
def test_a_typo_in_enrichment_sql_fails_the_check(statement: str, good: str, bad: str) -> None:
    assert good in statement
    check(statement)
    with pytest.raises(SqlCheckError):
        check(statement.replace(good, bad, 1))


def test_names_are_validated_and_the_metric_is_the_versions() -> None:
    from backend.common.errors import InvalidIdentifier

    with pytest.raises(InvalidIdentifier):
        sql.enrichment_ddl("kb; DROP TABLE x", 3)
    with pytest.raises(ValueError):
        sql.enrichment_ddl("KB_V1", 0)
    for approx in (False, True):  # the distance is computed once per question (L4)
        assert sql.question_search_sql("KB_V1", "dot", "1=1", approx=approx).count("VECTOR_DISTANCE(") == 1
    assert "VECTOR_DISTANCE(s.embedding, :q, EUCLIDEAN)" in sql.summary_search_sql("KB_V1", "euclidean", "1=1", 1)


def test_question_search_applies_filters_and_the_acl_to_the_parent_chunk_inside_the_query() -> None:
    row = ("kb#1", "kb", 1, "text", "a.md", "Unused days carry over.", "h", '{"rag_acl": ["group:hr"]}',
           "kb#1?0", "Can I carry days over?", 0.25)
    db = RecordingDb([*registry(V1, aliases={"KB_ACTIVE": "KB_V1"}), when("FROM KB_V1_QUESTIONS q", [row]),
                      when(sql.question_count_sql("KB_V1"), [(1,)])])
    store = make_store(db)
    result = store.search_questions("KB_ACTIVE", Q, 3, [FieldFilter("dept", any_of=("hr",))],
                                    visibility=Visibility.of("bob", ("hr",)))
    statement = db.statements()[-1]
    binds = db.log[-1][1]
    inner = statement[statement.index("FROM KB_V1_QUESTIONS q"):statement.index(") x WHERE")]
    assert "JSON_EXISTS(t.metadata, '$.dept?(@ == $f0)'" in inner and "'$.rag_acl?(" in inner
    assert {"f0": "hr", "k": 3}.items() <= binds.items() and "group:hr" in binds.values()
    hit = result.hits[0]
    assert (result.version, hit.chunk.chunk_id, hit.question_id, hit.question, hit.rank) == (
        "KB_V1", "kb#1", "kb#1?0", "Can I carry days over?", 1)
    assert hit.score == pytest.approx(0.75)  # cosine distance 0.25 -> similarity 0.75
    # resolve, approximate search (short: 1 of 3), the questions' count (1 <= depth 12), the exact search
    assert len(db.statements()) == 4 and "FETCH APPROX" not in statement


def test_question_search_is_approximate_over_the_questions_index_and_widens_like_search_plan() -> None:
    """L4: the HyDE search reads the questions' approximate top k x candidate_factor (the _QVIDX built by
    finish_load), joins, filters and ranks those only, and widens by the factor while short."""
    rows = [(f"kb#{i}", "kb", i, "text", "a.md", "t", "h", "{}", f"kb#{i}?0", "q?", 0.1 * i) for i in range(3)]
    found = {"n": 0}

    def questions(statement: str, binds: dict[str, Any]) -> list[tuple[Any, ...]] | None:
        if "FROM KB_V1_QUESTIONS q" not in statement:
            return None
        found["n"] += 1
        return rows[:1] if binds.get("depth") == 8 else rows  # short at the first depth

    db = RecordingDb([*registry(V1), questions, when(sql.question_count_sql("KB_V1"), [(1_000,)])])
    result = make_store(db).search_questions("KB_V1", Q, 2)
    searches = [(s, db.log[i + 1][1]) for i, (k, s) in enumerate(db.log) if k == "execute" and "KB_V1_QUESTIONS q" in s]
    approx = sql.question_search_sql("KB_V1", "cosine", "1=1", approx=True, target_accuracy=95)
    assert [s for s, _ in searches] == [approx, approx]
    assert [b["depth"] for _, b in searches] == [8, 32]  # k x 4, then x 4 again
    assert "FROM KB_V1_QUESTIONS q ORDER BY dist FETCH APPROX FIRST :depth ROWS ONLY WITH TARGET ACCURACY 95) c" \
        in approx
    assert [h.chunk.chunk_id for h in result.hits] == ["kb#0", "kb#1", "kb#2"][:len(result.hits)]


def test_summary_search_binds_kinds_and_checks_them() -> None:
    row = ("kb@p1", "kb", "page_summary", "Leave > Carry-over", "Carry-over rules.", '["kb#1"]', 0.1)
    db = RecordingDb([*registry(V1), when("FROM KB_V1_SUMMARIES s", [row])])
    store = make_store(db)
    result = store.search_summaries("KB_V1", Q, 5, kinds=("page_summary",), visibility=Visibility.of("bob"))
    binds = db.log[-1][1]
    assert binds["kind0"] == "page_summary" and "kind1" not in binds
    assert "s.doc_id IN (SELECT t.doc_id FROM KB_V1 t WHERE JSON_EXISTS(t.metadata, '$.rag_acl?(" in db.statements()[-1]
    s = result.hits[0].summary
    assert (s.summary_id, s.kind, s.page, s.chunk_ids) == ("kb@p1", "page_summary", "Leave > Carry-over", ("kb#1",))
    with pytest.raises(StoreError, match="summary kinds must be among"):
        store.search_summaries("KB_V1", Q, 5, kinds=("chunk",))  # type: ignore[arg-type]


def enriched_doc() -> DocumentWrite:
    d = doc("d1", 2)
    questions = [HypotheticalQuestion("d1#0?0", "d1#0", "What is text 0?"),
                 HypotheticalQuestion("d1#1?0", "d1#1", "What is text 1?")]
    summaries = [Summary("d1@doc", "d1", "artifact_summary", "All about texts.", None, ("d1#0", "d1#1"))]
    return DocumentWrite(d.doc_id, d.doc_hash, d.chunks, d.vectors, questions,
                         np.full((2, 3), 0.5, np.float32), summaries, np.full((1, 3), 0.25, np.float32))


def test_a_write_replaces_the_documents_enrichment_in_its_transaction() -> None:
    db = RecordingDb(registry(V1))
    make_store(db).write_documents("KB_V1", [enriched_doc()])
    many = [(s, db.log[i + 1][1]) for i, (k, s) in enumerate(db.log) if k == "executemany"]
    heads = [s.split(" WHERE")[0].split(" USING")[0].split(" (")[0] for s, _ in many]
    assert heads == ["INSERT INTO KB_V1", "MERGE INTO RAG_EMBEDDING_CACHE c", "DELETE FROM KB_V1_QUESTIONS",
                     "DELETE FROM KB_V1_SUMMARIES", "DELETE FROM KB_V1_QUESTIONS", "INSERT INTO KB_V1_QUESTIONS",
                     "INSERT INTO KB_V1_SUMMARIES"]
    questions = next(rows for s, rows in many if s.startswith("INSERT INTO KB_V1_QUESTIONS"))
    assert [(r["question_id"], r["chunk_id"], r["doc_id"]) for r in questions] == [("d1#0?0", "d1#0", "d1"),
                                                                                  ("d1#1?0", "d1#1", "d1")]
    assert list(questions[0]["embedding"]) == [0.5, 0.5, 0.5]
    summaries = next(rows for s, rows in many if s.startswith("INSERT INTO KB_V1_SUMMARIES"))
    assert summaries[0]["chunk_ids"] == ["d1#0", "d1#1"] and summaries[0]["page"] is None
    sizes = [b for k, b in db.log if k == "inputsizes" and "chunk_ids" in b]
    import oracledb

    assert sizes and sizes[0]["chunk_ids"] is oracledb.DB_TYPE_JSON and sizes[0]["embedding"] is oracledb.DB_TYPE_VECTOR
    assert [k for k, _ in db.log].count("commit") == 1


def test_unchanged_enrichment_writes_nothing_and_rolls_back() -> None:
    d = enriched_doc()
    stored_chunks = [(c.chunk_id, "h1", c.chunk_index, "text", "a.txt", c.content_hash, {}, list(v), "d1")
                     for c, v in zip(d.chunks, d.vectors)]
    stored_extra = [("question", "d1#0?0", "d1#0", None, "What is text 0?", None, [0.5] * 3, "d1"),
                    ("question", "d1#1?0", "d1#1", None, "What is text 1?", None, [0.5] * 3, "d1"),
                    ("summary", "d1@doc", "artifact_summary", None, "All about texts.", '["d1#0", "d1#1"]',
                     [0.25] * 3, "d1")]
    db = RecordingDb([*registry(V1), when("WHERE doc_id IN (:d0,", stored_chunks),
                      when("WHERE doc_id IN (:e0,", stored_extra)])
    assert make_store(db).write_documents("KB_V1", [d]) == 0
    assert db.statements("executemany") == []
    assert db.events()[-1] == "rollback"
    # one changed question text: only the enrichment is replaced, the chunks are not merged again
    stored_extra[0] = ("question", "d1#0?0", "d1#0", None, "What was text 0?", None, [0.5] * 3, "d1")
    db = RecordingDb([*registry(V1), when("WHERE doc_id IN (:d0,", stored_chunks),
                      when("WHERE doc_id IN (:e0,", stored_extra)])
    make_store(db).write_documents("KB_V1", [d])
    assert [s.split(" (")[0].split(" WHERE")[0] for s in db.statements("executemany")] == [
        "DELETE FROM KB_V1_QUESTIONS", "DELETE FROM KB_V1_SUMMARIES", "DELETE FROM KB_V1_QUESTIONS",
        "INSERT INTO KB_V1_QUESTIONS", "INSERT INTO KB_V1_SUMMARIES"]
    assert db.events()[-1] == "commit"


def test_bad_enrichment_is_refused_before_anything_commits() -> None:
    d = enriched_doc()
    bad = DocumentWrite(d.doc_id, d.doc_hash, d.chunks, d.vectors,
                        [HypotheticalQuestion("x", "other#0", "Who?")], np.ones((1, 3), np.float32))
    db = RecordingDb(registry(V1))
    with pytest.raises(StoreError, match="question 'x' names chunk 'other#0'"):
        make_store(db).write_documents("KB_V1", [bad])
    assert "commit" not in db.events()


def test_deleting_documents_deletes_their_enrichment_in_the_same_transaction() -> None:
    db = RecordingDb(registry(V1))
    make_store(db).delete_documents("KB_V1", ["d1", "d2"])
    many = db.statements("executemany")
    assert many == ["DELETE FROM KB_V1 WHERE doc_id = :doc_id", "DELETE FROM KB_V1_QUESTIONS WHERE doc_id = :doc_id",
                    "DELETE FROM KB_V1_SUMMARIES WHERE doc_id = :doc_id"]
    assert db.events()[-1] == "commit" and db.events().count("commit") == 1


def test_a_version_is_created_with_its_tables_copies_its_parents_enrichment_and_drops_them() -> None:
    catalog = CatalogDb()
    catalog.add_version("KB_V0", rows=5)
    store = catalog_store(catalog)
    store.create_version(VersionSpec("KB_V2", "mini-lm", 3, "cosine", parent="KB_V0"))
    assert {"KB_V2_QUESTIONS", "KB_V2_SUMMARIES", "KB_V0_QUESTIONS", "KB_V0_SUMMARIES"} <= set(catalog.tables)
    log = catalog.statements()
    copy = [i for i, s in enumerate(log) if s.startswith(("INSERT INTO KB_V2", "INSERT INTO RAG_VERSIONS"))]
    assert [log[i].split(" (")[0] for i in copy] == ["INSERT INTO KB_V2", "INSERT INTO KB_V2_QUESTIONS",
                                                     "INSERT INTO KB_V2_SUMMARIES", "INSERT INTO RAG_VERSIONS"]
    # the copy and the registry row commit together: no DDL (an implicit commit) in between
    assert not [s for s in log[copy[0]:copy[-1]] if s.startswith(("CREATE", "DROP", "ALTER"))]
    store.drop_version("KB_V2")
    assert not {"KB_V2", "KB_V2_QUESTIONS", "KB_V2_SUMMARIES"} & set(catalog.tables)
    drops = [s for s in catalog.statements() if s.startswith("DROP TABLE")]
    assert drops[-3:] == ["DROP TABLE IF EXISTS KB_V2_QUESTIONS PURGE", "DROP TABLE IF EXISTS KB_V2_SUMMARIES PURGE",
                          "DROP TABLE IF EXISTS KB_V2 PURGE"]


def test_opening_the_store_gives_versions_made_before_enrichment_their_tables() -> None:
    db = RecordingDb([when("FROM RAG_VERSIONS v WHERE NOT EXISTS", [("KB_OLD", 384)])])
    make_store(db).ensure_catalog()
    created = [s for s in db.statements() if "KB_OLD" in s]
    assert created == sql.enrichment_ddl("KB_OLD", 384)
    db = RecordingDb([])
    make_store(db).ensure_catalog()
    assert not [s for s in db.statements() if "_QUESTIONS" in s or "_SUMMARIES (" in s]
