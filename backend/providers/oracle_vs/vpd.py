"""Access control enforced by the database: a Virtual Private Database policy per version table.

Without it, ACLs exist only in the runtime's SQL: an alias view returns every row to anyone who
may select it (review §2.7). With ``store.oracle.vpd: on`` every version table gets the row-level
policy ``RAG_ACL`` (``DBMS_RLS.ADD_POLICY``; Enterprise Edition, all releases). Its function
``RAG_ACL_PREDICATE`` returns, for any session user other than the store's owner, the predicate
``PREDICATE``: a ``"public"`` row is always visible, and a row whose ``rag_acl`` array holds one of
the labels of the session's ``RAG_ACL_<OWNER>`` application context (attribute ``LABELS``, a JSON
array of strings), as the runtime's ``Visibility`` decides. The owner (the runtime, which applies
the same condition in its own SQL and must see every row to copy, write and drop versions) gets
no predicate. Selecting a version table or an alias view (whose base table it is) goes through the
policy: Oracle appends the predicate to every query that names the table, views included
(``DBMS_RLS`` reference: "whenever the table is referenced in a query or subquery, the server
calls the policy function").

The context can be set only by its trusted package ``RAG_ACL_CTX`` (``set_labels`` /
``clear_labels``): a DBA creates the namespace bound to it, once
(``CREATE CONTEXT RAG_ACL_<OWNER> USING <owner>.RAG_ACL_CTX``, ``CREATE ANY CONTEXT``; one per
schema, so two deployments in one database never rebind each other's), and grants
``EXECUTE`` on the package only to the middle tier that vouches for who its users are. The policy
function and the package are created by ``ensure_catalog`` when missing. ``ADD_POLICY`` and
``DROP_POLICY`` commit like DDL, so they run in the DDL phase of ``create_version`` /
``finish_load`` and before ``DROP TABLE`` in ``drop_version``.

Every statement here is fixed text; the one value (the table name) is a bind.
"""

from __future__ import annotations

from typing import Any

import structlog

from backend.common.errors import StoreError
from backend.common.identifiers import validate_identifier
from backend.providers.oracle_vs import sql

log = structlog.get_logger(__name__)

POLICY = "RAG_ACL"
FUNCTION = "RAG_ACL_PREDICATE"
PACKAGE = "RAG_ACL_CTX"
#: The application context is named per owner, ``RAG_ACL_<OWNER>``: a context namespace is one
#: database-wide object bound to one package (CREATE CONTEXT, SQL Language Reference), so a shared
#: name would let a second schema of the same database (staging beside production, two tenants)
#: rebind it and break the first (review 4, M4).
CONTEXT_PREFIX = "RAG_ACL_"
#: Where the policy function puts its owner's context name into ``PREDICATE``.
CONTEXT_MARK = "#CTX#"
#: Marks the current objects' source: an older function (shared ``RAG_ACL`` context, ``public`` only
#: when unset) is replaced by ``ensure_objects``.
SOURCE_MARK = "rag-vpd 2"
#: ORA-28101 "policy already exists", ORA-28102 "policy does not exist".
POLICY_EXISTS, POLICY_MISSING = 28101, 28102

#: What a session other than the owner's sees: ``public`` rows always (as the runtime's
#: ``Visibility`` does), and rows whose ``rag_acl`` holds a label of its context (the same
#: ``JSON_EXISTS`` path filter as the runtime's own access condition, ``sql.filter_clause``, so the
#: multivalue index on ``rag_acl`` serves both). ``SYS_CONTEXT(..., 4000)``: the default return
#: length is 256 bytes. ``#CTX#`` is the owner's context (the function puts it in).
PREDICATE = (
    "(JSON_EXISTS(metadata, '$.rag_acl?(@ == $f0)' PASSING 'public' AS \"f0\") OR EXISTS (SELECT 1 FROM JSON_TABLE("
    f"NVL(SYS_CONTEXT('{CONTEXT_MARK}', 'LABELS', 4000), '[]'), '$[*]' "
    "COLUMNS (label VARCHAR2(1000) PATH '$')) l "
    "WHERE JSON_EXISTS(metadata, '$.rag_acl?(@ == $f0)' PASSING l.label AS \"f0\")))"
)
#: The context name in PL/SQL, from the owner of the code that runs (both objects are the owner's).
_OWNER_CONTEXT_FN = f"SUBSTR('{CONTEXT_PREFIX}' || p_schema, 1, 128)"
_OWNER_CONTEXT_PKG = f"SUBSTR('{CONTEXT_PREFIX}' || $$PLSQL_UNIT_OWNER, 1, 128)"

#: The policy function (definer's rights, so readers need no grant on it): no predicate for the
#: owner's sessions, ``PREDICATE`` with the owner's context for every other.
FUNCTION_DDL = (
    f"CREATE OR REPLACE FUNCTION {FUNCTION} (p_schema IN VARCHAR2, p_object IN VARCHAR2) RETURN VARCHAR2 AS\n"
    "BEGIN\n"
    f"  -- {SOURCE_MARK}: the owner's own context; public rows always\n"
    "  IF SYS_CONTEXT('USERENV', 'SESSION_USER') = p_schema THEN\n"
    "    RETURN NULL;\n"
    "  END IF;\n"
    f"  RETURN REPLACE(q'~{PREDICATE}~', '{CONTEXT_MARK}', {_OWNER_CONTEXT_FN});\n"
    f"END {FUNCTION};"
)
#: The only code that may set the owner's context (the namespace is bound to it).
PACKAGE_DDL = (
    f"CREATE OR REPLACE PACKAGE {PACKAGE} AS\n"
    "  PROCEDURE set_labels(p_labels IN VARCHAR2);\n"
    "  PROCEDURE clear_labels;\n"
    f"END {PACKAGE};"
)
PACKAGE_BODY_DDL = (
    f"CREATE OR REPLACE PACKAGE BODY {PACKAGE} AS\n"
    "  PROCEDURE set_labels(p_labels IN VARCHAR2) IS\n"
    "  BEGIN\n"
    f"    DBMS_SESSION.SET_CONTEXT({_OWNER_CONTEXT_PKG}, 'LABELS', p_labels);\n"
    "  END set_labels;\n"
    "  PROCEDURE clear_labels IS\n"
    "  BEGIN\n"
    f"    DBMS_SESSION.CLEAR_CONTEXT({_OWNER_CONTEXT_PKG}, NULL, 'LABELS');\n"
    "  END clear_labels;\n"
    f"END {PACKAGE};"
)
#: Whether the function's source is the current one (``SOURCE_MARK``).
CURRENT_SOURCE_SQL = (f"SELECT COUNT(*) FROM SYS.USER_SOURCE WHERE name = '{FUNCTION}' AND type = 'FUNCTION' "
                      f"AND text LIKE '%{SOURCE_MARK}%'")
#: Which of the function, package and package body exist (all three, or ``ensure_objects`` creates them).
OBJECTS_SQL = (f"SELECT object_name, object_type FROM SYS.USER_OBJECTS WHERE object_name IN ('{FUNCTION}', "
               f"'{PACKAGE}') AND object_type IN ('FUNCTION', 'PACKAGE', 'PACKAGE BODY') AND status = 'VALID'")
#: ``DBMS_RLS.ADD_POLICY`` on a version table (bind ``:object_name``; schema = the current user):
#: SELECT only (the owner writes), ``CONTEXT_SENSITIVE`` so the function runs again when the
#: session's context changes.
ADD_POLICY_SQL = (f"BEGIN DBMS_RLS.ADD_POLICY(object_name => :object_name, policy_name => '{POLICY}', "
                  f"policy_function => '{FUNCTION}', statement_types => 'SELECT', "
                  "policy_type => DBMS_RLS.CONTEXT_SENSITIVE); END;")
DROP_POLICY_SQL = f"BEGIN DBMS_RLS.DROP_POLICY(object_name => :object_name, policy_name => '{POLICY}'); END;"
#: The version tables that carry the policy (for ``rag oracle check``).
POLICIES_SQL = f"SELECT object_name FROM SYS.USER_POLICIES WHERE policy_name = '{POLICY}'"


def context_name(owner: str) -> str:
    """The owner's application context, ``RAG_ACL_<OWNER>`` (as the function and package name it)."""
    return (CONTEXT_PREFIX + validate_identifier(owner, "schema").upper())[:128]


def predicate(owner: str) -> str:
    """``PREDICATE`` as the policy function returns it for ``owner``'s tables."""
    return PREDICATE.replace(CONTEXT_MARK, context_name(owner))


def predicate_probe_sql(version: str, owner: str = "RAG") -> str:
    """``predicate(owner)`` applied to a version table as plain SQL (the parse tests and an operator's check)."""
    return f"SELECT COUNT(*) FROM {sql.oracle_name(version)} WHERE {predicate(owner)}"


def context_ddl(owner: str) -> str:
    """The DBA's one statement (``CREATE ANY CONTEXT``): the owner's namespace, settable only by its package."""
    return f"CREATE OR REPLACE CONTEXT {context_name(owner)} USING {validate_identifier(owner, 'schema').upper()}.{PACKAGE}"


def _code(exc: BaseException) -> int | None:
    return getattr(exc.args[0] if exc.args else None, "code", None)


#: What a refused VPD step needs (ORA-06550: no DBMS_RLS, e.g. Standard Edition; ORA-01031: a grant).
NEEDS = ("store.oracle.vpd is on: it needs Enterprise Edition, EXECUTE ON DBMS_RLS and CREATE PROCEDURE "
         "(all in DB_DEVELOPER_ROLE), or set store.oracle.vpd: off (docs/ORACLE.md, 'Access control enforced "
         "by the database')")


def _run(cur: Any, statement: str, binds: dict[str, Any], tolerated: int, what: str) -> bool:
    import oracledb

    try:
        cur.execute(statement, binds)
    except oracledb.DatabaseError as exc:
        if _code(exc) == tolerated:
            return False
        raise StoreError(f"{what} failed: {str(exc).strip()[:300]}; {NEEDS}", code=_code(exc)) from exc
    return True


def ensure_objects(cur: Any) -> None:
    """The policy function and the context package, created when any of them is missing or invalid
    (not replaced on every start: replacing a package discards its state in other sessions)."""
    cur.execute(OBJECTS_SQL)
    if len(cur.fetchall()) >= 3:
        cur.execute(CURRENT_SOURCE_SQL)
        if int((cur.fetchone() or (0,))[0] or 0) > 0:
            return
        log.info("store.vpd_objects_upgraded", why="shared RAG_ACL context before review 4 M4")
    for ddl in (FUNCTION_DDL, PACKAGE_DDL, PACKAGE_BODY_DDL):
        _run(cur, ddl, {}, 0, f"creating {ddl.split(' AS')[0].split(' (')[0][len('CREATE OR REPLACE '):]}")
    log.info("store.vpd_objects_created", function=FUNCTION, package=PACKAGE)


def add_policy(cur: Any, version: str) -> None:
    """The ``RAG_ACL`` policy on the version's table; one already there is kept (ORA-28101)."""
    if _run(cur, ADD_POLICY_SQL, {"object_name": sql.oracle_name(version)}, POLICY_EXISTS,
            f"adding the {POLICY} policy to {version}"):
        log.info("store.vpd_policy_added", version=version)


def drop_policy(cur: Any, version: str) -> None:
    """Before ``DROP TABLE``; a table without the policy is not an error (ORA-28102)."""
    _run(cur, DROP_POLICY_SQL, {"object_name": sql.oracle_name(version)}, POLICY_MISSING,
         f"dropping the {POLICY} policy of {version}")
