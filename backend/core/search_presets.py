"""Search presets (seed 000's ``search_by_*`` tools as config): find one by name, turn a call
into a query and a filter, and describe them as tool parameters for an agent. Pure functions."""

from __future__ import annotations

from typing import Any, Sequence

from backend.common.config import SearchPreset
from backend.common.errors import RequestError
from backend.core.metadata_schema import Schema, parse_filter
from backend.core.types import FieldFilter


def find_preset(presets: Sequence[SearchPreset], name: str) -> SearchPreset:
    for preset in presets:
        if preset.name == name:
            return preset
    known = [p.name for p in presets]
    raise RequestError(f"preset: unknown preset {name!r}; known presets: {', '.join(known) or '(none configured)'}",
                       field="preset", allowed=known)


def preset_uses(preset: SearchPreset, placeholder: str) -> bool:
    return "{" + placeholder + "}" in preset.query_template


def apply_preset(
    preset: SearchPreset, query: str | None, value: str | None, schema: Schema
) -> tuple[str, tuple[FieldFilter, ...]]:
    """The query text and filter a preset call stands for: ``filter_field any [value]``
    (checked against the schema like any request filter) and the template filled in.
    Raises ``RequestError`` when a parameter the preset needs is missing."""
    needs_value = preset.filter_field is not None or preset_uses(preset, "value")
    if needs_value and not (value or "").strip():
        raise RequestError(f"preset {preset.name}: parameter 'value' is required", field="value")
    if preset_uses(preset, "query") and not (query or "").strip():
        raise RequestError(f"preset {preset.name}: parameter 'q' is required (template {preset.query_template!r})",
                           field="q")
    text = preset.query_template.format(query=(query or "").strip(), value=(value or "").strip()).strip()
    if not text:
        raise RequestError(f"preset {preset.name}: the query template produced an empty query", field="q")
    filters = (parse_filter(preset.filter_field, [value], schema),) if preset.filter_field else ()
    return text, filters


def preset_parameters(preset: SearchPreset, schema: Schema) -> dict[str, Any]:
    """JSON-Schema-like parameters of a preset, so an agent can call it as a tool."""
    params: dict[str, Any] = {}
    if preset_uses(preset, "query"):
        params["q"] = {"type": "string", "required": True, "description": "The search query."}
    if preset.filter_field is not None or preset_uses(preset, "value"):
        value: dict[str, Any] = {"type": "string", "required": True}
        if preset.filter_field is not None:
            declared = schema.get(preset.filter_field)
            value["description"] = f"Value of {preset.filter_field} to filter on."
            if declared is not None and declared.type == "enum":
                value["enum"] = list(declared.values)
        params["value"] = value
    return params


def describe_presets(presets: Sequence[SearchPreset], schema: Schema) -> list[dict[str, Any]]:
    return [
        {"name": p.name, "description": p.description, "filter_field": p.filter_field,
         "query_template": p.query_template, "parameters": preset_parameters(p, schema)}
        for p in presets
    ]
