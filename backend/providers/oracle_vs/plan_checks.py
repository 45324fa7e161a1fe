"""The checks of ``rag oracle check`` on one version (U1, U2, U3, U7): its indexes exist and are
valid, the plan of each search shape the store sends uses the index it should, the enrichment
``UNION ALL`` of VECTOR columns runs, and a long question is a CONTAINS query the server takes.

Read-only like the rest of the check: plans go to ``PLAN_TABLE`` under a statement id, their rows
are deleted by it, and ``FirstContact.run`` rolls the transaction back.
"""

from __future__ import annotations

import re
from typing import Any, Sequence

from backend.core.types import FieldFilter, Visibility
from backend.providers.oracle_vs import sql
from backend.providers.oracle_vs.check_report import CheckSession, SampleVersion, message



PLAN_ROWS_SQL = "SELECT id, operation, options, object_name FROM PLAN_TABLE WHERE statement_id = :sid ORDER BY id"
DELETE_PLAN_SQL = "DELETE FROM PLAN_TABLE WHERE statement_id = :sid"
#: The ACL label no real principal holds: the plans are for the shape, never for real rows.
PROBE_PRINCIPAL = "rag_oracle_check"
PROBE_DOC = "__rag_oracle_check__"
#: A metadata filter on an ad-hoc field (served by the JSON search index; the ACL has its own index).
PROBE_FILTER = FieldFilter("tags", any_of=(PROBE_PRINCIPAL,))


def explain_sql(statement_id: str, statement: str) -> str:
    """``EXPLAIN PLAN`` of one statement. Its binds get probe values (``VersionChecks.probe_binds``):
    EXPLAIN PLAN does not peek at them, so the plan is the shape's."""
    if not re.fullmatch(r"RAG_CHECK_[A-Z0-9_]{1,40}", statement_id):
        raise ValueError(f"bad statement id {statement_id!r}")
    return f"EXPLAIN PLAN SET STATEMENT_ID = '{statement_id}' INTO PLAN_TABLE FOR {statement}"


class VersionChecks:
    """The checks on one sample version, asked through the ``FirstContact`` session (its connection,
    its list of checks and its run id), so they land in the same report and the same rollback."""

    def __init__(self, contact: CheckSession) -> None:
        self.contact = contact

    def expected_indexes(self, version: SampleVersion) -> dict[str, str]:
        vidx, tidx = sql.index_names(version.name)
        wanted = {}
        if version.index_type != "none":
            wanted[vidx] = "vector"
        if self.contact.settings.lexical_index:
            wanted[tidx] = "Oracle Text"
        if self.contact.settings.metadata_index:
            wanted[sql.metadata_index_name(version.name)] = "JSON search"
        if self.contact.settings.acl_index:
            wanted[sql.acl_index_name(version.name)] = "ACL multivalue"
        return wanted

    def check_indexes(self, version: SampleVersion) -> None:
        rows, error = self.contact.try_rows(sql.INDEX_STATUS_SQL, {"table_name": version.name})
        found = {str(r[0]): (r[1], r[2]) for r in rows or []}
        for name, kind in self.expected_indexes(version).items():
            status = found.get(name)
            if status is None:
                # a version loaded before the ACL index existed still searches correctly: advisory
                self.contact.add(f"{kind} index", "fail", f"{name} does not exist on {version.name} {error}".strip(),
                         "rag ingest finishes the load (finish_load builds it); for a served version see docs/ORACLE.md",
                         required=kind != "ACL multivalue")
            elif status[0] != "VALID" or status[1] not in (None, "VALID"):
                self.contact.add(f"{kind} index", "fail", f"{name}: status {status[0]}, domain index status {status[1]}",
                         f"DROP INDEX {name} FORCE, then rebuild it (rag ingest on the version finishes the load)")
            else:
                self.contact.add(f"{kind} index", "pass", f"{name} VALID")

    def shapes(self, version: SampleVersion) -> list[tuple[str, str, str, str, bool]]:
        """``(name, covers, statement, expected index kind, required)`` for each search shape, as the
        store sends it for this version's index type: HNSW's filtered search is one hinted ``FETCH
        APPROX ... WHERE`` (review §2.8; required: the store relies on it), IVF's the candidate
        statement it widens. The ACL count shows whether the multivalue index serves the access
        condition (§2.9), the JSON filter shapes whether the JSON search index serves other fields."""
        v, d = version.name, version.distance
        accuracy = self.contact.settings.vector_index.target_accuracy
        acl, _ = sql.filter_clause([Visibility.of(PROBE_PRINCIPAL).as_filter()])
        tags, _ = sql.filter_clause([PROBE_FILTER])
        shapes: list[tuple[str, str, str, str, bool]] = []
        if version.index_type != "none":
            shapes.append(("plan: dense FETCH APPROX", "U2", sql.dense_search_sql(v, d, "1=1", approx=True,  # type: ignore[arg-type]
                                                                                  target_accuracy=accuracy), "vector", True))
        if version.index_type == "hnsw":
            transform = sql.index_names(v)[0] if self.contact.settings.metadata_index else None
            shapes.append(("plan: filtered FETCH APPROX", "U2 U3 §2.8",
                           sql.dense_search_sql(v, d, acl, approx=True, target_accuracy=accuracy,  # type: ignore[arg-type]
                                                transform=transform), "vector", True))
        elif version.index_type != "none":
            shapes.append(("plan: filtered candidates", "U2", sql.candidate_search_sql(v, d, acl, accuracy),  # type: ignore[arg-type]
                           "vector", True))
        if self.contact.settings.lexical_index:
            shapes.append(("plan: lexical CONTAINS", "", sql.lexical_search_sql(v, acl), "text", True))
        if self.contact.settings.acl_index:
            shapes.append(("plan: ACL count", "U3 §2.9", sql.count_matching_sql(v, acl), "acl", False))
        if self.contact.settings.metadata_index:
            shapes += [("plan: JSON filter count", "U3", sql.count_matching_sql(v, tags), "json", False),
                       ("plan: JSON filter exact", "U3", sql.dense_search_sql(v, d, tags, approx=False), "json", False)]  # type: ignore[arg-type]
        return shapes

    def probe_binds(self, version: SampleVersion, statement: str, **values: Any) -> dict[str, Any]:
        """Values for every placeholder of a search statement, of the types the store binds (the
        thin driver refuses a statement with an unbound placeholder, EXPLAIN PLAN included; the
        optimizer does not peek at EXPLAIN PLAN's binds, so the values do not shape the plan).
        A placeholder with no probe value (padding of an IN list) gets NULL, as the store pads."""
        from array import array

        _, acl_binds = sql.filter_clause([Visibility.of(PROBE_PRINCIPAL).as_filter()])
        known: dict[str, Any] = {"q": array("f", [1.0] * version.dimension), "k": 10, "depth": 40,
                                 "query": sql.text_query("rag oracle check"), "e0": PROBE_DOC, **acl_binds, **values}
        return {name: known.get(name) for name in placeholders(statement)}

    def check_plans(self, version: SampleVersion) -> None:
        vidx, tidx = sql.index_names(version.name)
        midx = sql.metadata_index_name(version.name)
        aidx = sql.acl_index_name(version.name)
        for i, (name, covers, statement, kind, required) in enumerate(self.shapes(version)):
            sid = f"RAG_CHECK_{self.contact.run_id}_{i}"
            try:
                self.contact.execute(explain_sql(sid, statement), self.probe_binds(version, statement))
                rows = self.contact.rows(PLAN_ROWS_SQL, {"sid": sid})
            except Exception as exc:  # noqa: BLE001 - any driver error is the check's answer
                self.contact.add(name, "fail" if required else "warn", f"EXPLAIN PLAN failed: {message(exc)}",
                         "run the statement (--json shows it) in SQL*Plus to see the error", covers=covers,
                         required=required, statement=statement)
                continue
            finally:
                self.contact.try_execute(DELETE_PLAN_SQL, {"sid": sid})
            lines = [" ".join(str(p) for p in (op, opts, obj) if p) for _id, op, opts, obj in rows]
            verdict = plan_uses(rows, kind, version.name, {"vector": vidx, "text": tidx, "json": midx, "acl": aidx}[kind])
            label = {"vector": f"vector index {vidx}", "text": f"Oracle Text index {tidx}",
                     "json": f"JSON search index {midx}", "acl": f"multivalue index {aidx}"}[kind]
            if verdict == "used":
                self.contact.add(name, "pass", f"uses the {label}", covers=covers, required=required, plan=lines)
                continue
            why = ("a full table scan of " + version.name) if verdict == "full scan" else "no access through it"
            fix = {"vector": "check the index is VALID and the vector pool holds it; gather statistics "
                             f"(DBMS_STATS.GATHER_TABLE_STATS(USER, '{version.name}')); see docs/ORACLE.md",
                   "text": f"rebuild {tidx} (DROP INDEX {tidx} FORCE; rag ingest finishes the load)",
                   "json": f"gather statistics (DBMS_STATS.GATHER_TABLE_STATS(USER, '{version.name}')); a small table "
                           "is scanned by choice, recheck at target size",
                   "acl": f"gather statistics (DBMS_STATS.GATHER_TABLE_STATS(USER, '{version.name}')); if the JSON "
                          f"search index {midx} is chosen instead, the OR of labels may not match the multivalue "
                          "index: report the plan (review §2.9)"}[kind]
            self.contact.add(name, "fail" if required else "warn", f"does not use the {label}: {why}", fix,
                     covers=covers, required=required, plan=lines, statement=statement)

    def check_enrichment_union(self, version: SampleVersion) -> None:
        statement = sql.doc_enrichment_sql(version.name, 1)
        rows, error = self.contact.try_rows(statement, self.probe_binds(version, statement))
        if rows is None:
            self.contact.add("UNION ALL of VECTOR columns", "fail", f"doc_enrichment_sql failed: {error}",
                     "report it: questions and summaries cannot be read back (review U1)", covers="U1",
                     statement=statement)
        else:
            self.contact.add("UNION ALL of VECTOR columns", "pass", "doc_enrichment_sql runs", covers="U1")

    def check_long_text_query(self, version: SampleVersion) -> None:
        if not self.contact.settings.lexical_index:
            return
        words = [f"w{i:04d}" for i in range(self.contact.max_question_chars // 6)]
        query = sql.text_query(" ".join(words))
        acl, _ = sql.filter_clause([Visibility.of(PROBE_PRINCIPAL).as_filter()])
        statement = sql.lexical_search_sql(version.name, acl, ids_only=True)
        rows, error = self.contact.try_rows(statement, self.probe_binds(version, statement, query=query, k=1))
        detail = f"a {self.contact.max_question_chars}-character question is a {len(query.encode())}-byte CONTAINS query"
        if rows is None:
            self.contact.add("long lexical query", "warn", f"{detail}: {error}",
                     "lower server.max_question_chars, or cap the terms text_query sends (review 4, U8)",
                     covers="U8", required=False, statement=statement)
        else:
            self.contact.add("long lexical query", "pass", f"{detail}: accepted", covers="U8", required=False)


def placeholders(statement: str) -> list[str]:
    """The bind placeholders of a statement (``:name``), outside string literals, in order."""
    return list(dict.fromkeys(re.findall(r"(?<![\w:]):(\w+)", re.sub(r"'[^']*'", "''", statement))))


def plan_uses(rows: Sequence[tuple[Any, ...]], kind: str, table: str, index: str) -> str:
    """``used``, ``full scan`` (the table is read in full) or ``not used``, from PLAN_TABLE rows
    ``(id, operation, options, object_name)``."""
    for _id, operation, _options, obj in rows:
        op, name = str(operation or "").upper(), str(obj or "").upper()
        if kind == "vector" and ("VECTOR INDEX" in op or name == index or name.startswith(f"VECTOR${index}")):
            return "used"
        if kind in ("text", "json") and op == "DOMAIN INDEX" and name == index:
            return "used"
        if kind == "acl" and op == "INDEX" and name == index:  # INDEX RANGE SCAN (MULTI VALUE)
            return "used"
    full = any(str(op).upper() == "TABLE ACCESS" and str(opts).upper() == "FULL" and str(obj).upper() == table
               for _id, op, opts, obj in rows)
    return "full scan" if full else "not used"


