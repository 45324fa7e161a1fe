"""SQLite derives a version's tables the same way (``{V}_questions``, ``{V}_summaries``, ``{V}_fts``,
``{V}_facets``, indexes ``{V}_doc``, ``{V}_emb``; one namespace for tables and indexes), so the same
version and alias names are refused there (issue 30, C1)."""

from __future__ import annotations

from pathlib import Path

import pytest

from backend.common.errors import InvalidIdentifier
from backend.core.types import VersionSpec
from backend.providers.sqlite_vs.store import SqliteVectorStore


@pytest.mark.parametrize("name", ["kb_summaries", "kb_questions", "kb_fts", "kb_facets", "kb_emb", "kb_doc", "dual"])
def test_a_version_named_like_another_versions_derived_table_is_refused(tmp_path: Path, name: str) -> None:
    store = SqliteVectorStore(tmp_path / "rag.sqlite")
    store.create_version(VersionSpec("kb", "mini-lm", 3, "cosine"))
    with pytest.raises(InvalidIdentifier, match=rf"invalid index_name '{name}': "):
        store.create_version(VersionSpec(name, "mini-lm", 3, "cosine"))
    assert [v.name for v in store.list_versions()] == ["kb"]


def test_an_alias_named_like_a_derived_table_is_refused(tmp_path: Path) -> None:
    store = SqliteVectorStore(tmp_path / "rag.sqlite")
    store.create_version(VersionSpec("kb", "mini-lm", 3, "cosine"))
    with pytest.raises(InvalidIdentifier, match=r"invalid alias name 'kb_summaries': .* may not end in _SUMMARIES"):
        store.point_alias("kb_summaries", "kb")
    assert store.list_aliases() == {}
