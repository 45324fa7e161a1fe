"""Per-principal quotas (``core/services/quotas.py``): which budget applies, the windows, and the
counters in the store: atomic across processes on one SQLite file (two "workers"), and on the Oracle
stand-in; a request past its budget is ``QuotaExceeded`` naming the budget and the wait."""

from __future__ import annotations

import multiprocessing
from datetime import datetime, timezone
from pathlib import Path

import pytest

from backend.common.config import QuotaLimit, QuotaSettings
from backend.common.errors import QuotaExceeded
from backend.core.services.quotas import QuotaService, budget, subject_for, window
from backend.providers.sqlite_vs.store import SqliteVectorStore
from tests.providers.oracle_fake import CatalogDb, catalog_store

SETTINGS = QuotaSettings(enabled=True, default=QuotaLimit(per_minute=5, per_day=100),
                         principals={"dave": QuotaLimit(per_minute=2)},
                         roles={"admin": QuotaLimit(per_minute=50, per_day=None), "bot": QuotaLimit(per_minute=10,
                                                                                                   per_day=1000)})
NOON = datetime(2026, 11, 28, 12, 0, 15, tzinfo=timezone.utc).timestamp()


@pytest.mark.parametrize(("principal", "roles", "key", "expected"), [
    ("dave", (), None, (QuotaLimit(per_minute=2), "quotas.principals.dave")),
    ("dave", ("admin",), None, (QuotaLimit(per_minute=2), "quotas.principals.dave")),  # its own wins
    ("root", ("admin",), None, (QuotaLimit(per_minute=50), "quotas.roles.admin")),
    ("ops", ("admin", "bot"), None, (QuotaLimit(per_minute=50), "quotas.roles.admin,bot")),  # most generous each
    ("carol", (), None, (QuotaLimit(per_minute=5, per_day=100), "quotas.default")),
    (None, (), "key-one", (QuotaLimit(per_minute=5, per_day=100), "quotas.default")),
])
def test_the_budget_is_the_principal_s_then_its_roles_then_the_default(
        principal: str | None, roles: tuple[str, ...], key: str | None, expected: tuple[QuotaLimit, str]) -> None:
    subject = subject_for(principal, roles, key)
    assert subject is not None and budget(SETTINGS, subject) == expected


def test_subjects_name_the_principal_or_the_key_digest_never_the_key() -> None:
    assert subject_for("dave").key == "principal:dave"  # type: ignore[union-attr]
    keyed = subject_for(None, api_key="key-one")
    assert keyed is not None and keyed.key.startswith("key:") and "key-one" not in keyed.key + keyed.label
    assert subject_for(None) is None


def test_windows_are_calendar_minutes_and_days_in_utc() -> None:
    assert window("minute", NOON) == ("2026-11-28T12:00", 45)
    assert window("day", NOON) == ("2026-11-28", 43_185)


def test_a_request_past_the_budget_is_refused_until_the_window_turns(tmp_path: Path) -> None:
    store = SqliteVectorStore(tmp_path / "q.sqlite")
    now = [NOON]
    quotas = QuotaService(store, SETTINGS, clock=lambda: now[0])
    dave = subject_for("dave")
    quotas.check(dave)
    quotas.check(dave)
    with pytest.raises(QuotaExceeded, match=r"^quota exceeded: principal 'dave' made 3 requests this minute; its "
                       r"budget is 2 per minute \(quotas.principals.dave.per_minute\); retry after 45 s$") as caught:
        quotas.check(dave)
    assert caught.value.http_status == 429 and caught.value.context["retry_after"] == 45
    now[0] += 60  # the next minute
    quotas.check(dave)
    assert QuotaService(store, QuotaSettings(enabled=False)).enabled is False
    store.close()


def test_two_worker_processes_on_one_store_count_against_one_budget(tmp_path: Path) -> None:
    from tests.providers.quota_worker import count

    path = tmp_path / "q.sqlite"
    SqliteVectorStore(path).close()
    with multiprocessing.get_context("spawn").Pool(2) as pool:
        seen = pool.starmap(count, [(str(path), 40), (str(path), 40)])
    assert sorted(seen[0] + seen[1]) == list(range(1, 81))  # every count handed out once: atomic


def test_the_oracle_counter_adds_under_one_statement_and_prunes_old_days() -> None:
    db = CatalogDb()
    store = catalog_store(db)
    assert [store.count_request("principal:dave", "minute", "2026-11-28T12:00") for _ in range(3)] == [1, 2, 3]
    assert store.count_request("principal:dave", "day", "2026-11-27") == 1
    assert store.prune_quota_counters("2026-11-28") == 1
    assert db.quota_hits == {("principal:dave", "minute", "2026-11-28T12:00"): 3}
