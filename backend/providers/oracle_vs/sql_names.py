"""Names every Oracle statement is built from: validated, upper-cased table and view names, the
names derived from a version's (indexes, question and summary tables), the metric keyword, the chunk
column list and the IN-list buckets.

Names are interpolated into SQL text, so each one passes :func:`validate_identifier` (via
:func:`oracle_name`) before any text is built; values are always bind variables.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

from backend.common.errors import InvalidIdentifier
from backend.common.identifiers import validate_table_name


METRICS: dict[str, str] = {"cosine": "COSINE", "dot": "DOT", "euclidean": "EUCLIDEAN"}
#: Oracle stores '' as NULL, so columns that may hold an empty string are nullable and
#: read back as ''.
CHUNK_COLUMNS = "chunk_id, doc_id, chunk_index, chunk_type, source, text, content_hash, metadata"

#: Oracle's reserved words (SQL Language Reference, "Oracle SQL Reserved Words"; ``V$RESERVED_WORDS``
#: with ``RESERVED = 'Y'``). Unquoted, none can name a table or view.
RESERVED_WORDS = frozenset("""
ACCESS ADD ALL ALTER AND ANY AS ASC AUDIT BETWEEN BY CHAR CHECK CLUSTER COLUMN COLUMN_VALUE COMMENT COMPRESS
CONNECT CREATE CURRENT DATE DECIMAL DEFAULT DELETE DESC DISTINCT DROP ELSE EXCLUSIVE EXISTS FILE FLOAT FOR FROM
GRANT GROUP HAVING IDENTIFIED IMMEDIATE IN INCREMENT INDEX INITIAL INSERT INTEGER INTERSECT INTO IS LEVEL LIKE
LOCK LONG MAXEXTENTS MINUS MLSLABEL MODE MODIFY NESTED_TABLE_ID NOAUDIT NOCOMPRESS NOT NOWAIT NULL NUMBER OF
OFFLINE ON ONLINE OPTION OR ORDER PCTFREE PRIOR PUBLIC RAW RENAME RESOURCE REVOKE ROW ROWID ROWNUM ROWS SELECT
SESSION SET SHARE SIZE SMALLINT START SUCCESSFUL SYNONYM SYSDATE TABLE THEN TO TRIGGER UID UNION UNIQUE UPDATE
USER VALIDATE VALUES VARCHAR VARCHAR2 VIEW WHENEVER WHERE WITH
""".split())
#: The catalog's own tables (``enrichment_cache.DDL`` included): a version or alias of the same name
#: would silently reuse them.
CATALOG_TABLES = frozenset({"RAG_VERSIONS", "RAG_ALIASES", "RAG_ALIAS_HISTORY", "CHAT_INTERACTIONS",
                            "RAG_EMBEDDING_CACHE", "RAG_CONVERSATION_TURNS", "RAG_FEEDBACK", "RAG_SERIES_LOCKS",
                            "RAG_SERIES_LOCK_HOLDERS", "RAG_ENRICHMENT_CACHE", "RAG_QUERY_MODEL_CHECKS",
                            "RAG_QUERY_MODELS", "RAG_AUDIT_LOG", "RAG_QUOTA_COUNTERS", "RAG_SYNC_ITEMS",
                            "RAG_SYNC_RUNS"})


def oracle_name(name: str, what: str = "index_name") -> str:
    """A table or view name as Oracle stores it: validated, then upper-cased.

    Oracle upper-cases unquoted identifiers, so ``kb_v1`` and ``KB_V1`` name one
    table; the registry therefore keeps (and compares) the upper-case form only.
    Reserved words, the catalog's own table names, names ending in a derived suffix
    (``_QUESTIONS``, ``_SUMMARIES``, ...) and system names (``DUAL``, ``USER_*``, ``DBMS_*``, ...;
    ``identifiers.validate_table_name``) are refused, naming the word and the setting (``what``).
    """
    upper = validate_table_name(name, what).upper()
    if upper in RESERVED_WORDS:
        raise InvalidIdentifier(f"invalid {what} {name!r}: {upper} is an Oracle reserved word and cannot name a "
                                "table or view; choose another name", identifier=name)
    if upper in CATALOG_TABLES:
        raise InvalidIdentifier(f"invalid {what} {name!r}: {upper} is a catalog table of the store; choose another "
                                "name", identifier=name)
    return upper


def metric(distance: str) -> str:
    try:
        return METRICS[distance]
    except KeyError:
        raise ValueError(f"unsupported distance {distance!r}; expected one of {sorted(METRICS)}") from None


def version_table(name: str) -> str:
    return oracle_name(name, "index_name")


def index_names(version: str) -> tuple[str, str]:
    """(vector index, text index) names of a version; 23ai allows 128-byte names."""
    t = version_table(version)
    return f"{t}_VIDX", f"{t}_TIDX"


def _suffixed(suffix: str) -> Callable[[str], str]:
    """The name of a version's table's companion object: the version's table name and ``suffix``."""

    def name(version: str) -> str:
        return f"{version_table(version)}{suffix}"

    return name


metadata_index_name = _suffixed("_MIDX")
acl_index_name = _suffixed("_AIDX")
question_vector_index_name = _suffixed("_QVIDX")
questions_table = _suffixed("_QUESTIONS")
summaries_table = _suffixed("_SUMMARIES")


#: Documents whose stored chunks one statement reads (Oracle allows 1000 expressions in an IN list).
DOCS_PER_READ = 500
#: IN-list lengths a statement is built for. A list of ``n`` values takes the smallest bucket
#: that holds it and the unused binds are ``None`` (``in_binds``): ``x IN (..., NULL)`` is never
#: true for the NULL, so the rows are the same, and 1..500 values share 4 statement texts
#: instead of 500 (hard parses, shared pool, the driver's 20-entry statement cache;
#: python-oracledb ``bind.rst``).
IN_BUCKETS = (8, 32, 128, 500)


def in_size(count: int) -> int:
    """The IN-list length (a bucket of ``IN_BUCKETS``) that ``count`` values are bound into."""
    for size in IN_BUCKETS:
        if 1 <= count <= size:
            return size
    raise ValueError(f"an IN list binds 1..{IN_BUCKETS[-1]} values, got {count}")


def in_marks(prefix: str, count: int) -> str:
    """``:<prefix>0, ...`` for ``count`` values, padded to their bucket (``in_size``)."""
    return ", ".join(f":{prefix}{i}" for i in range(in_size(count)))


def in_binds(prefix: str, values: Sequence[Any]) -> dict[str, Any]:
    """``{<prefix>0: v0, ...}`` padded with ``None`` to the bucket of ``len(values)`` (see ``in_marks``)."""
    return {f"{prefix}{i}": values[i] if i < len(values) else None for i in range(in_size(len(values)))}


def json_text(expr: str, name: str) -> str:
    """A JSON column fetched as text: exact numbers back in Python, whatever the driver's
    OSON decoding (floats such as 0.7 would otherwise risk coming back as Decimal)."""
    return f"JSON_SERIALIZE({expr} RETURNING CLOB) AS {name}"


def chunk_select(alias: str) -> str:
    return ", ".join(json_text(f"{alias}.metadata", "metadata") if c.strip() == "metadata" else f"{alias}.{c.strip()}"
                     for c in CHUNK_COLUMNS.split(","))
