"""The code type-checks and lints clean; run as tests so CI enforces it.

mypy checks all of ``backend`` and ``--strict`` on the layers everything else
depends on (``common``, ``core``); ruff runs the rules in ``pyproject.toml``.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", *args], cwd=REPO, capture_output=True, text=True, timeout=900,
                          check=False)


@pytest.mark.parametrize("args", [("backend",), ("--strict", "backend/common", "backend/core")],
                         ids=["backend", "strict-core"])
def test_mypy_is_clean(args: tuple[str, ...]) -> None:
    proc = _run("mypy", *args)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_ruff_is_clean() -> None:
    proc = _run("ruff", "check", "backend", "tests", "scripts")
    assert proc.returncode == 0, proc.stdout + proc.stderr
