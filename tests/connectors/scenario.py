"""The end-to-end scenario every connector passes (issue 46), against its real source:

initial sync -> the served version answers from the source and hides the restricted document
from a principal outside its group -> an edit, a deletion and a permission change at the source
-> the next sync builds exactly one version with those changes, embeds only the edited item, and
the principal who lost the permission loses the document -> a sync whose source is down fails
and leaves the served version as it was."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Protocol

import pytest

from backend.common.errors import SourceUnavailable
from backend.core.connector import Connector
from tests.connectors.helpers import Synced

LEAVE = ("Annual leave\n\nEvery full-time employee receives 27 days of paid annual leave per calendar year.\n"
         "Leave requests are approved by the team lead in the Tempo portal at least two weeks ahead.\n")
VPN = ("VPN access\n\nStaff connect to the corporate network from home with the Wirecastle VPN client.\n"
       "The client asks for a one-time code from the authenticator app at every login.\n")
CANTEEN = ("Canteen\n\nThe staff canteen serves a vegetarian lasagne every Wednesday at lunch.\n"
           "Coffee in the canteen is free for staff before nine in the morning.\n")
BIKES = ("Bicycles\n\nCyclists may park in the secure bicycle cellar beneath the north entrance.\n"
         "The bicycle cellar opens at half past six every weekday morning.\n")


class Source(Protocol):
    """A real source the test drives: write, delete, change readers, commit, break."""

    def put(self, name: str, text: str, readers: list[str]) -> None: ...

    def delete(self, name: str) -> None: ...

    def set_readers(self, name: str, readers: list[str]) -> None: ...

    def publish(self) -> None: ...

    def doc_id(self, name: str) -> str: ...

    def connector(self) -> Connector: ...

    def broken(self) -> Connector: ...


def run_scenario(synced: Synced, source: Source) -> None:
    source.put("leave", LEAVE, ["group:hr-staff"])
    source.put("vpn", VPN, ["everyone"])
    source.put("canteen", CANTEEN, ["group:all-staff"])
    source.put("bikes", BIKES, ["group:all-staff"])
    source.publish()
    leave, vpn, canteen, bikes = (source.doc_id(n) for n in ("leave", "vpn", "canteen", "bikes"))

    first = synced.sync(source.connector())
    assert first.status == "ok" and first.promoted and first.errors == [], first
    assert first.counts == {"new": 4, "changed": 0, "unchanged": 0, "deleted": 0, "permission_only": 0, "failed": 0}
    assert set(synced.docs()) == {leave, vpn, canteen, bikes}
    assert synced.top("How many days of paid annual leave do employees get?")[0] == leave
    assert synced.top("paid annual leave days", who="erin", groups=("hr",))[0] == leave
    assert leave not in synced.top("paid annual leave days", who="frank", groups=("staff",), k=10)
    assert synced.top("Which VPN client do staff use from home?", who="frank", groups=("staff",))[0] == vpn
    served = synced.served()

    source.put("canteen", CANTEEN.replace("Wednesday", "Thursday"), ["group:all-staff"])
    source.delete("bikes")
    source.set_readers("vpn", ["group:hr-staff"])
    source.publish()
    second = synced.sync(source.connector())
    # a web page's readers are in the page (a meta tag): its content token changes with them, so it is
    # "changed", yet its text is the same and nothing of it is embedded again
    moved = getattr(source, "readers_in_content", False)
    assert second.counts == {"new": 0, "changed": 1 + moved, "unchanged": 1, "deleted": 1,
                             "permission_only": 1 - moved, "failed": 0}, second
    assert second.status == "ok" and second.promoted
    versions = [v.name for v in synced.store.list_versions()]
    assert versions == [served, second.version] and synced.served() == second.version  # exactly one new version
    chunks = {d.doc_id: d.chunks for d in synced.store.document_list(second.version or "")}
    assert set(chunks) == {leave, vpn, canteen}
    assert 0 < second.embeddings_computed <= chunks[canteen]  # only the edited item was embedded
    text = " ".join(c.text for c in synced.store.fetch_chunks(second.version or "", [f"{canteen}::0"]).values())
    assert "Thursday" in text and "Wednesday" not in text
    assert synced.acl(vpn) == ["group:hr"]
    assert vpn not in synced.top("Which VPN client do staff use from home?", who="frank", groups=("staff",), k=10)
    assert synced.top("Which VPN client do staff use from home?", who="erin", groups=("hr",))[0] == vpn

    with pytest.raises(SourceUnavailable):
        synced.sync(source.broken())
    assert synced.served() == second.version and [v.name for v in synced.store.list_versions()] == versions
    assert synced.store.sync_runs("src")[0]["status"] == "failed"


def declared_share(root: Path, notes: int = 0, **overrides: Any) -> tuple[Any, Path]:
    """``(settings, folder)``: a folder holding LEAVE and CANTEEN (and ``notes`` short depot notes)
    under ``root``, declared as the folder connector ``hr-share`` of knowledge base ``hr`` (readers
    public), the settings' store under ``root``; ``overrides`` go to ``make_settings``."""
    from backend.common.config import ConnectorSpec
    from backend.connectors.declarations import add
    from tests.conftest import make_settings

    share = root / "share"
    share.mkdir()
    (share / "leave.md").write_text(LEAVE, encoding="utf-8")
    (share / "canteen.md").write_text(CANTEEN, encoding="utf-8")
    for n in range(notes):
        (share / f"depot-{n:03d}.md").write_text(
            f"# Depot {n}\n\nDepot {n} opens at {6 + n % 4}:00 on weekdays and keeps {10 + n} pallets in its yard.\n",
            encoding="utf-8")
    settings = make_settings(root, connectors={"file": str(root / "connectors.yaml")},
                             server={"rate_limit": {"enabled": False}}, **overrides)
    add(settings, "hr-share", ConnectorSpec.model_validate({"kind": "folder", "knowledge_base": "hr",
                                                            "options": {"path": str(share)}, "readers": ["public"]}))
    return settings, share
