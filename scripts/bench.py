#!/usr/bin/env python
"""The benchmark script: same as ``rag bench`` (see docs/BENCHMARKS.md)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from backend.cli.main import cli  # noqa: E402

if __name__ == "__main__":
    cli(["bench", *sys.argv[1:]])
