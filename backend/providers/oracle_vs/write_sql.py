"""Statements that write a version's chunks, questions and summaries, read back what a write
compares against (a document's stored chunks and enrichment), and fill the embedding cache."""

from __future__ import annotations

from typing import Any

from backend.providers.oracle_vs.sql_names import (
    DOCS_PER_READ, in_marks, json_text, questions_table, summaries_table, version_table,
)
from backend.providers.oracle_vs.version_ddl import QUESTION_COLUMNS, SUMMARY_COLUMNS


def insert_question_sql(version: str) -> str:
    return (f"INSERT INTO {questions_table(version)} ({', '.join(QUESTION_COLUMNS)}) "
            f"VALUES ({', '.join(':' + c for c in QUESTION_COLUMNS)})")


def insert_summary_sql(version: str) -> str:
    return (f"INSERT INTO {summaries_table(version)} ({', '.join(SUMMARY_COLUMNS)}) "
            f"VALUES ({', '.join(':' + c for c in SUMMARY_COLUMNS)})")


def delete_enrichment_sql(version: str) -> list[str]:
    """A document's questions and summaries (bind ``:doc_id``)."""
    return [f"DELETE FROM {questions_table(version)} WHERE doc_id = :doc_id",
            f"DELETE FROM {summaries_table(version)} WHERE doc_id = :doc_id"]


def delete_chunk_questions_sql(version: str) -> str:
    """Questions of a chunk that moved in from another document (bind ``:chunk_id``)."""
    return f"DELETE FROM {questions_table(version)} WHERE chunk_id = :chunk_id"


def doc_enrichment_sql(version: str, count: int = 1) -> str:
    """Stored questions and summaries of ``count`` documents (binds ``:e0`` ...) in one round trip:
    ``(row_kind, id, chunk_id | kind, page, text, chunk_ids, embedding, doc_id)``."""
    if not 1 <= count <= DOCS_PER_READ:
        raise ValueError(f"doc_enrichment_sql reads 1..{DOCS_PER_READ} documents at a time, got {count}")
    marks = in_marks("e", count)
    return (f"SELECT 'question' AS row_kind, question_id AS row_id, chunk_id AS detail, "
            "CAST(NULL AS VARCHAR2(2000)) AS page, text, CAST(NULL AS CLOB) AS chunk_ids, embedding, doc_id "
            f"FROM {questions_table(version)} WHERE doc_id IN ({marks}) UNION ALL "
            f"SELECT 'summary', summary_id, kind, page, text, JSON_SERIALIZE(chunk_ids RETURNING CLOB), embedding, "
            f"doc_id FROM {summaries_table(version)} WHERE doc_id IN ({marks})")


#: Columns a chunk INSERT or UPDATE writes besides the key ``chunk_id``.
WRITE_COLUMNS = ("doc_id", "doc_hash", "chunk_index", "chunk_type", "source", "text", "content_hash", "metadata",
                 "embedding")


def insert_chunk_sql(version: str) -> str:
    """New chunks (ids the version does not hold). Every value is bound into its column slot, the text
    as a plain ``str`` into the CLOB column: python-oracledb takes strings up to 1 GB there directly
    (``lob_data.rst``), with no temporary LOB (a ``DB_TYPE_CLOB`` bind makes one per row of the
    ``executemany``: a create and a write, two round trips each). ``chunk_binds`` builds the row."""
    t = version_table(version)
    cols = ("chunk_id", *WRITE_COLUMNS)
    return f"INSERT INTO {t} ({', '.join(cols)}) VALUES ({', '.join(':' + c for c in cols)})"


def update_chunk_sql(version: str) -> str:
    """Chunks the version already holds, by ``chunk_id``; the same binds as ``insert_chunk_sql``.
    Writes to a version serialize on its registry row (``BUMP_GENERATION_SQL``), so which ids exist
    is known from the read that precedes the write."""
    updates = ", ".join(f"{c} = :{c}" for c in WRITE_COLUMNS)
    return f"UPDATE {version_table(version)} SET {updates} WHERE chunk_id = :chunk_id"


def chunk_binds(row: dict[str, Any]) -> dict[str, Any]:
    """One row's binds for :func:`insert_chunk_sql` and :func:`update_chunk_sql`."""
    return {"chunk_id": row["chunk_id"], **{c: row[c] for c in WRITE_COLUMNS}}


def chunk_input_sizes() -> dict[str, Any]:
    """Input types a chunk write declares: FLOAT32 vectors and native JSON metadata (Python dicts).
    The text is left a ``str``: never a CLOB bind (see ``insert_chunk_sql``)."""
    import oracledb

    return {"embedding": oracledb.DB_TYPE_VECTOR, "metadata": oracledb.DB_TYPE_JSON}


#: Columns compared to skip rewriting an unchanged chunk (text is covered by content_hash).
COMPARED_COLUMNS = ("doc_hash", "chunk_index", "chunk_type", "source", "content_hash", "metadata", "embedding")


def doc_chunks_sql(version: str, count: int = 1) -> str:
    """Stored chunks of ``count`` documents (binds ``:d0`` ...), ``doc_id`` last, in one round trip."""
    if not 1 <= count <= DOCS_PER_READ:
        raise ValueError(f"doc_chunks_sql reads 1..{DOCS_PER_READ} documents at a time, got {count}")
    cols = ", ".join(json_text("metadata", "metadata") if c == "metadata" else c for c in COMPARED_COLUMNS)
    marks = in_marks("d", count)
    return f"SELECT chunk_id, {cols}, doc_id FROM {version_table(version)} WHERE doc_id IN ({marks})"


def delete_chunk_sql(version: str) -> str:
    return f"DELETE FROM {version_table(version)} WHERE chunk_id = :chunk_id"


def delete_document_sql(version: str) -> str:
    return f"DELETE FROM {version_table(version)} WHERE doc_id = :doc_id"


def document_hashes_sql(version: str) -> str:
    return f"SELECT doc_id, MIN(doc_hash) FROM {version_table(version)} GROUP BY doc_id"


def document_list_sql(version: str) -> str:
    return (f"SELECT doc_id, MIN(doc_hash), MIN(source), COUNT(*) FROM {version_table(version)} "
            "GROUP BY doc_id ORDER BY doc_id")


def vectors_sql(version: str) -> str:
    return f"SELECT chunk_id, embedding FROM {version_table(version)} ORDER BY chunk_id"


def counts_sql(version: str) -> str:
    """Chunks, documents, and the characters of text plus serialized metadata (for ``size_bytes``).

    The metadata is serialized into a ``VARCHAR2(4000)`` (no temporary LOB per row; ``NULL ON
    ERROR`` when it does not fit), and only a row whose metadata is longer than that falls back to
    the CLOB (``COALESCE`` evaluates its second argument only when the first is NULL). ``text`` is
    the stored CLOB column, whose length is read from its locator (no temporary LOB)."""
    return ("SELECT COUNT(*), COUNT(DISTINCT doc_id), NVL(SUM(DBMS_LOB.GETLENGTH(text)), 0) + "
            "NVL(SUM(COALESCE(LENGTH(JSON_SERIALIZE(metadata RETURNING VARCHAR2(4000) NULL ON ERROR)), "
            "DBMS_LOB.GETLENGTH(JSON_SERIALIZE(metadata RETURNING CLOB)))), 0) "
            f"FROM {version_table(version)}")


def row_count_sql(version: str) -> str:
    """The number of chunks only (``COUNT(*)``: the primary key index, no row read, no LOB)."""
    return f"SELECT COUNT(*) FROM {version_table(version)}"


#: The norm at or above which a cached vector is one an int8 version wrote before review 4's N2: scaled
#: so its largest component is 127, its norm is at least 127, where no embedding model's output lies
#: (unit-norm models give 1). ``binds.is_quantized`` is the exact test on the rows read back.
POISONED_NORM = 127
#: The embedder's float32 vector of a text (never a version's int8 bind, N2). A row an int8 version
#: poisoned before that fix is replaced by the first write of its text (``WHEN MATCHED ... WHERE``).
MERGE_CACHE_SQL = (
    "MERGE INTO RAG_EMBEDDING_CACHE c USING (SELECT :embed_model AS embed_model, :text_hash AS text_hash, "
    ":embedding AS embedding FROM SYS.DUAL) s ON (c.embed_model = s.embed_model AND c.text_hash = s.text_hash) "
    f"WHEN MATCHED THEN UPDATE SET c.embedding = s.embedding WHERE VECTOR_NORM(c.embedding) >= {POISONED_NORM} "
    "WHEN NOT MATCHED THEN INSERT (embed_model, text_hash, embedding) VALUES (s.embed_model, s.text_hash, s.embedding)"
)
#: How many poisoned rows the cache holds (``rag oracle check``), and the statement that removes them.
POISONED_CACHE_SQL = f"SELECT COUNT(*) FROM RAG_EMBEDDING_CACHE WHERE VECTOR_NORM(embedding) >= {POISONED_NORM}"
PURGE_POISONED_CACHE_SQL = f"DELETE FROM RAG_EMBEDDING_CACHE WHERE VECTOR_NORM(embedding) >= {POISONED_NORM}"


def cached_vectors_sql(count: int) -> str:
    """Cached vectors of ``count`` hashes (binds ``in_binds("h", ...)``, padded to their bucket)."""
    marks = in_marks("h", count)
    return f"SELECT text_hash, embedding FROM RAG_EMBEDDING_CACHE WHERE embed_model = :embed_model AND text_hash IN ({marks})"
