"""Typed metadata: ingest validation, request filter parsing, and the config checks."""

from __future__ import annotations

from typing import Any

import pytest

from backend.common.config import RetrievalSettings
from backend.common.errors import ConfigError, ManifestError, RequestError
from backend.core.metadata_schema import filterable_fields, normalize_date, parse_filters, validate_metadata
from backend.core.types import FieldFilter

RETRIEVAL = RetrievalSettings.model_validate({
    "metadata_schema": {
        "department": {"type": "enum", "values": ["it", "hr", "finance"], "required": True},
        "muscle_groups": {"type": "enum", "values": ["neck", "core", "glutes"], "multi": True},
        "conditions": {"type": "string_list"},
        "owner": {"type": "string"},
        "updated_at": {"type": "date"},
        "internal_note": {"type": "string", "filterable": False},
    },
})
SCHEMA = RETRIEVAL.metadata_schema
WHERE = "manifests/hr.jsonl line 7"


# --- ingest ------------------------------------------------------------------------
def test_valid_metadata_is_normalized_and_undeclared_keys_pass_through() -> None:
    out = validate_metadata(
        {"department": "it", "muscle_groups": "core", "conditions": ["acl tear", "acl tear"],
         "updated_at": "2025-03-01T12:00:00+02:00", "free": {"x": 1}},
        SCHEMA, WHERE,
    )
    assert out == {"department": "it", "muscle_groups": ["core"], "conditions": ["acl tear"],
                   "updated_at": "2025-03-01T10:00:00+00:00", "free": {"x": 1}}


def test_enum_value_outside_the_schema_names_the_line_field_and_allowed_values() -> None:
    with pytest.raises(ManifestError, match=r"^manifests/hr.jsonl line 7: metadata department: 'IT' not allowed; "
                                            r"allowed values: it, hr, finance$"):
        validate_metadata({"department": "IT"}, SCHEMA, WHERE)


def test_every_problem_of_a_line_is_reported_at_once() -> None:
    with pytest.raises(ManifestError) as info:
        validate_metadata({"muscle_groups": ["core", "biceps"], "owner": 5, "updated_at": "01/02/2025"}, SCHEMA, WHERE)
    assert info.value.context["problems"] == [
        "department: required field is missing",
        "muscle_groups: 'biceps' not allowed; allowed values: neck, core, glutes",
        "owner: expected a string, got int",
        "updated_at: '01/02/2025' is not an ISO-8601 date (YYYY-MM-DD or YYYY-MM-DDTHH:MM:SS): "
        "Invalid isoformat string: '01/02/2025'",
    ]


def test_single_select_enum_rejects_a_list() -> None:
    with pytest.raises(ManifestError, match="department: expected one value \\(enum, single-select\\), got a list of 2"):
        validate_metadata({"department": ["it", "hr"]}, SCHEMA, WHERE)


def test_string_list_rejects_non_strings() -> None:
    with pytest.raises(ManifestError, match=r"conditions: expected strings, got \['acl', 3\]"):
        validate_metadata({"department": "hr", "conditions": ["acl", 3]}, SCHEMA, WHERE)


def test_metadata_that_is_not_an_object_is_rejected() -> None:
    with pytest.raises(ManifestError, match="line 7: metadata must be an object, got list"):
        validate_metadata(["department"], SCHEMA, WHERE)  # type: ignore[arg-type]


def test_without_a_schema_metadata_is_returned_unchanged() -> None:
    assert validate_metadata({"department": "anything", "n": 3}, {}, WHERE) == {"department": "anything", "n": 3}


# --- request filters -----------------------------------------------------------------
def test_request_filter_syntax_becomes_field_filters() -> None:
    filters = parse_filters({
        "department": {"any": ["it", "hr"]}, "conditions": {"all": ["acl tear"]},
        "updated_at": {"gte": "2025-01-01", "lte": "2025-12-31"}, "muscle_groups": "core", "tags": ["policy", "hr"],
    }, SCHEMA)
    assert filters == (
        FieldFilter("department", any_of=("it", "hr")),
        FieldFilter("conditions", all_of=("acl tear",)),
        FieldFilter("updated_at", gte="2025-01-01", lte="2025-12-31T23:59:59.999999+00:00"),
        FieldFilter("muscle_groups", any_of=("core",)),
        FieldFilter("tags", any_of=("policy", "hr")),
    )


def test_any_of_and_all_of_are_accepted_like_chat_filters() -> None:
    assert parse_filters({"tags": {"any_of": ["a"], "all_of": ["b"]}}, {}) == (FieldFilter("tags", ("a",), ("b",)),)


def test_built_in_fields_are_filterable_without_a_schema() -> None:
    assert set(filterable_fields({})) == {"doc_id", "source", "chunk_type", "tags", "lang", "updated_at"}
    assert parse_filters({"doc_id": "hr-1", "chunk_type": ["text"], "lang": "en"}, {}) == (
        FieldFilter("doc_id", any_of=("hr-1",)), FieldFilter("chunk_type", any_of=("text",)),
        FieldFilter("lang", any_of=("en",)),
    )


@pytest.mark.parametrize(("raw", "message"), [
    ({"departmnt": "it"}, r"filters: unknown field 'departmnt'; filterable fields: chunk_type, conditions, department, "
                          r"doc_id, lang, muscle_groups, owner, source, tags, updated_at"),
    ({"internal_note": "x"}, r"filters.internal_note: field is not filterable"),
    ({"department": "marketing"}, r"filters.department: 'marketing' not allowed; allowed values: it, hr, finance"),
    ({"muscle_groups": {"all": ["core", "arms"]}}, r"'arms' not allowed; allowed values: neck, core, glutes"),
    ({"updated_at": {"gte": "2025-13-01"}}, r"filters.updated_at.gte: '2025-13-01' is not an ISO-8601 date"),
    ({"updated_at": "2025-01-01"}, r"filters.updated_at: a date field takes gte and/or lte"),
    ({"department": {"gte": "a"}}, r"filters.department: gte/lte apply to date fields only; department is enum"),
    ({"department": {"all": ["it"]}}, r"filters.department: 'all' needs a multi-valued field"),
    ({"department": {"none": ["it"]}}, r"filters.department: unknown operator\(s\) \['none'\]"),
    ({"department": 3}, r"filters.department: expected a string, a list of strings or an object"),
    ({"department": []}, r"filters.department.any: expected a non-empty list of non-empty strings"),
    ({"drop table": "x"}, r"filters: 'drop table' is not a valid field name"),
])
def test_invalid_request_filters_are_rejected_with_the_field_named(raw: dict[str, Any], message: str) -> None:
    with pytest.raises(RequestError, match=message) as info:
        parse_filters(raw, SCHEMA)
    assert info.value.http_status == 400


def test_enum_rejection_lists_the_allowed_values_for_the_client() -> None:
    with pytest.raises(RequestError) as info:
        parse_filters({"department": "marketing"}, SCHEMA)
    assert info.value.to_dict()["details"] == {"field": "filters.department", "allowed": ["it", "hr", "finance"]}


def test_lte_on_a_bare_date_includes_datetimes_of_that_day() -> None:
    bound = normalize_date("2025-12-31", end_of_day=True)
    assert "2025-12-31T18:30:00+00:00" <= bound < "2026-01-01"
    assert normalize_date("2025-12-31") == "2025-12-31"


# --- config ----------------------------------------------------------------------------
@pytest.mark.parametrize(("retrieval", "message"), [
    ({"metadata_schema": {"department": {"type": "enum"}}}, "type enum needs a non-empty 'values' list"),
    ({"metadata_schema": {"owner": {"type": "string", "values": ["a"]}}}, "'values' applies to type enum only"),
    ({"metadata_schema": {"tags": {"type": "string_list", "multi": True}}}, "'multi' applies to type enum only"),
    ({"metadata_schema": {"source": {"type": "string"}}}, "'source' is a chunk column, not a metadata field"),
    ({"presets": [{"name": "by_x", "filter_field": "x"}]},
     "presets.by_x.filter_field 'x' is neither in metadata_schema nor built in"),
    ({"presets": [{"name": "p", "query_template": "{query} {user}"}]}, r"placeholder \{user\} is not allowed"),
    ({"presets": [{"name": "p", "query_template": "{query!r}"}]}, r"placeholder \{query\} is not allowed"),
    ({"presets": [{"name": "p", "query_template": "{query"}]}, "is not a valid format string"),
    ({"presets": [{"name": "p"}, {"name": "p"}]}, "presets: names must be unique"),
    ({"presets": [{"name": "p", "filter_field": "updated_at"}]}, "is a date; presets filter by value"),
    ({"metadata_schema": {"note": {"type": "string", "filterable": False}},
      "presets": [{"name": "p", "filter_field": "note"}]}, "declared filterable: false"),
    ({"freshness": {"field": "owner"}, "metadata_schema": {"owner": {"type": "string"}}},
     "freshness.field 'owner' is declared as string"),
])
def test_invalid_schema_or_presets_fail_at_config_load(tmp_path: Any, retrieval: dict[str, Any], message: str) -> None:
    from tests.conftest import make_settings

    with pytest.raises(ConfigError, match=message):
        make_settings(tmp_path, retrieval=retrieval)


@pytest.mark.parametrize(("bound", "accepted"), [
    ("2025-01-01", "2025-01-01T23:59:59.999999+00:00"),
    ("2025-01-01T10:00", "2025-01-01T10:00:00+00:00"),
    ("2025-01-01T10:00:00Z", "2025-01-01T10:00:00+00:00"),
    ("2025-01-01T12:00:00+02:00", "2025-01-01T10:00:00+00:00"),
    ("20250101", None), ("2025-W01-1", None), ("2025-001", None), ("2025-01-01 10:00", None),
    ("2025-02-30", None), (20250101, None), (True, None), (["2025-01-01"], None),
])
def test_a_date_bound_is_a_date_or_a_date_and_time_and_nothing_else(bound: Any, accepted: str | None) -> None:
    """Issue 49 (also): filters.updated_at.lte accepted what no schema calls a date ("20250101",
    an ISO week date), since Python's fromisoformat reads them."""
    if accepted is None:
        with pytest.raises(RequestError, match=r"filters\.updated_at\.lte: .* is not an ISO-8601 date"):
            parse_filters({"updated_at": {"lte": bound}}, SCHEMA)
    else:
        assert parse_filters({"updated_at": {"lte": bound}}, SCHEMA)[0].lte == accepted
