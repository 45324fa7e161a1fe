"""Golden sets: JSONL files of queries with the documents and answer mode they expect.

One JSON object a line::

    {"id": "s01", "query": "How many days of annual leave?",
     "expected_sources": {"annual-leave": 3, "company-holidays-2026": 1},
     "expected_mode": "rag", "domain": null, "must_contain": ["25 days"]}

``expected_sources`` is a list of doc_ids (each relevant with grade 1) or a
``{doc_id: grade}`` object for graded relevance (nDCG). Only ``fallback`` queries
may leave it empty: a question the corpus should answer without naming where is a
golden-set bug, not a query. Every problem is reported as ``file:line: what``, all
of them at once, so a golden set is fixed in one pass.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from backend.common.errors import EvaluationError
from backend.common.jsonl import parse_model_line
from backend.common.text_fields import non_blank

AnswerMode = Literal["rag", "hybrid", "fallback"]


class GoldenQuery(BaseModel):
    """One golden query. ``expected_sources`` is normalised to ``{doc_id: grade}``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str | None = Field(None, min_length=1, max_length=128, description="Stable id for reports; default: the line number.")
    query: Annotated[str, non_blank("query is blank")] = Field(..., min_length=1, max_length=4000)
    expected_sources: dict[str, float] = Field(default_factory=dict)
    expected_mode: AnswerMode
    domain: str | None = Field(None, min_length=1)
    must_contain: tuple[str, ...] = ()
    principal: str | None = Field(
        None, min_length=1, max_length=64,
        description="Run the query as this configured principal (access.principals): it sees only what the "
        "principal may see. Without it the query runs unrestricted.")
    group: str | None = Field(
        None, min_length=1, max_length=128,
        description="Queries of one group (an article, a document) stay on one side of every calibration fold, "
        "so a threshold is never judged on the material it was fitted on. Default: the first expected source.")
    generated: bool = Field(
        False, description="Written by the starter golden set generator (backend.core.services.starter_golden), "
        "not by a person: replace it with real questions.")

    @field_validator("expected_sources", mode="before")
    @classmethod
    def _as_grades(cls, value: object) -> object:
        if isinstance(value, list):
            if any(not isinstance(v, str) for v in value):
                raise ValueError("a list of expected_sources must hold doc_id strings")
            if len(set(value)) != len(value):
                raise ValueError("expected_sources lists a doc_id twice")
            return {doc_id: 1.0 for doc_id in value}
        return value

    @field_validator("expected_sources")
    @classmethod
    def _grades_positive(cls, value: dict[str, float]) -> dict[str, float]:
        for doc_id, grade in value.items():
            if not doc_id.strip():
                raise ValueError("expected_sources has an empty doc_id")
            if grade <= 0:
                raise ValueError(f"grade of {doc_id!r} must be > 0 (leave irrelevant documents out), got {grade}")
        return value

    @field_validator("must_contain")
    @classmethod
    def _phrases_not_blank(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        if any(not p.strip() for p in value):
            raise ValueError("must_contain holds a blank phrase")
        return value

    @model_validator(mode="after")
    def _sources_unless_fallback(self) -> "GoldenQuery":
        if not self.expected_sources and self.expected_mode != "fallback":
            raise ValueError(f"expected_sources is empty; only expected_mode 'fallback' may omit it (got {self.expected_mode!r})")
        return self

    @property
    def counts_for_retrieval(self) -> bool:
        """Fallback queries with no expected sources say nothing about ranking."""
        return bool(self.expected_sources)


@dataclass(frozen=True)
class GoldenSet:
    path: Path
    queries: tuple[GoldenQuery, ...]
    #: sha256 of the file: a report says exactly which golden set it measured
    sha256: str

    def __len__(self) -> int:
        return len(self.queries)


def parse_golden_line(raw: str) -> GoldenQuery:
    """One line -> ``GoldenQuery``; ``ValueError`` with a readable reason otherwise."""
    return parse_model_line(raw, GoldenQuery)


def load_golden_set(path: str | Path) -> GoldenSet:
    """Read and validate a golden set. ``EvaluationError`` lists every bad line as
    ``file:line: what is wrong``; blank lines and ``#`` comments are skipped."""
    path = Path(path)
    try:
        data = path.read_bytes()
        text = data.decode("utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise EvaluationError(f"{path}: cannot read golden set: {exc}", path=str(path)) from exc
    queries: list[GoldenQuery] = []
    problems: list[str] = []
    seen: dict[str, int] = {}
    for number, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip() or raw.lstrip().startswith("#"):
            continue
        try:
            query = parse_golden_line(raw)
        except ValueError as exc:
            problems.append(f"{path}:{number}: {exc}")
            continue
        qid = query.id or f"line{number}"
        if qid in seen:
            problems.append(f"{path}:{number}: id {qid!r} is already used at line {seen[qid]}")
            continue
        seen[qid] = number
        queries.append(query if query.id else query.model_copy(update={"id": qid}))
    if problems:
        raise EvaluationError("golden set is invalid:\n" + "\n".join(problems), path=str(path), problems=problems)
    if not queries:
        raise EvaluationError(f"{path}: golden set holds no queries", path=str(path))
    return GoldenSet(path, tuple(queries), hashlib.sha256(data).hexdigest())
