"""Strict validation of every SQL identifier that comes from config or a request.

Table, view, alias, index, domain and metadata-field names are interpolated into
SQL (they cannot be bind variables), so they must match a pattern that no
injection can satisfy: a letter, then letters, digits or underscores, at most 30
characters (Oracle's portable limit for the names we derive from them).
"""

from __future__ import annotations

import re

from backend.common.errors import InvalidIdentifier

_IDENTIFIER = re.compile(r"^[A-Za-z][A-Za-z0-9_]{0,29}$")
_DOMAIN_KEY = re.compile(r"^[a-z][a-z0-9_-]{0,62}$")


def validate_identifier(name: str, what: str = "identifier") -> str:
    """Return ``name`` unchanged if it is a safe SQL identifier, else raise."""
    if not isinstance(name, str) or not _IDENTIFIER.fullmatch(name):
        raise InvalidIdentifier(
            f"invalid {what} {name!r}: expected a letter followed by letters, digits or "
            "underscores, at most 30 characters",
            identifier=name,
        )
    return name


def validate_domain_key(key: str) -> str:
    """Domain keys travel in the ``X-RAG-Domain`` header; keep them boring."""
    if not isinstance(key, str) or not _DOMAIN_KEY.fullmatch(key):
        raise InvalidIdentifier(
            f"invalid domain key {key!r}: expected lowercase letters, digits, '_' or '-', "
            "starting with a letter",
            identifier=key,
        )
    return key


def is_identifier(name: str) -> bool:
    return isinstance(name, str) and bool(_IDENTIFIER.fullmatch(name))
