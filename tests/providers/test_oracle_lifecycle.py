"""Version lifecycle on Oracle against a stateful stand-in (``oracle_fake.CatalogDb``).

The stand-in models what the lifecycle code must get right on a real server: DDL
commits implicitly, DML is undone by rollback, a failed ``CREATE`` of a domain index
leaves a ``FAILED`` index behind. Each test states one property of the port
docstrings (served versions immutable, generation, parent copy, crash recovery,
drop order, name case, index build after the load).
"""

from __future__ import annotations

import json
import types
from typing import Any

import numpy as np
import pytest

from backend.common.errors import InvalidIdentifier, StoreError, VersionChanged, VersionConflict, VersionServed
from backend.core.types import VersionSpec, content_hash
from backend.providers.oracle_vs import sql
from tests.providers.oracle_fake import CatalogDb, catalog_store, ora
from tests.providers.test_oracle_vs import RecordingCursor, RecordingDb, doc, make_store, registry, V1, when


def spec(name: str, parent: str | None = None, model: str = "mini-lm", dim: int = 3) -> VersionSpec:
    return VersionSpec(name, model, dim, "cosine", parent=parent)


# --- A: served versions are immutable; generation ---------------------------------------
def test_write_into_the_served_version_raises_version_served_and_changes_nothing() -> None:
    db = CatalogDb()
    db.add_version("KB_V1", rows=2)
    store = catalog_store(db)
    store.point_alias("KB_ACTIVE", "KB_V1")
    with pytest.raises(VersionServed, match=r"KB_V1 is served \(KB_ACTIVE live\): served versions are immutable"):
        store.write_documents("KB_V1", [doc("d1", 1)])
    with pytest.raises(VersionServed, match="KB_ACTIVE live"):
        store.delete_documents("KB_V1", ["d1"])
    assert db.versions["KB_V1"][8] == 0
    assert not any(s.startswith("MERGE INTO KB_V1") or s.startswith("DELETE FROM KB_V1") for s in db.statements())


def test_a_write_checks_before_any_row_and_locks_bumps_and_checks_again_last() -> None:
    """A served version is refused before anything is written (the first check, no lock); the registry
    row is locked (UPDATE) only after the rows, just before the commit, and the protection is checked
    again under that lock, so a rotation that committed meanwhile is seen and one that comes later
    waits for this write (point_alias locks the same row)."""
    db = CatalogDb()
    db.add_version("KB_V1")
    catalog_store(db).write_documents("KB_V1", [doc("d1", 2)])
    executed = db.statements()
    assert executed[:2] == [sql.FIND_VERSION_SQL, sql.PROTECTED_ONE_SQL]
    insert, bump = executed.index(sql.insert_chunk_sql("KB_V1")), executed.index(sql.BUMP_GENERATION_SQL)
    assert insert < bump and executed[bump + 1:] == [sql.PROTECTED_ONE_SQL]
    assert db.versions["KB_V1"][8] == 1 and db.commits >= 1


def test_a_rotation_that_commits_while_the_rows_are_written_rolls_the_write_back() -> None:
    """The rotation lands between the first check and the guard: the guard sees it under the lock and the
    whole write (rows, cache, bump) rolls back; nothing of it is in the served version."""
    db = CatalogDb()
    db.add_version("KB_V1", rows=1)
    store = catalog_store(db)
    db.race_at(sql.insert_chunk_sql("KB_V1")[:40], lambda: catalog_store(db).point_alias("KB_ACTIVE", "KB_V1"))
    with pytest.raises(VersionServed, match="KB_V1 is served"):
        store.write_documents("KB_V1", [doc("late", 2)])
    assert "error" not in db.finish_race() and db.aliases == {"KB_ACTIVE": "KB_V1"}
    assert db.tables["KB_V1"] == 1 and db.versions["KB_V1"][8] == 0


def test_two_writers_load_one_version_at_once_and_both_commit() -> None:
    """``max_writers`` writers: while one writer's transaction is open with its rows written (before its
    guard), a second writer writes and commits; the first then commits too. Under the old order (lock
    first) the second would have waited for the first's commit and this test would time out."""
    db = CatalogDb()
    db.add_version("KB_V1")
    store = catalog_store(db)
    def second() -> tuple[int, int]:
        written = catalog_store(db).write_documents("KB_V1", [doc("b", 2)])
        return written, db.versions["KB_V1"][8]  # the committed generation when the second writer is done

    db.race_at(sql.insert_chunk_sql("KB_V1")[:40], second, window=2.0)
    assert store.write_documents("KB_V1", [doc("a", 3)]) == 3
    race = db.finish_race()
    assert race.get("value") == (2, 1), race  # done (its bump committed) while the first writer's was not
    assert db.tables["KB_V1"] == 5 and db.versions["KB_V1"][8] == 2
    assert store.max_writers() == 3 and catalog_store(db, pool_max=1).max_writers() == 1  # pool_max 4 by default


def test_allow_served_writes_in_place_and_bumps_the_generation() -> None:
    db = CatalogDb()
    db.add_version("KB_V1")
    store = catalog_store(db)
    store.point_alias("KB_ACTIVE", "KB_V1")
    assert store.write_documents("KB_V1", [doc("d1", 2)], allow_served=True) == 2
    assert store.delete_documents("KB_V1", ["d1"], allow_served=True) == 1
    assert store.get_version("KB_V1").generation == 2
    assert sql.PROTECTED_ONE_SQL not in db.statements()


def test_the_rollback_target_of_an_alias_is_protected_and_listed() -> None:
    db = CatalogDb()
    for name in ("KB_V1", "KB_V2", "KB_V3"):
        db.add_version(name)
    store = catalog_store(db)
    store.point_alias("KB_ACTIVE", "KB_V1")
    store.point_alias("KB_ACTIVE", "KB_V2")
    assert store.protected_versions() == {"KB_V2": "KB_ACTIVE live", "KB_V1": "KB_ACTIVE rollback"}
    with pytest.raises(VersionServed, match=r"KB_V1 is served \(KB_ACTIVE rollback\)"):
        store.write_documents("KB_V1", [doc("d1", 1)])
    with pytest.raises(StoreError, match=r"cannot drop KB_V1: it is protected \(KB_ACTIVE rollback\)"):
        store.drop_version("KB_V1")
    assert store.write_documents("KB_V3", [doc("d1", 1)]) == 1
    store.drop_alias("KB_ACTIVE")
    assert store.protected_versions() == {}


def test_a_write_that_changes_nothing_rolls_back_so_the_generation_stays() -> None:
    d = doc("d1", 2)
    stored = [(c.chunk_id, "h1", c.chunk_index, "text", "a.txt", c.content_hash, {}, list(v), "d1")
              for c, v in zip(d.chunks, d.vectors)]
    db = RecordingDb([*registry(V1), when("WHERE doc_id IN (:d0,", stored)])
    assert make_store(db).write_documents("KB_V1", [d]) == 0
    assert ("commit", "") not in db.log and ("rollback", "") in db.log


def test_deleting_unknown_documents_does_not_bump_the_generation() -> None:
    db = RecordingDb(registry(V1))

    def nothing(self: RecordingCursor) -> list[int]:
        return [0 for _ in self.many]

    store = make_store(db)
    original = RecordingCursor.getarraydmlrowcounts
    RecordingCursor.getarraydmlrowcounts = nothing  # type: ignore[method-assign]
    try:
        assert store.delete_documents("KB_V1", ["nope"]) == 0
    finally:
        RecordingCursor.getarraydmlrowcounts = original  # type: ignore[method-assign]
    assert ("commit", "") not in db.log and ("rollback", "") in db.log


def test_an_old_catalog_gets_the_new_columns_and_a_second_upgrade_is_harmless() -> None:
    db = CatalogDb()
    db.columns = set()
    store = catalog_store(db)
    store.ensure_catalog()
    assert db.columns == {"generation", "parent", "index_params", "retrieval"}
    store.ensure_catalog()  # every column is there now: no ALTER, so no DDL lock on a process start (L2)
    upgrades = [s for s in sql.CATALOG_UPGRADES if s.startswith("ALTER TABLE RAG_VERSIONS")]
    assert [s for s in db.statements() if s.startswith("ALTER")] == upgrades
    assert db.statements().count(sql.CATALOG_COLUMNS_SQL) == 2
    assert "generation  NUMBER DEFAULT 0 NOT NULL" in sql.CATALOG_DDL[0] and "parent      VARCHAR2(128)" in sql.CATALOG_DDL[0]


def test_an_upgrade_error_other_than_column_exists_is_raised() -> None:
    db = CatalogDb()
    db.columns = set()
    db.fail("ALTER TABLE RAG_VERSIONS ADD (generation", ora(1031, "insufficient privileges"))
    with pytest.raises(StoreError, match="ORA-01031"):
        catalog_store(db).ensure_catalog()


def test_asset_refs_reads_every_image_ref_scalar_or_list() -> None:
    db = RecordingDb([*registry(V1), when("JSON_TABLE(t.metadata, '$.image_ref[*]'", [("a/img_1.png",),
                                                                                     ("b/img_2.png",)])])
    assert make_store(db).asset_refs("kb_v1") == {"a/img_1.png", "b/img_2.png"}
    assert sql.asset_refs_sql("KB_V1") in db.statements()


def test_a_child_starts_as_a_copy_of_its_parent_in_the_registering_transaction() -> None:
    db = CatalogDb()
    db.add_version("KB_V1", rows=7)
    version = catalog_store(db).create_version(spec("KB_V2", parent="kb_v1"))
    assert (version.name, version.parent, version.chunk_count, version.generation) == ("KB_V2", "KB_V1", 7, 0)
    assert version.size_bytes == 7 * 3 * 4 + 7 * 100  # vectors + text and metadata characters
    executed = db.statements()
    copy = executed.index(sql.copy_rows_sql("KB_V2", "KB_V1"))
    insert = next(i for i, s in enumerate(executed) if s.startswith("INSERT INTO RAG_VERSIONS"))
    assert executed.index(sql.version_table_ddl("KB_V2", 3)) < executed.index(sql.empty_table_sql("KB_V2")) < copy
    assert copy < insert and not any(s.startswith(("CREATE", "DROP", "ALTER")) for s in executed[copy:])


def test_a_crash_before_registration_leaves_nothing_registered_and_a_retry_completes_it() -> None:
    db = CatalogDb()
    db.add_version("KB_V1", rows=7)
    store = catalog_store(db)
    db.fail("INSERT INTO RAG_VERSIONS", ora(3113, "end-of-file on communication channel"))
    with pytest.raises(StoreError):
        store.create_version(spec("KB_V2", parent="KB_V1"))
    assert "KB_V2" not in db.versions and db.tables["KB_V2"] == 0  # the copy was rolled back with it
    db.tables["KB_V2"] = 3  # rows a crash committed otherwise are emptied by the retry
    version = store.create_version(spec("KB_V2", parent="KB_V1"))
    assert (version.chunk_count, db.versions["KB_V2"][9]) == (7, "KB_V1")
    assert store.create_version(spec("KB_V2", parent="KB_V1")).chunk_count == 7  # idempotent


def test_a_parent_of_another_model_or_dimension_conflicts_before_any_ddl() -> None:
    db = CatalogDb()
    db.add_version("KB_V1", model="e5-large", dim=1024)
    with pytest.raises(VersionConflict, match=r"cannot build KB_V2 from KB_V1: KB_V1 holds e5-large vectors \(1024 dims\), KB_V2 is for mini-lm"):
        catalog_store(db).create_version(spec("KB_V2", parent="KB_V1"))
    assert not any(s.startswith("CREATE") for s in db.statements()) and "KB_V2" not in db.tables


def test_a_table_of_the_schema_that_is_not_a_version_is_never_emptied() -> None:
    db = CatalogDb()
    db.foreign.add("EMPLOYEES")
    db.tables["EMPLOYEES"] = 14
    with pytest.raises(VersionConflict, match="a table named EMPLOYEES already exists in the schema and is not a RAG"):
        catalog_store(db).create_version(spec("employees"))
    assert db.tables["EMPLOYEES"] == 14 and not any(s.startswith("DELETE") for s in db.statements())


# --- B: names, drop order, failed indexes, index after the load ---------------------------
def test_names_are_kept_upper_case_so_kb_v1_and_KB_V1_are_one_version() -> None:
    db = CatalogDb()
    store = catalog_store(db)
    store.create_version(spec("kb_v1"))
    assert store.create_version(spec("KB_V1")).name == "KB_V1"
    assert list(db.versions) == ["KB_V1"] and store.get_version("Kb_V1").name == "KB_V1"
    store.point_alias("kb_active", "kb_v1")
    assert store.resolve_alias("KB_ACTIVE") == "KB_V1" and db.views == {"KB_ACTIVE": "KB_V1"}
    with pytest.raises(StoreError, match=r"cannot drop KB_V1: it is protected \(KB_ACTIVE live\)"):
        store.drop_version("kb_v1")
    assert "KB_V1" in db.tables


@pytest.mark.parametrize("name,setting,call", [
    ("table", "index_name", lambda s, n: s.create_version(spec(n))),
    ("User", "alias name", lambda s, n: s.point_alias(n, "KB_V1")),
    ("select", "retrieval target", lambda s, n: s.search(n, None, 1)),
    ("rag_versions", "index_name", lambda s, n: s.create_version(spec(n))),
])
def test_reserved_words_and_catalog_names_are_refused_naming_word_and_setting(name: str, setting: str, call: Any) -> None:
    db = CatalogDb()
    with pytest.raises(InvalidIdentifier, match=rf"invalid {setting} '{name}': {name.upper()} is "):
        call(catalog_store(db), name)
    assert db.statements() == []


def test_drop_version_drops_the_table_first_and_a_failed_drop_stays_registered() -> None:
    db = CatalogDb()
    db.add_version("KB_V1", rows=3)
    store = catalog_store(db)
    db.fail("DROP TABLE IF EXISTS KB_V1", ora(54, "resource busy and acquire with NOWAIT specified"))
    with pytest.raises(StoreError, match="ORA-00054"):
        store.drop_version("KB_V1")
    assert "KB_V1" in db.versions and "KB_V1" in db.tables  # retryable, no orphan table
    store.drop_version("KB_V1")
    assert "KB_V1" not in db.versions and "KB_V1" not in db.tables
    executed = db.statements()
    assert executed.index(sql.drop_version_ddl("KB_V1")) < len(executed) - 1
    assert executed[-1] == "DELETE FROM RAG_VERSIONS WHERE name = :name"


def test_a_failed_text_or_json_index_is_dropped_and_created_again_a_valid_one_is_kept() -> None:
    db = CatalogDb()
    db.add_version("KB_V1")
    db.indexes["KB_V1_TIDX"] = ("KB_V1", "VALID", "FAILED")  # a CREATE that failed half-way
    db.indexes["KB_V1_MIDX"] = ("KB_V1", "VALID", "VALID")
    db.indexes["KB_V1_AIDX"] = ("KB_V1", "VALID", None)  # the multivalue ACL index, valid: kept
    catalog_store(db, vector_index={"type": "none"}).finish_load("KB_V1")
    ddl = [s for s in db.statements() if s.startswith(("CREATE", "DROP"))]
    assert ddl == ["DROP INDEX KB_V1_TIDX FORCE", sql.text_index_ddl("KB_V1")]
    assert db.indexes["KB_V1_TIDX"][2] == "VALID"


def test_create_version_builds_no_vector_index_finish_load_builds_it_once_after_the_load() -> None:
    db = CatalogDb()
    store = catalog_store(db)
    store.create_version(spec("KB_V1"))
    assert not any(s.startswith("CREATE VECTOR INDEX") for s in db.statements())
    store.finish_load("KB_V1")  # no rows yet: nothing to build
    assert "KB_V1_VIDX" not in db.indexes
    db.tables["KB_V1"] = 100
    store.write_documents("KB_V1", [doc("d1", 1)])
    store.finish_load("KB_V1")
    hnsw = sql.vector_index_ddl("KB_V1", "cosine", store.settings.vector_index)
    questions = sql.question_vector_index_ddl("KB_V1", "cosine", store.settings.vector_index)
    built = db.statements()[-10:-1]
    assert built[:4] == ["DROP INDEX IF EXISTS KB_V1_VIDX", hnsw, "DROP INDEX IF EXISTS KB_V1_QVIDX", questions]
    assert "KB_V1_QVIDX" in db.indexes and db.indexes["KB_V1_QVIDX"][0] == "KB_V1_QUESTIONS"
    assert built[4:] == [sql.OPTIMIZE_TEXT_INDEX_SQL, sql.OPTIMIZE_TEXT_INDEX_SQL] + [sql.GATHER_TABLE_STATS_SQL] * 3
    assert json.loads(db.versions["KB_V1"][10])["built_generation"] == 1
    before = len(db.statements())
    store.finish_load("KB_V1")  # idempotent: valid index at this generation
    assert not any(s.startswith(("CREATE", "DROP")) for s in db.statements()[before:])
    store.write_documents("KB_V1", [doc("d2", 1)])
    store.finish_load("KB_V1")  # rows changed since: rebuilt
    assert hnsw in db.statements()[-10:] and questions in db.statements()[-10:]


def test_ivf_is_built_from_the_versions_recorded_spec_not_the_current_settings() -> None:
    db = CatalogDb()
    catalog_store(db, vector_index={"type": "ivf", "neighbor_partitions": 64}).create_version(spec("KB_V1"))
    db.tables["KB_V1"] = 1000
    later = catalog_store(db, vector_index={"type": "hnsw", "neighbor_partitions": 8})
    later.point_alias("KB_ACTIVE", "KB_V1")
    assert not any("VECTOR INDEX" in s for s in db.statements())  # rotation builds nothing
    later.finish_load("KB_V1")
    built = [s for s in db.statements() if s.startswith("CREATE VECTOR INDEX")]
    assert built == ["CREATE VECTOR INDEX KB_V1_VIDX ON KB_V1 (embedding) ORGANIZATION NEIGHBOR PARTITIONS "
                     "DISTANCE COSINE WITH TARGET ACCURACY 95 PARAMETERS (TYPE IVF, NEIGHBOR PARTITIONS 64)",
                     "CREATE VECTOR INDEX KB_V1_QVIDX ON KB_V1_QUESTIONS (embedding) ORGANIZATION NEIGHBOR PARTITIONS "
                     "DISTANCE COSINE WITH TARGET ACCURACY 95 PARAMETERS (TYPE IVF, NEIGHBOR PARTITIONS 64)"]


class _WriteWhileRotating(CatalogDb):
    """A write that commits while ``point_alias`` waits for the registry rows' ``FOR UPDATE``:
    the promotion read the generation before it, the lock then returns the committed row."""

    racer: Any = None

    def run(self, statement: str, binds: dict[str, Any], session: int | None = None) -> list[tuple[Any, ...]]:
        if self.racer is not None and statement == sql.LOCK_VERSION_ROW_SQL:
            racer, self.racer = self.racer, None
            racer()
        return super().run(statement, binds, session)


def test_a_write_that_commits_while_the_rotation_waits_for_the_lock_refuses_the_rotation() -> None:
    """C6: the generation is read again after the FOR UPDATE, in the transaction that records the alias."""
    db = _WriteWhileRotating()
    db.add_version("KB_V1")
    db.add_version("KB_V2", generation=3)
    store = catalog_store(db)
    store.point_alias("KB_ACTIVE", "KB_V1")
    evaluated = store.get_version("KB_V2").generation  # the promotion's read: 3
    db.racer = lambda: catalog_store(db).write_documents("KB_V2", [doc("late", 1)])
    with pytest.raises(VersionChanged, match=r"KB_V2 changed since it was evaluated \(generation 4, evaluated 3\)"):
        store.point_alias("KB_ACTIVE", "KB_V2", reason="all gates passed", expected_generation=evaluated)
    assert db.racer is None and db.versions["KB_V2"][8] == 4  # the write did commit, in between
    assert db.aliases == {"KB_ACTIVE": "KB_V1"} and db.views["KB_ACTIVE"] == "KB_V1"  # view restored
    assert [h[2] for h in db.history] == ["KB_V1"]
    assert sql.LOCK_VERSION_ROW_SQL in db.statements()
    assert store.point_alias("KB_ACTIVE", "KB_V2", expected_generation=4).previous == "KB_V1"
    assert db.views["KB_ACTIVE"] == "KB_V2"


def test_a_duplicate_in_the_embedding_cache_from_a_concurrent_ingest_is_tolerated(
        monkeypatch: pytest.MonkeyPatch) -> None:
    def errors(self: RecordingCursor) -> list[Any]:
        if self.db.statements("executemany")[-1] != sql.MERGE_CACHE_SQL:
            return []
        return [types.SimpleNamespace(offset=0, code=1, message="ORA-00001: unique constraint violated")]

    monkeypatch.setattr(RecordingCursor, "getbatcherrors", errors)
    db = RecordingDb(registry(V1))
    assert make_store(db).write_documents("KB_V1", [doc("d1", 2)]) == 2
    assert ("commit", "") in db.log and ("rollback", "") not in db.log
    cache = [i for i, (k, s) in enumerate(db.log) if k == "executemany" and s == sql.MERGE_CACHE_SQL]
    assert len(cache) == 1


def test_embedding_cache_rows_are_sorted_by_text_hash_so_two_ingests_lock_keys_in_one_order() -> None:
    """L1: rows in document order let ingest A lock K1 then K2 while B locks K2 then K1 (ORA-00060)."""
    db = RecordingDb(registry(V1))
    d = doc("d1", 6)
    make_store(db).write_documents("KB_V1", [d])
    cache = [i for i, (k, s) in enumerate(db.log) if k == "executemany" and s == sql.MERGE_CACHE_SQL]
    hashes = [r["text_hash"] for r in db.log[cache[0] + 1][1]]
    assert len(hashes) == 6 and hashes == sorted(hashes)
    in_document_order = [content_hash(c.text_to_embed) for c in d.chunks]
    assert set(in_document_order) == set(hashes) and in_document_order != hashes  # document order would show


def test_a_deadlock_on_the_embedding_cache_rolls_back_with_a_clear_hint(monkeypatch: pytest.MonkeyPatch) -> None:
    def executemany(self: RecordingCursor, statement: str, rows: list[dict[str, Any]], **kw: Any) -> None:
        self.db.log.append(("executemany", statement))
        if statement == sql.MERGE_CACHE_SQL:
            raise ora(60, "deadlock detected while waiting for resource")

    monkeypatch.setattr(RecordingCursor, "executemany", executemany)
    db = RecordingDb(registry(V1))
    with pytest.raises(StoreError, match=r"(?s)ORA-00060.*deadlock with another session.*run it again") as info:
        make_store(db).write_documents("KB_V1", [doc("d1", 2)])
    assert "Traceback" not in str(info.value)
    assert ("commit", "") not in db.log and ("rollback", "") in db.log


def test_another_cache_error_still_rolls_the_write_back(monkeypatch: pytest.MonkeyPatch) -> None:
    def errors(self: RecordingCursor) -> list[Any]:
        if self.db.statements("executemany")[-1] != sql.MERGE_CACHE_SQL:
            return []
        return [types.SimpleNamespace(offset=0, code=1438, message="ORA-01438: value larger than precision")]

    monkeypatch.setattr(RecordingCursor, "getbatcherrors", errors)
    db = RecordingDb(registry(V1))
    with pytest.raises(StoreError, match="embedding cache could not be written .* ORA-01438"):
        make_store(db).write_documents("KB_V1", [doc("d1", 2)])
    assert ("commit", "") not in db.log


def test_a_chunk_id_twice_in_one_write_is_refused_before_any_statement() -> None:
    db = RecordingDb(registry(V1))
    d = doc("d1", 1)
    twice = type(d)("d2", "h", [d.chunks[0]], np.asarray(d.vectors))
    with pytest.raises(StoreError, match="chunk_id 'd1#0' appears twice in one write"):
        make_store(db).write_documents("KB_V1", [d, twice])
    assert db.log == []


# --- retrieval settings stamped per version ---------------------------------------------------
def test_the_retrieval_stamp_is_registered_bound_read_back_and_restamped_with_a_new_generation() -> None:
    db = CatalogDb()
    store = catalog_store(db)
    stamp = {"format": 1, "strategy": "fusion", "fusion": {"k": 20, "dense_weight": 1.5}}
    created = store.create_version(VersionSpec("KB_V1", "mini-lm", 3, "cosine", retrieval=stamp))
    assert created.retrieval == stamp and json.loads(db.versions["KB_V1"][11]) == stamp
    insert = next(s for s in db.statements() if s.startswith("INSERT INTO RAG_VERSIONS"))
    assert ":retrieval" in insert and "fusion" not in insert  # a bound value, never spliced into SQL
    store.point_alias("KB_ACTIVE", "KB_V1")
    assert store.resolve_retrieval("KB_ACTIVE") == ("KB_V1", stamp)
    assert store.resolve_retrieval("kb_v1") == ("KB_V1", stamp)
    with pytest.raises(InvalidIdentifier):
        store.resolve_retrieval("KB_ACTIVE; DROP TABLE X")

    again = store.create_version(VersionSpec("KB_V1", "mini-lm", 3, "cosine", retrieval=stamp))
    assert again.generation == 0 and not any(s.startswith("UPDATE RAG_VERSIONS SET retrieval") for s in db.statements())
    other = {**stamp, "fusion": {"k": 60, "dense_weight": 1.0}}
    restamped = store.create_version(VersionSpec("KB_V1", "mini-lm", 3, "cosine", retrieval=other))
    assert restamped.retrieval == other and restamped.generation == 1
    assert store.get_version("KB_V1").retrieval == other and db.versions["KB_V1"][8] == 1


def test_a_version_registered_before_stamps_reads_as_unstamped() -> None:
    db = CatalogDb()
    db.add_version("KB_OLD", rows=1)
    store = catalog_store(db)
    assert store.get_version("KB_OLD").retrieval is None
    assert store.resolve_retrieval("KB_OLD") == ("KB_OLD", None)


def test_finish_load_optimizes_the_text_indexes_and_gathers_statistics_with_bound_names() -> None:
    """L5: after the load, CTX_DDL.OPTIMIZE_INDEX (FULL) on the Text and JSON search indexes and
    DBMS_STATS.GATHER_TABLE_STATS on the chunk, question and summary tables, names bound; a refused
    call is advisory (logged), the load still finishes."""
    db = CatalogDb()
    store = catalog_store(db)
    store.create_version(spec("KB_V1"))
    db.tables["KB_V1"] = 100
    store.write_documents("KB_V1", [doc("d1", 1)])
    db.fail("GATHER_TABLE_STATS", ora(20000, "ORA-20000: insufficient privileges to analyze an object"))
    store.finish_load("KB_V1")
    calls = [(s, db.log[i + 1][1]) for i, (k, s) in enumerate(db.log) if k == "execute" and s.startswith("BEGIN ")]
    assert calls == [(sql.OPTIMIZE_TEXT_INDEX_SQL, {"idx_name": "KB_V1_TIDX"}),
                     (sql.OPTIMIZE_TEXT_INDEX_SQL, {"idx_name": "KB_V1_MIDX"}),
                     (sql.GATHER_TABLE_STATS_SQL, {"tabname": "KB_V1"}),
                     (sql.GATHER_TABLE_STATS_SQL, {"tabname": "KB_V1_QUESTIONS"}),
                     (sql.GATHER_TABLE_STATS_SQL, {"tabname": "KB_V1_SUMMARIES"})]
    assert json.loads(db.versions["KB_V1"][10])["built_generation"] == 1
