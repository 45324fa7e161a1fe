"""Length-sorted batches: texts of similar token length share a batch, so padding is minimal."""

from __future__ import annotations

from typing import Sequence


def length_sorted_batches(lengths: Sequence[int], batch_size: int, window: int) -> list[list[int]]:
    """Pure: indices of the inputs grouped into batches of at most ``batch_size``.

    Inside each window of ``window`` consecutive inputs the indices are sorted by
    length, longest first (the first batch meets the worst case early), then cut into
    batches; the caller scatters results back by index, so output order is the input's.
    A window bounds how long inputs wait, and the memory a sort holds.
    """
    if batch_size < 1 or window < 1:
        raise ValueError("batch_size and window must be positive")
    batches: list[list[int]] = []
    for start in range(0, len(lengths), window):
        order = sorted(range(start, min(start + window, len(lengths))), key=lambda i: (-lengths[i], i))
        batches += [order[i:i + batch_size] for i in range(0, len(order), batch_size)]
    return batches
