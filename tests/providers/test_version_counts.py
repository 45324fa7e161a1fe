"""``rag index list`` costs one registry read per finished version, not a scan of its rows (review L9).

``finish_load`` counts a version once and records the counts with the generation they describe;
``get_version`` / ``list_versions`` read them while the generation is unchanged and count again only
a version written since. (The Oracle store's side is in ``test_oracle_statement_reuse``.) Fails on
3d43f20, the tree before this change: every listing scanned every version's rows.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import numpy as np

from backend.core.types import Chunk, DocumentWrite, VersionSpec
from backend.providers.sqlite_vs.store import SqliteVectorStore


def _doc(doc_id: str, n: int) -> DocumentWrite:
    chunks = [Chunk(f"{doc_id}#{i}", doc_id, f"text {i} of {doc_id}", "a.txt", i) for i in range(n)]
    return DocumentWrite(doc_id, f"h-{doc_id}", chunks, np.ones((n, 3), dtype=np.float32))


def test_sqlite_listing_reads_the_counts_recorded_at_finish_load_until_a_write(tmp_path: Path) -> None:
    path = tmp_path / "rag.sqlite"
    store = SqliteVectorStore(path)
    for name in ("KB_V1", "KB_V2"):
        store.create_version(VersionSpec(name, "mini-lm", 3, "cosine"))
        store.write_documents(name, [_doc("d1", 2), _doc("d2", 1)])
    scanned = {v.name: (v.chunk_count, v.doc_count, v.size_bytes) for v in store.list_versions()}
    store.finish_load("KB_V1")
    store.finish_load("KB_V2")
    assert {v.name: (v.chunk_count, v.doc_count, v.size_bytes) for v in store.list_versions()} == scanned
    statements: list[str] = []
    con = store._conn()
    con.set_trace_callback(statements.append)
    try:
        listed = {v.name: v.chunk_count for v in store.list_versions()}
        assert store.get_version("KB_V1").doc_count == 2
    finally:
        con.set_trace_callback(None)
    assert listed == {"KB_V1": 3, "KB_V2": 3}
    assert any("FROM rag_versions" in s for s in statements)  # the trace saw the reads
    assert not [s for s in statements if "COUNT(" in s], statements  # no version table was scanned
    store.write_documents("KB_V2", [_doc("d3", 4)])  # the generation moves: KB_V2 is counted again
    assert {v.name: v.chunk_count for v in store.list_versions()} == {"KB_V1": 3, "KB_V2": 7}
    with sqlite3.connect(path) as raw:  # a database from before the column: counted by a scan
        raw.execute("UPDATE rag_versions SET counts = NULL")
    assert {v.name: v.chunk_count for v in SqliteVectorStore(path).list_versions()} == {"KB_V1": 3, "KB_V2": 7}
