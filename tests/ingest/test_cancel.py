"""A clean cancel of a long ingest (Ctrl-C or ``rag ingest cancel``): the group in flight is
written, the candidate stays unfinished and resumes when the same command runs again, the served
alias is untouched, and ``rag ingest`` exits 130 with one line saying so. Real store, real model,
real files, real signals."""

from __future__ import annotations

import json
import os
import signal
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tests.ingest.stored import documents_stored
from backend.cli.ingest_cancel import CancelOnInterrupt
from backend.cli.main import cli
from backend.common.config import load_settings
from backend.common.errors import RagError
from backend.common.progress import ProgressTracker
from backend.ingest.cancel import (
    CANCELLED_EXIT_CODE,
    CancelToken,
    IngestCancelled,
    default_cancel_dir,
    marker_path,
    request_cancel,
)
from backend.ingest.pipeline import IngestPipeline
from backend.providers.sqlite_vs.store import SqliteVectorStore
from tests.conftest import make_settings
from tests.ingest.helpers import write_config, write_corpus, write_manifest


def test_a_marker_cancels_only_runs_of_its_series_started_before_it(tmp_path: Path) -> None:
    folder = tmp_path / "ingest-cancel"
    stale = request_cancel(folder, "KB_A")
    os.utime(stale, (time.time() - 60, time.time() - 60))  # left by a run that ended long ago
    token = CancelToken(folder, since=time.time() - 1)
    assert token.requested("KB_A") is None and stale.exists()
    request_cancel(folder, "KB_B")
    assert token.requested("KB_A") is None  # another series' request
    fresh = request_cancel(folder, "KB_A")
    assert token.requested("KB_A") == "rag ingest cancel (KB_A.cancel)" and not fresh.exists()  # consumed
    assert token.is_set  # and it stays cancelled


def test_cancel_without_a_series_reaches_every_run_and_stays_for_the_others(tmp_path: Path) -> None:
    folder = tmp_path / "ingest-cancel"
    first, second = CancelToken(folder, since=time.time() - 1), CancelToken(folder, since=time.time() - 1)
    path = request_cancel(folder, None)
    assert first.requested("KB_A") and second.requested("KB_B") and path == marker_path(folder, None)
    assert path.exists()


def test_a_series_that_is_no_identifier_is_refused(tmp_path: Path) -> None:
    with pytest.raises(RagError, match="--series"):
        request_cancel(tmp_path, "KB_A; rm -rf /")
    config = write_config(tmp_path, tmp_path)
    result = CliRunner().invoke(cli, ["--config", str(config), "ingest", "cancel", "--series", "KB A"])
    assert result.exit_code != 0 and "--series" in result.stderr


def test_first_ctrl_c_asks_for_a_clean_cancel_and_the_second_stops_at_once() -> None:
    token, said = CancelToken(), []
    before = signal.getsignal(signal.SIGINT)  # default_int_handler; SIG_IGN in a shell's background job
    with CancelOnInterrupt(token, said.append):
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(0.05)
        assert token.requested("KB_A") == "Ctrl-C" and "Ctrl-C again" in said[0]
        with pytest.raises(KeyboardInterrupt):
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(0.05)
    assert signal.getsignal(signal.SIGINT) is before


class CancelAfter(ProgressTracker):
    """A progress that asks for a cancel once ``n`` documents are done (as Ctrl-C would then)."""

    def __init__(self, token: CancelToken, n: int) -> None:
        super().__init__()
        self.token, self.n = token, n

    def documents(self, n: int) -> None:
        super().documents(n)
        if self.snapshot().documents >= self.n:
            self.token.set("test")


def test_cancelled_run_writes_its_group_in_flight_keeps_the_alias_and_resumes(tmp_path: Path, embedder: Any) -> None:
    kb = tmp_path / "kb"
    write_corpus(kb, 12)
    store = SqliteVectorStore(tmp_path / "cancel.sqlite")
    settings = make_settings(tmp_path, ingest={"allowed_roots": [str(kb)], "documents_per_transaction": 2})
    try:
        first = IngestPipeline.from_settings(settings, store, embedder, progress=False).run(
            write_manifest(kb / "first.jsonl", [{"path": f"doc_{i:03d}.txt"} for i in range(3)]))
        store.point_alias("KB_ACTIVE", first.version or "", reason="served")
        manifest = write_manifest(kb / "all.jsonl", [{"dir": "."}])
        token = CancelToken()
        pipeline = IngestPipeline.from_settings(settings, store, embedder, progress=CancelAfter(token, 4),
                                                cancel=token)
        with pytest.raises(IngestCancelled) as cancelled:
            pipeline.run(manifest)
        exc = cancelled.value
        assert (exc.written, exc.total, exc.version) == (3 + 4, 12, "KB_SAMPLE_V2")  # 3 carried + 2 groups of 2
        assert exc.user_message == "cancelled: 7 of 12 documents written; run the same command to resume"
        assert exc.exit_code == CANCELLED_EXIT_CODE and exc.report is not None
        assert exc.report.documents_written == 4 and exc.report.embeddings_computed >= 4
        assert len(store.document_hashes("KB_SAMPLE_V2")) == 7
        assert store.list_aliases() == {"KB_ACTIVE": "KB_SAMPLE_V1"}
        resumed = IngestPipeline.from_settings(settings, store, embedder, progress=False).run(manifest)
        assert resumed.builds[0]["action"] == "resume" and resumed.version == "KB_SAMPLE_V2"
        assert (resumed.skipped_unchanged, resumed.documents_written) == (7, 5)
        assert len(store.document_hashes("KB_SAMPLE_V2")) == 12
        assert store.list_aliases() == {"KB_ACTIVE": "KB_SAMPLE_V1"}
    finally:
        store.close()




def test_rag_ingest_cancel_stops_a_running_ingest_with_exit_130_and_the_same_command_resumes(
        tmp_path: Path, embedder: Any) -> None:
    kb = tmp_path / "kb"
    write_corpus(kb, 16)
    manifest = write_manifest(kb / "manifest.jsonl", [{"dir": "."}])
    # paced (2 embedding calls a second, one document per group) so the cancel lands mid-run
    config = write_config(tmp_path, kb, ingest={"allowed_roots": [str(kb)], "documents_per_transaction": 1},
                          embeddings={"batching": {"batch_size": 8, "rate_limit_per_min": 120}})
    db = load_settings(config, env={}).resolve_path(str(tmp_path / "cli.sqlite"))
    runner = CliRunner()

    def cancel_when_written() -> None:
        deadline = time.monotonic() + 120
        while documents_stored(db, "KB_SAMPLE_V1") < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        request_cancel(default_cancel_dir(load_settings(config, env={})), "KB_SAMPLE")

    canceller = threading.Thread(target=cancel_when_written)
    canceller.start()
    stopped = runner.invoke(cli, ["--config", str(config), "ingest", str(manifest), "--json"])
    canceller.join()
    assert stopped.exit_code == CANCELLED_EXIT_CODE, stopped.output
    written = documents_stored(db, "KB_SAMPLE_V1")
    assert 2 <= written < 16
    assert f"cancelled: {written} of 16 documents written; run the same command to resume" in stopped.stderr
    summary = json.loads(stopped.stdout)
    assert summary["cancelled"] is True and summary["documents_written"] == written
    resumed = runner.invoke(cli, ["--config", str(config), "ingest", str(manifest), "--json"])
    assert resumed.exit_code == 0, resumed.output
    again = json.loads(resumed.stdout)
    assert (again["skipped_unchanged"], again["documents_written"]) == (written, 16 - written)
    assert again["builds"][0]["action"] == "resume"


def test_rag_ingest_cancel_writes_the_marker_beside_the_store(tmp_path: Path) -> None:
    config = write_config(tmp_path, tmp_path)
    result = CliRunner().invoke(cli, ["--config", str(config), "ingest", "cancel", "--series", "kb_sample_v3"])
    assert result.exit_code == 0, result.output
    marker = tmp_path / "ingest-cancel" / "KB_SAMPLE.cancel"  # the series of any of its versions
    assert marker.exists() and "cancel requested for KB_SAMPLE" in result.stdout
    everything = CliRunner().invoke(cli, ["--config", str(config), "ingest", "cancel"])
    assert everything.exit_code == 0 and (tmp_path / "ingest-cancel" / "_all.cancel").exists()


def test_ctrl_c_in_the_terminal_cancels_cleanly_though_the_worker_processes_get_it_too(tmp_path: Path) -> None:
    """SIGINT to the whole process group, as a terminal sends it: the loader and PII worker processes
    ignore it, the run finishes its group in flight and exits 130 with the resume line."""
    import subprocess
    import sys

    from tests.ingest.helpers import REPO

    kb = tmp_path / "kb"
    write_corpus(kb, 16)
    manifest = write_manifest(kb / "manifest.jsonl", [{"dir": "."}])
    config = write_config(tmp_path, kb, ingest={"allowed_roots": [str(kb)], "documents_per_transaction": 1,
                                                "limits": {"worker": True}},
                          sanitize={"enabled": True, "mode": "redact", "worker": True,
                                    "audit_path": str(tmp_path / "pii.jsonl")},
                          embeddings={"batching": {"batch_size": 8, "rate_limit_per_min": 120}})
    db = tmp_path / "cli.sqlite"
    proc = subprocess.Popen([sys.executable, "-m", "backend.cli.main", "--config", str(config), "ingest", str(manifest)],
                            cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True,
                            env={**os.environ, "PYTHONPATH": str(REPO)})
    deadline = time.monotonic() + 120
    while documents_stored(db, "KB_SAMPLE_V1") < 2 and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGINT)
    out, err = proc.communicate(timeout=120)
    written = documents_stored(db, "KB_SAMPLE_V1")
    assert proc.returncode == CANCELLED_EXIT_CODE, err.decode()
    assert f"cancelled: {written} of 16 documents written; run the same command to resume" in err.decode()
    assert "failed" not in out.decode().replace("files failed:         0", "")


def test_a_manifest_named_cancel_is_ingested_as_typed(tmp_path: Path, embedder: Any,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    kb = tmp_path / "kb"
    write_corpus(kb, 2)
    write_manifest(kb / "cancel", [{"dir": "."}])
    config = write_config(tmp_path, kb)
    monkeypatch.chdir(kb)
    result = CliRunner().invoke(cli, ["--config", str(config), "ingest", "cancel", "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["documents_written"] == 2
    assert not (tmp_path / "ingest-cancel").exists()  # no marker: nothing was cancelled
    monkeypatch.chdir(tmp_path)  # no file named cancel here: the subcommand
    assert CliRunner().invoke(cli, ["--config", str(config), "ingest", "cancel"]).exit_code == 0
    assert (tmp_path / "ingest-cancel" / "_all.cancel").exists()
