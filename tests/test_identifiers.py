"""SQL identifiers and domain keys: a pattern no injection can satisfy."""

from __future__ import annotations

from typing import Any

import pytest

from backend.common.errors import ConfigError, InvalidIdentifier
from backend.common.identifiers import is_identifier, validate_domain_key, validate_identifier


@pytest.mark.parametrize("name", ["KB_V1", "a", "kb_handbook_2024_v12", "X" * 30, "Kb9_"])
def test_safe_identifiers_pass_unchanged(name: str) -> None:
    assert validate_identifier(name) == name
    assert is_identifier(name) is True


@pytest.mark.parametrize(
    "name",
    ["kb; DROP TABLE x", "", "1KB", "_KB", "KB-V1", "KB V1", "X" * 31, "KB\nV1", "KB.V1", 'KB"', "KB'--",
     "kb/*x*/", "ÄKB", "KB\u00a0V1", "KB_V1 ", "$KB"],
)
def test_unsafe_identifiers_are_rejected(name: str) -> None:
    with pytest.raises(InvalidIdentifier, match=r"invalid index_name .*: expected a letter followed by"):
        validate_identifier(name, "index_name")
    assert is_identifier(name) is False


@pytest.mark.parametrize("value", [None, 5, b"KB_V1", ["KB"]])
def test_non_strings_are_rejected(value: Any) -> None:
    with pytest.raises(InvalidIdentifier, match="invalid identifier"):
        validate_identifier(value)
    assert is_identifier(value) is False


def test_rejection_carries_the_offending_name_and_is_a_config_error() -> None:
    with pytest.raises(ConfigError) as info:
        validate_identifier("kb; DROP TABLE x", "alias name")
    assert isinstance(info.value, InvalidIdentifier)
    assert info.value.context == {"identifier": "kb; DROP TABLE x"}
    assert info.value.user_message.startswith("invalid alias name 'kb; DROP TABLE x'")
    assert (info.value.code, info.value.http_status) == ("invalid_identifier", 400)


@pytest.mark.parametrize("key", ["handbook", "hr-2024", "it_support", "a" * 63])
def test_boring_domain_keys_pass(key: str) -> None:
    assert validate_domain_key(key) == key


@pytest.mark.parametrize("key", ["HR", "kb; DROP TABLE x", "-hr", "1hr", "h r", "a" * 64, "", "hr\n"])
def test_other_domain_keys_are_rejected(key: str) -> None:
    with pytest.raises(InvalidIdentifier, match="invalid domain key"):
        validate_domain_key(key)


# --- version and alias names (issue 30: C1, C2) ---------------------------------------------
@pytest.mark.parametrize("name,suffix", [
    ("kb_summaries", "_SUMMARIES"), ("KB_QUESTIONS", "_QUESTIONS"), ("kb_doc", "_DOC"), ("kb_vidx", "_VIDX"),
    ("kb_tidx", "_TIDX"), ("kb_midx", "_MIDX"), ("kb_questions_chunk", "_CHUNK"), ("kb_fts", "_FTS"),
    ("kb_fts_data", "_FTS_DATA"), ("kb_facets", "_FACETS"), ("kb_emb", "_EMB"),
])
def test_a_version_or_alias_name_may_not_end_in_a_derived_suffix(name: str, suffix: str) -> None:
    """C1: ``{V}_SUMMARIES`` is version V's summary table, so a version of that name would be emptied by
    ``create_version(V)`` and dropped by ``drop_version(V)``."""
    from backend.common.identifiers import validate_table_name

    with pytest.raises(InvalidIdentifier, match=rf"invalid index_name '{name}': a version or alias name may not "
                       rf"end in {suffix} "):
        validate_table_name(name, "index_name")


@pytest.mark.parametrize("name,rule", [
    ("dual", "DUAL is"), ("SYS", "SYS is"), ("user_tables", "USER_TABLES is"),
    ("all_indexes", "ALL_INDEXES is"), ("dba_tables", "DBA_TABLES is"),
    ("dbms_lob", "names starting with DBMS_ are"), ("sys_c0001", "names starting with SYS_ are"),
    ("sqlite_master", "names starting with SQLITE_ are"),
])
def test_a_version_or_alias_name_may_not_be_a_system_name(name: str, rule: str) -> None:
    """C2: an unqualified ``DUAL`` or ``USER_TABLES`` resolves to the schema's own table first."""
    from backend.common.identifiers import validate_table_name

    with pytest.raises(InvalidIdentifier, match=rf"invalid alias name '{name}': {rule} reserved for the database"):
        validate_table_name(name, "alias name")


@pytest.mark.parametrize("name", ["KB_V1", "kb_handbook_v2", "KB_DOCS", "summaries", "KB_USER_V1", "DUALITY",
                                  "user_guides_v1", "all_docs", "dba_handbook",
                                  "kb_summary_v1"])
def test_ordinary_version_names_still_pass(name: str) -> None:
    from backend.common.identifiers import validate_table_name

    assert validate_table_name(name) == name


def test_config_load_refuses_derived_and_system_names_with_their_yaml_path(tmp_path: Any) -> None:
    from backend.common.config import load_settings

    path = tmp_path / "rag.yaml"
    path.write_text(
        "embeddings:\n  profiles:\n    p:\n      index_name: kb_summaries\n  default_profile: p\n"
        "  alias:\n    name: dual\n"
        "  domains:\n    hr:\n      index_name: HR_V1\n      alias_name: user_tables\n", encoding="utf-8")
    with pytest.raises(ConfigError) as info:
        load_settings(path, env={})
    found = "\n".join(info.value.problems)
    assert "embeddings.profiles.p.index_name: invalid index_name 'kb_summaries': a version or alias name may not " \
           "end in _SUMMARIES" in found
    assert "embeddings.alias.name: invalid alias name 'dual': DUAL is reserved" in found
    assert "embeddings.domains.hr.alias_name: invalid alias name 'user_tables': USER_TABLES is reserved" in found
