"""Issue 32: uploads from the page (backend/api/jobs.py). Real multipart uploads of a DOCX made
with python-docx and a txt into a knowledge base made from a folder; refused files with their
reasons; the job runs to ``succeeded`` in a thread and leaves a candidate version the gate
evaluated while the live version stays what it was; the evaluation endpoint shows per-query
changes. One job per knowledge base at a time; a job whose process ended reads as failed."""

from __future__ import annotations

import io
import json
import subprocess
import threading
import time
from pathlib import Path
from typing import Any, Iterator

import pytest
from flask import Flask
from flask.testing import FlaskClient

from backend.api import jobs
from backend.api.app import create_app
from backend.runtime import build_services
from backend.common.config import Settings
from tests.conftest import make_settings
from tests.ingest.kb_files import write_docx, write_kb_folder
from tests.conftest import kb_runtime

LIMIT = 100_000
CHANGED_TXT = """Greenhouse watering rota

The tomato greenhouse is now watered by the horticulture team every Monday, Wednesday and Saturday evening.
Rainwater from the cistern is used first; mains water only when the cistern level drops below 25 percent.
"""
CANTEEN = ["Canteen menu rotation", "The staff canteen serves a vegetarian lentil curry every Thursday.",
           "Dessert on Fridays is a rhubarb crumble made by the pastry chef, Tomasz Wilk."]


@pytest.fixture(scope="module")
def kb_settings(tmp_path_factory: pytest.TempPathFactory, embedder: Any) -> Iterator[tuple[Settings, Any]]:
    """Knowledge base ``garden`` made from a folder and served (V1), with a small upload limit."""
    from backend.ingest.knowledge_bases import ingest_into_candidate, register
    from backend.providers.sqlite_vs.store import SqliteVectorStore

    tmp = tmp_path_factory.mktemp("uploads")
    folder = write_kb_folder(tmp / "garden-docs", extras=False)
    settings = make_settings(tmp, knowledge_bases={"max_upload_bytes": LIMIT, "max_files_per_upload": 6},
                             server={"rate_limit": {"enabled": False}})
    register(settings, "garden", title="Garden", source_dir=folder)
    settings = make_settings(tmp, knowledge_bases={"max_upload_bytes": LIMIT, "max_files_per_upload": 6},
                             server={"rate_limit": {"enabled": False}})
    store = SqliteVectorStore(settings.resolve_path(settings.store.sqlite.path))
    first = ingest_into_candidate(kb_runtime(settings, store, embedder), "garden", folder, principal="test",
                                  promote=True)
    assert first.promoted, first.evaluation
    yield settings, store
    store.close()


@pytest.fixture(scope="module")
def app(kb_settings: tuple[Settings, Any], embedder: Any, extractive: Any) -> Flask:
    settings, store = kb_settings
    return create_app(settings, build_services(settings, store=store, embedder=embedder, primary=extractive))


@pytest.fixture(scope="module")
def client(app: Flask, kb_settings: tuple[Settings, Any]) -> FlaskClient:
    """The local admin as a script is: the admin token in its header (issue 49 H2)."""
    from backend.api.admin_session import read_token

    client = app.test_client()
    client.environ_base["HTTP_X_RAG_ADMIN_TOKEN"] = read_token(kb_settings[0])
    return client


def _docx_bytes(tmp: Path, lines: list[str]) -> bytes:
    return write_docx(tmp / "made.docx", lines).read_bytes()


def _wait(client: FlaskClient, job: str, timeout_s: float = 240.0) -> dict[str, Any]:
    deadline = time.monotonic() + timeout_s
    seen: list[str] = []
    while time.monotonic() < deadline:
        body = client.get(f"/admin/jobs/{job}").get_json()
        seen.append(body["stage"])
        if body["state"] in ("succeeded", "failed"):
            body["stages_seen"] = seen
            return body
        time.sleep(0.2)
    raise AssertionError(f"job {job} did not end in {timeout_s} s; stages {seen}")


@pytest.mark.parametrize(("name", "reason"), [
    ("notes.txt", None), ("Annual Leave 2026.docx", None),
    ("", "no file name"), ("a/b.txt", "path separator"), ("..\\b.txt", "path separator"),
    (".env.txt", "dotfiles"), ("~$draft.docx", "temporary"), ("x" * 197 + ".txt", "at most 200"),
    ("bad\x00name.txt", "control characters"), (" padded.txt", "plain name"),
])
def test_file_names(name: str, reason: str | None) -> None:
    problem = jobs.name_problem(name)
    assert (problem is None) if reason is None else (reason in (problem or "")), problem


def test_file_problems_name_size_and_type() -> None:
    suffixes = (".docx", ".txt")
    assert jobs.file_problem("a.txt", 10, suffixes, 100) is None
    assert "unsupported type .exe" in (jobs.file_problem("a.exe", 10, suffixes, 100) or "")
    assert "max_upload_bytes (100 bytes)" in (jobs.file_problem("a.txt", 101, suffixes, 100) or "")
    assert jobs.file_problem("a.txt", 100, suffixes, 100) is None  # the limit itself is allowed
    assert "empty" in (jobs.file_problem("a.txt", 0, suffixes, 100) or "")


def test_upload_makes_a_candidate_and_serves_nothing_new(client: FlaskClient, kb_settings: tuple[Settings, Any],
                                                         tmp_path: Path) -> None:
    settings, store = kb_settings
    live_before = store.resolve_alias("KB_GARDEN")
    files = [
        (io.BytesIO(CHANGED_TXT.encode()), "greenhouse.txt"),  # replaces the folder's greenhouse.txt (same doc_id)
        (io.BytesIO(_docx_bytes(tmp_path, CANTEEN)), "canteen-menu.docx"),
        (io.BytesIO(b"MZ\x90\x00"), "setup.exe"),
        (io.BytesIO(b"secret"), ".env.txt"),
        (io.BytesIO(b""), "empty.txt"),
        (io.BytesIO(b"x" * (LIMIT + 1)), "huge.txt"),
    ]
    resp = client.post("/admin/knowledge-bases/garden/uploads", data={"files": files},
                       content_type="multipart/form-data")
    assert resp.status_code == 202, resp.get_json()
    body = resp.get_json()
    assert body["accepted"] == ["greenhouse.txt", "canteen-menu.docx"]
    reasons = {r["file"]: r["reason"] for r in body["refused"]}
    assert set(reasons) == {"setup.exe", ".env.txt", "empty.txt", "huge.txt"}
    assert "unsupported type .exe" in reasons["setup.exe"] and "max_upload_bytes" in reasons["huge.txt"]

    job = _wait(client, body["job"])
    assert job["state"] == "succeeded", job
    assert (job["kind"], job["key"], job["principal"]) == ("upload", "garden", "local")
    assert "ingest" in job["stages_seen"] or job["stage"] == "done"
    # the ingest stage's rates and ETA (issue 33): both uploaded documents written
    rates = job["rates"]
    assert (rates["total"], rates["documents"], rates["eta_s"]) == (2, 2, 0.0) and rates["documents_per_s"] > 0
    result = job["result"]
    candidate = result["version"]
    assert candidate == "KB_GARDEN_V2" and result["promoted"] is False
    assert store.resolve_alias("KB_GARDEN") == live_before == "KB_GARDEN_V1"  # nothing served before a promote
    assert result["evaluation"]["gates"] and result["golden"]["generated"] is True
    uploads = settings.resolve_path(settings.knowledge_bases.dir) / "garden" / "uploads"
    assert sorted(p.name for p in uploads.iterdir()) == ["canteen-menu.docx", "greenhouse.txt"]

    versions = client.get("/admin/knowledge-bases/garden/versions").get_json()
    roles = {v["name"]: v["role"] for v in versions["versions"]}
    assert roles["KB_GARDEN_V2"] == "candidate" and roles["KB_GARDEN_V1"] == "live"
    hashes = store.document_hashes("KB_GARDEN_V2")
    assert "canteen-menu.docx" in hashes and hashes["greenhouse.txt"] != store.document_hashes(
        "KB_GARDEN_V1")["greenhouse.txt"]

    evaluation = client.get(f"/admin/knowledge-bases/garden/versions/{candidate}/evaluation").get_json()
    assert evaluation["version"] == candidate and evaluation["baseline_version"] == "KB_GARDEN_V1"
    assert evaluation["queries"] and {q["change"] for q in evaluation["queries"]} <= {"win", "loss", "same", "new"}
    assert all(q["live"] is not None for q in evaluation["queries"])  # the same golden set ran on both
    summary = evaluation["summary"]
    assert summary["wins"] + summary["losses"] + summary["same"] == len(evaluation["queries"])

    # evaluate again as a job: same figures, nothing rotated
    again = client.post(f"/admin/knowledge-bases/garden/versions/{candidate}/evaluate")
    assert again.status_code == 202
    done = _wait(client, again.get_json()["job"])
    assert done["state"] == "succeeded" and done["kind"] == "evaluate", done
    assert store.resolve_alias("KB_GARDEN") == "KB_GARDEN_V1"


def test_refused_uploads(client: FlaskClient) -> None:
    url = "/admin/knowledge-bases/garden/uploads"
    nothing = client.post(url, data={"files": [(io.BytesIO(b"x"), "a.exe")]}, content_type="multipart/form-data")
    assert nothing.status_code == 400
    assert nothing.get_json()["error"]["details"]["refused"] == [
        {"file": "a.exe", "reason": nothing.get_json()["error"]["details"]["refused"][0]["reason"]}]
    too_big = client.post(url, data={"files": [(io.BytesIO(b"y" * (LIMIT + 5)), "big.txt")]},
                          content_type="multipart/form-data")
    assert too_big.status_code == 413
    many = client.post(url, data={"files": [(io.BytesIO(b"z"), f"f{i}.txt") for i in range(7)]},
                       content_type="multipart/form-data")
    assert many.status_code == 400 and "max_files_per_upload" in many.get_json()["error"]["message"]
    assert client.post(url, json={"files": []}).status_code == 400
    assert client.post(url, data={}, content_type="multipart/form-data").status_code == 400
    # a knowledge base defined in the configuration takes no uploads (its folder is not the runtime's)
    config_kb = client.post("/admin/knowledge-bases/handbook/uploads",
                            data={"files": [(io.BytesIO(b"hello"), "a.txt")]}, content_type="multipart/form-data")
    assert config_kb.status_code == 400 and config_kb.get_json()["error"]["code"] == "upload_not_supported"
    assert client.get(f"/admin/jobs/{'0' * 32}").status_code == 404
    golden = client.get("/admin/knowledge-bases/garden/golden").get_json()
    assert golden["generated"] is True and "rag kb set-golden garden FILE" in golden["how_to_replace"]
    assert client.get("/admin/jobs/not-a-job").status_code == 404


def test_one_job_per_knowledge_base(kb_settings: tuple[Settings, Any]) -> None:
    settings, _ = kb_settings
    release = threading.Event()
    first = jobs.start_job(settings, "evaluate", "lockcheck", "t", lambda progress: {"waited": release.wait(30)})
    try:
        with pytest.raises(jobs.JobRunning) as err:
            jobs.start_job(settings, "upload", "lockcheck", "t", lambda progress: {})
        assert err.value.http_status == 409 and first in err.value.user_message
        other = jobs.start_job(settings, "upload", "another-kb", "t", lambda progress: {"ok": True})
        assert other != first
    finally:
        release.set()
    deadline = time.monotonic() + 10
    while jobs.read_job(jobs.jobs_dir(settings), first)["state"] != "succeeded":
        assert time.monotonic() < deadline
        time.sleep(0.05)
    assert jobs.read_job(jobs.jobs_dir(settings), first)["result"] == {"waited": True}


def test_a_job_whose_process_ended_reads_as_failed(kb_settings: tuple[Settings, Any]) -> None:
    settings, _ = kb_settings
    gone = subprocess.Popen(["true"])
    gone.wait()
    folder = jobs.jobs_dir(settings)
    job = json.loads(json.dumps({"id": "f" * 32, "kind": "upload", "key": "stale", "state": "running",
                                 "stage": "ingest", "done": 1, "total": 3, "message": "", "result": None,
                                 "created_at": "t", "updated_at": "t", "principal": None, "pid": gone.pid,
                                 "host": __import__("socket").gethostname()}))
    jobs.write_job(folder, job)
    assert jobs.read_job(folder, "f" * 32)["state"] == "failed"
    assert jobs.active_job(folder, "stale") is None  # a new job of that knowledge base may start


def test_an_upload_whose_every_file_fails_makes_no_candidate(client: FlaskClient, kb_settings: tuple[Settings, Any]
                                                            ) -> None:
    """Issue 49 M3: a corrupt DOCX and PDF pass the upload's checks but fail to load: the job
    fails naming both, no candidate version is left (it used to be "ready and passes every
    gate"); one good file beside a bad one makes a candidate and lists the bad one as refused.
    Issue 49 (also): a file that failed is not kept in ``uploads/``."""
    settings, store = kb_settings
    versions_before = {v.name for v in store.list_versions()}
    live = store.resolve_alias("KB_GARDEN")
    bad = [(io.BytesIO(b"PK\x03\x04 this is not a zip archive at all"), "broken.docx"),
           (io.BytesIO(b"%PDF-1.4\n garbage without objects or xref"), "broken.pdf")]
    resp = client.post("/admin/knowledge-bases/garden/uploads", data={"files": bad}, content_type="multipart/form-data")
    assert resp.status_code == 202 and resp.get_json()["accepted"] == ["broken.docx", "broken.pdf"]
    job = _wait(client, resp.get_json()["job"])
    assert job["state"] == "failed" and job["result"] is None, job
    assert job["message"].startswith("no file could be read, so no candidate version was made: broken.docx: ")
    assert "broken.pdf: " in job["message"] and "passes every gate" not in job["message"]
    assert {v.name for v in store.list_versions()} == versions_before and store.resolve_alias("KB_GARDEN") == live
    uploads = settings.resolve_path(settings.knowledge_bases.dir) / "garden" / "uploads"
    assert not (uploads / "broken.docx").exists() and not (uploads / "broken.pdf").exists()  # not kept either

    mixed = [(io.BytesIO(b"The compost bins are turned every second Tuesday by the garden volunteers."),
              "compost.txt"), (io.BytesIO(b"PK\x03\x04 not a zip"), "broken.docx")]
    resp = client.post("/admin/knowledge-bases/garden/uploads", data={"files": mixed},
                       content_type="multipart/form-data")
    job = _wait(client, resp.get_json()["job"])
    assert job["state"] == "succeeded", job
    assert [r["file"] for r in job["result"]["refused"]] == ["broken.docx"]
    assert job["message"].endswith("(1 file could not be read: see the refused list)")
    assert "compost.txt" in store.document_hashes(job["result"]["version"])
    assert (uploads / "compost.txt").is_file() and not (uploads / "broken.docx").exists()
