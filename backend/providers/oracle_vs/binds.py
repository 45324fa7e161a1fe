"""Python values to Oracle binds and back: vectors (FLOAT32 / INT8 arrays), text columns, chunk rows.

What the vector store's writes and reads both convert, in one place.
"""

from __future__ import annotations

import array
from typing import Any, Sequence

import numpy as np

from backend.core.types import Chunk
from backend.core.vector_format import dequantize, quantize_int8
from backend.providers.oracle_vs.versions import json_value


def to_float32(values: np.ndarray) -> array.array:
    """A FLOAT32 vector bind: ``array('f')`` maps to ``DB_TYPE_VECTOR`` in python-oracledb."""
    return array.array("f", np.ascontiguousarray(values, dtype=np.float32).tobytes())


def vector_bind(values: np.ndarray, vector_format: str) -> array.array:
    """A chunk vector bind in the version's format: int8 as ``array('b')`` (python-oracledb's INT8
    vector), each vector scaled by ``quantize_int8`` first, since Oracle only rounds."""
    if vector_format == "int8":
        return array.array("b", quantize_int8(np.asarray(values, dtype=np.float32)).tobytes())
    return to_float32(values)


def is_quantized(values: Any) -> bool:
    """Whether a cached vector is an int8 version's scaled integers rather than the embedder's output
    (review 4, N2): every component a whole number and the largest magnitude exactly 127."""
    x = np.asarray(values, dtype=np.float32)
    return bool(x.size) and float(np.abs(x).max()) == 127.0 and bool(np.all(x == np.rint(x)))


def vector_out(value: Any, vector_format: str) -> np.ndarray:
    """A stored chunk vector as float32; an int8 one as the unit vector it points along."""
    raw = np.asarray(value, dtype=np.float32)
    return dequantize(raw) if vector_format == "int8" else raw


def column_text(value: Any) -> str:
    """A string column as stored; NULL is how Oracle keeps ''."""
    if value is None:
        return ""
    return str(value.read() if hasattr(value, "read") else value)


def row_to_chunk(row: Sequence[Any]) -> Chunk:
    chunk_id, doc_id, chunk_index, chunk_type, source, text, chash, metadata = row[:8]
    return Chunk(chunk_id=chunk_id, doc_id=doc_id, text=column_text(text), source=column_text(source),
                 chunk_index=int(chunk_index),
                 chunk_type=chunk_type, metadata=json_value(metadata) or {}, content_hash=chash)
