"""Typed metadata fields and named search presets."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator, model_validator

from backend.common.config.base import _Model, placeholders, validate_identifier

#: Filterable in every request even without a declared schema: the chunk columns a
#: user may name, and the metadata members every chunk may carry.
BUILTIN_FILTER_FIELDS: dict[str, Literal["string", "string_list", "date"]] = {
    "doc_id": "string", "source": "string", "chunk_type": "string", "tags": "string_list", "lang": "string",
    "updated_at": "date",
}
#: Real columns of every store's chunk table; they are not metadata and cannot be declared.
CHUNK_COLUMNS = ("chunk_id", "doc_id", "source", "chunk_type")
PRESET_PLACEHOLDERS = ("query", "value")


class MetadataFieldSettings(_Model):
    type: Literal["enum", "string_list", "string", "date"] = Field(
        ..., description="enum (values, multi), string_list (free-form list), string, date (ISO-8601)."
    )
    values: tuple[str, ...] = Field((), description="Allowed values (enum).")
    multi: bool = Field(False, description="enum: several values allowed (stored as a list).")
    required: bool = Field(False, description="Ingestion rejects a manifest line without this field.")
    filterable: bool = Field(True, description="Requests may filter on this field.")

    @model_validator(mode="after")
    def _values_fit_type(self) -> "MetadataFieldSettings":
        if self.type == "enum":
            if not self.values:
                raise ValueError("type enum needs a non-empty 'values' list")
            if len(set(self.values)) != len(self.values):
                raise ValueError(f"values contain duplicates: {list(self.values)}")
        elif self.values:
            raise ValueError(f"'values' applies to type enum only, not {self.type}")
        if self.multi and self.type != "enum":
            raise ValueError(f"'multi' applies to type enum only (string_list is already multi-valued), not {self.type}")
        return self


class SearchPreset(_Model):
    """A named search an agent can call like a tool (seed 000's ``search_by_*``)."""

    name: str = Field(..., description="Preset name used as /search?preset=<name>.")
    description: str = Field("", description="What the preset finds; shown at GET /search/presets.")
    filter_field: str | None = Field(None, description="Metadata field filtered with `any [value]`; must be filterable.")
    query_template: str = Field("{query}", description="Python format string; {value} is the filter value, {query} the query.")

    @field_validator("name")
    @classmethod
    def _preset_name(cls, v: str) -> str:
        return validate_identifier(v, "preset name")

    @field_validator("query_template")
    @classmethod
    def _placeholders(cls, v: str) -> str:
        for name, spec, conversion in placeholders(v, "query_template"):
            if name not in PRESET_PLACEHOLDERS or spec or conversion:
                raise ValueError(
                    f"query_template {v!r}: placeholder {{{name}}} is not allowed; use only {{query}} and {{value}}"
                )
        return v
