"""Config sources: one precedence table, problems blamed on the source that caused them, and
"did you mean" for misspelt keys, choices and profiles (environment and YAML alike)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from backend.cli.main import cli
from backend.common.config import SOURCE_ORDER, SOURCES, load_settings, read_registry
from backend.common.errors import ConfigError
from tests.test_config import problems_of, write


# --- precedence -----------------------------------------------------------------------
#: sources given -> the one whose value must win
PRECEDENCE = [
    ((), "defaults"),
    (("yaml",), "yaml"),
    (("environment",), "environment"),
    (("overrides",), "overrides"),
    (("yaml", "environment"), "environment"),
    (("yaml", "overrides"), "overrides"),
    (("environment", "overrides"), "overrides"),
    (("yaml", "environment", "overrides"), "overrides"),
]
#: per field: the value each source writes (the environment as variable and raw text) and what each resolves to
FIELDS: dict[tuple[str, ...], dict[str, Any]] = {
    ("retrieval", "top_k"): {"defaults": 8, "yaml": 12, "environment": ("RAG_RETRIEVAL__TOP_K", "16"),
                             "overrides": 20, "resolved": {"environment": 16}},
    ("embeddings", "batching", "batch_size"): {"defaults": 64, "yaml": 32,
                                               "environment": ("RAG_EMBEDDINGS__BATCHING__BATCH_SIZE", "48"),
                                               "overrides": 16, "resolved": {"environment": 48}},
    ("sanitize", "score_threshold"): {"defaults": 0.5, "yaml": 0.6, "environment": ("SANITIZE_SCORE_THRESHOLD", "0.7"),
                                      "overrides": 0.8, "resolved": {"environment": 0.7}},
}


def nested(path: tuple[str, ...], value: Any) -> dict[str, Any]:
    out: dict[str, Any] = {path[-1]: value}
    for part in reversed(path[:-1]):
        out = {part: out}
    return out


@pytest.mark.parametrize(("given", "winner"), PRECEDENCE, ids=["+".join(g) or "none" for g, _ in PRECEDENCE])
@pytest.mark.parametrize("field", list(FIELDS), ids=[".".join(f) for f in FIELDS])
def test_precedence_is_overrides_then_environment_then_yaml_then_defaults(
    tmp_path: Path, given: tuple[str, ...], winner: str, field: tuple[str, ...]
) -> None:
    values = FIELDS[field]
    yaml_text = ""
    if "yaml" in given:
        yaml_text = yaml.safe_dump(nested(field, values["yaml"]))
    env = dict([values["environment"]]) if "environment" in given else {}
    overrides = nested(field, values["overrides"]) if "overrides" in given else None
    s = load_settings(write(tmp_path, yaml_text), overrides=overrides, env=env)
    got: Any = s
    for part in field:
        got = getattr(got, part)
    assert got == values["resolved"].get(winner, values[winner])


def test_source_order_is_read_from_the_sources_themselves() -> None:
    assert tuple(SOURCES) + ("defaults",) == SOURCE_ORDER == ("overrides", "environment", "yaml", "defaults")


# --- problems blamed on their source ----------------------------------------------------
@pytest.mark.parametrize(
    ("env", "problem"),
    [
        ({"RAG_RETRIEVAL__TOPK": "3"},
         "environment variable RAG_RETRIEVAL__TOPK: unknown key 'topk' in retrieval; did you mean 'top_k'?"),
        ({"RAG_RETREIVAL__TOP_K": "3"},
         "environment variable RAG_RETREIVAL__TOP_K: unknown key 'retreival' at the top level; did you mean "
         "'retrieval'?"),
        ({"RAG_EMBEDDINGS__BATCHING__BATCH_SISE": "8"},
         "environment variable RAG_EMBEDDINGS__BATCHING__BATCH_SISE: unknown key 'batch_sise' in "
         "embeddings.batching; did you mean 'batch_size'?"),
        ({"RAG_ACCESS__PRINCIPALS__ALICE__APIKEY": "k"},
         "environment variable RAG_ACCESS__PRINCIPALS__ALICE__APIKEY: unknown key 'apikey' in "
         "access.principals.alice; did you mean 'api_key'?"),
        ({"RAG_RETRIEVAL__ZZZZ": "1"}, "environment variable RAG_RETRIEVAL__ZZZZ: unknown key 'zzzz' in retrieval"),
    ],
    ids=["section-key", "section", "nested", "map-entry", "nothing-close"],
)
def test_a_misspelt_environment_variable_is_named_with_a_suggestion(
        tmp_path: Path, env: dict[str, str], problem: str) -> None:
    path = write(tmp_path, "retrieval:\n  top_k: 4\n")
    assert problems_of(path, env=env) == [problem]


def test_problems_only_the_environment_caused_are_not_blamed_on_the_file(tmp_path: Path) -> None:
    path = write(tmp_path, "")
    with pytest.raises(ConfigError) as info:
        load_settings(path, env={"RAG_RETRIEVAL__TOPK": "3"})
    assert info.value.user_message == ("the environment: 1 problem(s):\n  environment variable RAG_RETRIEVAL__TOPK: "
                                       "unknown key 'topk' in retrieval; did you mean 'top_k'?")
    assert info.value.context["path"] == str(path)
    with pytest.raises(ConfigError) as both:
        load_settings(write(tmp_path, "retrieval:\n  thresold_low: 0.1\n"), env={"RAG_RETRIEVAL__TOPK": "3"})
    assert both.value.user_message.startswith(f"{path}: 2 problem(s):")


def test_a_bad_value_from_the_environment_names_its_variable(tmp_path: Path) -> None:
    found = problems_of(write(tmp_path, "server:\n  host: 0.0.0.0\n"), env={"RAG_SERVER__PORT": "0"})
    assert found == ["server.port: Input should be greater than or equal to 1 (from environment variable "
                     "RAG_SERVER__PORT)"]


def test_a_misspelt_yaml_key_is_still_blamed_on_the_file_when_the_environment_sets_its_section(
        tmp_path: Path) -> None:
    path = write(tmp_path, "retrieval:\n  topk: 3\n")
    with pytest.raises(ConfigError) as info:
        load_settings(path, env={"RAG_RETRIEVAL__TOP_K": "5"})
    assert info.value.problems == ["retrieval.topk: unknown key; did you mean 'top_k'?"]
    assert info.value.user_message.startswith(f"{path}: 1 problem(s):")


def test_a_model_check_over_a_merged_section_blames_no_variable(tmp_path: Path) -> None:
    found = problems_of(write(tmp_path, "retrieval:\n  max_top_k: 10\n"), env={"RAG_RETRIEVAL__TOP_K": "20"})
    assert found == ["retrieval: top_k (20) must not exceed max_top_k (10)"]


def test_an_entry_made_only_by_the_environment_says_so_when_it_lacks_a_required_key(tmp_path: Path) -> None:
    found = problems_of(write(tmp_path, ""), env={"RAG_EMBEDDINGS__PROFILES__NEW__DISTANCE": "cosine"})
    assert found == ["embeddings.profiles.new.index_name: required key is missing (embeddings.profiles.new comes "
                     "only from environment variable RAG_EMBEDDINGS__PROFILES__NEW__DISTANCE)"]


def test_overrides_are_named_by_their_path(tmp_path: Path) -> None:
    found = problems_of(write(tmp_path, ""), overrides={"retrieval": {"thresold_low": 0.1}},
                        env={"RAG_RETRIEVAL__THRESOLD_LOW": "0.2"})
    assert found == ["retrieval.thresold_low: unknown key; did you mean 'threshold_low'?"]


# --- did you mean: choices, profiles, roles, the registry -------------------------------
STRATEGIES = ("'dense', 'lexical', 'fusion', 'hyde', 'hyde_fusion', 'hierarchical' or 'enriched_fusion'")


def test_an_unknown_strategy_in_yaml_gets_the_nearest_one(tmp_path: Path) -> None:
    assert problems_of(write(tmp_path, "retrieval:\n  strategy: fusoin\n")) == [
        f"retrieval.strategy: Input should be {STRATEGIES}; did you mean 'fusion'?"]


def test_an_unknown_strategy_from_the_environment_gets_the_nearest_one_and_its_variable(tmp_path: Path) -> None:
    assert problems_of(write(tmp_path, ""), env={"RAG_RETRIEVAL__STRATEGY": "hierarchial"}) == [
        f"retrieval.strategy: Input should be {STRATEGIES}; did you mean 'hierarchical'? (from environment "
        "variable RAG_RETRIEVAL__STRATEGY)"]


def test_an_unknown_choice_without_a_near_one_lists_the_choices_only(tmp_path: Path) -> None:
    assert problems_of(write(tmp_path, "store:\n  backend: postgres\n")) == [
        "store.backend: Input should be 'sqlite' or 'oracle'"]


def test_a_domain_naming_an_unknown_profile_gets_the_nearest_one(tmp_path: Path) -> None:
    path = write(tmp_path, "embeddings:\n  default_profile: sample\n  profiles:\n    sample:\n      index_name: KB_S\n"
                           "  domains:\n    hr:\n      index_name: KB_HR\n      alias_name: KB_HR_A\n"
                           "      profile: sampel\n")
    assert problems_of(path) == [
        "embeddings: domains.hr.profile 'sampel' is not one of profiles ['sample']; did you mean 'sample'?"]


def test_an_unknown_default_profile_gets_the_nearest_one(tmp_path: Path) -> None:
    path = write(tmp_path, "embeddings:\n  default_profile: sampel\n  profiles:\n    sample:\n      index_name: KB_S\n")
    assert problems_of(path) == [
        "embeddings: default_profile 'sampel' is not one of profiles ['sample']; did you mean 'sample'?"]


def test_a_preset_naming_an_unknown_field_gets_the_nearest_one(tmp_path: Path) -> None:
    path = write(tmp_path, "retrieval:\n  presets:\n    - name: by_tag\n      filter_field: tagz\n")
    assert problems_of(path) == [
        "retrieval: presets.by_tag.filter_field 'tagz' is neither in metadata_schema nor built in; known fields: "
        "chunk_type, doc_id, lang, source, tags, updated_at; did you mean 'tags'?"]


def test_an_unknown_role_from_the_environment_gets_the_known_one(tmp_path: Path) -> None:
    assert problems_of(write(tmp_path, ""), env={"RAG_ACCESS__PRINCIPALS__ALICE__ROLES": "admn"}) == [
        "access.principals.alice.roles: unknown role(s) ['admn']; known roles: ['admin']; did you mean 'admin'? "
        "(from environment variable RAG_ACCESS__PRINCIPALS__ALICE__ROLES)"]


def test_a_misspelt_key_in_the_registry_gets_the_nearest_one(tmp_path: Path) -> None:
    registry = write(tmp_path, "knowledge_bases:\n  hr:\n    index_name: KB_HR\n    alias_name: KB_HR_A\n"
                               "    titel: HR\n", name="kb.yaml")
    with pytest.raises(ConfigError) as info:
        read_registry(registry)
    assert info.value.problems == ["titel: unknown key; did you mean 'title'?"]
    assert info.value.user_message == f"{registry}: knowledge_bases.hr: titel: unknown key; did you mean 'title'?"


def test_config_check_names_the_misspelt_environment_variable_and_exits_2(tmp_path: Path) -> None:
    path = write(tmp_path, "")
    result = CliRunner().invoke(cli, ["config", "check", "--config", str(path)], env={"RAG_RETRIEVAL__TOPK": "3"})
    assert result.exit_code == 2
    assert result.stderr.splitlines() == [
        "environment variable RAG_RETRIEVAL__TOPK: unknown key 'topk' in retrieval; did you mean 'top_k'?"]
    assert result.stdout == ""
