"""The sync diff and the deletion guard (issue 46), at their boundaries."""

from __future__ import annotations

import pytest

from backend.common.errors import SyncRefused
from backend.core.sync_diff import ListedItem, SyncDiff, SyncedItem, check_deletions, diff


def state(*items: tuple[str, str, tuple[str, ...]]) -> dict[str, SyncedItem]:
    return {i: SyncedItem(i, t, labels, i, f"{i}.md") for i, t, labels in items}


@pytest.mark.parametrize(("before", "listing", "expected"), [
    ((), (), SyncDiff()),
    ((), (("a", "1", ("public",)),), SyncDiff(new=("a",))),
    ((("a", "1", ("public",)),), (("a", "1", ("public",)),), SyncDiff(unchanged=("a",))),
    ((("a", "1", ("public",)),), (("a", "2", ("public",)),), SyncDiff(changed=("a",))),
    # a token change with a label change is a change (re-ingested with its new labels)
    ((("a", "1", ("public",)),), (("a", "2", ("group:hr",)),), SyncDiff(changed=("a",))),
    ((("a", "1", ("public",)),), (("a", "1", ("group:hr",)),), SyncDiff(permission_only=("a",))),
    ((("b", "1", ()), ("a", "1", ())), (), SyncDiff(deleted=("a", "b"))),
    # a listed id twice counts once, the first wins
    ((), (("a", "1", ()), ("a", "2", ())), SyncDiff(new=("a",))),
    ((("a", "1", ()), ("c", "1", ())), (("b", "1", ()), ("a", "1", ())), SyncDiff(new=("b",), unchanged=("a",),
                                                                              deleted=("c",))),
])
def test_diff(before: tuple, listing: tuple, expected: SyncDiff) -> None:
    got = diff(state(*before), [ListedItem(*x) for x in listing])
    assert (got.new, got.changed, got.unchanged, got.deleted, got.permission_only) == (
        expected.new, expected.changed, expected.unchanged, expected.deleted, expected.permission_only)
    assert got.empty == expected.empty


def test_empty_means_nothing_to_write() -> None:
    assert SyncDiff(unchanged=("a",)).empty and not SyncDiff(permission_only=("a",)).empty


@pytest.mark.parametrize(("listed", "deleted", "known", "share", "force", "refused"), [
    (0, 0, 0, 0.5, False, None),                          # a first sync of an empty source
    (0, 4, 4, 0.5, False, "listed no item"),              # empty listing
    (0, 4, 4, 1.0, False, "listed no item"),              # even when every deletion is allowed
    (0, 4, 4, 0.5, True, None),                           # forced
    (2, 2, 4, 0.5, False, None),                          # exactly the share: allowed
    (1, 3, 4, 0.5, False, r"would delete 3 of 4 items \(75%\)"),
    (1, 3, 4, 0.75, False, None),
    (99, 1, 100, 0.0, False, r"would delete 1 of 100"),   # share 0: no deletion without --force
    (99, 1, 100, 0.0, True, None),
])
def test_check_deletions(listed: int, deleted: int, known: int, share: float, force: bool,
                         refused: str | None) -> None:
    result = SyncDiff(unchanged=tuple(f"u{i}" for i in range(listed)), deleted=tuple(f"d{i}" for i in range(deleted)))
    if refused is None:
        check_deletions(result, known, max_delete_share=share, force=force)
    else:
        with pytest.raises(SyncRefused, match=refused):
            check_deletions(result, known, max_delete_share=share, force=force)
