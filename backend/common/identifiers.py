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


def _matching(value: str, pattern: re.Pattern[str], what: str, expected: str) -> str:
    """``value`` unchanged if ``pattern`` matches all of it, else ``InvalidIdentifier`` saying ``expected``."""
    if not isinstance(value, str) or not pattern.fullmatch(value):
        raise InvalidIdentifier(f"invalid {what} {value!r}: expected {expected}", identifier=value)
    return value


def validate_identifier(name: str, what: str = "identifier") -> str:
    """Return ``name`` unchanged if it is a safe SQL identifier, else raise."""
    return _matching(name, _IDENTIFIER, what,
                     "a letter followed by letters, digits or underscores, at most 30 characters")


#: Suffixes the stores append to a version's name for its derived tables and indexes (Oracle:
#: ``{V}_QUESTIONS``, ``{V}_SUMMARIES``, ``{V}_QUESTIONS_DOC``, ``{V}_QUESTIONS_CHUNK``, ``{V}_SUMMARIES_DOC``,
#: ``{V}_DOC``, ``{V}_VIDX``, ``{V}_TIDX``, ``{V}_MIDX``; SQLite also ``{V}_emb``, ``{V}_fts`` and its FTS5
#: shadow tables, ``{V}_facets``, ``{V}_facets_rid``). A version or alias named with one of them would be
#: another version's derived object: ``create_version("kb")`` would empty ``kb_summaries`` and
#: ``drop_version("kb")`` drop it.
DERIVED_SUFFIXES = ("_QUESTIONS", "_SUMMARIES", "_DOC", "_CHUNK", "_EMB", "_VIDX", "_TIDX", "_MIDX", "_AIDX", "_FTS",
                    "_FTS_DATA", "_FTS_IDX", "_FTS_CONTENT", "_FTS_DOCSIZE", "_FTS_CONFIG", "_FACETS", "_FACETS_RID")
#: Names the database itself resolves unqualified (Oracle's ``DUAL``, schema names and the dictionary
#: views a DBA or tool may query unqualified): a table of the same name in the store's schema would
#: shadow them. The store's own SQL reads them as ``SYS.…``; ordinary names that merely start like a
#: dictionary view (``user_guides_v1``, ``all_docs``) stay allowed.
SYSTEM_NAMES = frozenset({
    "DUAL", "SYS", "SYSTEM", "CTXSYS", "MDSYS", "XDB", "PUBLIC",
    # EXPLAIN PLAN writes to and rag oracle check reads PLAN_TABLE unqualified (review 4, N4)
    "PLAN_TABLE",
    *(f"{scope}_{view}" for scope in ("USER", "ALL", "DBA", "CDB") for view in (
        "TABLES", "TAB_COLUMNS", "INDEXES", "IND_COLUMNS", "OBJECTS", "VIEWS", "SEQUENCES", "SYNONYMS",
        "CONSTRAINTS", "LOBS", "SEGMENTS", "TAB_PRIVS", "SYS_PRIVS", "ROLE_PRIVS", "USERS", "SOURCE",
        "TAB_STATISTICS", "INDEX_USAGE")),
})
#: Prefixes of Oracle's supplied packages (``DBMS_LOB``, ``UTL_*``, Oracle Text's ``CTX_*``),
#: system-generated names (``SYS_*``) and SQLite's internal tables (``sqlite_*``). ``V$`` views
#: cannot be named: ``$`` is refused.
SYSTEM_PREFIXES = ("DBMS_", "UTL_", "CTX_", "SYS_", "SQLITE_")


def validate_table_name(name: str, what: str = "index_name") -> str:
    """``validate_identifier``, plus the rules for a name that becomes a table or view (a version or
    an alias): it may not end in a derived suffix (:data:`DERIVED_SUFFIXES`) nor be a system name
    (:data:`SYSTEM_NAMES`, :data:`SYSTEM_PREFIXES`). Checked case-insensitively (both stores fold
    unquoted names); the error names the setting (``what``) and the rule."""
    upper = validate_identifier(name, what).upper()
    suffix = next((s for s in DERIVED_SUFFIXES if upper.endswith(s)), None)
    if suffix is not None:
        raise InvalidIdentifier(
            f"invalid {what} {name!r}: a version or alias name may not end in {suffix} (the stores name a version's "
            f"derived tables and indexes {{name}}{suffix}, so it would be another version's table); choose another "
            "name", identifier=name)
    prefix = next((p for p in SYSTEM_PREFIXES if upper.startswith(p)), None)
    if upper in SYSTEM_NAMES or prefix is not None:
        rule = f"names starting with {prefix} are" if prefix else f"{upper} is"
        raise InvalidIdentifier(
            f"invalid {what} {name!r}: {rule} reserved for the database's own objects (dictionary views, DUAL, "
            "supplied packages), which a table of that name would shadow; choose another name", identifier=name)
    return name


def validate_domain_key(key: str) -> str:
    """Domain keys travel in the ``X-RAG-Domain`` header; keep them boring."""
    return _matching(key, _DOMAIN_KEY, "domain key", "lowercase letters, digits, '_' or '-', starting with a letter")


def is_identifier(name: str) -> bool:
    return isinstance(name, str) and bool(_IDENTIFIER.fullmatch(name))
