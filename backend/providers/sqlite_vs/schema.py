"""DDL of the embedded store. Names come only from validated identifiers."""

from __future__ import annotations

from backend.common.identifiers import validate_identifier, validate_table_name

CATALOG = """
CREATE TABLE IF NOT EXISTS rag_versions (
    name        TEXT PRIMARY KEY,
    model       TEXT NOT NULL,
    dimension   INTEGER NOT NULL,
    distance    TEXT NOT NULL,
    profile     TEXT,
    created_at  TEXT NOT NULL,
    generation  INTEGER NOT NULL DEFAULT 0,
    evaluation  TEXT,
    parent      TEXT,
    retrieval   TEXT,
    counts      TEXT
);
CREATE TABLE IF NOT EXISTS rag_aliases (
    alias       TEXT PRIMARY KEY,
    version     TEXT NOT NULL REFERENCES rag_versions(name),
    changed_at  TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS rag_alias_history (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    alias       TEXT NOT NULL,
    version     TEXT NOT NULL,
    previous    TEXT,
    changed_at  TEXT NOT NULL,
    reason      TEXT NOT NULL DEFAULT '',
    forced      INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS rag_interactions (
    id               INTEGER PRIMARY KEY AUTOINCREMENT,
    created_at       TEXT NOT NULL,
    question         TEXT NOT NULL,
    resp_mode        TEXT NOT NULL,
    used_llm         TEXT NOT NULL,
    domain           TEXT,
    retrieval_target TEXT NOT NULL,
    latency_ms       REAL NOT NULL,
    conversation_id  TEXT,
    decision_explain TEXT NOT NULL,
    principal        TEXT
);
CREATE TABLE IF NOT EXISTS rag_audit_log (
    id               INTEGER PRIMARY KEY AUTOINCREMENT,
    created_at       TEXT NOT NULL,
    principal        TEXT,
    action           TEXT NOT NULL,
    knowledge_base   TEXT,
    version          TEXT,
    outcome          TEXT NOT NULL,
    request_id       TEXT,
    surface          TEXT NOT NULL,
    detail           TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS rag_quota_counters (
    subject          TEXT NOT NULL,
    window_kind      TEXT NOT NULL,
    window_start     TEXT NOT NULL,
    hits             INTEGER NOT NULL,
    PRIMARY KEY (subject, window_kind, window_start)
);
CREATE TABLE IF NOT EXISTS rag_conversation_turns (
    id               INTEGER PRIMARY KEY AUTOINCREMENT,
    interaction_id   TEXT NOT NULL UNIQUE,
    conversation_id  TEXT,
    created_at       TEXT NOT NULL,
    question         TEXT NOT NULL,
    effective_query  TEXT NOT NULL,
    resp_mode        TEXT NOT NULL,
    version          TEXT NOT NULL,
    domain           TEXT,
    principal        TEXT,
    cited_doc_ids    TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS rag_conversation_turns_cid ON rag_conversation_turns(conversation_id);
CREATE TABLE IF NOT EXISTS rag_feedback (
    id               INTEGER PRIMARY KEY AUTOINCREMENT,
    interaction_id   TEXT NOT NULL,
    created_at       TEXT NOT NULL,
    rating           TEXT NOT NULL,
    comment          TEXT,
    expected_answer  TEXT,
    query            TEXT NOT NULL,
    resp_mode        TEXT NOT NULL,
    version          TEXT NOT NULL,
    domain           TEXT,
    principal        TEXT,
    cited_doc_ids    TEXT NOT NULL
);
"""


def version_ddl(name: str) -> list[str]:
    """Chunk table, its indexes and its FTS5 mirror (rowid-aligned).

    ``embed_hash`` is the hash of exactly what was embedded (prefix, template and
    text); it lets any later run reuse the vector instead of embedding again.
    """
    t = validate_table_name(name, "index_name")  # no derived suffix, no system name
    return [
        f"""CREATE TABLE IF NOT EXISTS {t} (
            chunk_id      TEXT NOT NULL UNIQUE,
            doc_id        TEXT NOT NULL,
            doc_hash      TEXT NOT NULL,
            chunk_index   INTEGER NOT NULL,
            chunk_type    TEXT NOT NULL,
            source        TEXT NOT NULL,
            text          TEXT NOT NULL,
            content_hash  TEXT NOT NULL,
            embed_hash    TEXT NOT NULL,
            metadata      TEXT NOT NULL,
            embedding     BLOB NOT NULL
        )""",
        f"CREATE INDEX IF NOT EXISTS {t}_doc ON {t}(doc_id)",
        f"CREATE INDEX IF NOT EXISTS {t}_emb ON {t}(embed_hash)",
        f"CREATE VIRTUAL TABLE IF NOT EXISTS {t}_fts USING fts5(text, tokenize='porter unicode61 remove_diacritics 2')",
        *facet_ddl(t),
        *enrichment_ddl(t),
    ]


def enrichment_ddl(name: str) -> list[str]:
    """The version's hypothetical questions (seed 001, one row and vector each, linked to the
    parent chunk) and page / document summaries (seed 002, one table for both kinds: both are
    distilled text, so their scores are comparable). ``doc_id`` on both lets a document's rows
    be replaced and deleted with its chunks; ``chunk_ids`` is a JSON list."""
    t = validate_identifier(name, "index_name")
    return [
        f"""CREATE TABLE IF NOT EXISTS {t}_questions (
            question_id   TEXT NOT NULL UNIQUE,
            chunk_id      TEXT NOT NULL,
            doc_id        TEXT NOT NULL,
            text          TEXT NOT NULL,
            embedding     BLOB NOT NULL
        )""",
        f"CREATE INDEX IF NOT EXISTS {t}_questions_doc ON {t}_questions(doc_id)",
        f"CREATE INDEX IF NOT EXISTS {t}_questions_chunk ON {t}_questions(chunk_id)",
        f"""CREATE TABLE IF NOT EXISTS {t}_summaries (
            summary_id    TEXT NOT NULL UNIQUE,
            doc_id        TEXT NOT NULL,
            kind          TEXT NOT NULL CHECK (kind IN ('page_summary', 'artifact_summary')),
            page          TEXT,
            text          TEXT NOT NULL,
            chunk_ids     TEXT NOT NULL,
            embedding     BLOB NOT NULL
        )""",
        f"CREATE INDEX IF NOT EXISTS {t}_summaries_doc ON {t}_summaries(doc_id)",
    ]


QUESTION_COLUMNS = "question_id, chunk_id, doc_id, text, embedding"
SUMMARY_COLUMNS = "summary_id, doc_id, kind, page, text, chunk_ids, embedding"


#: The metadata values a facet row holds: scalars, and the scalar members of lists.
_SCALAR = "('text', 'integer', 'real', 'true', 'false')"


def _facet_inserts(facets: str, rid: str, metadata: str, rows: str = "") -> list[str]:
    """The two INSERTs that index ``metadata`` under ``rid``: scalar values, then the
    scalar members of list values. ``rows`` is the FROM prefix of a backfill
    (``"<table> AS t, "``); a trigger reads ``new`` and needs none."""
    return [
        f"INSERT OR IGNORE INTO {facets}(field, value, rid) SELECT j.key, j.value, {rid} "
        f"FROM {rows}json_each({metadata}) AS j WHERE j.type IN {_SCALAR}",
        f"INSERT OR IGNORE INTO {facets}(field, value, rid) SELECT top.key, member.value, {rid} "
        f"FROM {rows}json_each({metadata}) AS top, json_each(top.value) AS member "
        f"WHERE top.type = 'array' AND member.type IN {_SCALAR}",
    ]


def facet_ddl(name: str) -> list[str]:
    """The metadata index of a version: one ``(field, value, rid)`` row per scalar
    metadata value and per scalar member of a list value, kept in step with the
    chunk table by triggers, so every filter is an index range scan instead of a
    ``json_each`` over every row. ``value`` has no declared type, so a number stays
    a number and a string a string: equality means exactly what it means in JSON."""
    t = validate_identifier(name, "index_name")
    facets = f"{t}_facets"
    insert_values = "".join(f"{sql}; " for sql in _facet_inserts(facets, "new.rowid", "new.metadata"))
    return [
        f"CREATE TABLE IF NOT EXISTS {facets} (field TEXT NOT NULL, value NOT NULL, rid INTEGER NOT NULL, "
        f"PRIMARY KEY (field, value, rid)) WITHOUT ROWID",
        f"CREATE INDEX IF NOT EXISTS {facets}_rid ON {facets}(rid)",
        f"CREATE TRIGGER IF NOT EXISTS {t}_facets_ins AFTER INSERT ON {t} BEGIN {insert_values}END",
        f"CREATE TRIGGER IF NOT EXISTS {t}_facets_del AFTER DELETE ON {t} BEGIN "
        f"DELETE FROM {facets} WHERE rid = old.rowid; END",
        f"CREATE TRIGGER IF NOT EXISTS {t}_facets_upd AFTER UPDATE OF metadata ON {t} BEGIN "
        f"DELETE FROM {facets} WHERE rid = old.rowid; {insert_values}END",
    ]


def facet_backfill_sql(name: str) -> list[str]:
    """Fill the metadata index of a version created before it existed."""
    t = validate_identifier(name, "index_name")
    return _facet_inserts(f"{t}_facets", "t.rowid", "t.metadata", f"{t} AS t, ")


#: columns added to the catalog after its first release: (table, column, declaration)
CATALOG_UPGRADES = (("rag_versions", "parent", "TEXT"), ("rag_interactions", "principal", "TEXT"),
                    ("rag_versions", "retrieval", "TEXT"), ("rag_versions", "counts", "TEXT"),
                    ("rag_versions", "ann", "TEXT"))

CHUNK_COLUMNS = ("chunk_id, doc_id, doc_hash, chunk_index, chunk_type, source, text, content_hash, embed_hash, "
                 "metadata, embedding")


def copy_version_sql(source: str, target: str) -> list[str]:
    """Every row of ``source`` into the empty ``target``, FTS mirror included (the facet
    triggers index the metadata as the rows land). Vectors are copied, never recomputed, and
    each row keeps its rowid, so the parent's HNSW index still names the carried rows and the
    new version's index can start from it (``ann.extend``)."""
    s = validate_identifier(source, "index_name")
    t = validate_identifier(target, "index_name")
    return [
        f"INSERT INTO {t}(rowid, {CHUNK_COLUMNS}) SELECT rowid, {CHUNK_COLUMNS} FROM {s} ORDER BY rowid",
        f"INSERT INTO {t}_fts(rowid, text) SELECT rowid, text FROM {t}",
        f"INSERT INTO {t}_questions(rowid, {QUESTION_COLUMNS}) SELECT rowid, {QUESTION_COLUMNS} FROM {s}_questions "
        "ORDER BY rowid",
        f"INSERT INTO {t}_summaries(rowid, {SUMMARY_COLUMNS}) SELECT rowid, {SUMMARY_COLUMNS} FROM {s}_summaries "
        "ORDER BY rowid",
    ]


def drop_version_ddl(name: str) -> list[str]:
    t = validate_identifier(name, "index_name")
    return [f"DROP TABLE IF EXISTS {t}_fts", f"DROP TABLE IF EXISTS {t}_facets", f"DROP TABLE IF EXISTS {t}_questions",
            f"DROP TABLE IF EXISTS {t}_summaries", f"DROP TABLE IF EXISTS {t}"]


def alias_view_ddl(alias: str, version: str) -> list[str]:
    a = validate_table_name(alias, "alias name")
    v = validate_identifier(version, "index_name")
    return [
        f"DROP VIEW IF EXISTS {a}",
        f"CREATE VIEW {a} AS SELECT rowid AS row_id, chunk_id, doc_id, chunk_index, chunk_type, source, "
        f"text, content_hash, metadata, embedding FROM {v}",
    ]
