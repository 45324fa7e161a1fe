"""INT8 vectors (review §2.11): the quantisation the store applies before Oracle rounds, the stamp
that records the format, and the build plan that never mixes formats in one version."""

from __future__ import annotations

import numpy as np
import pytest
from pydantic import ValidationError

from backend.common.config import ProfileSettings, RetrievalSettings, Settings
from backend.core.retrieval_stamp import retrieval_stamp, stamp_changes
from backend.core.versions import VersionNaming, plan_build
from backend.core.types import IndexVersion
from backend.core.vector_format import dequantize, quantize_int8, stamped_format

NAMING = VersionNaming()


def test_each_vector_is_scaled_to_127_then_rounded() -> None:
    v = np.array([[0.05, -0.1, 0.02], [0.0, 0.0, 0.0], [1.0, 0.5, -0.25]], dtype=np.float32)
    q = quantize_int8(v)
    assert q.dtype == np.int8
    assert q.tolist() == [[64, -127, 25], [0, 0, 0], [127, 64, -32]]  # 63.5 rounds to even (64), 31.75 to 32
    assert quantize_int8(v[0]).tolist() == [64, -127, 25]  # one vector in, one out


def test_without_the_scale_oracles_rounding_would_keep_nothing() -> None:
    """Oracle only rounds (TO_VECTOR('[34.6, 77.8, 9.10]', 3, INT8) = [35, 78, 9]): a unit vector's values
    round to zero. Scaled first, the direction survives."""
    rng = np.random.default_rng(7)
    v = rng.normal(size=(50, 384)).astype(np.float32)
    v /= np.linalg.norm(v, axis=1, keepdims=True)
    assert np.count_nonzero(np.rint(v)) == 0
    back = dequantize(quantize_int8(v))
    cosines = np.einsum("ij,ij->i", back, v)
    assert cosines.min() > 0.999 and np.allclose(np.linalg.norm(back, axis=1), 1.0, atol=1e-6)


def test_the_format_is_stamped_only_when_not_float32() -> None:
    retrieval = RetrievalSettings()
    plain = retrieval_stamp(retrieval, ProfileSettings(index_name="KB_V1"))
    int8 = retrieval_stamp(retrieval, ProfileSettings(index_name="KB_V1", vector_format="int8"))
    assert "vector_format" not in plain and stamped_format(plain) == "float32"  # older stamps stay equal
    assert int8["vector_format"] == "int8" and stamped_format(int8) == "int8"
    assert stamp_changes(plain, int8) == ["vector_format: None -> 'int8'"]
    assert stamped_format(None) == "float32" and stamped_format({"vector_format": "int4"}) == "float32"


def _served(stamp: dict | None) -> IndexVersion:
    return IndexVersion("KB_V1", "m", 384, "cosine", "2025-01-01", retrieval=stamp)


@pytest.mark.parametrize("changed", [True, False])
def test_a_format_change_builds_a_new_version_from_scratch(changed: bool) -> None:
    plan = plan_build(NAMING, "KB_V1", _served(None), {"KB_V1": "live"}, model="m", dimension=384,
                      distance="cosine", changed=changed, retrieval_changes=["vector_format: None -> 'int8'"],
                      vector_format="int8")
    assert (plan.action, plan.target, plan.parent) == ("new_version", "KB_V2", None)
    assert "float32" in plan.reason and "int8" in plan.reason


def test_an_unserved_candidate_of_the_other_format_is_not_resumed() -> None:
    plan = plan_build(NAMING, "KB_V1", _served({"vector_format": "int8"}), {}, model="m", dimension=384,
                      distance="cosine", changed=True, vector_format="float32")
    assert (plan.action, plan.parent) == ("new_version", None)


def test_the_same_format_keeps_the_usual_plan() -> None:
    plan = plan_build(NAMING, "KB_V1", _served({"vector_format": "int8"}), {"KB_V1": "live"}, model="m",
                      dimension=384, distance="cosine", changed=True, vector_format="int8")
    assert (plan.action, plan.parent) == ("new_version", "KB_V1")


@pytest.mark.parametrize("overrides, message", [
    ({}, "needs store.backend oracle"),
    ({"store": {"backend": "oracle"}, "retrieval": {"distance": "dot"}}, "distance cosine"),
])
def test_int8_is_refused_where_it_cannot_hold(overrides: dict, message: str) -> None:
    distance = overrides.get("retrieval", {}).get("distance", "cosine")
    profiles = {"default": {"index_name": "KB_V1", "vector_format": "int8", "distance": distance}}
    with pytest.raises(ValidationError, match=message):
        Settings(embeddings={"profiles": profiles}, **overrides)


def test_int8_on_oracle_with_cosine_is_accepted() -> None:
    s = Settings(store={"backend": "oracle"},
                 embeddings={"profiles": {"default": {"index_name": "KB_V1", "vector_format": "int8"}}})
    assert s.embeddings.profile_for().vector_format == "int8"


def test_the_bench_compares_formats_as_the_store_stores_them() -> None:
    """``backend.benchmarks.int8_vectors`` (docs/BENCHMARKS.md): exact top-k on both formats."""
    from backend.benchmarks.int8_vectors import compare_formats, overlap_recall, top_k

    m = np.array([[1.0, 0.0], [0.9, 0.1], [0.0, 1.0]], dtype=np.float32)
    assert top_k(m, np.array([[1.0, 0.05]], dtype=np.float32), 2).tolist() == [[0, 1]]
    assert overlap_recall(np.array([[0, 1, 2]]), np.array([[2, 0, 5]])).tolist() == pytest.approx([2 / 3])
    rng = np.random.default_rng(3)
    docs = rng.normal(size=(300, 64)).astype(np.float32)
    queries = rng.normal(size=(20, 64)).astype(np.float32)
    out = compare_formats(docs, queries)
    assert 0.9 <= out["recall_mean"] <= 1.0 and out["bytes_int8"] * 4 == out["bytes_float32"] == 256
    assert out["vector_cosine_min"] > 0.999 and out["queries"] == 20
