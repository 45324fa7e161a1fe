"""One JSON Lines record as a pydantic model, with a reason a user can act on.

Manifests and golden sets share this, so both report a bad line the same way:
``invalid JSON: ... (column N)``, ``expected a JSON object, got list`` or the
model's own problems with their field paths.
"""

from __future__ import annotations

import json
from typing import TypeVar

from pydantic import BaseModel, ValidationError

from backend.common.config import format_validation_error

M = TypeVar("M", bound=BaseModel)


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
