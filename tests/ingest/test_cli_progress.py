"""``rag ingest`` draws its progress bars on a terminal, and nothing of them elsewhere.

Why a real pseudo-terminal: the bars depend on ``isatty()`` and on the terminal's size,
which click's CliRunner cannot fake. ``pty.openpty()`` reports 0 columns and 0 rows, as
some CI runners and ``docker exec -t`` do; plain tqdm drew nothing there.
"""

from __future__ import annotations

import os
import pty
import re
import select
import subprocess
import sys
from pathlib import Path

import pytest

from tests.ingest.helpers import REPO, write_config, write_corpus, write_manifest

BAR = re.compile(r"files:\s+\d+%\|")


def rag(args: list[str], *, tty: bool, cwd: Path) -> tuple[int, str, str]:
    """Run ``rag ARGS`` in a child process with stderr a pseudo-terminal (``tty``) or a pipe."""
    command = [sys.executable, "-m", "backend.cli.main", *args]
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    if not tty:
        proc = subprocess.run(command, capture_output=True, text=True, timeout=300, cwd=cwd, env=env)
        return proc.returncode, proc.stdout, proc.stderr
    master, slave = pty.openpty()
    child = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=slave, cwd=cwd, env=env)
    os.close(slave)
    err = b""
    try:
        while True:
            ready, _, _ = select.select([master], [], [], 0.1)
            if ready:
                try:
                    chunk = os.read(master, 65536)
                except OSError:  # the child closed the terminal
                    break
                if not chunk:
                    break
                err += chunk
            elif child.poll() is not None:
                break
        assert child.stdout is not None
        out = child.stdout.read().decode()
        child.wait(timeout=300)
    finally:
        os.close(master)
    return child.returncode, out, err.decode(errors="replace")


@pytest.fixture
def corpus(tmp_path: Path) -> tuple[Path, Path]:
    kb = tmp_path / "kb"
    write_corpus(kb, 3)
    return kb, write_manifest(kb / "manifest.jsonl", [{"dir": "."}])


def ingest(tmp_path: Path, corpus: tuple[Path, Path], name: str, *flags: str, tty: bool) -> tuple[int, str, str]:
    kb, manifest = corpus  # each run its own store, so each one has documents to write
    config = write_config(tmp_path, kb, name=f"{name}.yaml", db=f"{name}.sqlite", ingest={"progress": True})
    return rag(["--config", str(config), "ingest", str(manifest), *flags], tty=tty, cwd=tmp_path)


def test_bars_are_drawn_on_a_terminal_even_one_reporting_no_size(tmp_path: Path, corpus: tuple[Path, Path]) -> None:
    code, out, err = ingest(tmp_path, corpus, "tty", tty=True)
    assert code == 0, err
    assert BAR.search(err), err
    assert re.search(r"files:\s+\d+%\|.*\d/3 ", err), err  # which frames appear depends on tqdm's mininterval
    assert not BAR.search(out) and "documents written:    3" in out


def test_no_bar_without_a_terminal_or_with_json_unless_forced(tmp_path: Path, corpus: tuple[Path, Path]) -> None:
    code, out, err = ingest(tmp_path, corpus, "pipe", tty=False)
    assert code == 0 and "documents written:    3" in out
    assert not BAR.search(err) and "\r" not in err
    code, out, err = ingest(tmp_path, corpus, "json", "--json", tty=True)
    assert code == 0 and '"documents_written": 3' in out
    assert not BAR.search(err) and "%|" not in err
    code, out, err = ingest(tmp_path, corpus, "forced", "--progress", tty=False)
    assert code == 0 and BAR.search(err), err
