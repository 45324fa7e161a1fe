"""Administrative operations on Oracle exclude each other (review L3), against the stand-in.

Every DDL statement commits, so the lock cannot live in the session that runs the DDL: a row of
``RAG_SERIES_LOCKS`` under ``#ADMIN:<name>`` is held ``FOR UPDATE`` by a second pooled session
while the operation works (``admin_lock``). Each race below starts the second operation on a
thread at the exact statement where the first is exposed and gives it half a second: before the
lock it finished inside that window and did the damage the review describes; now it waits.
The shared ``AdminConcurrencyTest`` of the contract runs the rotation race here too.
"""

from __future__ import annotations

import threading
from typing import Any, Callable

import pytest

from backend.common.errors import StoreError, VersionNotFound
from backend.providers.oracle_vs import sql
from backend.providers.oracle_vs.admin_lock import admin_lock, admin_key
from backend.providers.oracle_vs.series_lock import REGISTER_SQL, lock_sql
from tests.contracts.vector_store import AdminConcurrencyTest
from tests.providers.oracle_fake import CatalogDb, catalog_store


class _Racing(CatalogDb):
    """Runs ``racer`` on a thread when the first statement starting with ``trigger`` arrives, and
    lets it run for up to half a second before that statement goes on."""

    def __init__(self) -> None:
        super().__init__()
        self.trigger = ""
        self.racer: Callable[[], Any] | None = None
        self.thread: threading.Thread | None = None
        self.outcome: dict[str, Any] = {}
        self.seen: dict[str, Any] = {}

    def run(self, statement: str, binds: dict[str, Any], session: int | None = None) -> list[tuple[Any, ...]]:
        if self.racer is not None and statement.startswith(self.trigger):
            racer, self.racer = self.racer, None
            self.seen = {"session": session, "locks": dict(self.row_locks)}

            def go() -> None:
                try:
                    self.outcome["value"] = racer()
                except Exception as exc:  # noqa: BLE001 - the test reads it
                    self.outcome["error"] = exc

            self.thread = threading.Thread(target=go)
            self.thread.start()
            self.thread.join(0.5)  # unlocked, the racer is done by now; locked, it waits for us
        return super().run(statement, binds, session)

    def finish(self) -> None:
        assert self.thread is not None
        self.thread.join(10)
        assert not self.thread.is_alive()


def test_two_rotations_of_one_alias_each_record_the_version_served_before_them() -> None:
    db = _Racing()
    for name in ("KB_V1", "KB_V2", "KB_V3"):
        db.add_version(name)
    store = catalog_store(db)
    store.point_alias("KB_ACTIVE", "KB_V1")
    db.trigger = "CREATE OR REPLACE VIEW KB_ACTIVE"
    db.racer = lambda: catalog_store(db).point_alias("KB_ACTIVE", "KB_V3")
    store.point_alias("KB_ACTIVE", "KB_V2")
    db.finish()
    assert "error" not in db.outcome
    history = [(c.version, c.previous) for c in store.alias_history("KB_ACTIVE")]
    assert history == [("KB_V3", "KB_V2"), ("KB_V2", "KB_V1"), ("KB_V1", None)]
    assert db.aliases["KB_ACTIVE"] == "KB_V3" and db.views["KB_ACTIVE"] == "KB_V3"
    assert store.protected_versions() == {"KB_V3": "KB_ACTIVE live", "KB_V2": "KB_ACTIVE rollback"}
    # the lock is held by another session than the one whose DDL commits, and is gone afterwards
    assert db.seen["locks"].get(admin_key("KB_ACTIVE")) not in (None, db.seen["session"])
    assert db.seen["locks"].get(admin_key("KB_V2")) == db.seen["locks"][admin_key("KB_ACTIVE")]
    assert db.row_locks == {}


def test_a_rollback_reads_its_target_under_the_lock_of_the_alias() -> None:
    db = _Racing()
    for name in ("KB_V1", "KB_V2", "KB_V3"):
        db.add_version(name)
    store = catalog_store(db)
    store.point_alias("KB_ACTIVE", "KB_V1")
    store.point_alias("KB_ACTIVE", "KB_V2")
    db.trigger = "CREATE OR REPLACE VIEW KB_ACTIVE"
    db.racer = lambda: catalog_store(db).point_alias("KB_ACTIVE", "KB_V3")
    assert store.rollback_alias("KB_ACTIVE").version == "KB_V1"
    db.finish()
    history = [(c.version, c.previous) for c in store.alias_history("KB_ACTIVE")]
    assert history[:2] == [("KB_V3", "KB_V1"), ("KB_V1", "KB_V2")]


def test_a_rotation_cannot_target_a_version_while_it_is_dropped() -> None:
    db = _Racing()
    for name in ("KB_V1", "KB_V2"):
        db.add_version(name)
    store = catalog_store(db)
    store.point_alias("KB_ACTIVE", "KB_V1")
    db.trigger = "DROP TABLE IF EXISTS"  # the drop's first DDL: protection was checked just before
    db.racer = lambda: catalog_store(db).point_alias("KB_ACTIVE", "KB_V2")
    store.drop_version("KB_V2")
    db.finish()
    assert isinstance(db.outcome.get("error"), VersionNotFound)
    assert db.aliases == {"KB_ACTIVE": "KB_V1"} and db.views["KB_ACTIVE"] == "KB_V1"
    assert "KB_V2" not in db.versions and "KB_V2" not in db.tables


def test_two_finish_loads_of_one_version_build_its_vector_index_once() -> None:
    db = _Racing()
    db.add_version("KB_V1", rows=100, generation=2)
    store = catalog_store(db)
    db.trigger = "CREATE VECTOR INDEX"
    db.racer = lambda: catalog_store(db).finish_load("KB_V1")
    store.finish_load("KB_V1")  # before the lock: ORA-00955, the other call built it in between
    db.finish()
    assert "error" not in db.outcome
    built = [s for s in db.statements() if s.startswith("CREATE VECTOR INDEX")]
    assert built and len(built) == len(set(built))  # each vector index once: the second call found it built
    assert any(s.startswith("CREATE VECTOR INDEX KB_V1_VIDX ") for s in built)
    assert db.indexes["KB_V1_VIDX"][1] == "VALID"


def test_a_version_being_created_and_its_parent_are_locked_in_name_order() -> None:
    db = _Racing()
    db.add_version("KB_V2", rows=3)
    store = catalog_store(db)
    db.trigger = "CREATE TABLE IF NOT EXISTS KB_V1 "
    db.racer = lambda: None
    from backend.core.types import VersionSpec

    store.create_version(VersionSpec("KB_V1", "mini-lm", 3, "cosine", parent="KB_V2"))
    db.finish()
    held = db.seen["locks"]
    assert set(held) == {admin_key("KB_V1"), admin_key("KB_V2")} and len(set(held.values())) == 1
    locks = [b["series"] for kind, b in db.log if kind == "binds" and "series" in b]
    assert locks.index(admin_key("KB_V1")) < locks.index(admin_key("KB_V2"))


def test_a_held_name_makes_another_operation_wait_then_fail_with_a_clear_message() -> None:
    db = CatalogDb()
    db.add_version("KB_V1")
    store = catalog_store(db)
    with admin_lock(store.connector, "a test", versions=("KB_V1",)):
        with pytest.raises(StoreError, match=r"dropping version KB_V2: another administrative operation on KB_V1"):
            admin_lock(store.connector, "dropping version KB_V2", versions=("KB_V2", "KB_V1"), wait_s=0.2)
        assert admin_key("KB_V2") not in db.row_locks  # what it had taken is given back
        other = admin_lock(store.connector, "another name", aliases=("KB_ACTIVE",), wait_s=0)  # no wait
        other.release()
    assert db.row_locks == {}


def test_the_keys_are_bound_and_cannot_be_series_names() -> None:
    db = CatalogDb()
    db.add_version("KB_V1")
    catalog_store(db).finish_load("KB_V1")
    assert REGISTER_SQL in db.statements() and lock_sql(86_400) in db.statements()
    assert not any("#ADMIN" in s for s in db.statements())
    with pytest.raises(Exception, match="invalid"):
        sql.oracle_name(admin_key("KB_V1"), "index series")


class TestOracleAdminConcurrency(AdminConcurrencyTest):
    """The contract's concurrency tests on the stand-in: two ingests of one series, an ingest racing a
    promotion, two rotations of one alias, gc during reads. The stand-in ranks no rows (a search
    answers none), so gc-during-reads checks its error half here: no reader of the alias fails, and
    a reader of the dropped version that meets ORA-00942 retries and is told the version is gone.
    The contract suite against a real database checks the rows too."""

    @pytest.fixture
    def store(self) -> Any:
        return catalog_store(CatalogDb())

    @pytest.fixture
    def model(self) -> str:
        return "mini-lm"


def test_m5_crossed_rotations_of_two_aliases_never_deadlock() -> None:
    """Review 4, M5 (fails at 18552a8): rotations of two aliases that swap versions (A: V1 -> V2,
    B: V2 -> V1) hold disjoint admin keys, and each locked both registry rows in one ``IN (...)
    FOR UPDATE``, in access-path order: A held V2 and waited for V1 while B held V1 and waited for V2,
    ORA-00060. The stand-in locks such a statement's rows in bind order and detects the cycle; the
    rows are now locked one statement each, in name order, so the second rotation waits instead."""
    db = CatalogDb()
    for name in ("KB_V1", "KB_V2"):
        db.add_version(name, rows=1)
    store = catalog_store(db)
    store.point_alias("KB_A", "KB_V1")
    store.point_alias("KB_B", "KB_V2")
    db.race_at("#ROW LOCK", lambda: catalog_store(db).point_alias("KB_B", "KB_V1"), window=0.3)
    store.point_alias("KB_A", "KB_V2")  # its first row locked, B's rotation starts, then A goes on
    race = db.finish_race()
    assert "error" not in race, race
    assert db.aliases == {"KB_A": "KB_V2", "KB_B": "KB_V1"}
    assert db.views["KB_A"] == "KB_V2" and db.views["KB_B"] == "KB_V1"
