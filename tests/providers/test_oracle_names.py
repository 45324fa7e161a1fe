"""Version and alias names that would meet another object of the schema (issue 30: C1, C2, L11).

C1: a version's derived tables are ``{V}_QUESTIONS`` and ``{V}_SUMMARIES``, so a version named
``KB_SUMMARIES`` is version ``KB``'s summary table: ``create_version("kb")`` emptied it and
``drop_version("kb")`` dropped it. C2: an unqualified ``dual`` or ``USER_TABLES`` resolves to a
table of the schema first, so a version named so hijacked every ``MERGE ... FROM dual``.
L11: ``RAG_ENRICHMENT_CACHE`` is a catalog table.
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from backend.common.errors import InvalidIdentifier, VersionConflict
from backend.core.types import VersionSpec
from backend.providers.oracle_vs import enrichment_cache, series_lock, sql
from tests.providers.oracle_fake import CatalogDb, catalog_store
from tests.providers.test_oracle_sql_parse import builder_statements, check, executed_statements


def spec(name: str) -> VersionSpec:
    return VersionSpec(name, "mini-lm", 3, "cosine")


@pytest.mark.parametrize("name,setting,call,rule", [
    ("kb_summaries", "index_name", lambda s, n: s.create_version(spec(n)), "may not end in _SUMMARIES"),
    ("kb_questions", "index_name", lambda s, n: s.create_version(spec(n)), "may not end in _QUESTIONS"),
    ("KB_SUMMARIES", "index_name", lambda s, n: s.drop_version(n), "may not end in _SUMMARIES"),
    ("kb_vidx", "alias name", lambda s, n: s.point_alias(n, "KB_V1"), "may not end in _VIDX"),
    ("dual", "index_name", lambda s, n: s.create_version(spec(n)), "DUAL is reserved for the database"),
    ("Dual", "alias name", lambda s, n: s.point_alias(n, "KB_V1"), "DUAL is reserved for the database"),
    ("user_tables", "index_name", lambda s, n: s.create_version(spec(n)), "USER_TABLES is reserved"),
    # review 4, N4 (accepted at 18552a8): a version PLAN_TABLE would take EXPLAIN PLAN's rows
    ("plan_table", "index_name", lambda s, n: s.create_version(spec(n)), "PLAN_TABLE is reserved"),
    ("Plan_Table", "alias name", lambda s, n: s.point_alias(n, "KB_V1"), "PLAN_TABLE is reserved"),
    ("all_tab_columns", "index_name", lambda s, n: s.create_version(spec(n)), "ALL_TAB_COLUMNS is"),
    ("dbms_lob", "alias name", lambda s, n: s.point_alias(n, "KB_V1"), "names starting with DBMS_ are"),
    ("sys", "retrieval target", lambda s, n: s.search(n, None, 1), "SYS is reserved for the database"),
    ("rag_enrichment_cache", "index_name", lambda s, n: s.create_version(spec(n)),
     "RAG_ENRICHMENT_CACHE is a catalog table"),
    ("RAG_SERIES_LOCKS", "alias name", lambda s, n: s.point_alias(n, "KB_V1"), "RAG_SERIES_LOCKS is a catalog table"),
])
def test_derived_system_and_catalog_names_are_refused_before_any_statement(name: str, setting: str, call: Any,
                                                                           rule: str) -> None:
    db = CatalogDb()
    db.add_version("KB_V1")
    with pytest.raises(InvalidIdentifier, match=rf"invalid {setting} '{name}': .*{rule}"):
        call(catalog_store(db), name)
    assert db.statements() == []


def test_L11_the_enrichment_cache_and_the_series_lock_tables_are_catalog_tables() -> None:
    assert {"RAG_ENRICHMENT_CACHE", "RAG_SERIES_LOCKS", "RAG_SERIES_LOCK_HOLDERS"} <= sql.CATALOG_TABLES
    assert "CREATE TABLE IF NOT EXISTS RAG_ENRICHMENT_CACHE (" in enrichment_cache.DDL


def test_C1_a_version_registered_under_a_derived_name_is_neither_emptied_nor_dropped() -> None:
    """A version ``KB_SUMMARIES`` from before the suffix rule: ``create_version("kb")`` refuses (it would
    reuse that table as KB's summaries, empty it, and ``drop_version("kb")`` would drop it)."""
    db = CatalogDb()
    db.add_version("KB_SUMMARIES", rows=5)
    with pytest.raises(VersionConflict, match=r"cannot create version KB: its derived table KB_SUMMARIES is already "
                       r"a registered version or alias"):
        catalog_store(db).create_version(spec("kb"))
    assert db.tables["KB_SUMMARIES"] == 5 and "KB" not in db.versions and "KB" not in db.tables
    assert not any(s.startswith(("CREATE", "DELETE", "DROP")) for s in db.statements())


def test_C1_a_foreign_table_under_a_derived_name_is_not_emptied() -> None:
    db = CatalogDb()
    db.foreign.add("HR_QUESTIONS")
    db.tables["HR_QUESTIONS"] = 7
    with pytest.raises(VersionConflict, match="its derived table HR_QUESTIONS is already a table or view that is "
                       "not its own"):
        catalog_store(db).create_version(spec("hr"))
    assert db.tables["HR_QUESTIONS"] == 7 and not any(s.startswith("DELETE") for s in db.statements())


def test_C1_the_debris_of_the_same_versions_crashed_create_is_its_own_and_is_reused() -> None:
    db = CatalogDb()
    db.tables.update({"KB": 2, "KB_QUESTIONS": 3, "KB_SUMMARIES": 1})  # a create that crashed before registering
    version = catalog_store(db).create_version(spec("kb"))
    assert version.name == "KB" and db.tables["KB_QUESTIONS"] == 0 and db.tables["KB_SUMMARIES"] == 0
    assert sql.DERIVED_CLAIMS_SQL in db.statements()


#: a table reference (after FROM or JOIN) to DUAL or a dictionary view without the SYS schema
_UNQUALIFIED = re.compile(r"\b(?:FROM|JOIN)\s+(DUAL|(?:USER|ALL|DBA|CDB)_\w+)\b", re.IGNORECASE)


def _unqualified(statement: str) -> list[str]:
    # string literals (JSON paths, index PARAMETERS) are not name references
    return _UNQUALIFIED.findall(re.sub(r"'[^']*'", "''", statement))


def test_C2_every_statement_reads_dual_and_the_dictionary_views_through_sys() -> None:
    statements = [*builder_statements(), *executed_statements(), enrichment_cache.MERGE_SQL,
                  series_lock.REGISTER_SQL, series_lock.SAY_HOLDER_SQL, sql.MISSING_ENRICHMENT_SQL]
    found = {s: _unqualified(s) for s in statements if _unqualified(s)}
    assert found == {}
    assert any("FROM SYS.DUAL" in s for s in statements)


def test_C2_the_alias_merge_reads_sys_dual() -> None:
    db = CatalogDb()
    db.add_version("KB_V1")
    catalog_store(db).point_alias("KB_ACTIVE", "KB_V1")
    merges = [s for s in db.statements() if s.startswith("MERGE INTO RAG_ALIASES")]
    assert merges and all("FROM SYS.DUAL" in s and not _unqualified(s) for s in merges)


def test_the_new_statements_parse_as_oracle() -> None:
    for statement in (sql.DERIVED_CLAIMS_SQL, sql.MISSING_ENRICHMENT_SQL, enrichment_cache.MERGE_SQL):
        assert check(statement) == "sqlglot"
