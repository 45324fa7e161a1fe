"""``chunk_vectors`` on Oracle (lexical-to-dense feedback reads a few stored vectors by id),
recorded through the stand-in of ``test_oracle_vs`` (no server here; the live contract
``tests/contracts/vector_store.py`` runs it when a DSN is set): one by-id statement that selects
the id and the ``VECTOR`` column only, every id bound, access control in the same WHERE, and
python-oracledb's ``array('f')`` turned into float32 arrays."""

from __future__ import annotations

import array
import re

import numpy as np
import pytest

from backend.core.types import Visibility
from backend.providers.oracle_vs import sql
from tests.providers.test_oracle_candidates import assert_bound, executed
from tests.providers.test_oracle_vs import V1, RecordingDb, make_store, registry, when


@pytest.mark.parametrize("visibility", [None, Visibility.of("alice", ("hr",))])
def test_chunk_vectors_select_id_and_vector_by_bound_ids(visibility: Visibility | None) -> None:
    db = RecordingDb([*registry(V1), when("SELECT t.chunk_id, t.embedding FROM", [
        ("doc#0", array.array("f", [0.5, -1.0, 2.0])), ("doc#2", array.array("f", [0.0, 0.25, 1.0]))])])
    store = make_store(db)
    got = store.chunk_vectors("KB_V1", ["doc#0", "doc#1", "doc#2", "doc#0"], visibility=visibility)
    assert set(got) == {"doc#0", "doc#2"}
    assert got["doc#0"].dtype == np.float32 and np.array_equal(got["doc#0"], np.array([0.5, -1.0, 2.0], np.float32))
    [(statement, binds)] = executed(db, "SELECT t.chunk_id, t.embedding FROM")
    assert statement.startswith("SELECT t.chunk_id, t.embedding FROM KB_V1 t WHERE t.chunk_id IN")
    assert sorted(v for name, v in binds.items() if re.fullmatch(r"c\d+", name) and v is not None) == ["doc#0", "doc#1", "doc#2"]
    assert ("JSON_EXISTS(t.metadata, '$.rag_acl" in statement) == (visibility is not None)
    assert_bound(statement, binds, "doc#1", "user:alice")
    assert sql.chunks_by_id_sql("KB_V1", 2, "1=1", "vector").startswith("SELECT t.chunk_id, t.embedding FROM")
