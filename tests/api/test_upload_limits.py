"""Issue 49 L1, L2, L3: upload names that fit a file system, a full disk answered with 507 and
no partial file, and upload bodies that are never held in memory nor read while the knowledge
base's job slot is taken. Real parts: a knowledge base registered from a real folder, the real
SQLite store and model, multipart bodies through the Flask test client, and a real small file
system (tmpfs) that fills up."""

from __future__ import annotations

import io
import re
import subprocess
import time
import tracemalloc
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

import pytest
from flask import Flask
from werkzeug.datastructures import FileStorage, MultiDict
from werkzeug.test import encode_multipart

from backend.api import jobs
from backend.api.admin_session import TOKEN_HEADER, read_token
from backend.api.app import create_app
from backend.runtime import build_services
from backend.common.config import Settings
from backend.common.errors import StoreUnavailable
from backend.core.services.series_lock import this_process
from backend.providers.sqlite_vs.series_lock import FileSeriesLocks
from tests.conftest import make_settings
from tests.ingest.kb_files import write_kb_folder

URL = "/admin/knowledge-bases/garden/uploads"
MB = 1_000_000


@contextmanager
def small_disk(path: Path, kib: int) -> Iterator[Path]:
    """A real file system of ``kib`` KiB (tmpfs) at ``path``: a disk that fills for real. It
    needs ``mount`` (root); without it the test is skipped and says why."""
    path.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={kib}k", "tmpfs", str(path)],
                          capture_output=True, text=True)
    if done.returncode != 0:
        pytest.skip(f"a small file system needs `mount -t tmpfs` (root): {done.stderr.strip()}")
    try:
        yield path
    finally:
        subprocess.run(["umount", "-l", str(path)], check=False)


def garden(tmp: Path, embedder: Any, extractive: Any, **overrides: Any) -> tuple[Settings, Flask, dict[str, str]]:
    """Knowledge base ``garden`` registered from a folder (not ingested: no job gets that far here)."""
    from backend.ingest.knowledge_bases import register
    from backend.providers.sqlite_vs.store import SqliteVectorStore

    base = {"knowledge_bases": {"max_upload_bytes": 5 * MB, "max_files_per_upload": 4},
            "server": {"rate_limit": {"enabled": False}}, "ingest": {"concurrent_runs": "refuse"}}
    from backend.common.config import _deep_merge

    register(make_settings(tmp, **_deep_merge(base, overrides)), "garden", title="Garden",
             source_dir=write_kb_folder(tmp / "garden-docs", extras=False))
    settings = make_settings(tmp, **_deep_merge(base, overrides))
    store = SqliteVectorStore(settings.resolve_path(settings.store.sqlite.path))
    app = create_app(settings, build_services(settings, store=store, embedder=embedder, primary=extractive))
    return settings, app, {TOKEN_HEADER: read_token(settings)}


def multipart(*files: tuple[str, bytes]) -> tuple[str, bytes]:
    """A multipart body with ``files`` in the field ``files``, as a browser sends it."""
    return encode_multipart(MultiDict([("files", FileStorage(io.BytesIO(data), filename=name)) for name, data in files]))


def uploads(settings: Settings) -> Path:
    return settings.resolve_path(settings.knowledge_bases.dir) / "garden" / "uploads"


def wait_ended(app: Flask, headers: dict[str, str], job: str) -> dict[str, Any]:
    client = app.test_client()
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        body = client.get(f"/admin/jobs/{job}", headers=headers).get_json()
        if body["state"] in ("succeeded", "failed"):
            return body  # type: ignore[no-any-return]
        time.sleep(0.1)
    raise AssertionError(f"job {job} did not end")


def test_names_over_the_file_system_limit_are_refused_not_500(tmp_path: Path, embedder: Any, extractive: Any) -> None:
    """Issue 49 L1: 150 characters of 'é' is 300 UTF-8 bytes, over the 255 a name may have: it
    answered 500; the saved temporary name stays within 200 bytes. A long /assets path is 404."""
    assert jobs.MAX_NAME_BYTES == 179  # 200 bytes with ".<name>.<8 hex>.upload.tmp"
    assert jobs.name_problem("é" * 87 + ".txt") is None  # 178 bytes
    assert jobs.name_problem("é" * 88 + ".txt") == "file name is 180 bytes in UTF-8; at most 179"
    settings, app, admin = garden(tmp_path, embedder, extractive)
    client = app.test_client()
    long_name = "é" * 150 + ".txt"
    resp = client.post(URL, data={"files": [(io.BytesIO(b"Compost is turned weekly."), long_name)]},
                       content_type="multipart/form-data", headers=admin)
    assert resp.status_code == 400, resp.get_json()
    assert resp.get_json()["error"]["details"]["refused"] == [
        {"file": long_name, "reason": "file name is 304 bytes in UTF-8; at most 179"}]
    assert not uploads(settings).exists() or list(uploads(settings).iterdir()) == []
    asset = client.get("/assets/" + "a" * 300 + ".png")
    assert (asset.status_code, asset.get_json()["error"]["code"]) == (404, "asset_not_found")
    deep = client.get("/assets/" + "/".join(["b" * 250] * 20) + ".png")
    assert deep.status_code == 404


def test_a_full_disk_answers_507_and_leaves_no_partial_file(tmp_path: Path, embedder: Any, extractive: Any) -> None:
    """Issue 49 L2: the knowledge bases' folder on a 256 KiB file system; a 600 KB file fills it:
    507 with a message (no path), no temporary file, no job; the series lock's full disk is a
    clear StoreUnavailable, not a traceback."""
    with small_disk(tmp_path / "disk", 256) as disk:
        settings, app, admin = garden(tmp_path, embedder, extractive,
                                      knowledge_bases={"dir": str(disk / "kb")})
        client = app.test_client()
        big = b"The greenhouse is watered at dawn.\n" * 17_000  # 595 KB
        resp = client.post(URL, data={"files": [(io.BytesIO(big), "watering.txt")]},
                           content_type="multipart/form-data", headers=admin)
        assert resp.status_code == 507, resp.get_data(as_text=True)
        error = resp.get_json()["error"]
        assert error["code"] == "insufficient_storage"
        assert error["message"].startswith("the server's disk is full, so nothing was saved; free space on the "
                                           "server and try again; the details are in the server log under request id ")
        assert str(disk) not in error["message"]
        assert list(uploads(settings).iterdir()) == []  # the partial temporary file is gone
        assert not list((disk / "kb" / "jobs").glob("*.json")) if (disk / "kb" / "jobs").exists() else True
        small = client.post(URL, data={"files": [(io.BytesIO(b"Compost is turned weekly."), "compost.txt")]},
                            content_type="multipart/form-data", headers=admin)
        assert small.status_code == 202  # the disk has room again for a small file
        wait_ended(app, admin, small.get_json()["job"])

        with pytest.raises(OSError, match="No space left on device"):  # fill what is left
            with open(disk / "filler", "ab", buffering=0) as filler:
                while True:
                    filler.write(b"\0" * 4096)
        locks = FileSeriesLocks(str(disk / "rag.sqlite"))
        with pytest.raises(StoreUnavailable, match=r"the disk is full \(cannot write the lock file .*KB_X\.lock of "
                                                   r"series KB_X: No space left on device\); nothing was written, the "
                                                   r"served version is unchanged; free space and run again"):
            locks.lock_series("KB_X", this_process("rag ingest"))
        (disk / "filler").unlink()
        locks.lock_series("KB_X", this_process("rag ingest")).release()  # released, and free again


def test_a_taken_job_slot_is_answered_before_the_body_is_read(tmp_path: Path, embedder: Any, extractive: Any) -> None:
    """Issue 49 L3: the slot used to be checked after every part was read into memory."""
    import threading

    settings, app, admin = garden(tmp_path, embedder, extractive)
    release = threading.Event()
    running = jobs.start_job(settings, "evaluate", "garden", "test", lambda progress: {"waited": release.wait(30)})
    boundary, body = multipart(("a.txt", b"x" * (4 * MB)))

    class Counting(io.BytesIO):
        read_bytes = 0

        def read(self, size: int | None = -1) -> bytes:
            chunk = super().read(size)
            Counting.read_bytes += len(chunk)
            return chunk

        def readline(self, size: int | None = -1) -> bytes:
            line = super().readline(size)
            Counting.read_bytes += len(line)
            return line

        def readinto(self, buffer: Any) -> int:
            count = super().readinto(buffer)
            Counting.read_bytes += count
            return count

    try:
        resp = app.test_client().post(URL, input_stream=Counting(body), content_length=len(body),
                                      content_type=f"multipart/form-data; boundary={boundary}", headers=admin)
        assert resp.status_code == 409 and resp.get_json()["error"]["details"]["job"] == running
        assert Counting.read_bytes == 0
    finally:
        release.set()
    assert wait_ended(app, admin, running)["state"] == "succeeded"


def test_upload_bodies_are_copied_to_disk_in_chunks(tmp_path: Path, embedder: Any, extractive: Any) -> None:
    """Issue 49 L3: two 4 MB files used to be held whole in memory (8 MB and more per upload);
    the request now allocates a small fraction of that (its job is kept from starting by the
    series lock another run holds, so only the request is measured)."""
    settings, app, admin = garden(tmp_path, embedder, extractive)
    text = b"Rainwater from the cistern waters the tomatoes first.\n" * 80_000  # 4.3 MB
    boundary, body = multipart(("cistern.txt", text), ("cistern-upper.txt", text.upper()))
    assert len(body) > 8 * MB
    stream = io.BytesIO(body)
    locks = FileSeriesLocks(str(settings.resolve_path(settings.store.sqlite.path)))
    lease = locks.lock_series("KB_GARDEN", this_process("another run"))
    try:
        tracemalloc.start()
        resp = app.test_client().post(URL, input_stream=stream, content_length=len(body),
                                      content_type=f"multipart/form-data; boundary={boundary}", headers=admin)
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        assert resp.status_code == 202, resp.get_json()
        job = wait_ended(app, admin, resp.get_json()["job"])
    finally:
        lease.release()
    assert peak < 3 * MB, f"the upload request allocated {peak / MB:.1f} MB at its peak"
    assert job["state"] == "failed" and "locked" in job["message"]
    saved = uploads(settings)
    assert sorted(p.name for p in saved.iterdir()) == ["cistern-upper.txt", "cistern.txt"]
    assert (saved / "cistern.txt").read_bytes() == text


@pytest.mark.parametrize(("text", "shown"), [
    ("/srv/rag/data/kb/garden/manifests/20261128.jsonl", "20261128.jsonl"),
    ("cannot read /srv/rag/data/kb/garden/uploads/a.docx: corrupt", "cannot read a.docx: corrupt"),
    ("SQLite store /var/lib/rag/rag.sqlite: it is read-only", "SQLite store rag.sqlite: it is read-only"),
    ("open http://127.0.0.1:8080/admin/login", "open http://127.0.0.1:8080/admin/login"),
    ("120/minute per key; KB_GARDEN_V2 and docs/x.md", "120/minute per key; KB_GARDEN_V2 and docs/x.md"),
])
def test_server_paths_are_cut_to_their_name(text: str, shown: str) -> None:
    """Issue 49 L6: the pure rule, one row per boundary (URLs, rates and relative paths stay)."""
    assert jobs.without_server_paths({"m": [text]}) == {"m": [shown]}


def test_job_results_and_messages_name_no_server_path(tmp_path: Path, embedder: Any, extractive: Any) -> None:
    """Issue 49 L6: an upload job's result (manifest, report paths, refused files) and a failed
    job's message used to show where the server keeps its files."""
    import json

    settings, app, admin = garden(tmp_path, embedder, extractive)
    client = app.test_client()
    good = client.post(URL, data={"files": [(io.BytesIO(b"The compost bins are turned every Tuesday."), "compost.txt"),
                                            (io.BytesIO(b"PK\x03\x04 not a zip"), "broken.docx")]},
                       content_type="multipart/form-data", headers=admin)
    job = wait_ended(app, admin, good.get_json()["job"])
    assert job["state"] == "succeeded", job
    shown = json.dumps(job)
    assert str(tmp_path) not in shown and '"/' not in shown and " /" not in shown
    assert job["result"]["manifest"].endswith(".jsonl") and "/" not in job["result"]["manifest"]
    assert [r["file"] for r in job["result"]["refused"]] == ["broken.docx"]
    stored = json.loads((jobs.jobs_dir(settings) / f"{job['id']}.json").read_text())
    assert stored["result"]["manifest"].startswith(str(tmp_path))  # the server's own record keeps it


@pytest.mark.parametrize(("name", "code"), [
    ("invoice\u202efdp.exe.txt", "U+202E"), ("report\u2215secret.txt", "U+2215"), ("a\uff0fb.txt", "U+FF0F"),
    ("zero\u200bwidth.txt", "U+200B"), ("isolate\u2067x.txt", "U+2067"),
])
def test_names_that_display_as_another_name_are_refused(tmp_path: Path, embedder: Any, extractive: Any, name: str,
                                                        code: str) -> None:
    """Issue 49 (also): bidi overrides, invisible characters and look-alike separators were kept
    literally; the refusal echoes the name with the character written as its code point."""
    from backend.common.errors import ConfigError
    from backend.ingest.knowledge_bases import register

    assert code in (jobs.name_problem(name) or "")
    settings, app, admin = garden(tmp_path, embedder, extractive)
    resp = app.test_client().post(URL, data={"files": [(io.BytesIO(b"Compost weekly."), name)]},
                                  content_type="multipart/form-data", headers=admin)
    [refused] = resp.get_json()["error"]["details"]["refused"]
    assert resp.status_code == 400 and f"<{code}>" in refused["file"] and code in refused["reason"]
    assert "which makes it display as another name" in refused["reason"]
    with pytest.raises(ConfigError, match=rf"--title has .*\({re.escape(code)}\), which makes it display as another"):
        register(settings, "spoofed", title=f"Policies {name}")
