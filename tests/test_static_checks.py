"""The code type-checks and lints clean; run as tests so CI enforces it.

mypy checks all of ``backend``, with ``--strict``'s flags on the layers everything
else depends on (``common``, ``core``, see ``pyproject.toml``); ruff runs the
rules in ``pyproject.toml``.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", *args], cwd=REPO, capture_output=True, text=True, timeout=900,
                          check=False)


def test_mypy_is_clean() -> None:
    proc = _run("mypy", "backend")
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_ruff_is_clean() -> None:
    proc = _run("ruff", "check", "backend", "tests", "scripts")
    assert proc.returncode == 0, proc.stdout + proc.stderr
