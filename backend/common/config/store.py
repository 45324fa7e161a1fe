"""Vector store settings: the embedded SQLite store (and its ANN index) and Oracle."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, SecretStr, field_validator

from backend.common.config.base import _Model, validate_table_name


class SqliteAnnSettings(_Model):
    """The per-version ANN index of the embedded store (backend/providers/sqlite_vs/ann.py)."""

    enabled: bool = Field(True, description="Build an HNSW index (faiss) when a version's load finishes and "
                          "search with it; off: every search is exact.")
    min_vectors: int = Field(10_000, ge=1, description="Rows a version (or its questions/summaries table) needs "
                             "for an index; below it, and for a filter that leaves no more rows, the exact scan "
                             "stays (measured crossover about 5,000 rows, HNSW 2x faster at 10,000: "
                             "docs/BENCHMARKS.md section 11).")
    connectivity: int = Field(16, ge=4, le=128, description="HNSW M: neighbours per node.")
    expansion_add: int = Field(96, ge=8, le=4096, description="HNSW ef_construction (96: builds 1M x 384 in 4.3 min on 2 cores at recall@10 0.986; BENCHMARKS section 11).")
    expansion_search: int = Field(128, ge=8, le=4096, description="HNSW ef_search (raised to the depth asked); "
                                  "64 gave recall@10 0.968 at 1M, 128 0.985 (docs/BENCHMARKS.md section 11).")
    dtype: Literal["f32", "f16", "i8"] = Field("f32", description="How the index stores vectors (f16/i8: faiss's "
                                               "scalar quantizer, smaller); hits are re-scored exactly from the "
                                               "float32 matrix either way.")
    max_depth: int = Field(4096, ge=16, description="Deepest a filtered ANN search widens before it falls back to "
                           "the exact scan over the visible rows.")
    rebuild_stale_share: float = Field(
        0.1, ge=0, le=1, description="A version built from a parent (a sync, an upload) starts from a copy of the "
        "parent's index and adds only its new rows; the entries of deleted or replaced rows stay in the graph, "
        "skipped at search. Past this share of stale entries the index is built whole again (0: whole whenever a "
        "row was deleted or replaced).")


class SqliteSettings(_Model):
    path: str = Field("data/rag.sqlite", description="SQLite database file (relative to the repo root).")
    busy_timeout_ms: int = Field(10_000, ge=0, description="How long a writer waits for the database lock.")
    blas_threads: int | None = Field(
        1, ge=1, description="Threads NumPy's BLAS may use for the exact scan (set once per process when the "
        "store is built; null leaves the library default). The scan is memory-bound, and idle BLAS threads spin "
        "on the cores the embedding model needs: measured, 1 thread halves /chat latency on 2 cores.")
    ann: SqliteAnnSettings = SqliteAnnSettings()


class OracleVectorIndexSettings(_Model):
    type: Literal["hnsw", "ivf", "none"] = Field("hnsw", description="Vector index organization.")
    target_accuracy: int = Field(95, ge=1, le=100, description="TARGET ACCURACY of the index and of approximate searches.")
    neighbors: int = Field(32, ge=2, le=2048, description="HNSW NEIGHBORS.")
    efconstruction: int = Field(300, ge=1, le=65535, description="HNSW EFCONSTRUCTION.")
    neighbor_partitions: int = Field(100, ge=1, description="IVF NEIGHBOR PARTITIONS.")
    exact_filter_threshold: int = Field(
        5000, ge=0, description="Filtered searches matching at most this many rows use an exact search."
    )
    candidate_factor: int = Field(
        4, ge=2, le=64, description="Broad filters: approximate candidates = k x this, multiplied again until k rows match."
    )
    pool_shortfall: Literal["ivf", "fail", "build"] = Field(
        "fail", description="HNSW only: what finish_load does when DBMS_VECTOR.INDEX_VECTOR_MEMORY_ADVISOR says the "
        "version's graphs need more than the vector pool has free (V$VECTOR_MEMORY_POOL), decided before any index "
        "is dropped: fail = stop naming the figures and VECTOR_MEMORY_SIZE (the default: a fallback is a decision), "
        "ivf = build IVF instead (recorded on the version as its index type, logged with both figures), build = build "
        "HNSW anyway. "
        "Not asked where the pool grows on demand (Autonomous Database, VECTOR_MEMORY_SIZE=1, a PDB quota above "
        "the allocation): HNSW is built.")


class QueryInDatabaseSettings(_Model):
    """Question vectors made by Oracle inside the search statement (docs/ORACLE.md, 'In-database query embeddings')."""

    enabled: bool = Field(False, description="Embed the question inside the dense search statement with "
                          "VECTOR_EMBEDDING(model USING :qtext AS data) on versions that passed the parity check "
                          "(`rag oracle parity`); other versions are searched with the local query vector.")
    model_name: str = Field("RAG_QUERY_EMBEDDER", description="The mining model `rag oracle load-model` loads and "
                            "VECTOR_EMBEDDING names (an Oracle identifier).")
    min_cosine: float = Field(0.9999, gt=0, le=1, description="Parity floor: every golden question's database vector "
                              "must reach this cosine with the version's own embedder, or the version is refused.")

    @field_validator("model_name")
    @classmethod
    def _model_name(cls, v: str) -> str:
        return validate_table_name(v, "store.oracle.query_embedding.model_name")


class OracleSettings(_Model):
    dsn: str | None = Field(None, description="Easy Connect string or TNS alias (env RAG_STORE__ORACLE__DSN).")
    user: str | None = Field(None, description="Database user (env RAG_STORE__ORACLE__USER).")
    password: SecretStr | None = Field(None, description="Database password; environment only (RAG_STORE__ORACLE__PASSWORD).")
    config_dir: str | None = Field(None, description="Directory with tnsnames.ora (wallet setups).")
    wallet_location: str | None = Field(None, description="Directory with ewallet.pem for mTLS.")
    wallet_password: SecretStr | None = Field(None, description="Wallet password; environment only.")
    pool_min: int = Field(1, ge=0, description="Connections the pool keeps open.")
    pool_max: int = Field(4, ge=1, description="Most connections the pool opens.")
    connect_timeout_s: float = Field(10.0, gt=0, description="TCP connect timeout (and pool wait); fail fast when unreachable.")
    ddl_lock_timeout_s: int = Field(30, ge=0, le=1_000_000, description="Seconds a DDL statement (catalog upgrade, "
                                    "index build, version drop) waits for a table lock another session's DML holds "
                                    "(ALTER SESSION SET DDL_LOCK_TIMEOUT on each pooled connection) before ORA-00054; "
                                    "0 = fail at once.")
    vector_index: OracleVectorIndexSettings = OracleVectorIndexSettings()
    query_embedding: QueryInDatabaseSettings = QueryInDatabaseSettings()
    lexical_index: bool = Field(True, description="Create an Oracle Text index per version for lexical search.")
    metadata_index: bool = Field(True, description="Create a JSON search index on each version's metadata, so "
                                 "filters (JSON_EXISTS / JSON_VALUE) do not scan the table.")
    acl_index: bool = Field(True, description="Create a multivalue index on each version's metadata.rag_acl array "
                            "(finish_load), so the access-control condition of every search is a transactional "
                            "index range scan rather than a JSON search index lookup (Oracle 21c+).")
    vpd: Literal["off", "on"] = Field(
        "off", description="on: a Virtual Private Database policy (DBMS_RLS, Enterprise Edition) on every version "
        "table, so a database user other than the store's owner selecting a version or alias view sees only the "
        "rows whose rag_acl holds a label of its RAG_ACL application context (public only without one). "
        "See docs/ORACLE.md, 'Access control enforced by the database'.")


class StoreSettings(_Model):
    backend: Literal["sqlite", "oracle"] = Field("sqlite", description="Vector store adapter.")
    sqlite: SqliteSettings = SqliteSettings()
    oracle: OracleSettings = OracleSettings()
