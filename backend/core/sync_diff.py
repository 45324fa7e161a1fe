"""What a sync changes: a source's listing against the knowledge base's last sync state (pure).

Why a pure function: every safety rule of a sync is decided here, from data, where a table of
cases tests it: an item whose content token changed is *changed* (fetched and re-ingested), one
whose token is the same but whose ACL labels differ is *permission-only* (its ACL is rewritten,
nothing is embedded), one the listing no longer has is *deleted*; an item that failed to load
stays what it was (``carry``), never a deletion. ``check_deletions`` refuses a listing that
comes back empty or drops more than a configured share of the documents.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping, Sequence

from backend.common.errors import SyncRefused


@dataclass(frozen=True)
class SyncedItem:
    """One item as the last sync left it: its token, the ACL labels it was ingested with, the
    document id in the knowledge base and the staged file's name."""

    item_id: str
    token: str
    labels: tuple[str, ...]
    doc_id: str
    file: str
    title: str = ""
    url: str = ""


@dataclass(frozen=True)
class ListedItem:
    """One item of a listing, its readers already mapped to ACL labels."""

    item_id: str
    token: str
    labels: tuple[str, ...]


@dataclass(frozen=True)
class SyncDiff:
    new: tuple[str, ...] = ()
    changed: tuple[str, ...] = ()
    unchanged: tuple[str, ...] = ()
    deleted: tuple[str, ...] = ()
    permission_only: tuple[str, ...] = ()
    counts: Mapping[str, int] = field(default_factory=dict)

    @property
    def empty(self) -> bool:
        """Nothing to write: no version is built."""
        return not (self.new or self.changed or self.deleted or self.permission_only)

    def to_counts(self) -> dict[str, int]:
        return {"new": len(self.new), "changed": len(self.changed), "unchanged": len(self.unchanged),
                "deleted": len(self.deleted), "permission_only": len(self.permission_only)}


def diff(state: Mapping[str, SyncedItem], listing: Sequence[ListedItem]) -> SyncDiff:
    """Pure: each listed item is new, changed (token differs), permission-only (same token,
    other labels) or unchanged; each item of ``state`` the listing lacks is deleted. A token
    change with a label change is *changed* (it is re-ingested with its new labels anyway).
    Ids keep the listing's order; deletions are sorted."""
    new, changed, unchanged, perms = [], [], [], []
    seen: set[str] = set()
    for item in listing:
        if item.item_id in seen:
            continue
        seen.add(item.item_id)
        before = state.get(item.item_id)
        if before is None:
            new.append(item.item_id)
        elif before.token != item.token:
            changed.append(item.item_id)
        elif tuple(before.labels) != tuple(item.labels):
            perms.append(item.item_id)
        else:
            unchanged.append(item.item_id)
    deleted = sorted(i for i in state if i not in seen)
    return SyncDiff(tuple(new), tuple(changed), tuple(unchanged), tuple(deleted), tuple(perms))


def check_deletions(result: SyncDiff, known: int, *, max_delete_share: float, force: bool) -> None:
    """Pure: ``SyncRefused`` when a listing looks like an outage rather than a change: it is empty
    while the knowledge base holds items, or it deletes more than ``max_delete_share`` of them.
    ``force`` lets it through (an operator who emptied the source on purpose)."""
    if force or known == 0:
        return
    listed = len(result.new) + len(result.changed) + len(result.unchanged) + len(result.permission_only)
    if listed == 0:
        raise SyncRefused(f"the source listed no item while the knowledge base holds {known}; refused as "
                          "suspicious (an outage or a wrong prefix?); run again with --force to delete them all",
                          deleted=known)
    share = len(result.deleted) / known
    if share > max_delete_share:
        raise SyncRefused(f"the sync would delete {len(result.deleted)} of {known} items ({share:.0%}), more than "
                          f"connectors.max_delete_share ({max_delete_share:.0%}); refused as suspicious; run again "
                          "with --force if the source really lost them", deleted=len(result.deleted))
