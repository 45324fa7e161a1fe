"""Metadata filters as SQL over a version's facet index, values always bound."""

from __future__ import annotations

from typing import Any, Sequence

from backend.common.identifiers import validate_identifier
from backend.core.types import FieldFilter

#: Filterable fields that are real columns rather than JSON members.
COLUMN_FIELDS = {"chunk_id", "doc_id", "chunk_type", "source"}


def check_filter_fields(filters: Sequence[FieldFilter]) -> None:
    """``InvalidIdentifier`` for a field name that could not be used in SQL."""
    for f in filters:
        validate_identifier(f.field, "filter field")


def filter_sql(filters: Sequence[FieldFilter], table: str, alias: str = "t") -> tuple[str, list[Any]]:
    """Return ``(where_clause, params)``; the clause is ``1=1`` when there are none.

    Metadata fields are looked up in the version's facet index (``<table>_facets``,
    see ``schema.facet_ddl``): a scalar value and every member of a list value is
    one row there, so ``any``/``all`` work on either shape and each condition is an
    index range scan.
    """
    facets = f"{validate_identifier(table, 'index_name')}_facets"
    clauses: list[str] = []
    params: list[Any] = []

    def facet(field: str, condition: str, *values: Any) -> None:
        clauses.append(f"{alias}.rowid IN (SELECT rid FROM {facets} WHERE field = ? AND {condition})")
        params.extend((field, *values))

    for f in filters:
        field = validate_identifier(f.field, "filter field")
        if field in COLUMN_FIELDS:
            column = f"{alias}.{field}"
            if f.any_of:
                # a plain IN lets SQLite use the column's index (chunk_id is UNIQUE, doc_id indexed)
                clauses.append(f"{column} IN ({','.join('?' * len(f.any_of))})")
                params.extend(f.any_of)
            for value in f.all_of:
                clauses.append(f"{column} = ?")
                params.append(value)
            if f.gte is not None:
                clauses.append(f"{column} >= ?")
                params.append(f.gte)
            if f.lte is not None:
                clauses.append(f"{column} <= ?")
                params.append(f.lte)
            continue
        if f.any_of:
            facet(field, f"value IN ({','.join('?' * len(f.any_of))})", *f.any_of)
        for value in f.all_of:
            facet(field, "value = ?", value)
        if f.gte is not None and f.lte is not None:
            facet(field, "value >= ? AND value <= ?", f.gte, f.lte)
        elif f.gte is not None:
            facet(field, "value >= ?", f.gte)
        elif f.lte is not None:
            facet(field, "value <= ?", f.lte)
    return (" AND ".join(clauses) if clauses else "1=1"), params
