"""DDL of one version: its chunk table, its vector, text, metadata and ACL indexes, its question and
summary tables, the copy from a parent, the drops, and the vector pool and statistics calls a load ends with.

The distance metric is always written out, and always the one the version's vector index was built
with: a different metric makes Oracle ignore the index and scan everything."""

from __future__ import annotations

from backend.common.config import OracleVectorIndexSettings
from backend.common.identifiers import validate_identifier
from backend.core.types import Distance
from backend.providers.oracle_vs.sql_names import (
    acl_index_name, index_names, metadata_index_name, metric, question_vector_index_name, questions_table,
    summaries_table, version_table,
)


#: Every index of a version table and whether its build can fail half-way (domain indexes).
INDEX_STATUS_SQL = ("SELECT index_name, status, domidx_opstatus FROM SYS.USER_INDEXES "
                    "WHERE table_name = :table_name")


def drop_index_ddl(index: str, *, force: bool = False) -> str:
    """``FORCE`` drops a domain index whose build failed (Oracle Text cannot tell its state)."""
    name = validate_identifier(index, "index name").upper()
    return f"DROP INDEX {name} FORCE" if force else f"DROP INDEX IF EXISTS {name}"


def metadata_index_ddl(version: str) -> str:
    """One JSON search index serves every metadata field, declared in the schema or
    not, for the ``JSON_EXISTS`` / ``JSON_VALUE`` predicates of ``filter_clause``;
    synced on commit so a filter sees what the last write committed."""
    t = version_table(version)
    return f"CREATE SEARCH INDEX {metadata_index_name(t)} ON {t} (metadata) FOR JSON PARAMETERS ('SYNC (ON COMMIT)')"


def acl_index_ddl(version: str) -> str:
    """A multivalue index on the ``rag_acl`` array (review §2.9): each label a key, maintained in the
    writing transaction like a B-tree (no Oracle Text sync), so the access condition every search
    carries (``JSON_EXISTS(t.metadata, '$.rag_acl?(@ == $f0 || ...)' PASSING ...)``, see
    ``filter_clause``) can be an index range scan. Simple dot notation with the ``string()`` item
    method, which has no "only" in its name, so a query comparing the elements to a string bind can
    pick it up (Oracle JSON Developer's Guide 23ai, "Creating Multivalue Function-Based Indexes for
    JSON_EXISTS" and "Using a Multivalue Function-Based Index"; the plan then shows ``INDEX RANGE
    SCAN (MULTI VALUE)``). The JSON search index stays for ad-hoc metadata fields."""
    t = version_table(version)
    return f"CREATE MULTIVALUE INDEX {acl_index_name(t)} ON {t} t (t.metadata.rag_acl.string())"


#: The vector pool (review §2.6): bytes allocated to and used in each of its sub-pools.
VECTOR_POOL_SQL = "SELECT pool, alloc_bytes, used_bytes, populate_status FROM SYS.V_$VECTOR_MEMORY_POOL"
#: Whether the pool grows on demand (``vector_pool.grows_on_demand``): Autonomous Database's service, and
#: the container's VECTOR_MEMORY_SIZE (review 4, M1).
POOL_MODE_SQL = ("SELECT SYS_CONTEXT('USERENV', 'CLOUD_SERVICE'), (SELECT p.value FROM SYS.V_$PARAMETER p "
                 "WHERE p.name = 'vector_memory_size') FROM SYS.DUAL")
#: ``DBMS_VECTOR.INDEX_VECTOR_MEMORY_ADVISOR`` (vector-count form; DBMS_VECTOR reference, 23ai/26ai):
#: ``PARAMETER_JSON`` takes one of ``{"neighbors": n}`` (HNSW), ``{"neighbor_partitions": n}`` (IVF)
#: or ``{"accuracy": n}``; ``DIM_TYPE`` is the graph's vector format (FLOAT32, INT8); the response is a CLOB out bind.
ADVISOR_SQL = ("BEGIN DBMS_VECTOR.INDEX_VECTOR_MEMORY_ADVISOR(INDEX_TYPE => :index_type, NUM_VECTORS => :num_vectors, "
               "DIM_COUNT => :dim_count, DIM_TYPE => :dim_type, PARAMETER_JSON => :parameters, "
               "RESPONSE_JSON => :response); END;")


#: ``vector_format`` (``backend.core.vector_format``) to the column's dimension format.
VECTOR_FORMATS = {"float32": "FLOAT32", "int8": "INT8"}


def version_table_ddl(version: str, dimension: int, vector_format: str = "float32") -> str:
    """The version's chunk table; ``vector_format`` int8 declares ``VECTOR(n, INT8)`` (the store sends
    integers it scaled itself: ``vector_format.quantize_int8``)."""
    if not isinstance(dimension, int) or not 1 <= dimension <= 65535:
        raise ValueError(f"vector dimension must be an integer in 1..65535, got {dimension!r}")
    if vector_format not in VECTOR_FORMATS:
        raise ValueError(f"vector format must be one of {sorted(VECTOR_FORMATS)}, got {vector_format!r}")
    return (
        f"CREATE TABLE IF NOT EXISTS {version_table(version)} (\n"
        "    chunk_id      VARCHAR2(1000) PRIMARY KEY,\n"
        "    doc_id        VARCHAR2(1000) NOT NULL,\n"
        "    doc_hash      VARCHAR2(128) NOT NULL,\n"
        "    chunk_index   NUMBER(10) NOT NULL,\n"
        "    chunk_type    VARCHAR2(64) NOT NULL,\n"
        "    source        VARCHAR2(2000),\n"
        "    text          CLOB,\n"
        "    content_hash  VARCHAR2(128) NOT NULL,\n"
        "    metadata      JSON NOT NULL,\n"
        f"    embedding     VECTOR({dimension}, {VECTOR_FORMATS[vector_format]}) NOT NULL\n"
        ")"
    )


def doc_index_ddl(version: str) -> str:
    t = version_table(version)
    return f"CREATE INDEX IF NOT EXISTS {t}_DOC ON {t} (doc_id)"


def vector_index_ddl(version: str, distance: Distance, settings: OracleVectorIndexSettings) -> str | None:
    """HNSW (in-memory graph) or IVF (neighbor partitions) index; None for ``none``."""
    return _vector_index_ddl(index_names(version)[0], version_table(version), distance, settings)


def question_vector_index_ddl(version: str, distance: Distance, settings: OracleVectorIndexSettings) -> str | None:
    """The same index as the chunks' (type, metric, parameters) on ``{V}_QUESTIONS(embedding)``, for
    the HyDE search's ``FETCH APPROX`` (L4); None for ``none``."""
    return _vector_index_ddl(question_vector_index_name(version), questions_table(version), distance, settings)


def _vector_index_ddl(vidx: str, t: str, distance: Distance, settings: OracleVectorIndexSettings) -> str | None:
    head = f"CREATE VECTOR INDEX {vidx} ON {t} (embedding)"
    tail = f"DISTANCE {metric(distance)} WITH TARGET ACCURACY {int(settings.target_accuracy)}"
    if settings.type == "hnsw":
        return (
            f"{head} ORGANIZATION INMEMORY NEIGHBOR GRAPH {tail} "
            f"PARAMETERS (TYPE HNSW, NEIGHBORS {int(settings.neighbors)}, EFCONSTRUCTION {int(settings.efconstruction)})"
        )
    if settings.type == "ivf":
        return (
            f"{head} ORGANIZATION NEIGHBOR PARTITIONS {tail} "
            f"PARAMETERS (TYPE IVF, NEIGHBOR PARTITIONS {int(settings.neighbor_partitions)})"
        )
    if settings.type == "none":
        return None
    raise ValueError(f"unsupported vector index type {settings.type!r}")


def text_index_ddl(version: str) -> str:
    """Oracle Text index kept in step with every commit, for ``CONTAINS`` searches. The
    empty stoplist indexes every word, so a query of common words ("or", "the") is
    never a query of stopwords only, which Oracle Text would refuse."""
    t = version_table(version)
    _, tidx = index_names(version)
    return (f"CREATE INDEX {tidx} ON {t} (text) INDEXTYPE IS CTXSYS.CONTEXT "
            "PARAMETERS ('SYNC (ON COMMIT) STOPLIST CTXSYS.EMPTY_STOPLIST')")


#: After a load (``finish_load``, L5): a Text or JSON search index synced on every commit of small
#: batches is fragmented until optimized, and the optimizer has no statistics on tables filled after
#: their creation. PL/SQL calls, the index or table name a bound argument.
OPTIMIZE_TEXT_INDEX_SQL = "BEGIN CTX_DDL.OPTIMIZE_INDEX(:idx_name, 'FULL'); END;"
GATHER_TABLE_STATS_SQL = "BEGIN DBMS_STATS.GATHER_TABLE_STATS(USER, :tabname); END;"


def stats_tables(version: str) -> tuple[str, str, str]:
    """The tables a load fills: the version's chunks, questions and summaries."""
    return version_table(version), questions_table(version), summaries_table(version)


def drop_version_ddl(version: str) -> str:
    return f"DROP TABLE IF EXISTS {version_table(version)} PURGE"


QUESTION_COLUMNS = ("question_id", "chunk_id", "doc_id", "text", "embedding")
SUMMARY_COLUMNS = ("summary_id", "doc_id", "kind", "page", "text", "chunk_ids", "embedding")


def enrichment_ddl(version: str, dimension: int) -> list[str]:
    """The version's question table (one row and vector per hypothetical question, linked to
    its parent chunk) and summary table (page and document summaries together: both are
    distilled text, so their scores compare), each with a ``doc_id`` index so a document's
    rows are replaced and deleted with its chunks. Questions are several per chunk, so
    ``finish_load`` builds the version's vector index on them too (``question_vector_index_ddl``);
    summaries (a few per document) are searched exactly."""
    if not isinstance(dimension, int) or not 1 <= dimension <= 65535:
        raise ValueError(f"vector dimension must be an integer in 1..65535, got {dimension!r}")
    q, s = questions_table(version), summaries_table(version)
    return [
        f"CREATE TABLE IF NOT EXISTS {q} (\n"
        "    question_id   VARCHAR2(1000) PRIMARY KEY,\n"
        "    chunk_id      VARCHAR2(1000) NOT NULL,\n"
        "    doc_id        VARCHAR2(1000) NOT NULL,\n"
        "    text          CLOB,\n"
        f"    embedding     VECTOR({dimension}, FLOAT32) NOT NULL\n"
        ")",
        f"CREATE INDEX IF NOT EXISTS {q}_DOC ON {q} (doc_id)",
        f"CREATE INDEX IF NOT EXISTS {q}_CHUNK ON {q} (chunk_id)",
        f"CREATE TABLE IF NOT EXISTS {s} (\n"
        "    summary_id    VARCHAR2(1000) PRIMARY KEY,\n"
        "    doc_id        VARCHAR2(1000) NOT NULL,\n"
        "    kind          VARCHAR2(32) NOT NULL CHECK (kind IN ('page_summary', 'artifact_summary')),\n"
        "    page          VARCHAR2(2000),\n"
        "    text          CLOB,\n"
        "    chunk_ids     JSON NOT NULL,\n"
        f"    embedding     VECTOR({dimension}, FLOAT32) NOT NULL\n"
        ")",
        f"CREATE INDEX IF NOT EXISTS {s}_DOC ON {s} (doc_id)",
    ]


def drop_enrichment_ddl(version: str) -> list[str]:
    return [f"DROP TABLE IF EXISTS {questions_table(version)} PURGE",
            f"DROP TABLE IF EXISTS {summaries_table(version)} PURGE"]


def copy_enrichment_sql(version: str, parent: str) -> list[str]:
    """The parent's questions and summaries into the new version, vectors included."""
    q, s = ", ".join(QUESTION_COLUMNS), ", ".join(SUMMARY_COLUMNS)
    return [f"INSERT INTO {questions_table(version)} ({q}) SELECT {q} FROM {questions_table(parent)}",
            f"INSERT INTO {summaries_table(version)} ({s}) SELECT {s} FROM {summaries_table(parent)}"]


def empty_enrichment_sql(version: str) -> list[str]:
    return [f"DELETE FROM {questions_table(version)}", f"DELETE FROM {summaries_table(version)}"]


#: Columns of a version table, in DDL order: what ``copy_rows_sql`` copies and what an existing
#: table must have to be taken for the debris of a crashed ``create_version``.
TABLE_COLUMNS = ("chunk_id", "doc_id", "doc_hash", "chunk_index", "chunk_type", "source", "text", "content_hash",
                 "metadata", "embedding")
TABLE_COLUMNS_SQL = "SELECT column_name FROM SYS.USER_TAB_COLUMNS WHERE table_name = :table_name"


def copy_rows_sql(version: str, parent: str) -> str:
    """Every row of ``parent`` into the new version, vectors included (no re-embedding)."""
    cols = ", ".join(TABLE_COLUMNS)
    return f"INSERT INTO {version_table(version)} ({cols}) SELECT {cols} FROM {version_table(parent)}"


def empty_table_sql(version: str) -> str:
    """Rows left by a crashed ``create_version`` (a table without a registry row); transactional, unlike
    ``TRUNCATE``, so the copy that follows commits together with the emptying."""
    return f"DELETE FROM {version_table(version)}"
