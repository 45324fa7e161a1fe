"""One JSON Lines record as a pydantic model, with a reason a user can act on.

Manifests and golden sets share this, so both report a bad line the same way:
``invalid JSON: ... (column N)``, ``expected a JSON object, got list`` or the
model's own problems with their field paths. ``read_json_lines`` is the plain reader of
the training and benchmark files: every record, a bad one named by ``path:line``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable, TypeVar

from pydantic import BaseModel, ValidationError

from backend.common.config import format_validation_error

M = TypeVar("M", bound=BaseModel)
T = TypeVar("T")


def parse_model_line(raw: str, model: type[M]) -> M:
    """``raw`` as ``model``; ``ValueError`` saying what is wrong otherwise."""
    try:
        data = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise ValueError(f"invalid JSON: {exc.msg} (column {exc.colno})") from exc
    if not isinstance(data, dict):
        raise ValueError(f"expected a JSON object, got {type(data).__name__}")
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise ValueError("; ".join(format_validation_error(exc))) from exc


def read_json_lines(path: Path, parse: Callable[[Any], T]) -> list[T]:
    """``parse`` of each non-blank line of a JSON Lines file, decoded, in file order. A line that is
    not JSON, or that ``parse`` refuses (``ValueError``, ``KeyError``), raises ``ValueError``
    ``"<path>:<line>: <reason>"``."""
    rows = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            rows.append(parse(json.loads(line)))
        except (ValueError, KeyError) as exc:
            raise ValueError(f"{path}:{n}: {exc}") from exc
    return rows
