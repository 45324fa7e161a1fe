"""A folder synced into a knowledge base (issue 46), end to end with the real pipeline, store,
embedder and gate: the first sync serves a version that answers from the folder; an edit, a
deletion and a permission change make exactly one new version that embeds only the edited
file; the restricted principal loses the document; failures and suspicious listings change
nothing that is served."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from backend.common.errors import ConfigError, NothingIngested, SourceUnavailable, SyncRefused
from backend.connectors.folder import FolderConnector
from backend.connectors.sync import sync_series
from backend.ingest.cancel import CancelToken, IngestCancelled, default_cancel_dir, request_cancel
from tests.connectors.helpers import Synced

LEAVE = ("# Annual leave\n\nEvery full-time employee receives 27 days of paid annual leave per calendar year.\n"
         "Leave requests are approved by the team lead in the Tempo portal at least two weeks ahead.\n")
VPN = ("VPN access\n\nStaff connect to the corporate network from home with the Wirecastle VPN client.\n"
       "The client asks for a one-time code from the authenticator app at every login.\n")
CANTEEN = ("# Canteen\n\nThe staff canteen serves a vegetarian lasagne every Wednesday at lunch.\n"
           "Coffee in the canteen is free for staff before nine in the morning.\n")
BIKES = ("# Bicycles\n\nCyclists may park in the secure bicycle cellar beneath the north entrance.\n"
         "The bicycle cellar opens at half past six every weekday morning.\n")


def write_source(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "leave.md").write_text(LEAVE, encoding="utf-8")
    (folder / "vpn.txt").write_text(VPN, encoding="utf-8")
    (folder / "canteen.md").write_text(CANTEEN, encoding="utf-8")
    (folder / "bikes.md").write_text(BIKES, encoding="utf-8")
    (folder / ".rag-readers.yaml").write_text(
        "leave.md: [group:hr-staff]\nvpn.txt: [everyone]\n'*': [group:all-staff]\n", encoding="utf-8")
    return folder


@pytest.fixture
def synced(tmp_path: Path, embedder: Any) -> Synced:
    return Synced(tmp_path, embedder, "folder", {"path": str(tmp_path / "src")})


def test_first_sync_then_edit_delete_and_permission_change_make_one_version(tmp_path: Path, synced: Synced) -> None:
    src = write_source(tmp_path / "src")
    first = synced.sync(FolderConnector(str(src)))
    assert first.status == "ok" and first.promoted, first
    assert first.counts == {"new": 4, "changed": 0, "unchanged": 0, "deleted": 0, "permission_only": 0, "failed": 0}
    assert synced.served() == first.version == "KB_SYNCED_V1"
    assert set(synced.docs()) == {"leave.md", "vpn.txt", "canteen.md", "bikes.md"}
    assert synced.top("How many days of paid annual leave do employees get?")[0] == "leave.md"
    # hr sees the leave policy; a staff member outside hr does not
    assert synced.top("paid annual leave days", who="erin", groups=("hr",))[0] == "leave.md"
    assert "leave.md" not in synced.top("paid annual leave days", who="frank", groups=("staff",), k=10)
    assert synced.acl("leave.md") == ["group:hr"] and synced.acl("vpn.txt") == ["group:staff"]

    # a sync with no change builds nothing and embeds nothing
    again = synced.sync(FolderConnector(str(src)))
    assert again.status == "up_to_date" and again.version is None and again.embeddings_computed == 0
    assert again.counts["unchanged"] == 4

    # edit one file, delete one, and take vpn.txt away from staff (hr only)
    (src / "canteen.md").write_text(CANTEEN.replace("Wednesday", "Thursday"), encoding="utf-8")
    (src / "bikes.md").unlink()
    (src / ".rag-readers.yaml").write_text(
        "leave.md: [group:hr-staff]\nvpn.txt: [group:hr-staff]\n'*': [group:all-staff]\n", encoding="utf-8")
    second = synced.sync(FolderConnector(str(src)))
    assert second.counts == {"new": 0, "changed": 1, "unchanged": 1, "deleted": 1, "permission_only": 1, "failed": 0}
    assert second.status == "ok" and second.version == "KB_SYNCED_V2" == synced.served()
    assert [v.name for v in synced.store.list_versions()] == ["KB_SYNCED_V1", "KB_SYNCED_V2"]
    # only the edited file was embedded: the permission-only change took its vectors from the cache
    chunks = {d.doc_id: d.chunks for d in synced.store.document_list("KB_SYNCED_V2")}
    assert set(chunks) == {"leave.md", "vpn.txt", "canteen.md"}
    assert 0 < second.embeddings_computed <= chunks["canteen.md"]
    assert synced.acl("vpn.txt") == ["group:hr"]
    staged = sorted(p.name.split("-")[0] for p in (tmp_path / "kb" / "synced" / "sync" / "src").iterdir())
    assert staged == ["canteen", "leave", "vpn"]  # the deleted file's staged copy went with it
    assert "vpn.txt" not in synced.top("Which VPN client do staff use from home?", who="frank", groups=("staff",), k=10)
    assert synced.top("Which VPN client do staff use from home?", who="erin", groups=("hr",))[0] == "vpn.txt"
    assert "Thursday" in " ".join(c.text for c in synced.store.fetch_chunks("KB_SYNCED_V2", ["canteen.md::0"]).values())


def test_a_permission_only_change_embeds_nothing(tmp_path: Path, synced: Synced) -> None:
    src = write_source(tmp_path / "src")
    synced.sync(FolderConnector(str(src)))
    (src / ".rag-readers.yaml").write_text("'*': [public]\n", encoding="utf-8")
    report = synced.sync(FolderConnector(str(src)))
    assert report.counts["permission_only"] == 4 and report.counts["changed"] == 0
    assert report.embeddings_computed == 0 and report.version == "KB_SYNCED_V2"
    assert synced.acl("leave.md") == ["public"]


def test_unmapped_and_unknown_readers_are_reported_and_never_public(tmp_path: Path, synced: Synced) -> None:
    src = write_source(tmp_path / "src")
    (src / ".rag-readers.yaml").write_text("leave.md: [group:payroll, user:zed@elsewhere.example]\n"
                                           "vpn.txt: [user:dana@corp.example]\n", encoding="utf-8")
    report = synced.sync(FolderConnector(str(src)))
    assert report.unmapped_readers == {"group:payroll": 1, "user:zed@elsewhere.example": 1}
    # leave.md: no reader mapped, no default -> admins only; canteen/bikes: no readers at all -> admins only
    assert sorted(report.unknown_permissions) == ["bikes.md", "canteen.md", "leave.md"]
    assert synced.acl("leave.md") == ["group:admins"] and synced.acl("vpn.txt") == ["user:dana"]
    assert synced.acl("canteen.md") == ["group:admins"]


def test_an_empty_listing_or_a_mass_deletion_is_refused_unless_forced(tmp_path: Path, synced: Synced) -> None:
    src = write_source(tmp_path / "src")
    synced.sync(FolderConnector(str(src)))
    for name in ("leave.md", "vpn.txt", "canteen.md"):
        (src / name).unlink()
    with pytest.raises(SyncRefused, match=r"would delete 3 of 4 items \(75%\)"):
        synced.sync(FolderConnector(str(src)))
    assert synced.served() == "KB_SYNCED_V1" and len(synced.store.list_versions()) == 1
    (src / "bikes.md").unlink()
    with pytest.raises(SyncRefused, match="listed no item while the knowledge base holds 4"):
        synced.sync(FolderConnector(str(src)))
    runs = synced.store.sync_runs("src")
    assert [r["status"] for r in runs[:2]] == ["refused", "refused"]
    (src / "bikes.md").write_text(BIKES, encoding="utf-8")
    forced = synced.sync(FolderConnector(str(src)), force=True)
    assert forced.counts["deleted"] == 3 and set(synced.docs()) == {"bikes.md"}


def test_an_unreachable_source_or_a_failing_item_changes_nothing_served(tmp_path: Path, synced: Synced) -> None:
    src = write_source(tmp_path / "src")
    synced.sync(FolderConnector(str(src)))
    before = synced.docs()
    with pytest.raises(SourceUnavailable, match="no such folder"):
        synced.sync(FolderConnector(str(tmp_path / "unmounted")))
    assert synced.served() == "KB_SYNCED_V1" and synced.docs() == before
    assert synced.store.sync_runs("src")[0]["status"] == "failed"
    # an item that fails to load is reported and kept as it was, never deleted
    (src / "canteen.md").write_bytes(b"")
    (src / "vpn.txt").write_text(VPN + "\nThe helpdesk resets lost authenticator apps.\n", encoding="utf-8")
    report = synced.sync(FolderConnector(str(src)))
    assert report.counts["changed"] == 2 and report.counts["deleted"] == 0
    assert [e["item"] for e in report.errors] == ["canteen.md"] and "empty" in report.errors[0]["reason"]
    assert "canteen.md" in synced.docs(report.version)
    # the failed item is tried again next time (its state was not advanced): still empty, so nothing is built
    with pytest.raises(NothingIngested, match="canteen"):
        synced.sync(FolderConnector(str(src)))
    assert synced.store.sync_runs("src")[0]["counts"]["changed"] == 1 and synced.served() == report.version


def test_a_cancelled_sync_serves_nothing_new_and_the_next_sync_resumes_it(tmp_path: Path, synced: Synced) -> None:
    src = write_source(tmp_path / "src")
    with pytest.raises(ConfigError, match="not registered yet"):
        sync_series(synced.settings, "synced")
    synced.sync(FolderConnector(str(src)))
    (src / "canteen.md").write_text(CANTEEN.replace("Wednesday", "Thursday"), encoding="utf-8")
    # what `rag connector cancel src` writes, from another shell, while the sync runs
    cancel_dir = default_cancel_dir(synced.settings)
    token = CancelToken(cancel_dir)
    marker = request_cancel(cancel_dir, sync_series(synced.settings, "synced"))
    assert marker.name == "KB_SYNCED.cancel"
    with pytest.raises(IngestCancelled, match="run the same command to resume"):
        synced.sync(FolderConnector(str(src)), cancel=token)
    assert synced.served() == "KB_SYNCED_V1" and not marker.exists()
    assert synced.store.sync_runs("src")[0]["status"] == "cancelled"
    assert "Thursday" not in " ".join(c.text for c in synced.store.fetch_chunks("KB_SYNCED_V1", ["canteen.md::0"]).values())
    # the sync state was not advanced: the next sync sees the edit again and finishes the same candidate,
    # whose edited document the cancelled run had already written (nothing is embedded twice)
    resumed = synced.sync(FolderConnector(str(src)))
    assert resumed.status == "ok" and resumed.counts["changed"] == 1, resumed
    assert resumed.version == "KB_SYNCED_V2" == synced.served() and resumed.embeddings_computed == 0
    assert "Thursday" in " ".join(c.text for c in synced.store.fetch_chunks("KB_SYNCED_V2", ["canteen.md::0"]).values())
