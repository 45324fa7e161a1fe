"""The model stamp: runtime in the stamp, bare stamps are torch fp32, declared compatibility."""

from __future__ import annotations

import pytest

from backend.core.model_stamp import compatible_stamps, model_stamp, runtime_tag, same_model, split_stamp

M = "sentence-transformers/all-MiniLM-L6-v2"


def test_torch_fp32_keeps_the_bare_stamp_so_existing_versions_still_match() -> None:
    assert model_stamp(M, runtime_tag("torch", "none")) == M
    assert split_stamp(M) == (M, "torch-fp32")


@pytest.mark.parametrize(("runtime", "quantization", "stamp"), [
    ("onnx", "none", f"{M}@onnx-fp32"), ("onnx", "int8", f"{M}@onnx-int8")])
def test_onnx_stamps_name_runtime_and_quantization(runtime: str, quantization: str, stamp: str) -> None:
    assert model_stamp(M, runtime_tag(runtime, quantization)) == stamp
    assert split_stamp(stamp) == (M, stamp.rpartition("@")[2])


def test_unknown_runtime_is_refused_and_an_at_sign_in_a_path_is_no_runtime() -> None:
    with pytest.raises(ValueError, match="torch-int8"):
        runtime_tag("torch", "int8")
    assert split_stamp("/models/me@work/minilm") == ("/models/me@work/minilm", "torch-fp32")


def test_compatibility_is_declared_for_both_sides_or_not_at_all() -> None:
    declared = ["torch-fp32", "onnx-fp32"]
    assert compatible_stamps(M, declared) == {f"{M}@onnx-fp32"}
    assert compatible_stamps(f"{M}@onnx-fp32", declared) == {M}
    assert compatible_stamps(f"{M}@onnx-int8", declared) == frozenset()
    assert compatible_stamps(M, []) == frozenset()


def test_same_model_ignores_the_runtime_only() -> None:
    assert same_model(M, f"{M}@onnx-int8")
    assert not same_model(M, "other/model@onnx-int8")
