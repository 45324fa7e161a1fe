"""Contextual chunk headers: the title and heading path are embedded with each chunk,
never stored; switching them on changes every document's fingerprint, so a served
version is left alone and the change goes into a new version for the gate."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from backend.common.config import ChunkerSettings, ProfileSettings
from backend.core.embedding_text import chunk_header, profile_fingerprint_exclude
from backend.ingest.chunkers import TextChunker, heading_path
from backend.ingest.loaders.text import markdown_blocks
from backend.ingest.documents import LoadedDocument
from backend.ingest.pipeline import IngestPipeline
from backend.providers.sqlite_vs.store import SqliteVectorStore
from tests.conftest import make_settings
from tests.ingest.helpers import write_manifest

MARKDOWN = """# Employee handbook

Welcome to the company. This handbook explains how we work together every day.

## Leave

### Parental leave

Parents receive sixteen weeks of paid leave after the birth or adoption of a child.

## Travel

Book trains for trips under five hours; flights need the approval of a director.
"""


def test_heading_path_follows_levels() -> None:
    headings = [(0, 1, "Handbook"), (10, 2, "Leave"), (20, 3, "Parental"), (40, 2, "Travel")]
    assert heading_path(headings, 5) == ["Handbook"]
    assert heading_path(headings, 25) == ["Handbook", "Leave", "Parental"]
    assert heading_path(headings, 45) == ["Handbook", "Travel"]
    assert heading_path([], 45) == []


def test_header_template_and_switch() -> None:
    on = ProfileSettings(index_name="KB_T", chunk_headers=True)
    assert chunk_header(on, "Handbook  2024", ["Leave", " Parental "]) == "Handbook 2024\nLeave > Parental"
    assert chunk_header(on, "Handbook", []) == "Handbook"
    assert chunk_header(ProfileSettings(index_name="KB_T"), "Handbook", ["Leave"]) == ""
    custom = ProfileSettings(index_name="KB_T", chunk_headers=True, header_template="[{headings}] of {title}")
    assert chunk_header(custom, "H", ["A", "B"]) == "[A > B] of H"
    with pytest.raises(ValueError, match=r"only \{title\} and \{headings\} are allowed, got \['author'\]"):
        ProfileSettings(index_name="KB_T", header_template="{author}")


def test_fingerprint_covers_headers_only_while_they_are_on() -> None:
    off = ProfileSettings(index_name="KB_T")
    assert {"chunk_headers", "header_template", "fusion", "index_name"} <= profile_fingerprint_exclude(off)
    on = ProfileSettings(index_name="KB_T", chunk_headers=True)
    assert {"chunk_headers", "header_template"}.isdisjoint(profile_fingerprint_exclude(on))


def test_chunks_embed_title_and_heading_path_but_store_the_raw_text() -> None:
    doc = LoadedDocument("hb.md", "kb/handbook.md", markdown_blocks(MARKDOWN), metadata={"title": "Handbook 2024"})
    profile = ProfileSettings(index_name="KB_T", chunk_headers=True, templates={"policy": "Policy:"},
                              chunker=ChunkerSettings(kind="char", size=120, overlap=0))
    chunks = TextChunker(profile).chunk(doc)
    parental = next(c for c in chunks if "sixteen weeks" in c.text)
    assert parental.embed_text.startswith("Handbook 2024\nEmployee handbook > Leave > Parental leave\n")
    assert "Handbook 2024" not in parental.text and parental.embed_text.endswith(parental.text)
    travel = next(c for c in chunks if "Book trains" in c.text)
    assert "Employee handbook > Travel\n" in travel.embed_text
    no_title = LoadedDocument("hb.md", "kb/handbook.md", markdown_blocks(MARKDOWN), metadata={"content_type": "policy"})
    first = TextChunker(profile).chunk(no_title)[0]
    assert first.embed_text.startswith("Policy:\nhandbook\n")  # template first, then the file stem as title
    plain = TextChunker(ProfileSettings(index_name="KB_T", chunker=profile.chunker)).chunk(doc)
    assert [c.embed_text for c in plain] == [c.text for c in plain]


def test_switching_headers_on_builds_a_new_version_instead_of_touching_the_served_one(
        tmp_path: Path, embedder: Any) -> None:
    kb = tmp_path / "kb"
    kb.mkdir()
    (kb / "handbook.md").write_text(MARKDOWN, encoding="utf-8")
    manifest = write_manifest(kb / "m.jsonl", [{"path": "handbook.md", "metadata": {"title": "Handbook 2024"}}])
    store = SqliteVectorStore(tmp_path / "rag.sqlite")
    try:
        IngestPipeline.from_settings(make_settings(tmp_path), store, embedder).run(manifest)
        store.point_alias("KB_ACTIVE", "KB_SAMPLE_V1")
        served = {r[0]: r[1] for r in store._conn().execute("SELECT chunk_id, text FROM KB_SAMPLE_V1")}
        unchanged = IngestPipeline.from_settings(make_settings(tmp_path), store, embedder).run(manifest)
        assert unchanged.builds[0]["action"] == "up_to_date"

        headers_on = make_settings(tmp_path, embeddings={"profiles": {"sample": {"chunk_headers": True}}})
        report = IngestPipeline.from_settings(headers_on, store, embedder).run(manifest)
        assert (report.builds[0]["action"], report.builds[0]["version"]) == ("new_version", "KB_SAMPLE_V2")
        assert report.documents_written == 1 and report.embeddings_computed >= 1
        assert store.resolve_alias("KB_ACTIVE") == "KB_SAMPLE_V1"
        rows = {r[0]: r[1] for r in store._conn().execute("SELECT chunk_id, text FROM KB_SAMPLE_V2")}
        assert rows == served  # the stored (and shown) text is the same
        assert {r[0]: r[1] for r in store._conn().execute("SELECT chunk_id, text FROM KB_SAMPLE_V1")} == served
        [(chunk_id, text)] = list(rows.items())  # one chunk: the handbook is under min_chars_before_split
        from backend.core.types import QueryVector

        expected = embedder.embed_documents([f"Handbook 2024\nEmployee handbook\n{text}"])[0]
        hit = store.search("KB_SAMPLE_V2", QueryVector(expected, embedder.model_id), 1).hits[0]
        assert hit.chunk.chunk_id == chunk_id and hit.score == pytest.approx(1.0, abs=1e-4)
        old = store.search("KB_SAMPLE_V1", QueryVector(expected, embedder.model_id), 1).hits[0]
        assert old.score < 0.999 and not np.isclose(old.score, hit.score)
    finally:
        store.close()
