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
