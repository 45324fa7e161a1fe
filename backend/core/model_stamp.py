"""The model stamp a version records: model id, plus the runtime that embedded it.

``sentence-transformers/all-MiniLM-L6-v2`` (bare, as every version before runtimes
existed was stamped) means torch fp32; ``...@onnx-fp32`` and ``...@onnx-int8`` name
the ONNX Runtime variants. Queries embedded by one runtime are refused by a version
stamped with another unless both runtimes are listed in
``embeddings.local.compatible_runtimes``. The alias may move between runtimes of one
model (the gate has evaluated the candidate with the configured runtime); never
between models.
"""

from __future__ import annotations

from typing import Iterable

RUNTIMES = ("torch-fp32", "onnx-fp32", "onnx-int8")
#: The runtime a bare stamp means: versions stamped before runtimes were recorded.
LEGACY_RUNTIME = "torch-fp32"


def runtime_tag(runtime: str, quantization: str) -> str:
    """Pure: ``torch``/``onnx`` and ``none``/``int8`` to a tag of ``RUNTIMES``."""
    tag = f"{runtime}-{'fp32' if quantization == 'none' else quantization}"
    if tag not in RUNTIMES:
        raise ValueError(f"no runtime {tag!r}; known: {', '.join(RUNTIMES)}")
    return tag


def model_stamp(model: str, tag: str) -> str:
    """Pure: the stamp recorded per version and carried by every query vector."""
    return model if tag == LEGACY_RUNTIME else f"{model}@{tag}"


def split_stamp(stamp: str) -> tuple[str, str]:
    """Pure: ``(model, runtime tag)``; a bare stamp is torch fp32."""
    model, sep, tag = stamp.rpartition("@")
    return (model, tag) if sep and tag in RUNTIMES else (stamp, LEGACY_RUNTIME)


def same_model(a: str, b: str) -> bool:
    """Pure: both stamps name one model (whatever runtime embedded it)."""
    return split_stamp(a)[0] == split_stamp(b)[0]


def compatible_stamps(stamp: str, compatible_runtimes: Iterable[str]) -> frozenset[str]:
    """Pure: other stamps whose versions accept queries embedded under ``stamp``."""
    model, tag = split_stamp(stamp)
    declared = set(compatible_runtimes)
    if tag not in declared:
        return frozenset()
    return frozenset(model_stamp(model, other) for other in declared if other != tag)
