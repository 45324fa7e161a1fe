"""DDL of the embedded store. Names come only from validated identifiers."""

from __future__ import annotations

from backend.common.identifiers import validate_identifier

CATALOG = """
CREATE TABLE IF NOT EXISTS rag_versions (
    name        TEXT PRIMARY KEY,
    model       TEXT NOT NULL,
    dimension   INTEGER NOT NULL,
    distance    TEXT NOT NULL,
    profile     TEXT,
    created_at  TEXT NOT NULL,
    generation  INTEGER NOT NULL DEFAULT 0,
    evaluation  TEXT
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
    decision_explain TEXT NOT NULL
);
"""


def version_ddl(name: str) -> list[str]:
    """Chunk table, its indexes and its FTS5 mirror (rowid-aligned).

    ``embed_hash`` is the hash of exactly what was embedded (prefix, template and
    text); it lets any later run reuse the vector instead of embedding again.
    """
    t = validate_identifier(name, "index_name")
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
    ]


def drop_version_ddl(name: str) -> list[str]:
    t = validate_identifier(name, "index_name")
    return [f"DROP TABLE IF EXISTS {t}_fts", f"DROP TABLE IF EXISTS {t}"]


def alias_view_ddl(alias: str, version: str) -> list[str]:
    a = validate_identifier(alias, "alias name")
    v = validate_identifier(version, "index_name")
    return [
        f"DROP VIEW IF EXISTS {a}",
        f"CREATE VIEW {a} AS SELECT rowid AS row_id, chunk_id, doc_id, chunk_index, chunk_type, source, "
        f"text, content_hash, metadata, embedding FROM {v}",
    ]
