"""``SeriesLocks``: the lock name of a series, the messages, hold-once and name order."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from backend.common.errors import InvalidIdentifier, SeriesLocked
from backend.core.services.series_lock import SeriesLocks, locked_message, series_key
from backend.core.versions import VersionNaming
from backend.core.types import LockHolder
from tests.conftest import make_settings

HOLDER = LockHolder("rag ingest", 12, "host-a", "2025-06-01T10:00:00+00:00")


def test_series_key_is_the_upper_case_stem() -> None:
    naming = VersionNaming()
    assert series_key(naming, "kb_handbook_v3") == series_key(naming, "KB_HANDBOOK") == "KB_HANDBOOK"
    with pytest.raises(InvalidIdentifier):
        series_key(naming, "../etc_V1")


def test_messages_name_the_series_the_holder_and_what_to_do() -> None:
    assert locked_message("KB", None, mode="refuse", waited_s=0).startswith(
        "series KB is locked by another run (it has not recorded who it is yet); this run was refused")
    assert "after waiting 2.5 s (ingest.lock_wait_s)" in locked_message("KB", HOLDER, mode="wait", waited_s=2.5)


class Recording:
    """A store that records the locks asked for and refuses the ones listed in ``busy``."""

    def __init__(self, busy: frozenset[str] = frozenset()) -> None:
        self.asked: list[tuple[str, float]] = []
        self.busy = busy

    def lock_series(self, series: str, holder: LockHolder, *, wait_s: float = 0.0) -> Any:
        self.asked.append((series, wait_s))
        if series in self.busy:
            raise SeriesLocked("busy", series=series, holder=HOLDER)
        return type("Lease", (), {"series": series, "holder": holder, "release": lambda self: None})()


def test_hold_is_idempotent_and_several_series_are_taken_in_name_order(tmp_path: Path) -> None:
    store = Recording()
    locks = SeriesLocks(store, make_settings(tmp_path), "rag ingest")
    assert locks.hold_all(["KB_B_V2", "kb_a", "KB_B"]) == ["KB_A", "KB_B"]
    locks.hold("KB_A_V7")
    assert store.asked == [("KB_A", 0.0), ("KB_B", 0.0)]
    locks.release_all()
    assert locks.held == []


def test_wait_mode_says_it_waits_then_waits_lock_wait_s(tmp_path: Path) -> None:
    store, said = Recording(frozenset({"KB"})), []
    settings = make_settings(tmp_path, ingest={"concurrent_runs": "wait", "lock_wait_s": 7})
    with pytest.raises(SeriesLocked, match=r"^series KB is still locked by rag ingest \(pid 12 on host-a"):
        SeriesLocks(store, settings, "rag ingest", on_wait=said.append).hold("KB_V2")
    assert store.asked == [("KB", 0.0), ("KB", 7.0)]
    assert said == ["waiting up to 7 s for series KB: locked by rag ingest (pid 12 on host-a, since "
                    "2025-06-01T10:00:00+00:00)"]


def test_refuse_mode_never_waits(tmp_path: Path) -> None:
    store = Recording(frozenset({"KB"}))
    settings = make_settings(tmp_path, ingest={"concurrent_runs": "refuse"})
    with pytest.raises(SeriesLocked, match="this run was refused"):
        SeriesLocks(store, settings, "rag promote").hold("KB")
    assert store.asked == [("KB", 0.0)]
