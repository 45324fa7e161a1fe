"""Pydantic's validation errors as one readable line per problem.

Each line names the dotted config path, or the environment variable that set it; an unknown
key or a value outside a fixed set gets the nearest known names ("did you mean").
"""

from __future__ import annotations

import re
import types
import typing
from typing import Any, NamedTuple, Sequence

from pydantic import BaseModel, ValidationError
from pydantic_core import ErrorDetails

from backend.common.config.base import hint
from backend.common.config.sources import Layer

Loc = tuple[str | int, ...]


class Problem(NamedTuple):
    """One problem's line, and whether an environment variable caused it."""

    text: str
    from_environment: bool


def format_validation_error(exc: ValidationError, *, model: type[BaseModel] | None = None,
                            layers: Sequence[Layer] = ()) -> list[str]:
    """One line per problem, each with its dotted YAML path.

    ``model`` (the validated class) lets an unknown key be answered with the nearest field
    names; ``layers`` (the sources, highest precedence first) let a problem set by an
    environment variable name that variable instead of the config file.
    """
    return [p.text for p in validation_problems(exc, model=model, layers=layers)]


def validation_problems(exc: ValidationError, *, model: type[BaseModel] | None = None,
                        layers: Sequence[Layer] = ()) -> list[Problem]:
    """``format_validation_error``'s lines, each marked with whether the environment caused it."""
    return [_problem(err, model, layers) for err in exc.errors()]


def _problem(err: ErrorDetails, model: type[BaseModel] | None, layers: Sequence[Layer]) -> Problem:
    loc: Loc = tuple(p for p in err["loc"] if p != "function-after")
    dotted = ".".join(str(p) for p in loc)
    if err["type"] == "extra_forbidden":
        key = str(loc[-1]) if loc else ""
        suggestion = hint(key, _fields_at(model, loc[:-1])) if model is not None and loc else ""
        variables = _environment_variables(layers, loc, whole=True)
        if variables:
            parent = ".".join(str(p) for p in loc[:-1])
            where = f"in {parent}" if parent else "at the top level"
            return Problem(f"{variables}: unknown key {key!r} {where}{suggestion}", True)
        return Problem(f"{dotted}: unknown key{suggestion}", False)
    if err["type"] == "missing":
        text = f"{dotted}: required key is missing"
        variables = _environment_variables(layers, loc[:-1], whole=True) if len(loc) > 1 else ""
        parent = ".".join(str(p) for p in loc[:-1])
        return Problem(f"{text} ({parent} comes only from {variables})", True) if variables else Problem(text, False)
    msg = err["msg"].removeprefix("Value error, ")
    if err["type"] == "literal_error" and isinstance(err.get("input"), str):
        msg += hint(err["input"], re.findall(r"'([^']*)'", str((err.get("ctx") or {}).get("expected", ""))))
    text = f"{dotted}: {msg}" if dotted else msg
    variables = _environment_variables(layers, loc, whole=False)
    return Problem(f"{text} (from {variables})", True) if variables else Problem(text, False)


def _environment_variables(layers: Sequence[Layer], loc: Loc, *, whole: bool) -> str:
    """``environment variable X`` when the value at ``loc`` comes from the environment, else "".

    The value comes from the highest layer that holds ``loc``. With ``whole`` a mapping counts
    (an unknown section made by ``RAG_SECTION__KEY``) when no other layer holds ``loc`` at all;
    without it only a plain value does (a model check over a merged section blames no one).
    """
    for layer in layers:
        held = _held(layer.data, loc)
        if held is None:
            continue
        if not layer.origins or (held == "mapping" and not whole):
            return ""
        if held == "mapping" and any(_held(other.data, loc) is not None for other in layers if other is not layer):
            return ""
        names = sorted(name for path, name in _origins(layer, loc))
        if not names:
            return ""
        return ("environment variable " if len(names) == 1 else "environment variables ") + ", ".join(names)
    return ""


def _origins(layer: Layer, loc: Loc) -> list[tuple[tuple[str, ...], str]]:
    """The layer's (path, variable) pairs at, above or under ``loc``."""
    key = tuple(str(p) for p in loc)
    return [(path, name) for path, name in layer.origins.items()
            if path[:len(key)] == key or key[:len(path)] == path]


def _held(data: Any, loc: Loc) -> str | None:
    """Whether ``data`` sets ``loc``: "value" (a plain value at it or above it), "mapping", or None."""
    node = data
    for part in loc:
        if not isinstance(node, dict):
            return "value"
        if part not in node:
            return None
        node = node[part]
    return "mapping" if isinstance(node, dict) else "value"


def _fields_at(model: type[BaseModel] | None, loc: Loc) -> list[str]:
    """Field names of the model found at ``loc`` under ``model`` (through maps, lists and
    optionals); empty when ``loc`` leads to no model."""
    node: Any = model
    for part in loc:
        current = _model_of(node)
        if current is not None:
            info = current.model_fields.get(str(part))
            if info is None:
                return []
            node = info.annotation
            continue
        args = typing.get_args(node)
        origin = typing.get_origin(node)
        if origin is dict and len(args) == 2:
            node = args[1]
        elif origin in (tuple, list) and args:
            node = args[0]
        else:
            return []
    found = _model_of(node)
    return list(found.model_fields) if found is not None else []


def _model_of(annotation: Any) -> type[BaseModel] | None:
    """The model class in ``annotation``, looking inside ``X | None``."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        models = [m for m in (_model_of(a) for a in typing.get_args(annotation)) if m is not None]
        return models[0] if len(models) == 1 else None
    return None
