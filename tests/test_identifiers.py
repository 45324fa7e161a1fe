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
