"""The admin console's connectors (issue 46): the list with each connector's last sync, and a
sync started from the page as a job that builds a version through the gate."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from backend.api.admin_session import read_token
from backend.api.app import create_app
from backend.providers.sqlite_vs.store import SqliteVectorStore
from backend.runtime import build_services
from tests.connectors.scenario import declared_share


def test_connectors_are_listed_and_a_sync_runs_from_the_console(tmp_path: Path, embedder: Any, extractive: Any) -> None:
    settings, src = declared_share(tmp_path)
    store = SqliteVectorStore(tmp_path / "rag.sqlite")
    app = create_app(settings, build_services(settings, store=store, embedder=embedder, primary=extractive))
    client = app.test_client()
    # without the admin token: not the admin, so no sync
    assert client.post("/admin/connectors/hr-share/sync").status_code == 403
    client.environ_base["HTTP_X_RAG_ADMIN_TOKEN"] = read_token(settings)
    listed = client.get("/admin/connectors")
    assert listed.status_code == 200
    assert listed.get_json() == {"connectors": [{"name": "hr-share", "kind": "folder", "knowledge_base": "hr",
                                                 "last": None}]}
    assert client.post("/admin/connectors/nope/sync").get_json()["error"]["code"] == "connector_not_found"
    started = client.post("/admin/connectors/hr-share/sync")
    assert started.status_code == 202, started.get_json()
    job = started.get_json()["job"]
    deadline = time.monotonic() + 240
    while (body := client.get(f"/admin/jobs/{job}").get_json())["state"] not in ("succeeded", "failed"):
        assert time.monotonic() < deadline
        time.sleep(0.2)
    assert body["state"] == "succeeded", body
    # the job reported the ingest step's documents and rates, as an upload job does
    assert body["rates"]["total"] == 2 and body["rates"]["documents"] == 2 and body["rates"]["embedded"] > 0, body
    last = client.get("/admin/connectors").get_json()["connectors"][0]["last"]
    assert last["status"] == "ok" and last["version"] == "KB_HR_V1" and last["gate_passed"] is True
    assert last["counts"] == {"new": 2, "changed": 0, "unchanged": 0, "deleted": 0, "permission_only": 0, "failed": 0}
    assert last["promoted"] is True and store.resolve_alias("KB_HR") == "KB_HR_V1"
    store.close()


def _wait(client: Any, job: str, until: Any, seconds: float = 240) -> dict[str, Any]:
    deadline = time.monotonic() + seconds
    while not until(body := client.get(f"/admin/jobs/{job}").get_json()):
        assert time.monotonic() < deadline, body
        time.sleep(0.05)
    return body


def test_a_sync_started_from_the_console_can_be_cancelled_and_resumes(tmp_path: Path, embedder: Any,
                                                                      extractive: Any) -> None:
    """Issue 46, point 4 (cancel as for ingest) from the console: the cancel button's route writes the
    marker `rag connector cancel` writes, the job ends `cancelled` after the group in flight, nothing
    is served and the sync state stays; the next sync resumes the candidate. Both are audited."""
    settings, _ = declared_share(tmp_path, notes=60, ingest={"documents_per_transaction": 1})
    store = SqliteVectorStore(tmp_path / "rag.sqlite")
    app = create_app(settings, build_services(settings, store=store, embedder=embedder, primary=extractive))
    client = app.test_client()
    assert client.post("/admin/connectors/hr-share/cancel").status_code == 403  # not the admin
    client.environ_base["HTTP_X_RAG_ADMIN_TOKEN"] = read_token(settings)
    assert client.post("/admin/connectors/nope/cancel").get_json()["error"]["code"] == "connector_not_found"
    job = client.post("/admin/connectors/hr-share/sync").get_json()["job"]
    _wait(client, job, lambda b: b["stage"] in ("fetch", "ingest") or b["state"] not in ("queued", "running"))
    asked = client.post("/admin/connectors/hr-share/cancel")
    assert asked.status_code == 202 and asked.get_json()["knowledge_base"] == "hr", asked.get_json()
    body = _wait(client, job, lambda b: b["state"] not in ("queued", "running"))
    assert body["state"] == "cancelled" and body["message"].startswith("cancelled after "), body
    assert "start it again to resume" in body["message"]
    last = client.get("/admin/connectors").get_json()["connectors"][0]["last"]
    assert last["status"] == "cancelled" and store.resolve_alias("KB_HR") is None  # nothing served
    written = len(store.document_hashes("KB_HR_V1"))
    assert 1 <= written < 62  # the group in flight was written, not the rest
    again = _wait(client, client.post("/admin/connectors/hr-share/sync").get_json()["job"],
                  lambda b: b["state"] not in ("queued", "running"))
    assert again["state"] == "succeeded", again
    last = client.get("/admin/connectors").get_json()["connectors"][0]["last"]
    assert last["counts"]["new"] == 62 and last["version"] == "KB_HR_V1" and store.resolve_alias("KB_HR") == "KB_HR_V1"
    assert again["rates"]["embedded"] <= 62 - written  # resumed: what the cancelled run wrote is not embedded again
    actions = [(e["action"], e["knowledge_base"], e["outcome"]) for e in
               client.get("/admin/audit?limit=50").get_json()["events"]]
    assert ("connector_cancel", "hr", "ok") in actions and ("connector_sync", "hr", "ok") in actions
    assert ("connector_cancel", None, "refused") in actions  # the unknown connector
    store.close()
