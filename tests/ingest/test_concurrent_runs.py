"""Two runs of one series at once (issue 34, point 2): one writer per series, nothing lost.

Real ``rag ingest`` processes on one SQLite store and one folder of sources: two editors
each change their own document and the same shared one, each starts an ingest with
``--update-alias``; the second waits for the first (or is refused), and at the end the
served version holds exactly what is on disk, with each run's closing line telling the
truth about what is served. A holder killed with SIGKILL does not keep the series.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from backend.cli.main import cli
from backend.core.types import LockHolder
from backend.providers.sqlite_vs.store import SqliteVectorStore
from tests.ingest.helpers import REPO, write_config, write_corpus, write_manifest

SERIES = "KB_SAMPLE"
NO_GATES = {"min_recall_at_k": None, "min_ndcg_at_10": None, "min_mode_accuracy": None,
            "max_unanswerable_as_rag": None, "max_regression": None}
OTHER = LockHolder("rag ingest", 999_999, "host-b", "2025-06-01T10:00:00+00:00")


def _config(tmp_path: Path, kb: Path, name: str = "rag.yaml", rate_limit: int = 0, **ingest: Any) -> Path:
    golden = write_manifest(tmp_path / "golden.jsonl", [
        {"id": "g1", "query": "What does the vacation policy say?", "expected_sources": ["doc_000.txt"],
         "expected_mode": "rag"}])
    return write_config(
        tmp_path, kb, name=name, ingest={"documents_per_transaction": 1, **ingest},
        evaluation={"golden_set": str(golden), "k": 3, "reports_dir": str(tmp_path / "reports"), "gates": NO_GATES},
        embeddings={"batching": {"batch_size": 1, "rate_limit_per_min": rate_limit}})


@pytest.fixture
def kb(tmp_path: Path) -> Path:
    root = tmp_path / "kb"
    write_corpus(root, 4)
    write_manifest(root / "manifest.jsonl", [{"dir": "."}])
    return root


def _invoke(config: Path, *args: str) -> Any:
    return CliRunner().invoke(cli, ["--config", str(config), *args])


def _served_text(db: Path, doc_id: str) -> str:
    """The text users get for ``doc_id``: through the alias, as a reader would."""
    store = SqliteVectorStore(db)
    try:
        version = store.resolve_alias("KB_ACTIVE")
        con = sqlite3.connect(db)
        try:
            rows = con.execute(f"SELECT text FROM {version} WHERE doc_id = ? ORDER BY chunk_index", (doc_id,)).fetchall()
        finally:
            con.close()
    finally:
        store.close()
    return " ".join(r[0] for r in rows)


def _edit(kb: Path, doc: str, text: str) -> None:
    (kb / doc).write_text(f"Edited policy\n\n{text}\n", encoding="utf-8")


def _rag(config: Path, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "backend.cli.main", "--config", str(config), *args], cwd=REPO,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"})


def _lock_file(tmp_path: Path) -> Path:
    return Path(f"{tmp_path / 'cli.sqlite'}.locks") / f"{SERIES}.lock"


def _wait_for_holder(tmp_path: Path, proc: subprocess.Popen[str]) -> LockHolder:
    """Until ``proc`` has written itself into the series' lock file (it holds the lock)."""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None:
        try:
            holder = LockHolder.from_json(_lock_file(tmp_path).read_text(encoding="utf-8"))
        except OSError:
            holder = None
        if holder is not None and holder.pid == proc.pid:
            return holder
        time.sleep(0.02)
    raise AssertionError(f"the run never held the lock (exit {proc.poll()})")


def _wait_for_version(db: Path, name: str, proc: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None:
        con = sqlite3.connect(db, timeout=5)
        try:
            if con.execute("SELECT 1 FROM rag_versions WHERE name = ?", (name,)).fetchone():
                return
        finally:
            con.close()
        time.sleep(0.02)
    raise AssertionError(f"{name} was never created (exit {proc.poll()})")


@pytest.mark.slow
def test_two_ingests_racing_lose_no_edit_and_say_what_is_served(tmp_path: Path, kb: Path, embedder: Any) -> None:
    fast = _config(tmp_path, kb)
    slow = _config(tmp_path, kb, name="slow.yaml", rate_limit=10)  # 6 s between embedding calls: B arrives mid-run
    manifest = str(kb / "manifest.jsonl")
    first = _invoke(fast, "ingest", manifest, "--update-alias")
    assert first.exit_code == 0, first.output
    assert "served: KB_SAMPLE_V1 by KB_ACTIVE (includes this run's 4 changed documents)" in first.stdout

    _edit(kb, "doc_000.txt", "Editor A: vacation requests need two weeks notice.")
    _edit(kb, "doc_003.txt", "Editor A: onboarding takes one week.")
    run_a = _rag(slow, "ingest", manifest, "--update-alias")
    _wait_for_holder(tmp_path, run_a)
    _wait_for_version(tmp_path / "cli.sqlite", "KB_SAMPLE_V2", run_a)  # A has read the sources and planned
    _edit(kb, "doc_001.txt", "Editor B: expenses are reimbursed monthly.")
    _edit(kb, "doc_003.txt", "Editor B: onboarding takes two weeks.")  # the same document, edited again
    run_b = _rag(fast, "ingest", manifest, "--update-alias")
    out_a, err_a = run_a.communicate(timeout=240)
    out_b, err_b = run_b.communicate(timeout=240)

    assert (run_a.returncode, run_b.returncode) == (0, 0), (err_a[-2000:], err_b[-2000:])
    assert f"waiting up to 1800 s for series {SERIES}: locked by rag ingest (pid {run_a.pid} on " in err_b
    db = tmp_path / "cli.sqlite"
    for doc in ("doc_000.txt", "doc_001.txt", "doc_003.txt"):  # served == what is on disk: no edit lost
        assert (kb / doc).read_text(encoding="utf-8").split("\n\n", 1)[1].strip() in _served_text(db, doc), doc
    assert "changed while it was evaluated" not in err_a + err_b
    assert "served: KB_SAMPLE_V2 by KB_ACTIVE (includes this run's 2 changed documents)" in out_a
    assert "served: KB_SAMPLE_V3 by KB_ACTIVE (includes this run's 2 changed documents)" in out_b
    store = SqliteVectorStore(db)
    assert store.resolve_alias("KB_ACTIVE") == "KB_SAMPLE_V3"
    assert [c.reason for c in store.alias_history("KB_ACTIVE")] == ["all gates passed"] * 3
    store.close()


def test_refuse_mode_stops_a_second_run_with_one_line_and_exit_code_4(tmp_path: Path, kb: Path,
                                                                      embedder: Any) -> None:
    config = _config(tmp_path, kb, concurrent_runs="refuse")
    manifest = str(kb / "manifest.jsonl")
    assert _invoke(config, "ingest", manifest, "--update-alias").exit_code == 0
    _edit(kb, "doc_000.txt", "A change nobody may write while the series is locked.")
    store = SqliteVectorStore(tmp_path / "cli.sqlite")
    held = store.lock_series(SERIES, OTHER)
    refused = _invoke(config, "ingest", manifest, "--update-alias")
    assert refused.exit_code == 4, refused.output
    assert refused.stderr.strip().splitlines()[-1] == (
        "error: series KB_SAMPLE is locked by rag ingest (pid 999999 on host-b, since 2025-06-01T10:00:00+00:00); "
        "this run was refused (ingest.concurrent_runs: refuse) and wrote nothing: run again when that run has "
        "ended, or set ingest.concurrent_runs: wait to queue behind it")
    assert [v.name for v in store.list_versions()] == ["KB_SAMPLE_V1"]
    for command in (["index", "promote", "--no-answers"], ["index", "rollback"]):  # a promotion or rollback cannot interleave either
        other = _invoke(config, *command)
        assert other.exit_code == 4, other.output
        assert "series KB_SAMPLE is locked by rag ingest (pid 999999" in other.stderr
    held.release()
    done = _invoke(config, "ingest", manifest, "--update-alias", "--json")
    assert done.exit_code == 0, done.output
    served = json.loads(done.stdout)["served"]
    assert served[0]["message"] == "served: KB_SAMPLE_V2 by KB_ACTIVE (includes this run's 1 changed document)"
    store.close()


def test_wait_mode_queues_behind_the_holder_then_runs(tmp_path: Path, kb: Path, embedder: Any) -> None:
    config = _config(tmp_path, kb, concurrent_runs="wait", lock_wait_s=60)
    store = SqliteVectorStore(tmp_path / "cli.sqlite")
    held = store.lock_series(SERIES, OTHER)
    timer = threading.Timer(0.5, held.release)
    timer.start()
    started = time.monotonic()
    result = _invoke(config, "ingest", str(kb / "manifest.jsonl"))
    timer.join()
    assert result.exit_code == 0, result.output
    assert time.monotonic() - started >= 0.5
    assert ("waiting up to 60 s for series KB_SAMPLE: locked by rag ingest (pid 999999 on host-b, since "
            "2025-06-01T10:00:00+00:00)") in result.stderr
    assert ("not served: no alias serves series KB_SAMPLE; this run built KB_SAMPLE_V1 (4 changed documents), this "
            "run was not asked to promote it (--update-alias): `rag index promote --version KB_SAMPLE_V1` hands it to the "
            "gate") in result.stdout
    store.close()


def test_a_wait_that_runs_out_writes_nothing_and_exits_4(tmp_path: Path, kb: Path, embedder: Any) -> None:
    config = _config(tmp_path, kb, lock_wait_s=0.3)
    store = SqliteVectorStore(tmp_path / "cli.sqlite")
    held = store.lock_series(SERIES, OTHER)
    result = _invoke(config, "ingest", str(kb / "manifest.jsonl"))
    held.release()
    assert result.exit_code == 4, result.output
    assert ("error: series KB_SAMPLE is still locked by rag ingest (pid 999999 on host-b, since "
            "2025-06-01T10:00:00+00:00) after waiting 0.3 s (ingest.lock_wait_s); nothing was written: run again "
            "when that run has ended, or raise ingest.lock_wait_s") in result.stderr
    assert store.list_versions() == []
    store.close()


@pytest.mark.slow
def test_a_holder_killed_with_sigkill_does_not_keep_the_series(tmp_path: Path, kb: Path, embedder: Any) -> None:
    slow = _config(tmp_path, kb, name="slow.yaml", rate_limit=30)
    refuse = _config(tmp_path, kb, concurrent_runs="refuse")
    victim = _rag(slow, "ingest", str(kb / "manifest.jsonl"))
    _wait_for_holder(tmp_path, victim)
    os.kill(victim.pid, signal.SIGKILL)
    victim.communicate(timeout=30)
    assert victim.returncode == -signal.SIGKILL
    result = _invoke(refuse, "ingest", str(kb / "manifest.jsonl"), "--update-alias")  # refused if the lock stayed
    assert result.exit_code == 0, result.output
    assert "served: KB_SAMPLE_V1 by KB_ACTIVE (includes this run's 4 changed documents)" in result.stdout


def test_a_store_folder_where_no_lock_file_can_be_made_says_the_store_is_read_only(tmp_path: Path, kb: Path,
                                                                                   embedder: Any) -> None:
    config = _config(tmp_path, kb)
    Path(f"{tmp_path / 'cli.sqlite'}.locks").write_text("not a folder", encoding="utf-8")
    result = _invoke(config, "ingest", str(kb / "manifest.jsonl"))
    assert result.exit_code == 1, result.output
    line = result.stderr.strip().splitlines()[-1]
    assert line.startswith(f"error: SQLite store {tmp_path / 'cli.sqlite'}: it is read-only (make the file, its folder")
    assert line.endswith("nothing was written, the served version is unchanged and the next run resumes")
