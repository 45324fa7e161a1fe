"""What a running ingest has committed so far, read from another connection (read-only, never
waiting long on the writer's lock): the tests that kill, cancel or resume an ingest poll it."""

from __future__ import annotations

import sqlite3
from pathlib import Path


def documents_stored(db: Path, version: str) -> int:
    """Distinct documents in ``version``'s table; 0 while the file or the table does not exist yet."""
    try:
        con = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=1)
        try:
            return int(con.execute(f"SELECT COUNT(DISTINCT doc_id) FROM {version}").fetchone()[0])
        finally:
            con.close()
    except sqlite3.Error:
        return 0
