"""Typed metadata: validated once at ingest, and the same types check request filters.

The schema lives in config (``retrieval.metadata_schema``, seed 000's metadata
types): ``enum`` with allowed values (single or multi-select), ``string_list``
(free-form, multi-valued), ``string`` and ``date`` (ISO-8601). Validating at
ingest means a typo such as ``departmnt: "it"`` or ``department: "IT"`` fails on
its manifest line instead of silently never matching a filter; checking
filters against the same schema turns "no hits" caused by a misspelt value into
a 400 that lists the allowed values.
"""

from __future__ import annotations

import re

from datetime import date, datetime, time, timezone
from typing import Any, Mapping

from backend.common.config import BUILTIN_FILTER_FIELDS, MetadataFieldSettings
from backend.common.errors import ManifestError, RequestError
from backend.common.identifiers import is_identifier
from backend.core.types import FieldFilter

Schema = Mapping[str, MetadataFieldSettings]
_RANGE_KEYS = ("gte", "lte")
_KEY_ALIASES = {"any": "any", "any_of": "any", "all": "all", "all_of": "all", "gte": "gte", "lte": "lte"}


def normalize_date(value: Any, *, end_of_day: bool = False) -> str:
    """ISO date ``YYYY-MM-DD`` stays a date; a datetime becomes UTC ISO-8601 (naive = UTC).

    Stores compare these strings lexically, which orders correctly once every
    datetime is in UTC. ``end_of_day`` turns a bare date into the last instant of
    that day, so an ``lte`` bound includes datetimes on it. Raises ``ValueError``.
    """
    if isinstance(value, datetime):
        parsed: date | datetime = value
    elif isinstance(value, date):
        parsed = value
    elif isinstance(value, str):
        text = value.strip()
        parsed = date.fromisoformat(text) if len(text) == 10 else datetime.fromisoformat(text)
    else:
        raise ValueError(f"expected an ISO-8601 date string, got {type(value).__name__}")
    if not isinstance(parsed, datetime):
        if not end_of_day:
            return parsed.isoformat()
        parsed = datetime.combine(parsed, time.max)
    aware = parsed.replace(tzinfo=timezone.utc) if parsed.tzinfo is None else parsed.astimezone(timezone.utc)
    return aware.isoformat()


def _as_list(value: Any) -> list[Any]:
    return list(value) if isinstance(value, (list, tuple)) else [value]


def _check_value(name: str, spec: MetadataFieldSettings, value: Any) -> tuple[Any, list[str]]:
    """The normalized value of one declared field, and the problems found."""
    if spec.type == "date":
        try:
            return normalize_date(value), []
        except ValueError as exc:
            return value, [f"{name}: {value!r} is not an ISO-8601 date (YYYY-MM-DD or YYYY-MM-DDTHH:MM:SS): {exc}"]
    if spec.type == "string":
        if not isinstance(value, str):
            return value, [f"{name}: expected a string, got {type(value).__name__}"]
        return value, []
    many = spec.type == "string_list" or spec.multi
    items = _as_list(value)
    if not many and isinstance(value, (list, tuple)):
        return value, [f"{name}: expected one value (enum, single-select), got a list of {len(items)}"]
    if any(not isinstance(v, str) for v in items):
        return value, [f"{name}: expected {'strings' if many else 'a string'}, got {value!r}"]
    if spec.type == "enum":
        bad = [v for v in items if v not in spec.values]
        if bad:
            return value, [f"{name}: {', '.join(repr(v) for v in bad)} not allowed; allowed values: {', '.join(spec.values)}"]
    return (list(dict.fromkeys(items)) if many else items[0]), []


def validate_metadata(metadata: Mapping[str, Any], schema: Schema, where: str) -> dict[str, Any]:
    """Check ``metadata`` against the declared fields and return it normalized
    (multi-valued fields as lists, dates in ISO form). Undeclared keys pass through
    unchanged. Every problem is reported at once, prefixed with ``where`` (e.g.
    ``manifests/hr.jsonl line 14``); raises ``ManifestError``."""
    if not isinstance(metadata, Mapping):
        raise ManifestError(f"{where}: metadata must be an object, got {type(metadata).__name__}", where=where)
    out = dict(metadata)
    problems: list[str] = []
    for name, spec in schema.items():
        if name not in metadata or metadata[name] is None:
            if spec.required:
                problems.append(f"{name}: required field is missing")
            out.pop(name, None)
            continue
        out[name], found = _check_value(name, spec, metadata[name])
        problems.extend(found)
    if problems:
        raise ManifestError(f"{where}: metadata " + "; ".join(problems), where=where, problems=problems)
    return out


def filterable_fields(schema: Schema) -> dict[str, str]:
    """``field -> type`` of everything a request may filter on: built-ins, then the schema."""
    fields: dict[str, str] = dict(BUILTIN_FILTER_FIELDS)
    for name, spec in schema.items():
        if spec.filterable:
            fields[name] = spec.type
        else:
            fields.pop(name, None)
    return fields


def _field_spec(name: str, schema: Schema) -> MetadataFieldSettings:
    if not isinstance(name, str) or not is_identifier(name):
        raise RequestError(f"filters: {name!r} is not a valid field name (letter, then letters, digits, '_')",
                           field="filters")
    declared = schema.get(name)
    if declared is not None and not declared.filterable:
        raise RequestError(f"filters.{name}: field is not filterable (metadata_schema.{name}.filterable is false)",
                           field=f"filters.{name}")
    if declared is not None:
        return declared
    if name in BUILTIN_FILTER_FIELDS:
        return MetadataFieldSettings(type=BUILTIN_FILTER_FIELDS[name])
    known = sorted(filterable_fields(schema))
    raise RequestError(f"filters: unknown field {name!r}; filterable fields: {', '.join(known)}",
                       field=f"filters.{name}", allowed=known)


def _condition(name: str, raw: Any) -> dict[str, Any]:
    """The request's shorthand forms as ``{any|all|gte|lte: ...}``."""
    if isinstance(raw, str):
        return {"any": [raw]}
    if isinstance(raw, list):
        return {"any": raw}
    if isinstance(raw, Mapping):
        unknown = [k for k in raw if k not in _KEY_ALIASES]
        if unknown:
            raise RequestError(f"filters.{name}: unknown operator(s) {unknown}; use any, all, gte, lte",
                               field=f"filters.{name}")
        return {_KEY_ALIASES[k]: v for k, v in raw.items()}
    raise RequestError(f"filters.{name}: expected a string, a list of strings or an object with any/all/gte/lte, "
                       f"got {type(raw).__name__}", field=f"filters.{name}")


def _values(name: str, op: str, raw: Any, spec: MetadataFieldSettings) -> tuple[str, ...]:
    items = _as_list(raw)
    if not items or any(not isinstance(v, str) or not v for v in items):
        raise RequestError(f"filters.{name}.{op}: expected a non-empty list of non-empty strings, got {raw!r}",
                           field=f"filters.{name}")
    if spec.type == "enum":
        bad = [v for v in items if v not in spec.values]
        if bad:
            raise RequestError(
                f"filters.{name}: {', '.join(repr(v) for v in bad)} not allowed; allowed values: {', '.join(spec.values)}",
                field=f"filters.{name}", allowed=list(spec.values),
            )
    return tuple(dict.fromkeys(items))


#: what a request's date bound may look like: a date, or a date and time (seconds, fraction and
#: offset optional; no offset = UTC). Python alone would also take "20250101" or "2025-W01-1".
DATE_BOUND = re.compile(r"\d{4}-\d{2}-\d{2}(?:T\d{2}:\d{2}(?::\d{2}(?:\.\d{1,6})?)?(?:Z|[+-]\d{2}:\d{2})?)?")


def _bound(name: str, op: str, raw: Any) -> str:
    try:
        if not isinstance(raw, str) or not DATE_BOUND.fullmatch(raw.strip()):
            raise ValueError(f"expected a string YYYY-MM-DD or YYYY-MM-DDTHH:MM[:SS][Z|+HH:MM], got "
                             f"{type(raw).__name__}")
        return normalize_date(raw.strip().replace("Z", "+00:00"), end_of_day=(op == "lte"))
    except ValueError as exc:
        raise RequestError(f"filters.{name}.{op}: {raw!r} is not an ISO-8601 date (YYYY-MM-DD or "
                           f"YYYY-MM-DDTHH:MM:SS): {exc}", field=f"filters.{name}") from exc


def parse_filter(name: str, raw: Any, schema: Schema) -> FieldFilter:
    """One request condition as a ``FieldFilter``; raises ``RequestError`` (400)."""
    spec = _field_spec(name, schema)
    cond = _condition(name, raw)
    if spec.type == "date":
        if set(cond) - set(_RANGE_KEYS) or not cond:
            raise RequestError(f"filters.{name}: a date field takes gte and/or lte, e.g. "
                               f'{{"gte": "2025-01-01", "lte": "2025-12-31"}}', field=f"filters.{name}")
        return FieldFilter(name, gte=_bound(name, "gte", cond["gte"]) if "gte" in cond else None,
                           lte=_bound(name, "lte", cond["lte"]) if "lte" in cond else None)
    if set(cond) & set(_RANGE_KEYS):
        raise RequestError(f"filters.{name}: gte/lte apply to date fields only; {name} is {spec.type}",
                           field=f"filters.{name}")
    multi = spec.type == "string_list" or spec.multi
    if "all" in cond and not multi:
        raise RequestError(f"filters.{name}: 'all' needs a multi-valued field; {name} holds one value, use 'any'",
                           field=f"filters.{name}")
    if not cond:
        raise RequestError(f"filters.{name}: empty condition; use any or all", field=f"filters.{name}")
    return FieldFilter(
        name,
        any_of=_values(name, "any", cond["any"], spec) if "any" in cond else (),
        all_of=_values(name, "all", cond["all"], spec) if "all" in cond else (),
    )


def parse_filters(raw: Mapping[str, Any] | None, schema: Schema) -> tuple[FieldFilter, ...]:
    """Request filters (``{"department": {"any": ["it"]}, "tags": {"all": ["policy"]},
    "updated_at": {"gte": "2025-01-01"}}``; a bare value or list means ``any``) as
    ANDed ``FieldFilter``s. Raises ``RequestError`` (400) for an unknown or
    non-filterable field, an enum value outside the schema, or a malformed date,
    naming the field and what is allowed."""
    if raw is None:
        return ()
    if not isinstance(raw, Mapping):
        raise RequestError(f"filters: expected an object of field -> condition, got {type(raw).__name__}",
                           field="filters")
    return tuple(parse_filter(name, value, schema) for name, value in raw.items())
