"""Every statement the Oracle store runs, as pure functions returning SQL text: one namespace
(``from backend.providers.oracle_vs import sql``) over the modules that build them, by what they touch:

- ``sql_names``: validated table/view/index names, the metric keyword, column lists, IN-list buckets;
- ``catalog_sql``: the catalog tables, registry reads and locks, alias views;
- ``version_ddl``: one version's tables and indexes, copies, drops, load statistics;
- ``write_sql``: chunk, question and summary writes, what a write compares against, the embedding cache;
- ``search_sql``: filters, dense, lexical, question and summary searches, reads by id.

Names (tables, views, indexes, metadata fields) are interpolated, so each one
passes :func:`validate_identifier` before any text is built; values are always
bind variables. Syntax targets Oracle Database 23ai (``VECTOR`` type,
``VECTOR_DISTANCE``, ``FETCH APPROX``, ``CREATE ... IF NOT EXISTS``, native
``JSON``). The distance metric is always written out, and always the one the
version's vector index was built with: a different metric makes Oracle ignore
the index and scan everything.
"""

from __future__ import annotations

from backend.providers.oracle_vs.sql_names import (  # noqa: F401
    METRICS, CHUNK_COLUMNS, RESERVED_WORDS, CATALOG_TABLES, oracle_name, metric, version_table, index_names,
    metadata_index_name, acl_index_name, question_vector_index_name, questions_table, summaries_table,
    DOCS_PER_READ, IN_BUCKETS, in_size, in_marks, in_binds, json_text, chunk_select,
)
from backend.providers.oracle_vs.catalog_sql import (  # noqa: F401
    ALREADY_EXISTS, COLUMN_EXISTS, CATALOG_DDL, CATALOG_INDEXES, CATALOG_UPGRADES, CATALOG_COLUMNS_SQL,
    MISSING_ENRICHMENT_SQL, DERIVED_CLAIMS_SQL, alias_view_ddl, drop_alias_ddl, PROTECTED_SQL, PROTECTED_ONE_SQL,
    VERSION_COLUMNS, VERSION_SELECT, FIND_VERSION_SQL, RESOLVE_TARGET_SQL, LOCK_VERSION_ROW_SQL,
    BUMP_GENERATION_SQL,
)
from backend.providers.oracle_vs.version_ddl import (  # noqa: F401
    INDEX_STATUS_SQL, drop_index_ddl, metadata_index_ddl, acl_index_ddl, VECTOR_POOL_SQL, POOL_MODE_SQL, ADVISOR_SQL,
    VECTOR_FORMATS, version_table_ddl, doc_index_ddl, vector_index_ddl, question_vector_index_ddl, text_index_ddl,
    OPTIMIZE_TEXT_INDEX_SQL, GATHER_TABLE_STATS_SQL, stats_tables, drop_version_ddl, QUESTION_COLUMNS,
    SUMMARY_COLUMNS, enrichment_ddl, drop_enrichment_ddl, copy_enrichment_sql, empty_enrichment_sql, TABLE_COLUMNS,
    TABLE_COLUMNS_SQL, copy_rows_sql, empty_table_sql,
)
from backend.providers.oracle_vs.write_sql import (  # noqa: F401
    insert_question_sql, insert_summary_sql, delete_enrichment_sql, delete_chunk_questions_sql, doc_enrichment_sql,
    WRITE_COLUMNS, insert_chunk_sql, update_chunk_sql, chunk_binds, chunk_input_sizes, COMPARED_COLUMNS,
    doc_chunks_sql, delete_chunk_sql, delete_document_sql, document_hashes_sql, document_list_sql, vectors_sql,
    counts_sql, row_count_sql, MERGE_CACHE_SQL, cached_vectors_sql, POISONED_CACHE_SQL, PURGE_POISONED_CACHE_SQL,
    POISONED_NORM,
)
from backend.providers.oracle_vs.search_sql import (  # noqa: F401
    COLUMN_FIELDS, question_search_sql, question_count_sql, summary_search_sql, asset_refs_sql, filter_clause,
    count_matching_sql, dense_search_sql, candidate_search_sql, lexical_fetch, lexical_search_sql, lexical_top,
    IDS_PER_READ, BY_ID_COLUMNS, chunks_by_id_sql, text_query, similarity,
)
