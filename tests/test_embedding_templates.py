"""Content-type templates and profile prefixes change what is embedded, never what is stored.

Ingestion runs through the real pipeline (``IngestPipeline``) with the real model
into a real SQLite store; the stored vector is read back and compared with the
model's embedding of the exact expected input.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from backend.common.config import ProfileSettings, Settings
from backend.core.embedding_text import document_input, query_input
from backend.ingest.pipeline import IngestPipeline
from backend.providers.sqlite_vs.store import SqliteVectorStore
from tests.conftest import make_settings

TEMPLATE = "Company policy and compliance rules. Obligations, approvals and deadlines."
BODY = "Expense reports must be filed within thirty days of travel, with original receipts attached."


def _settings(tmp_path: Path, **profile: Any) -> Settings:
    return make_settings(tmp_path, embeddings={"profiles": {"sample": profile}})


def _ingest(tmp_path: Path, settings: Settings, store: SqliteVectorStore, embedder: Any, content_type: str) -> None:
    doc = tmp_path / "expenses.txt"
    doc.write_text(BODY + "\n", encoding="utf-8")
    manifest = tmp_path / "manifest.jsonl"
    manifest.write_text(f'{{"path": "expenses.txt", "doc_id": "expenses", "content_type": "{content_type}"}}\n',
                        encoding="utf-8")
    report = IngestPipeline.from_settings(settings, store, embedder, progress=False).run(manifest)
    assert (report.failed, report.documents_written) == (0, 1)


def _stored(store: SqliteVectorStore) -> tuple[str, np.ndarray]:
    """The one chunk's text as kept in the table (read over a connection of its own) and its vector."""
    ids, vectors = store.version_vectors("KB_SAMPLE_V1")
    with sqlite3.connect(store.path) as con:
        rows = con.execute("SELECT chunk_id, text FROM KB_SAMPLE_V1").fetchall()
    assert [r[0] for r in rows] == ids and len(ids) == 1
    return rows[0][1], vectors[0]


def test_stored_text_is_raw_while_the_embedded_text_carries_the_template(tmp_path: Path, embedder: Any) -> None:
    store = SqliteVectorStore(tmp_path / "t.sqlite")
    with_template = _settings(tmp_path, templates={"policy": TEMPLATE})
    _ingest(tmp_path, with_template, store, embedder, "policy")
    text, vector = _stored(store)
    assert text == BODY
    expected = embedder.embed_documents([f"{TEMPLATE}\n{BODY}"])[0]
    np.testing.assert_allclose(vector, expected, atol=1e-5)
    assert float(np.dot(vector, embedder.embed_documents([BODY])[0])) < 0.999

    without_template = _settings(tmp_path, templates={})
    _ingest(tmp_path, without_template, store, embedder, "policy")
    text_after, vector_after = _stored(store)
    assert text_after == BODY
    np.testing.assert_allclose(vector_after, embedder.embed_documents([BODY])[0], atol=1e-5)
    assert not np.allclose(vector_after, vector, atol=1e-3)
    store.close()


def test_unknown_content_type_gets_no_template(tmp_path: Path, embedder: Any) -> None:
    store = SqliteVectorStore(tmp_path / "u.sqlite")
    _ingest(tmp_path, _settings(tmp_path, templates={"policy": TEMPLATE}), store, embedder, "recipe")
    text, vector = _stored(store)
    assert text == BODY
    np.testing.assert_allclose(vector, embedder.embed_documents([BODY])[0], atol=1e-5)
    store.close()


def test_document_prefix_goes_before_the_template(tmp_path: Path, embedder: Any) -> None:
    store = SqliteVectorStore(tmp_path / "p.sqlite")
    settings = _settings(tmp_path, templates={"policy": TEMPLATE}, document_prefix="search_document: ")
    _ingest(tmp_path, settings, store, embedder, "policy")
    text, vector = _stored(store)
    assert text == BODY
    np.testing.assert_allclose(vector, embedder.embed_documents([f"search_document: {TEMPLATE}\n{BODY}"])[0], atol=1e-5)
    store.close()


@pytest.mark.parametrize(("content_type", "expected"), [
    ("policy", f"doc: {TEMPLATE}\n{BODY}"), ("recipe", f"doc: {BODY}"), (None, f"doc: {BODY}"),
])
def test_document_input_composes_prefix_template_and_text(content_type: str | None, expected: str) -> None:
    profile = ProfileSettings(index_name="KB_X", document_prefix="doc: ", templates={"policy": TEMPLATE})
    assert document_input(BODY, profile, content_type) == expected


def test_query_input_uses_only_the_query_prefix() -> None:
    profile = ProfileSettings(index_name="KB_X", query_prefix="search_query: ", templates={"policy": TEMPLATE})
    assert query_input("expense deadline", profile) == "search_query: expense deadline"
