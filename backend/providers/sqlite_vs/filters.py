"""Metadata filters as SQL over the JSON ``metadata`` column, values always bound."""

from __future__ import annotations

from typing import Any, Sequence

from backend.common.identifiers import validate_identifier
from backend.core.types import FieldFilter

#: Filterable fields that are real columns rather than JSON members.
COLUMN_FIELDS = {"chunk_id", "doc_id", "chunk_type", "source"}


def filter_sql(filters: Sequence[FieldFilter], alias: str = "t") -> tuple[str, list[Any]]:
    """Return ``(where_clause, params)``; the clause is ``1=1`` when there are none.

    Scalars and JSON arrays are both handled: ``json_each`` over a scalar yields
    the scalar itself, so ``any_of`` works on either shape.
    """
    clauses: list[str] = []
    params: list[Any] = []
    for f in filters:
        field = validate_identifier(f.field, "filter field")
        if field in COLUMN_FIELDS:
            source = f"(SELECT {alias}.{field} AS value)"
            scalar = f"{alias}.{field}"
        else:
            path = f"$.{field}"
            source = f"json_each({alias}.metadata, '{path}')"
            scalar = f"json_extract({alias}.metadata, '{path}')"
        if f.any_of and field in COLUMN_FIELDS:
            # a plain IN lets SQLite use the column's index (chunk_id is UNIQUE, doc_id indexed)
            clauses.append(f"{scalar} IN ({','.join('?' * len(f.any_of))})")
            params.extend(f.any_of)
        elif f.any_of:
            marks = ",".join("?" * len(f.any_of))
            clauses.append(f"EXISTS (SELECT 1 FROM {source} WHERE value IN ({marks}))")
            params.extend(f.any_of)
        for value in f.all_of:
            clauses.append(f"EXISTS (SELECT 1 FROM {source} WHERE value = ?)")
            params.append(value)
        if f.gte is not None:
            clauses.append(f"{scalar} >= ?")
            params.append(f.gte)
        if f.lte is not None:
            clauses.append(f"{scalar} <= ?")
            params.append(f.lte)
    return (" AND ".join(clauses) if clauses else "1=1"), params
