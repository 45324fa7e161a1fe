"""The frozen model base, the identifier validators and the small pieces several settings areas share."""

from __future__ import annotations

import string
from pathlib import Path
from typing import Iterable, Literal

from pydantic import BaseModel, ConfigDict, Field

from backend.common import identifiers
from backend.common.errors import InvalidIdentifier
from backend.common.suggest import close_names


def hint(value: str, known: Iterable[str]) -> str:
    """``"; did you mean 'x'?"`` naming the one nearest known name, else ``""``: appended to a
    message that refuses a key, a profile or a choice it does not know."""
    best = close_names(value, known, limit=1)
    return f"; did you mean {best[0]!r}?" if best else ""


def placeholders(template: str, what: str) -> list[tuple[str, str, str | None]]:
    """``(name, format spec, conversion)`` of each ``{...}`` in a format string, for the
    validators that allow only some placeholders; a ``ValueError`` naming ``what`` when the
    template does not parse."""
    try:
        parsed = list(string.Formatter().parse(template))
    except ValueError as exc:
        raise ValueError(f"{what} {template!r} is not a valid format string: {exc}") from exc
    return [(name, spec or "", conversion) for _, name, spec, conversion in parsed if name is not None]


def validate_identifier(name: str, what: str = "identifier") -> str:
    """``identifiers.validate_identifier`` for validators: pydantic collects only
    ``ValueError``, so re-raising as one gives the problem its YAML path and lets
    ``load_settings`` report it together with every other problem."""
    try:
        return identifiers.validate_identifier(name, what)
    except InvalidIdentifier as exc:
        raise ValueError(exc.user_message) from exc


def validate_table_name(name: str, what: str = "index_name") -> str:
    """``identifiers.validate_table_name`` (a version or alias name: no derived suffix, no system
    name) for validators, as a ``ValueError`` that pydantic reports with its YAML path."""
    try:
        return identifiers.validate_table_name(name, what)
    except InvalidIdentifier as exc:
        raise ValueError(exc.user_message) from exc


def validate_domain_key(key: str) -> str:
    try:
        return identifiers.validate_domain_key(key)
    except InvalidIdentifier as exc:
        raise ValueError(exc.user_message) from exc


#: the distance of a version; profiles and retrieval must agree on it
Distance = Literal["cosine", "dot", "euclidean"]
#: Repository root; relative paths in config resolve against the config file's repo.
REPO_ROOT = Path(__file__).resolve().parents[3]
DEFAULT_CONFIG = REPO_ROOT / "config" / "rag.yaml"


class _Model(BaseModel):
    """Every settings model: an unknown key is an error (a typo never passes silently) and a
    loaded value never changes."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class RetrySettings(_Model):
    """Retries of transient provider errors, shared by embeddings, enrichment, answers and reranking."""

    max_attempts: int = Field(5, ge=1, le=20, description="Attempts for transient provider errors (429, 5xx, timeouts).")
    initial_wait_s: float = Field(0.5, ge=0, description="First backoff wait in seconds; later waits grow exponentially, with jitter.")
    max_wait_s: float = Field(30.0, ge=0, description="Longest backoff wait in seconds.")
