"""Each defect of the Oracle review (C1, C2, C6, C8, L1, L2, L3) reproduced on the stand-in server.

No Oracle server can run here, and the earlier stand-in let these defects through: it had one flat
namespace, no name resolution, and uncommitted rows visible to every session. ``oracle_fake.CatalogDb``
now models what each defect rests on (tables and views in one namespace, indexes in another;
``IF NOT EXISTS`` keeping what is there; a local ``DUAL`` read before the public synonym; read
committed with row locks on ``RAG_VERSIONS``; DDL waiting ``DDL_LOCK_TIMEOUT`` on DML locks; injected
ORA errors; a second client started at a chosen statement). Each test below was run against an
export of the tree before its fix (``git archive <commit> | tar -x``, this file and the stand-in
copied in) and failed there; its docstring names that commit and how it failed. The last test is a
defect the stand-in found in this change (a read in gc's drop window), fixed with it.
"""

from __future__ import annotations

import dataclasses
import threading
from typing import Any

import pytest

from backend.common.errors import AliasNotFound, InvalidIdentifier, RagError, StoreError, VersionConflict, VersionNotFound
from backend.core.types import VersionSpec
from backend.providers.oracle_vs import sql
from backend.providers.oracle_vs.enrichment_cache import MERGE_SQL, OracleEnrichmentCache
from tests.providers.oracle_fake import CatalogDb, catalog_store, ora
from tests.providers.test_oracle_vs import doc


def spec(name: str) -> VersionSpec:
    return VersionSpec(name, "mini-lm", 3, "cosine")


# --- the stand-in itself: what it models --------------------------------------------------
def test_tables_and_views_share_a_namespace_and_indexes_have_their_own() -> None:
    db = CatalogDb()
    con = db.connect()
    cur = con.cursor()
    cur.execute("CREATE TABLE IF NOT EXISTS KB_V1 (chunk_id VARCHAR2(1000))")
    db.tables["KB_V1"] = 7
    cur.execute("CREATE TABLE IF NOT EXISTS KB_V1 (other NUMBER)")  # kept as it is, rows included
    assert db.tables["KB_V1"] == 7
    with pytest.raises(Exception, match="ORA-00955"):
        cur.execute("CREATE TABLE KB_V1 (chunk_id VARCHAR2(1000))")
    with pytest.raises(Exception, match="ORA-00955"):
        cur.execute("CREATE OR REPLACE VIEW KB_V1 AS SELECT * FROM KB_V2")  # a view cannot take a table's name
    cur.execute("CREATE INDEX IF NOT EXISTS KB_V1 ON KB_V1 (chunk_id)")  # an index may share it
    cur.execute("CREATE INDEX IF NOT EXISTS KB_V1 ON KB_V9 (chunk_id)")  # an index of the name exists: kept
    assert db.indexes["KB_V1"][0] == "KB_V1"
    with pytest.raises(Exception, match="ORA-00955"):
        cur.execute("CREATE VECTOR INDEX KB_V1 ON KB_V1 (embedding)")
    with pytest.raises(Exception, match="ORA-00942"):
        cur.execute("CREATE INDEX KB_X ON KB_NOWHERE (chunk_id)")
    with pytest.raises(Exception, match="ORA-01418"):
        cur.execute("DROP INDEX KB_NOWHERE")
    cur.execute("DROP INDEX IF EXISTS KB_NOWHERE")
    cur.execute("CREATE OR REPLACE VIEW KB_ACTIVE AS SELECT * FROM KB_V1")
    cur.execute("DROP TABLE IF EXISTS KB_ACTIVE PURGE")  # no table of the name: the view stays
    assert db.views == {"KB_ACTIVE": "KB_V1"} and "KB_V1" in db.tables


def test_an_unqualified_name_reads_the_users_schema_before_the_public_synonym() -> None:
    db = CatalogDb()
    cur = db.connect().cursor()
    merge = ("MERGE INTO RAG_ALIASES a USING (SELECT :alias AS alias_name, :version AS version_name, :changed AS "
             "changed_at FROM {dual}) s ON (a.alias_name = s.alias_name) WHEN MATCHED THEN UPDATE SET "
             "a.version_name = s.version_name")
    binds = {"alias": "KB_ACTIVE", "version": "KB_V1", "changed": "now"}
    db.tables["DUAL"] = 0  # a local, empty DUAL
    cur.execute(merge.format(dual="dual"), binds)
    assert db.aliases == {}  # the source was the local table: nothing merged
    cur.execute(merge.format(dual="SYS.DUAL"), binds)
    assert db.aliases == {"KB_ACTIVE": "KB_V1"}
    db.tables["DUAL"] = 2
    with pytest.raises(Exception, match="ORA-30926"):
        cur.execute(merge.format(dual="dual"), binds)
    db.tables["USER_TABLES"] = 0
    with pytest.raises(Exception, match="ORA-00904"):
        cur.execute("SELECT v.name FROM RAG_VERSIONS v WHERE NOT EXISTS (SELECT 1 FROM USER_TABLES u "
                    "WHERE u.table_name = v.name)")
    cur.execute("SELECT 1 FROM SYS.USER_TABLES u WHERE u.table_name = :t", {"t": "KB_V1"})


def test_injected_errors_hit_the_chosen_statements_and_batch_errors_come_back_as_the_driver_reports_them() -> None:
    import oracledb

    db = CatalogDb()
    db.add_version("KB_V1")
    db.fail_on(r"^SELECT COUNT\(\*\) FROM KB_V1$", 942, times=2)
    cur = db.connect().cursor()
    for _ in range(2):
        with pytest.raises(oracledb.DatabaseError, match="ORA-00942"):
            cur.execute("SELECT COUNT(*) FROM KB_V1")
    cur.execute("SELECT COUNT(*) FROM KB_V1")  # the third goes through
    db.fail_on("RAG_ENRICHMENT_CACHE", 1, row=1)
    rows = [{"content_hash": h} for h in ("a", "b")]
    cur.executemany(MERGE_SQL, rows, batcherrors=True)
    assert [(e.offset, e.code) for e in cur.getbatcherrors()] == [(1, 1)]
    db.fail_on("RAG_ENRICHMENT_CACHE", 1)
    with pytest.raises(oracledb.IntegrityError, match="ORA-00001"):
        cur.executemany(MERGE_SQL, rows)
    db.fail_on("^ALTER TABLE", 54)
    with pytest.raises(oracledb.DatabaseError, match="ORA-00054"):
        cur.execute("ALTER TABLE RAG_VERSIONS ADD (extra NUMBER)")


def test_an_update_of_a_registry_row_is_the_sessions_own_until_it_commits_and_locks_the_row() -> None:
    db = CatalogDb()
    db.add_version("KB_V1")
    writer, reader = db.connect(), db.connect()
    w = writer.cursor()
    w.execute(sql.BUMP_GENERATION_SQL, {"name": "KB_V1", "r_model": w.var(str), "r_dimension": w.var(int)})
    r = reader.cursor()
    r.execute(sql.FIND_VERSION_SQL, {"name": "KB_V1"})
    assert r.fetchone()[8] == 0  # read committed
    w.execute(sql.FIND_VERSION_SQL, {"name": "KB_V1"})
    assert w.fetchone()[8] == 1  # its own change
    got: list[Any] = []
    waiting = threading.Thread(target=lambda: (r.execute(sql.LOCK_VERSION_ROW_SQL, {"name": "KB_V1"}),
                                               got.extend(r.fetchall())))
    waiting.start()
    waiting.join(0.3)
    assert waiting.is_alive() and not got  # FOR UPDATE waits for the writer's row lock
    writer.commit()
    waiting.join(5)
    assert got == [("KB_V1", 1)]  # and then reads the committed row


# --- C1: derived table names collide with version names --------------------------------------
def _refused(call: Any) -> BaseException | None:
    """The error ``call`` raised (None if it went through), so a test checks the data first."""
    try:
        call()
    except Exception as exc:  # noqa: BLE001 - the test checks which
        return exc
    return None


def test_c1_a_version_named_like_anothers_summaries_is_neither_emptied_nor_dropped() -> None:
    """Fails on fc8c875 (= 494eb62^) and on fc8c875^ (d308c8b): ``create_version("kb")`` ran ``CREATE
    TABLE IF NOT EXISTS KB_SUMMARIES`` (kept: the version's table), then ``DELETE FROM KB_SUMMARIES``:
    the served version's table was empty (assert 0 == 5). fc8c875 added the suffix rule to the shared
    identifiers; 494eb62 made the Oracle store use it and refuse a derived name another object holds."""
    db = CatalogDb()
    db.add_version("KB_SUMMARIES", rows=5)  # registered before the suffix rule, and served
    db.aliases["KB_ACTIVE"] = db.views["KB_ACTIVE"] = "KB_SUMMARIES"
    store = catalog_store(db)
    refused = _refused(lambda: store.create_version(spec("kb")))
    assert db.tables["KB_SUMMARIES"] == 5  # the other version's rows are all there
    assert isinstance(refused, (VersionConflict, InvalidIdentifier)) and "KB_SUMMARIES" in str(refused)
    with pytest.raises(VersionNotFound):
        store.drop_version("kb")
    assert db.tables["KB_SUMMARIES"] == 5 and "KB" not in db.versions


def test_c1_a_table_of_another_application_named_like_a_derived_table_is_left_alone() -> None:
    """Fails on fc8c875 (= 494eb62^) and on d308c8b: a foreign ``KB_QUESTIONS`` was kept by ``IF NOT
    EXISTS`` and emptied (``DELETE FROM KB_QUESTIONS``: assert 0 == 3); now the version is refused."""
    db = CatalogDb()
    db.foreign.add("KB_QUESTIONS")
    db.tables["KB_QUESTIONS"] = 3
    refused = _refused(lambda: catalog_store(db).create_version(spec("kb")))
    assert db.tables["KB_QUESTIONS"] == 3
    assert isinstance(refused, VersionConflict) and "derived table KB_QUESTIONS" in str(refused)
    assert not any(s == "DELETE FROM KB_QUESTIONS" for s in db.statements())


# --- C2: DUAL and dictionary names shadow what the store's SQL reads --------------------------
def test_c2_a_local_dual_does_not_swallow_an_alias_change() -> None:
    """Fails on fc8c875 (= 494eb62^) and on d308c8b: the alias MERGE read ``FROM dual``, which resolves to the
    schema's own (empty) ``DUAL`` first, so nothing was merged while the history row was written
    (resolve_alias gave None). Now every MERGE reads ``SYS.DUAL``."""
    db = CatalogDb()
    db.add_version("KB_V1")
    db.tables["DUAL"] = 0  # made by a version named ``dual`` before the rule, or by anyone
    store = catalog_store(db)
    store.point_alias("KB_ACTIVE", "KB_V1")
    assert store.resolve_alias("KB_ACTIVE") == "KB_V1"
    assert [c.version for c in store.alias_history("KB_ACTIVE")] == ["KB_V1"]


@pytest.mark.parametrize("name", ["dual", "user_tables", "ALL_OBJECTS", "dbms_lock"])
def test_c2_dual_and_dictionary_names_are_refused_as_versions_and_aliases(name: str) -> None:
    """Fails on fc8c875 (= 494eb62^) and on d308c8b: ``create_version("dual")`` created a table DUAL in
    the schema, and ``user_tables`` / ``all_objects`` a table that broke the store's own unqualified
    dictionary reads (ORA-00904 in the stand-in, as the local table shadows the view)."""
    db = CatalogDb()
    db.add_version("KB_V1")
    store = catalog_store(db)
    with pytest.raises(InvalidIdentifier, match=name):
        store.create_version(spec(name))
    with pytest.raises(InvalidIdentifier, match=name):
        store.point_alias(name, "KB_V1")
    assert name.upper() not in db.tables and name.upper() not in db.views


# --- C6: the gate checked outside the lock that orders it against writes ----------------------
def test_c6_a_rotation_that_waited_for_an_ingest_commit_refuses_the_unevaluated_generation() -> None:
    """Fails on fc8c875 (= 494eb62^) with TypeError: ``point_alias`` took no ``expected_generation``, so the
    promotion could not have the store check the generation under the lock, and rotated whatever
    the ingest committed while it waited. Here the ingest holds the row (uncommitted bump) when the
    promotion starts: the promotion reads the committed generation, waits on the row lock, and after
    the ingest commits must refuse, leaving the alias, its view and its history as they were. (Since the
    write bumps the row last, the race starts at the guard's protection check, its second one.)"""
    db = CatalogDb()
    db.add_version("KB_V1", rows=1)
    db.add_version("KB_V2", rows=1)
    store = catalog_store(db)
    store.point_alias("KB_ACTIVE", "KB_V1")
    evaluated = store.get_version("KB_V2").generation
    db.race_at(sql.PROTECTED_ONE_SQL[:30], lambda: catalog_store(db).point_alias(  # inside the ingest's transaction
        "KB_ACTIVE", "KB_V2", reason="gates passed", expected_generation=evaluated), occurrence=2)
    store.write_documents("KB_V2", [doc("d9", 1)])
    race = db.finish_race()
    assert isinstance(race.get("error"), RagError) and "changed since it was evaluated" in str(race["error"]), race
    assert store.resolve_alias("KB_ACTIVE") == "KB_V1" and db.views["KB_ACTIVE"] == "KB_V1"
    assert [c.version for c in store.alias_history("KB_ACTIVE")] == ["KB_V1"]
    assert store.get_version("KB_V2").generation == evaluated + 1


# --- C8: the enrichment cache under two enrichers -------------------------------------------
def test_c8_a_key_another_enricher_inserted_first_is_not_an_error() -> None:
    """Fails on fc8c875 (= 494eb62^): ``executemany(MERGE_SQL, rows)`` had no ``batcherrors``, so the second
    enricher's ORA-00001 on the primary key failed its whole cache write (StoreError)."""
    db = CatalogDb()
    cache = OracleEnrichmentCache(catalog_store(db).connector)
    db.fail_on("^MERGE INTO RAG_ENRICHMENT_CACHE", 1, row=1)  # the other enricher committed key "b" first
    cache.put_many("p1", "m1", {"b": "{}", "a": "{}", "c": "{}"})
    writes = [r for k, r in db.log if k == "rows"]
    assert [r["content_hash"] for r in writes[-1]] == ["a", "b", "c"]  # one key order for every writer
    db.fail_on("^MERGE INTO RAG_ENRICHMENT_CACHE", 12899)  # any other error still fails the write
    with pytest.raises(StoreError, match="ORA-12899"):
        cache.put_many("p1", "m1", {"a": "{}"})


# --- L1: the embedding cache taken in document order -----------------------------------------
def _cache_keys(db: CatalogDb) -> list[list[str]]:
    """The ``text_hash`` order of each embedding-cache write."""
    out, statement = [], ""
    for kind, value in db.log:
        if kind == "executemany":
            statement = value
        elif kind == "rows" and statement == sql.MERGE_CACHE_SQL:
            out.append([r["text_hash"] for r in value])
    return out


def test_l1_two_ingests_take_the_embedding_cache_keys_in_one_order() -> None:
    """Fails on fc8c875 (= 494eb62^): rows went in document order, so two ingests of the same texts in another
    order took the uncommitted keys crosswise (ORA-00060 for one of them); now both go by hash."""
    db = CatalogDb()
    db.add_version("KB_V1")
    db.add_version("KB_V2")
    store = catalog_store(db)
    forward = doc("d1", 3)
    backward = dataclasses.replace(forward, chunks=forward.chunks[::-1], vectors=forward.vectors[::-1].copy())
    store.write_documents("KB_V1", [forward])
    store.write_documents("KB_V2", [backward])
    first, second = _cache_keys(db)
    assert sorted(first) == sorted(second) and len(first) == 3
    assert first == second == sorted(first)


def test_l1_a_deadlock_rolls_the_document_write_back_and_says_what_to_do() -> None:
    """Fails on fc8c875 (= 494eb62^), 2c1bc79 (= 18f5274^) and b873e2f (= 5bf5de3^): a deadlock in the
    embedding cache comes back as a batch error, and the cache's batch errors carried no hint until
    this change (the ORA-00060 hint itself came with 494eb62)."""
    db = CatalogDb()
    db.add_version("KB_V1")
    db.fail_on("^MERGE INTO RAG_EMBEDDING_CACHE", 60)
    with pytest.raises(StoreError, match=r"ORA-00060.*deadlock.*run it again"):
        catalog_store(db).write_documents("KB_V1", [doc("d1", 2)])
    assert db.versions["KB_V1"][8] == 0  # the generation bump was rolled back with the write


# --- L2: DDL meets DML with no wait ---------------------------------------------------------
def test_l2_a_process_start_while_an_ingest_holds_a_registry_row_takes_no_ddl_lock() -> None:
    """Fails on 2c1bc79 (= 18f5274^) with ORA-00054: ``ensure_catalog`` sent its ``ALTER TABLE RAG_VERSIONS ADD``
    on every start (tolerating ORA-01430 only) and DDL does not wait by default."""
    db = CatalogDb()
    db.add_version("KB_V1")
    ingest = db.connect()
    cur = ingest.cursor()
    cur.execute(sql.BUMP_GENERATION_SQL, {"name": "KB_V1", "r_model": cur.var(str), "r_dimension": cur.var(int)})
    catalog_store(db).ensure_catalog()
    assert not any(s.startswith("ALTER TABLE") for s in db.statements())
    ingest.commit()
    assert db.versions["KB_V1"][8] == 1


def test_l2_a_due_catalog_upgrade_waits_ddl_lock_timeout_for_an_ingest_instead_of_failing() -> None:
    """Fails on 2c1bc79 (= 18f5274^) (ImportError: no ``session_setup``; the pool set no DDL_LOCK_TIMEOUT, so the
    ALTER below failed at once with ORA-00054)."""
    from backend.providers.oracle_vs.connection import session_setup
    from backend.providers.oracle_vs.versions import execute_ddl

    db = CatalogDb()
    db.add_version("KB_V1")
    db.columns.discard("retrieval")  # a catalog from an older release: one ALTER is due
    ingest = db.connect()
    cur = ingest.cursor()
    cur.execute(sql.BUMP_GENERATION_SQL, {"name": "KB_V1", "r_model": cur.var(str), "r_dimension": cur.var(int)})
    admin = db.connect()
    ddl = "ALTER TABLE RAG_VERSIONS ADD (retrieval VARCHAR2(4000))"
    with pytest.raises(Exception, match="ORA-00054"):
        execute_ddl(admin.cursor(), ddl)  # NOWAIT, Oracle's default
    session_setup(5)(admin, None)  # what the pool runs on each new session
    timer = threading.Timer(0.3, ingest.commit)
    timer.start()
    execute_ddl(admin.cursor(), ddl)  # waits for the ingest's commit, then runs
    timer.join()
    assert "retrieval" in db.columns


# --- L3: administrative operations without mutual exclusion ---------------------------------
def test_l3_two_rotations_of_one_alias_each_record_the_version_served_before_them() -> None:
    """Fails on b873e2f (= 5bf5de3^): the second rotation, started while the first was between reading the
    previous version and recording it, finished first; the first then recorded KB_V1 as its previous
    (history [("KB_V2", "KB_V1"), ("KB_V3", "KB_V1"), ...]) and KB_V3, served in between, lost its
    rollback protection."""
    db = CatalogDb()
    for name in ("KB_V1", "KB_V2", "KB_V3"):
        db.add_version(name)
    store = catalog_store(db)
    store.point_alias("KB_ACTIVE", "KB_V1")
    db.race_at("CREATE OR REPLACE VIEW KB_ACTIVE", lambda: catalog_store(db).point_alias("KB_ACTIVE", "KB_V3"))
    store.point_alias("KB_ACTIVE", "KB_V2")
    assert "error" not in db.finish_race()
    history = [(c.version, c.previous) for c in store.alias_history("KB_ACTIVE")]
    assert history == [("KB_V3", "KB_V2"), ("KB_V2", "KB_V1"), ("KB_V1", None)]
    assert db.aliases["KB_ACTIVE"] == db.views["KB_ACTIVE"] == "KB_V3"
    assert store.protected_versions() == {"KB_V3": "KB_ACTIVE live", "KB_V2": "KB_ACTIVE rollback"}


def test_l3_a_drop_waits_for_a_rotation_to_the_version_and_then_refuses() -> None:
    """Fails on b873e2f (= 5bf5de3^): the drop checked protection while the rotation to KB_V2 was under way
    (its view DDL had committed), found none, and dropped the table the alias then served."""
    db = CatalogDb()
    for name in ("KB_V1", "KB_V2"):
        db.add_version(name, rows=1)
    store = catalog_store(db)
    store.point_alias("KB_ACTIVE", "KB_V1")
    db.race_at("CREATE OR REPLACE VIEW KB_ACTIVE", lambda: catalog_store(db).drop_version("KB_V2"))
    store.point_alias("KB_ACTIVE", "KB_V2")
    race = db.finish_race()
    assert isinstance(race.get("error"), StoreError) and "protected" in str(race["error"]), race
    assert "KB_V2" in db.tables and "KB_V2" in db.versions
    assert store.resolve_alias("KB_ACTIVE") == "KB_V2"


def test_the_ora_helper_gives_the_driver_classes() -> None:
    import oracledb

    assert isinstance(ora(1), oracledb.IntegrityError) and not isinstance(ora(54), oracledb.IntegrityError)


# --- gc during reads: the window between dropping a version's table and its registry row ---------
def test_a_read_of_a_version_while_gc_drops_it_says_the_version_is_gone() -> None:
    """Fails on 3d43f20 (the tree before this change): a search of a version named directly, started
    after gc dropped its table but before gc deleted its registry row, resolved the version, met
    ORA-00942, retried once, met it again and raised a bare StoreError; the contract (gc during reads)
    wants a read of the dropped version to be whole or to say the version is gone."""
    import numpy as np

    from backend.core.types import QueryVector

    db = CatalogDb()
    db.add_version("KB_OLD", rows=3)
    store = catalog_store(db)
    query = QueryVector(np.ones(3, dtype=np.float32), "mini-lm")
    db.race_at("DELETE FROM RAG_VERSIONS WHERE name", lambda: store.search("KB_OLD", query, k=3))
    store.drop_version("KB_OLD")
    race = db.finish_race()
    assert isinstance(race.get("error"), VersionNotFound), race
    assert "KB_OLD" in str(race["error"]) and "ORA-00942" in str(race["error"])
    with pytest.raises((VersionNotFound, AliasNotFound)):  # and once the registry row is gone, as before
        store.search("KB_OLD", query, k=3)


@pytest.mark.parametrize("read,pattern", [
    (lambda s, q: s.search_questions("KB_ACTIVE", q, 3), r"KB_V1_QUESTIONS"),
    (lambda s, q: s.search_summaries("KB_ACTIVE", q, 3), r"KB_V1_SUMMARIES"),
    (lambda s, q: s.fetch_chunks("KB_ACTIVE", ["d#0"]), r"FROM KB_V1 "),
    (lambda s, q: s.similarities("KB_ACTIVE", q, ["d#0"]), r"FROM KB_V1 "),
    (lambda s, q: s.chunk_vectors("KB_ACTIVE", ["d#0"]), r"FROM KB_V1 "),
    (lambda s, q: s.chunk_texts("KB_ACTIVE", ["d#0"]), r"FROM KB_V1 "),
    (lambda s, q: s.asset_refs("KB_V1"), r"FROM KB_V1\b"),
    (lambda s, q: s.document_list("KB_V1"), r"FROM KB_V1\b"),
])
def test_m3_every_read_retries_once_when_gc_dropped_the_version_it_resolved(read: Any, pattern: str) -> None:
    """Review 4, M3 (fails at 18552a8): only dense and lexical reads re-resolved after ORA-00942; the
    question, summary, by-id, asset and document-list reads surfaced it as a StoreError."""
    import numpy as np

    from backend.core.types import QueryVector

    db = CatalogDb()
    db.add_version("KB_V1", rows=3)
    store = catalog_store(db)
    store.point_alias("KB_ACTIVE", "KB_V1")
    db.fail_on(pattern, 942)
    failed_at = len(db.statements())
    read(store, QueryVector(np.ones(3, dtype=np.float32), "mini-lm"))  # the second attempt answers
    assert db.injected[0][2] == 0  # the ORA-00942 was raised, and the read went on
    resolves = [s for s in db.statements()[failed_at:] if s == sql.RESOLVE_TARGET_SQL or s == sql.FIND_VERSION_SQL]
    assert len(resolves) == 2  # the target resolved again after the drop
