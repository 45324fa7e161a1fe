"""INT8 vectors on Oracle (review §2.11): ``VECTOR(n, INT8)`` from the version's stamp, integers the
store scaled itself bound as ``array('b')``, read back as unit vectors, and a version never holding
two formats (on the recording stand-in and the Oracle fake)."""

from __future__ import annotations

import array

import numpy as np
import pytest

from backend.common.errors import VersionConflict
from backend.core.types import VersionSpec
from backend.providers.oracle_vs import sql
from tests.providers.oracle_fake import CatalogDb, catalog_store
from tests.providers.test_oracle_vs import V1, RecordingDb, doc, make_store, registry, when

INT8 = {"format": 1, "vector_format": "int8"}
V1_INT8 = (*V1, 0, None, None, '{"format": 1, "vector_format": "int8"}')


def test_an_int8_version_declares_an_int8_column() -> None:
    db = CatalogDb()
    catalog_store(db).create_version(VersionSpec("KB_V1", "mini-lm", 3, "cosine", retrieval=INT8))
    ddl = next(s for s in db.statements() if s.startswith("CREATE TABLE IF NOT EXISTS KB_V1 ("))
    assert "embedding     VECTOR(3, INT8) NOT NULL" in ddl
    catalog_store(db).create_version(VersionSpec("KB_V2", "mini-lm", 3, "cosine"))
    assert any("VECTOR(3, FLOAT32)" in s for s in db.statements() if s.startswith("CREATE TABLE IF NOT EXISTS KB_V2 ("))


def test_int8_chunks_are_bound_as_scaled_integers() -> None:
    db = RecordingDb(registry(V1_INT8))
    make_store(db).write_documents("KB_V1", [doc("d1", 2)])
    at = next(i for i, (k, s) in enumerate(db.log) if k == "executemany" and s == sql.insert_chunk_sql("KB_V1"))
    vector = db.log[at + 1][1][1]["embedding"]
    assert isinstance(vector, array.array) and vector.typecode == "b"  # python-oracledb's INT8 vector
    assert list(vector) == [76, 102, 127]  # [0.3, 0.4, 0.5] x 127 / 0.5, rounded


def test_int8_vectors_read_back_as_unit_vectors() -> None:
    db = RecordingDb([*registry(V1_INT8), when("SELECT t.chunk_id, t.embedding", [("d1#0", array.array("b", [76, 102, 127]))])])
    got = make_store(db).chunk_vectors("KB_V1", ["d1#0"])["d1#0"]
    expected = np.array([0.3, 0.4, 0.5]) / np.linalg.norm([0.3, 0.4, 0.5])
    assert got.dtype == np.float32 and float(got @ expected) > 0.9999


def test_a_version_never_changes_format() -> None:
    db = CatalogDb()
    store = catalog_store(db)
    store.create_version(VersionSpec("KB_V1", "mini-lm", 3, "cosine"))
    with pytest.raises(VersionConflict, match="holds float32 vectors; cannot write int8"):
        store.create_version(VersionSpec("KB_V1", "mini-lm", 3, "cosine", retrieval=INT8))


def test_a_version_of_another_format_is_never_copied() -> None:
    db = CatalogDb()
    store = catalog_store(db)
    store.create_version(VersionSpec("KB_V1", "mini-lm", 3, "cosine"))
    with pytest.raises(VersionConflict, match="format change is built from scratch"):
        store.create_version(VersionSpec("KB_V2", "mini-lm", 3, "cosine", parent="KB_V1", retrieval=INT8))
    assert "KB_V2" not in db.versions


def test_n2_the_embedding_cache_keeps_the_embedders_float32_vector_of_an_int8_version() -> None:
    """Review 4, N2 (fails at 18552a8): an int8 version wrote its ``array('b')`` bind (scaled by
    127/max|x|) into ``RAG_EMBEDDING_CACHE``, keyed by model and text only, so the next float32 build
    of the model reused scaled integers as embeddings. The cache rows must be the embedder's vectors."""
    db = RecordingDb(registry(V1_INT8))
    written = doc("d1", 2)
    make_store(db).write_documents("KB_V1", [written])
    at = next(i for i, (k, s) in enumerate(db.log) if k == "executemany" and s == sql.MERGE_CACHE_SQL)
    rows = db.log[at + 1][1]
    assert len(rows) == 2 and all(isinstance(r["embedding"], array.array) and r["embedding"].typecode == "f"
                                  for r in rows)
    cached = sorted((list(r["embedding"]) for r in rows), key=lambda v: v[0])
    np.testing.assert_allclose(cached, np.asarray(written.vectors), rtol=1e-6)
    assert max(abs(x) for v in cached for x in v) < 1.0  # not the 127-scaled integers


def test_n2_a_poisoned_cache_row_is_a_miss_and_the_next_write_replaces_it() -> None:
    """Review 4, N2: rows an int8 version wrote before the fix (whole numbers, largest 127) are not
    returned as embeddings; the MERGE replaces them (``WHEN MATCHED ... VECTOR_NORM >= 127``) and
    ``rag oracle check`` counts what is left with the statement that deletes it."""
    from backend.providers.oracle_vs.binds import is_quantized

    good = array.array("f", [0.6, 0.8, 0.0])
    poisoned = array.array("f", [76.0, 102.0, 127.0])
    db = RecordingDb([when("FROM RAG_EMBEDDING_CACHE", [("h-good", good), ("h-bad", poisoned)])])
    got = make_store(db).cached_vectors("mini-lm", ["h-good", "h-bad"])
    assert list(got) == ["h-good"]
    assert [is_quantized(v) for v in ([0.0, 0.5, -1.0], [127.0, -3.0], [127.0, 0.5], [0.0, 0.0])] == \
        [False, True, False, False]
    assert "WHEN MATCHED THEN UPDATE SET c.embedding = s.embedding WHERE VECTOR_NORM(c.embedding) >= 127" \
        in sql.MERGE_CACHE_SQL
    assert sql.PURGE_POISONED_CACHE_SQL == "DELETE FROM RAG_EMBEDDING_CACHE WHERE VECTOR_NORM(embedding) >= 127"


def test_n3_an_int8_version_is_sized_at_one_byte_per_dimension() -> None:
    """Review 4, N3 (fails at 18552a8): ``rag index list`` sized every version at 4 bytes per
    dimension; an int8 version's vectors take 1."""
    counts = when("COUNT(DISTINCT", [(1000, 10, 5000)])
    int8 = make_store(RecordingDb([when("FROM RAG_VERSIONS v ORDER BY", [V1_INT8]), counts])).list_versions()
    float32 = make_store(RecordingDb([when("FROM RAG_VERSIONS v ORDER BY", [(*V1, 0, None, None, None)]),
                                      counts])).list_versions()
    assert [v.size_bytes for v in int8] == [1000 * 3 * 1 + 5000]
    assert [v.size_bytes for v in float32] == [1000 * 3 * 4 + 5000]
