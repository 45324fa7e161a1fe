"""How a version keeps its chunk vectors: float32, or int8 (Oracle ``VECTOR(n, INT8)``).

Oracle converts a number to an INT8 dimension by rounding it to the nearest integer and refuses
one outside -128..127 (ORA-51806); it does not scale (``TO_VECTOR('[34.6, 77.8, 9.10]', 3, INT8)``
is ``[35, 78, 9]``: *VECTOR_DIMENSION_FORMAT*, Oracle AI Vector Search guide). A unit-length
embedding has every value well inside -1..1, so it would round to almost all zeros. The store
therefore sends integers it scaled itself: each vector times ``127 / max|x|``, rounded
(``quantize_int8``). Cosine distance ignores a vector's length, so the per-vector scale needs no
bookkeeping; dot and euclidean do not, which is why int8 is cosine-only (config validation).
The query vector stays float32: Oracle computes the distance between the two formats.

The format is stamped on the version (``retrieval_stamp``, key ``vector_format``, only when not
float32 so older stamps stay equal) and a change builds a new version from scratch
(``versions.plan_build``): one version never mixes formats.
"""

from __future__ import annotations

from typing import Any, Mapping

import numpy as np

VECTOR_FORMATS = ("float32", "int8")
DEFAULT_FORMAT = "float32"
INT8_MAX = 127
#: Bytes one dimension takes in each format (review 4, N3: sizes and the pool advisor follow the format).
BYTES_PER_DIMENSION = {"float32": 4, "int8": 1}


def bytes_per_dimension(stamp: Mapping[str, Any] | None) -> int:
    """Pure: bytes one dimension of a version's vectors takes (4 for float32, 1 for int8)."""
    return BYTES_PER_DIMENSION[stamped_format(stamp)]


def stamped_format(stamp: Mapping[str, Any] | None) -> str:
    """Pure: the vector format a version's retrieval stamp records (float32 when absent)."""
    value = (stamp or {}).get("vector_format", DEFAULT_FORMAT)
    return value if value in VECTOR_FORMATS else DEFAULT_FORMAT


def quantize_int8(vectors: np.ndarray) -> np.ndarray:
    """Pure: each row scaled so its largest magnitude is 127, then rounded to int8 (a zero row stays zero)."""
    x = np.atleast_2d(np.asarray(vectors, dtype=np.float32))
    peak = np.abs(x).max(axis=1, keepdims=True)
    scale = np.where(peak > 0, INT8_MAX / np.where(peak > 0, peak, 1.0), 0.0)
    q = np.clip(np.rint(x * scale), -INT8_MAX, INT8_MAX).astype(np.int8)
    return q if np.asarray(vectors).ndim > 1 else q[0]


def dequantize(vectors: np.ndarray) -> np.ndarray:
    """Pure: int8 rows back to float32 unit vectors (the direction is all an int8 row keeps)."""
    x = np.atleast_2d(np.asarray(vectors, dtype=np.float32))
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    out = x / np.where(norms > 0, norms, 1.0)
    return out if np.asarray(vectors).ndim > 1 else out[0]
