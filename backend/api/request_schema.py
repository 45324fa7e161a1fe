"""Request-side JSON Schemas as strict as the server, for ``/openapi.json``.

The pydantic models say "a dict of filters" and "a string"; the server then
rejects unknown or malformed field names, enum values outside the schema, blank
questions, empty presets and unsafe asset paths with 400. A client (or a
fuzzer) reading the document must be able to tell a request the server accepts,
so these schemas are built from the same config: the filterable fields and their
types, ``retrieval.max_filters`` / ``max_filter_values``, the preset names.
The property-based test (tests/api/test_fuzz_openapi.py) holds the two together.
"""

from __future__ import annotations

from typing import Any

from backend.common.config import Settings
from backend.core.metadata_schema import filterable_fields

#: a question or query with at least one non-blank character
NON_BLANK = r"\S"
#: what the DOCX loader writes (``<folder>/<name>``, safe characters, no dot segments) and /assets serves
IMAGE_REF_PATTERN = r"^[A-Za-z0-9_-][A-Za-z0-9._-]*(/[A-Za-z0-9_-][A-Za-z0-9._-]*)*$"


def _condition(values: dict[str, Any], multi: bool, max_values: int) -> dict[str, Any]:
    listed = {"type": "array", "items": values, "minItems": 1, "maxItems": max_values}
    operators = {"any": listed, "any_of": listed, **({"all": listed, "all_of": listed} if multi else {})}
    return {"anyOf": [values, listed, {"type": "object", "properties": operators, "additionalProperties": False,
                                       "minProperties": 1}]}


def filters_schema(settings: Settings) -> dict[str, Any]:
    """The ``filters`` object: one property per filterable field, shaped by its type."""
    retrieval = settings.retrieval
    declared = retrieval.metadata_schema
    properties: dict[str, Any] = {}
    for name, kind in filterable_fields(declared).items():
        spec = declared.get(name)
        if kind == "date":
            # as strict as metadata_schema.DATE_BOUND: a date, or an RFC 3339 date-time (a time without
            # an offset, read as UTC, is accepted too and documented in the description)
            bound = {"type": "string", "anyOf": [{"format": "date"}, {"format": "date-time"}],
                     "description": "YYYY-MM-DD or YYYY-MM-DDTHH:MM[:SS][Z|+HH:MM] (no offset: UTC)"}
            properties[name] = {"type": "object", "properties": {"gte": bound, "lte": bound},
                                "additionalProperties": False, "minProperties": 1}
            continue
        enum = list(spec.values) if spec is not None and kind == "enum" else None
        values = {"type": "string", "enum": enum} if enum else {"type": "string", "minLength": 1}
        multi = kind == "string_list" or bool(spec is not None and spec.multi)
        properties[name] = _condition(values, multi, retrieval.max_filter_values)
    return {"type": "object", "properties": properties, "additionalProperties": False,
            "maxProperties": retrieval.max_filters,
            "description": "Metadata filters, ANDed: per field a value, a list (any of) or {any, all} (multi-valued "
                           "fields), dates {gte, lte}."}
