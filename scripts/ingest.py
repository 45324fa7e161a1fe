#!/usr/bin/env python
"""Ingest a JSONL manifest: the same code as ``rag ingest``, for cron jobs and CI.

Usage::

    .venv/bin/python scripts/ingest.py [--config config/rag.yaml] MANIFEST [--profile P]
        [--domain-key K] [--prune] [--strict] [--update-alias] [--json] [--no-progress]

Exit code 0 when every line and file was ingested, 1 when any failed (the good
ones are still ingested), 2 for a configuration error. See
docs/INGESTION_AND_MANIFESTS.md.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def main(argv: list[str]) -> None:
    from backend.cli.main import cli

    group_args: list[str] = []
    if argv[:1] == ["--config"] and len(argv) > 1:
        group_args, argv = argv[:2], argv[2:]
    elif argv[:1] and argv[0].startswith("--config="):
        group_args, argv = argv[:1], argv[1:]
    cli.main(args=[*group_args, "ingest", *argv], prog_name="scripts/ingest.py")


if __name__ == "__main__":
    main(sys.argv[1:])
