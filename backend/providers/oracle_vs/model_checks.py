"""``rag oracle check``'s rows for what review 4 left to a database (``shared/reviews/oracle-2026-11-turn4.md``):
the in-database query model (U5: does Oracle accept the exported graph and give the version's
dimension, one row at a time and over many rows; is its fingerprint recorded), the sample version's
parity check (does it count for the graph loaded now), IVF on an empty questions table (U6), and the
two that need a write or a killed process (U4, U9) as rows that say what to run by hand.

Read-only like the rest of the check: every statement is a ``SELECT``.
"""

from __future__ import annotations


from backend.providers.local.onnx_text_model import database_text
from backend.providers.oracle_vs import query_model, sql
from backend.providers.oracle_vs.check_report import CheckSession, SampleVersion


#: The probe text embedded by the database (U5): any text does; this one names its origin.
PROBE_TEXT = "rag oracle check"
#: How many of the version's rows the many-row probe embeds (Oracle batches rows through the graph).
MANY_ROWS = 100


def dimension_sql(model: str) -> str:
    """One text through the model on the database: the vector's dimension count (U5)."""
    return (f"SELECT VECTOR_DIMENSION_COUNT(VECTOR_EMBEDDING({query_model.model_name(model)} USING :qtext AS data)) "
            "FROM SYS.DUAL")


def many_rows_sql(model: str, version: str) -> str:
    """Up to ``MANY_ROWS`` of the version's texts through the model in one statement (U5: the graph has a
    fixed batch of one; Oracle may batch rows)."""
    return (f"SELECT COUNT(*), MIN(VECTOR_DIMENSION_COUNT(VECTOR_EMBEDDING({query_model.model_name(model)} USING "
            f"DBMS_LOB.SUBSTR(t.text, 1000, 1) AS data))) FROM (SELECT text FROM {sql.oracle_name(version)} "
            f"FETCH FIRST {MANY_ROWS} ROWS ONLY) t")


class ModelChecks:
    """The rows above, asked through the ``FirstContact`` session (same report, same rollback)."""

    def __init__(self, contact: CheckSession) -> None:
        self.contact = contact

    def check_query_model(self, version: SampleVersion | None) -> None:
        cfg = self.contact.settings.query_embedding
        name = query_model.model_name(cfg.model_name)
        add = self.contact.add
        loaded, error = self.contact.try_rows(query_model.MODEL_SQL, {"model_name": name})
        if not loaded:
            add("query model", "fail" if cfg.enabled else "skip",
                f"{name} is not loaded{f' ({error})' if error else ''}"
                + ("" if cfg.enabled else ": store.oracle.query_embedding is off"),
                "rag oracle load-model (CREATE MINING MODEL), then rag oracle parity --version V",
                covers="U5", required=cfg.enabled)
            return
        found, _ = self.contact.try_rows(query_model.FINGERPRINT_SQL, {"model_name": name})
        sha = str(found[0][0]) if found else ""
        add("query model", "pass" if sha else "warn",
            f"{name}: {loaded[0][1]} / {loaded[0][2]}; "
            + (f"sha256 {sha[:16]}" if sha else f"no fingerprint in {query_model.MODELS_TABLE} (loaded by hand or "
               "before review 4): no parity check counts for it"),
            "" if sha else "rag oracle load-model (records the fingerprint), then rag oracle parity",
            covers="U5 M2", required=False)
        statement = dimension_sql(name)
        dims, error = self.contact.try_rows(statement, {"qtext": database_text(PROBE_TEXT)})
        expected = version.dimension if version else None
        if dims is None or not dims:
            add("VECTOR_EMBEDDING of one text", "fail", f"the database did not run the graph: {error}",
                "report it with the statement; leave store.oracle.query_embedding.enabled off (review U5)",
                covers="U5", required=cfg.enabled, statement=statement)
            return
        got = int(dims[0][0])
        if expected is not None and got != expected:
            add("VECTOR_EMBEDDING of one text", "fail", f"{got} dimensions; {version.name if version else ''} holds "
                f"{expected}", "load the model the version was embedded with (rag oracle load-model)",
                covers="U5", required=cfg.enabled, statement=statement)
            return
        add("VECTOR_EMBEDDING of one text", "pass", f"{got} dimensions", covers="U5", required=False)
        if version is None:
            return
        statement = many_rows_sql(name, version.name)
        many, error = self.contact.try_rows(statement)
        if many is None or not many:
            add(f"VECTOR_EMBEDDING of {MANY_ROWS} rows", "fail", f"failed over the version's rows: {error}",
                "report it: the graph's fixed batch of one may not take Oracle's row batches (review U5)",
                covers="U5", required=cfg.enabled, statement=statement)
        else:
            add(f"VECTOR_EMBEDDING of {MANY_ROWS} rows", "pass",
                f"{int(many[0][0] or 0)} rows embedded, {many[0][1]} dimensions", covers="U5", required=False)
        check = query_model.read_check(self.contact.con.cursor(), version.name, name)
        if query_model.may_embed_in_database(check, version.model, cfg.min_cosine):
            add("parity check", "pass", check.summary() if check else "", covers="M2", required=False)
        else:
            why = (check.summary() if check else f"no check of {version.name} for the graph loaded now "
                   "(never checked, or measured on another graph)")
            add("parity check", "warn" if cfg.enabled else "skip", why,
                f"rag oracle parity --version {version.name}", covers="M2", required=False)

    def check_empty_question_ivf(self, version: SampleVersion | None) -> None:
        """U6: is ``CREATE VECTOR INDEX ... NEIGHBOR PARTITIONS`` accepted on an empty questions table
        (every IVF version without HyDE questions builds one)? Read from what the load left."""
        if version is None or version.index_type != "ivf":
            self.contact.add("IVF on an empty questions table", "skip",
                             "the sample version is not IVF", "build an IVF version of a profile without "
                             "questions (vector_index.type: ivf), then rag oracle check --version it",
                             covers="U6", required=False)
            return
        counted, error = self.contact.try_rows(sql.question_count_sql(version.name))
        questions = int(counted[0][0]) if counted else -1
        if questions != 0:
            self.contact.add("IVF on an empty questions table", "skip",
                             f"{version.name} has {questions if questions >= 0 else 'unknown'} questions {error}".strip(),
                             "check an IVF version of a profile without questions", covers="U6", required=False)
            return
        table = sql.questions_table(version.name)
        rows, error = self.contact.try_rows(sql.INDEX_STATUS_SQL, {"table_name": table})
        index = sql.question_vector_index_name(version.name)
        status = {str(r[0]): r[1] for r in rows or []}.get(index)
        if status == "VALID":
            self.contact.add("IVF on an empty questions table", "pass", f"{index} VALID on an empty {table}",
                             covers="U6", required=False)
        else:
            self.contact.add("IVF on an empty questions table", "fail",
                             f"{index} on the empty {table}: {status or 'missing'} {error}".strip(),
                             "report it: finish_load must skip the question index while the table is empty (U6)",
                             covers="U6", required=False)

    def add_by_hand(self) -> None:
        for covers, name, what in (
            ("U4", "MERGE of a 5,000-byte payload", "writes: insert then update a 5,000-byte payload through "
             "RAG_ENRICHMENT_CACHE's MERGE on a scratch schema (docs/ORACLE.md, first-contact checklist)"),
            ("U9", "a kill between an IVF build and its record", "needs a killed process: with a pool too small "
             "for HNSW and pool_shortfall: ivf, kill rag ingest during the vector index build; then compare rag "
             "index list's index type with SYS.USER_INDEXES (docs/ORACLE.md)"),
            ("contract", "IVF on the contract corpus", "RAG_TEST_ORACLE_INDEX=ivf .venv/bin/python -m pytest "
             "tests/providers/test_oracle_vs.py (docs/ORACLE.md §6)"),
        ):
            self.contact.add(name, "skip", "needs writes: run by hand", what, covers=covers, required=False)
