"""``rag connector sync NAME --watch`` (issue 46, change notification): watchdog's real observers
on a real folder, the quiet period, the files that raise no sync, and the command end to end."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from backend.cli.main import cli
from backend.connectors.watch import FolderWatch, raises_sync
from backend.providers.sqlite_vs.store import SqliteVectorStore
from tests.connectors.scenario import CANTEEN, LEAVE


@pytest.mark.parametrize(("name", "raises"), [
    ("leave.md", True), ("sub/dir/price list.pdf", True), (".rag-readers.yaml", True), (".ragignore", True),
    (".leave.md.swp", False), ("leave.md~", False), ("~$report.docx", False), (".git/index", False),
    ("drafts/.hidden/x.md", False), ("notes.tmp", False),
])
def test_which_events_raise_a_sync(tmp_path: Path, name: str, raises: bool) -> None:
    assert raises_sync(tmp_path, str(tmp_path / name)) is raises
    assert raises_sync(tmp_path, str(tmp_path.parent / "elsewhere.md")) is False


@pytest.mark.parametrize("polling", [False, True])
def test_a_change_is_seen_once_the_folder_is_quiet(tmp_path: Path, polling: bool) -> None:
    (tmp_path / "leave.md").write_text(LEAVE, encoding="utf-8")
    with FolderWatch(tmp_path, quiet_s=0.3, polling=polling) as folder:
        assert folder.wait_for_change(timeout=1.5) is False  # nothing changed
        (tmp_path / ".leave.md.swp").write_text("x", encoding="utf-8")
        assert folder.wait_for_change(timeout=2.5) is False  # an editor's swap file raises nothing
        started = time.monotonic()
        (tmp_path / "canteen.md").write_text(CANTEEN, encoding="utf-8")
        assert folder.wait_for_change(timeout=10) is True
        assert time.monotonic() - started >= 0.3
        assert folder.wait_for_change(timeout=1.5) is False  # the change was consumed
        stop = threading.Event()
        stop.set()
        (tmp_path / "leave.md").unlink()
        assert folder.wait_for_change(stop=stop) is False


def run(*args: str) -> Any:
    return CliRunner().invoke(cli, list(args))


def test_watch_syncs_at_start_and_after_a_change(env: Path, hr_share: Path) -> None:
    src = hr_share

    def edit_after_the_first_sync() -> None:
        deadline = time.monotonic() + 240
        while time.monotonic() < deadline:
            if (env / "rag.sqlite").exists():
                store = SqliteVectorStore(env / "rag.sqlite")
                try:
                    if store.sync_runs("hr-share"):
                        break
                finally:
                    store.close()
            time.sleep(0.2)
        (src / "canteen.md").write_text(CANTEEN, encoding="utf-8")

    writer = threading.Thread(target=edit_after_the_first_sync)
    writer.start()
    result = run("connector", "sync", "hr-share", "--watch", "--quiet", "0.5", "--times", "2", "--json")
    writer.join()
    assert result.exit_code == 0, result.output
    reports = [json.loads(chunk) for chunk in result.stdout.replace("}\n{", "}\n\x00{").split("\x00")]
    assert [r["status"] for r in reports] == ["ok", "ok"]
    assert reports[0]["counts"]["new"] == 1 and reports[1]["counts"]["new"] == 1
    assert reports[1]["version"] == "KB_HR_V2" == reports[1]["served_version"]


def test_watch_refuses_what_it_cannot_follow(env: Path) -> None:
    (env / "connectors.yaml").write_text("connectors:\n  site:\n    kind: web\n    knowledge_base: site\n"
                                         "    options: {start_url: 'http://127.0.0.1:9/'}\n")
    web = run("connector", "sync", "site", "--watch")
    assert web.exit_code == 2 and "is a web connector: --watch follows a folder's changes; use --every" in web.stderr
    both = run("connector", "sync", "site", "--watch", "--every", "15m")
    assert both.exit_code == 2 and "--watch and --every: choose one" in both.stderr
