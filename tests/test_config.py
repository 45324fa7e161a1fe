"""load_settings: one typed, validated config from overrides > environment > YAML > defaults."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from backend.common.config import (
    DEFAULT_CONFIG,
    FLAG_ENV_VARS,
    SOURCE_ORDER,
    Settings,
    environment_source,
    load_settings,
    masked_dump,
)
from backend.common.errors import ConfigError

EVIL = "kb; DROP TABLE x"


def write(tmp_path: Path, text: str, name: str = "rag.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def problems_of(path: Path | None = None, **kwargs: Any) -> list[str]:
    kwargs.setdefault("env", {})
    with pytest.raises(ConfigError) as info:
        load_settings(path, **kwargs)
    return info.value.problems


def test_default_config_file_loads() -> None:
    s = load_settings(env={})
    assert DEFAULT_CONFIG.name == "rag.yaml"
    assert s.embeddings.profile_for().index_name == "KB_SAMPLE_V1"
    assert (s.store.backend, s.embeddings.provider, s.embeddings.dimension) == ("sqlite", "local", 384)
    # the answer reader decides (docs/CALIBRATION.md), from the committed model
    assert s.retrieval.decision_score == "answerability" and s.retrieval.answerability.reader.enabled
    assert (s.resolve_path(s.retrieval.answerability.reader.path) / "model-int8.onnx").is_file()
    # the rule decision it replaced: the same profile but the decision and its gate
    rules = load_settings(DEFAULT_CONFIG.with_name("evidence-rules.yaml"), env={})
    assert rules.retrieval.decision_score == "evidence" and not rules.retrieval.answerability.reader.enabled
    assert rules.model_dump(exclude={"retrieval", "evaluation"}) == s.model_dump(exclude={"retrieval", "evaluation"})
    assert 0 < s.retrieval.threshold_low < s.retrieval.threshold_high < 1
    assert s.embeddings.domains["handbook"].alias_name == "KB_HANDBOOK"
    assert s.embeddings.alias.name == "KB_ACTIVE"


def test_an_empty_file_gives_the_model_defaults(tmp_path: Path) -> None:
    s = load_settings(write(tmp_path, ""), env={})
    assert s == Settings()
    assert s.embeddings.profile_for().index_name == "KB_DEFAULT_V1"


@pytest.mark.parametrize(
    ("yaml_text", "problem"),
    [
        ("retrieval:\n  thresold_high: 0.7\n", "retrieval.thresold_high: unknown key; did you mean 'threshold_high'?"),
        ("stor:\n  backend: sqlite\n", "stor: unknown key; did you mean 'store'?"),
        ("embeddings:\n  profiles:\n    p:\n      index_name: KB_P\n      chunker:\n        sise: 10\n"
         "  default_profile: p\n", "embeddings.profiles.p.chunker.sise: unknown key; did you mean 'size'?"),
        ("embeddings:\n  domains:\n    hr:\n      index_name: KB_HR\n      alias_name: KB_HR_A\n      profil: x\n",
         "embeddings.domains.hr.profil: unknown key; did you mean 'profile'?"),
        ("llm:\n  primary:\n    provider: extractive\n    temprature: 0.2\n", "llm.primary.temprature: unknown key; did you mean 'temperature'?"),
    ],
)
def test_unknown_key_anywhere_is_reported_with_its_yaml_path(tmp_path: Path, yaml_text: str, problem: str) -> None:
    assert problem in problems_of(write(tmp_path, yaml_text))


def test_unknown_key_from_the_environment_is_reported_too(tmp_path: Path) -> None:
    assert problems_of(write(tmp_path, ""), env={"RAG_RETRIEVAL__THRESOLD_HIGH": "0.7"}) == [
        "environment variable RAG_RETRIEVAL__THRESOLD_HIGH: unknown key 'thresold_high' in retrieval; "
        "did you mean 'threshold_high'?"]


def test_every_problem_is_collected_at_once(tmp_path: Path) -> None:
    path = write(tmp_path, (
        "retrieval:\n  thresold_high: 0.7\n  top_k: zero\n"
        "server:\n  port: 70000\n"
        "embeddings:\n  batching:\n    batch_size: 0\n"
    ))
    with pytest.raises(ConfigError, match=r"4 problem\(s\)") as info:
        load_settings(path, env={})
    found = info.value.problems
    assert len(found) == 4
    assert "retrieval.thresold_high: unknown key; did you mean 'threshold_high'?" in found
    assert any(p.startswith("retrieval.top_k: ") for p in found)
    assert any(p.startswith("server.port: ") and "65535" in p for p in found)
    assert any(p.startswith("embeddings.batching.batch_size: ") for p in found)
    assert str(path) in info.value.user_message


def test_source_order_is_overrides_environment_yaml_defaults() -> None:
    assert SOURCE_ORDER == ("overrides", "environment", "yaml", "defaults")


@pytest.mark.parametrize(
    ("yaml_top_k", "env_top_k", "override_top_k", "expected"),
    [
        (None, None, None, 8),
        (12, None, None, 12),
        (12, "16", None, 16),
        (12, "16", 20, 20),
        (None, "16", None, 16),
        (None, None, 20, 20),
    ],
)
def test_precedence_overrides_then_environment_then_yaml_then_defaults(
    tmp_path: Path, yaml_top_k: int | None, env_top_k: str | None, override_top_k: int | None, expected: int
) -> None:
    path = write(tmp_path, f"retrieval:\n  top_k: {yaml_top_k}\n  max_top_k: 40\n" if yaml_top_k else "")
    env = {"RAG_RETRIEVAL__TOP_K": env_top_k} if env_top_k else {}
    overrides = {"retrieval": {"top_k": override_top_k}} if override_top_k else None
    s = load_settings(path, overrides=overrides, env=env)
    assert s.retrieval.top_k == expected
    assert s.retrieval.max_top_k == (40 if yaml_top_k else 50)


def test_nested_sources_merge_key_by_key(tmp_path: Path) -> None:
    path = write(tmp_path, "embeddings:\n  batching:\n    batch_size: 32\n    rate_limit_per_min: 100\n")
    s = load_settings(path, env={"RAG_EMBEDDINGS__BATCHING__BATCH_SIZE": "48"})
    assert (s.embeddings.batching.batch_size, s.embeddings.batching.rate_limit_per_min) == (48, 100)


def test_environment_ignores_unrelated_and_unnested_variables() -> None:
    env = {"PATH": "/bin", "RAG_TEST_ORACLE_DSN": "db:1521/x", "RAG_SERVER__PORT": "9000"}
    assert environment_source(env).data == {"server": {"port": "9000"}}


#: A value for every seed flag and what it must resolve to; a new flag must be added here.
FLAG_CASES: dict[str, tuple[str, tuple[str, str], Any]] = {
    "SANITIZE_ENABLED": ("true", ("sanitize", "enabled"), True),
    "SANITIZE_MODE": ("audit", ("sanitize", "mode"), "audit"),
    "SANITIZE_ENTITIES": ("PERSON, EMAIL_ADDRESS", ("sanitize", "entities"), ("PERSON", "EMAIL_ADDRESS")),
    "SANITIZE_SCORE_THRESHOLD": ("0.7", ("sanitize", "score_threshold"), 0.7),
    "DOCX_EXTRACT_IMAGES": ("false", ("docx", "extract_images"), False),
    "DOCX_INLINE_FIGURE_PLACEHOLDERS": ("0", ("docx", "inline_figure_placeholders"), False),
    "DOCX_FIGURE_CHUNKS": ("no", ("docx", "figure_chunks"), False),
    "DOCX_IMAGE_DEBUG": ("1", ("docx", "image_debug"), True),
    "RAG_ASSETS_DIR": ("/srv/rag/assets", ("docx", "assets_dir"), "/srv/rag/assets"),
}


def test_every_seed_flag_has_a_case() -> None:
    assert set(FLAG_CASES) == set(FLAG_ENV_VARS)
    assert {name: FLAG_CASES[name][1] for name in FLAG_CASES} == dict(FLAG_ENV_VARS)


@pytest.mark.parametrize("flag", sorted(FLAG_CASES))
def test_seed_flag_sets_its_field_over_the_yaml_file(flag: str) -> None:
    raw, (section, field), expected = FLAG_CASES[flag]
    s = load_settings(env={flag: raw})
    assert getattr(getattr(s, section), field) == expected


def test_override_beats_seed_flag() -> None:
    s = load_settings(env={"DOCX_FIGURE_CHUNKS": "false", "SANITIZE_MODE": "audit"},
                      overrides={"docx": {"figure_chunks": True}})
    assert (s.docx.figure_chunks, s.sanitize.mode) == (True, "audit")


def test_secrets_are_masked_in_the_dump() -> None:
    env = {"RAG_STORE__ORACLE__PASSWORD": "hunter2", "RAG_SERVER__API_KEYS": "key-one, key-two",
           "RAG_LLM__PRIMARY__API_KEY": "sk-secret"}
    s = load_settings(env=env)
    assert s.store.oracle.password is not None and s.store.oracle.password.get_secret_value() == "hunter2"
    assert [k.get_secret_value() for k in s.server.api_keys] == ["key-one", "key-two"]
    dump = masked_dump(s)
    assert dump["store"]["oracle"]["password"] == "**********"
    assert dump["server"]["api_keys"] == ["**********", "**********"]
    assert dump["llm"]["primary"]["api_key"] == "**********"
    text = json.dumps(dump)
    assert not re.search("hunter2|key-one|key-two|sk-secret", text)
    assert "hunter2" not in repr(s)


def test_raw_score_mode_with_euclidean_fails_naming_the_field() -> None:
    found = problems_of(overrides={
        "retrieval": {"decision_score": "similarity", "score_mode": "raw", "distance": "euclidean"},
        "embeddings": {"profiles": {"sample": {"index_name": "KB_SAMPLE_V1", "distance": "euclidean"}}},
    })
    assert found == ["retrieval: score_mode 'raw' is not supported with distance 'euclidean' "
                     "(only dot and cosine have raw thresholds)"]


def test_raw_score_mode_needs_its_raw_thresholds() -> None:
    found = problems_of(overrides={
        "retrieval": {"decision_score": "similarity", "score_mode": "raw", "distance": "dot"},
        "embeddings": {"profiles": {"sample": {"index_name": "KB_SAMPLE_V1", "distance": "dot"}}},
    })
    assert found == ["retrieval: score_mode 'raw' with distance 'dot' needs raw_dot_low and raw_dot_high"]


def test_raw_score_mode_with_dot_and_thresholds_loads() -> None:
    s = load_settings(env={}, overrides={
        "retrieval": {"decision_score": "similarity", "score_mode": "raw", "distance": "dot", "raw_dot_low": 0.2, "raw_dot_high": 0.5},
        "embeddings": {"profiles": {"sample": {"index_name": "KB_SAMPLE_V1", "distance": "dot"}}},
    })
    assert (s.retrieval.score_mode, s.retrieval.raw_dot_high) == ("raw", 0.5)


def test_evidence_decision_needs_normalized_scores() -> None:
    found = problems_of(overrides={"retrieval": {"decision_score": "evidence", "score_mode": "raw",
                                                 "raw_cosine_low": 0.3, "raw_cosine_high": 0.5}})
    assert found == ["retrieval: decision_score 'evidence' compares a [0, 1] score with threshold_low/high; "
                     "it needs score_mode 'normalized'"]


def test_profile_distance_differing_from_retrieval_distance_fails() -> None:
    found = problems_of(overrides={"embeddings": {"profiles": {"sample": {"index_name": "KB_SAMPLE_V1",
                                                                          "distance": "dot"}}}})
    assert len(found) == 1
    assert found[0].startswith(
        "embeddings.profiles.sample.distance (dot) differs from retrieval.distance (cosine)")


@pytest.mark.parametrize(
    ("overrides", "path"),
    [
        ({"embeddings": {"profiles": {"sample": {"index_name": EVIL}}}}, "embeddings.profiles.sample.index_name"),
        ({"embeddings": {"domains": {"handbook": {"index_name": EVIL, "alias_name": "KB_H"}}}},
         "embeddings.domains.handbook.index_name"),
        ({"embeddings": {"domains": {"handbook": {"index_name": "KB_H1", "alias_name": EVIL}}}},
         "embeddings.domains.handbook.alias_name"),
        ({"embeddings": {"alias": {"name": EVIL}}}, "embeddings.alias.name"),
        ({"embeddings": {"alias": {"active_index": EVIL}}}, "embeddings.alias.active_index"),
        ({"embeddings": {"domains": {EVIL: {"index_name": "KB_X", "alias_name": "KB_XA"}}}}, "embeddings.domains"),
        ({"retrieval": {"metadata_schema": {EVIL: {"type": "string"}}}}, "retrieval.metadata_schema"),
    ],
    ids=["profile-index_name", "domain-index_name", "domain-alias_name", "alias-name", "alias-active_index",
         "domain-key", "metadata-field"],
)
def test_injected_identifier_in_config_is_rejected_at_load_naming_its_path(overrides: dict[str, Any], path: str) -> None:
    found = problems_of(overrides=overrides)
    assert len(found) == 1
    assert found[0].startswith(f"{path}: invalid ")
    assert repr(EVIL) in found[0]


def test_injected_identifier_is_reported_together_with_other_problems(tmp_path: Path) -> None:
    path = write(tmp_path, (
        "embeddings:\n  profiles:\n    p:\n      index_name: 'kb; DROP TABLE x'\n  default_profile: p\n"
        "retrieval:\n  thresold_high: 0.7\n"
    ))
    assert problems_of(path) == [
        "embeddings.profiles.p.index_name: invalid index_name 'kb; DROP TABLE x': expected a letter followed by "
        "letters, digits or underscores, at most 30 characters",
        "retrieval.thresold_high: unknown key; did you mean 'threshold_high'?",
    ]


def test_invalid_yaml_reports_file_and_line(tmp_path: Path) -> None:
    path = write(tmp_path, "store:\n  backend: sqlite\n  sqlite: [unclosed\nretrieval:\n  top_k: 3\n")
    with pytest.raises(ConfigError, match=rf"^{re.escape(str(path))}:4: invalid YAML"):
        load_settings(path, env={})


def test_tab_indentation_is_reported_with_its_line(tmp_path: Path) -> None:
    path = write(tmp_path, "retrieval:\n  top_k: 3\n\tthreshold_low: 0.2\n")
    with pytest.raises(ConfigError, match=rf"^{re.escape(str(path))}:3: invalid YAML"):
        load_settings(path, env={})


def test_missing_file_is_named(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=rf"{re.escape(str(tmp_path / 'nope.yaml'))}: config file not found"):
        load_settings(tmp_path / "nope.yaml", env={})


def test_a_top_level_list_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="expected a mapping at the top level, got list"):
        load_settings(write(tmp_path, "- a\n- b\n"), env={})


def test_settings_are_frozen() -> None:
    s = load_settings(env={})
    with pytest.raises(ValidationError, match="frozen"):
        s.retrieval.top_k = 3  # type: ignore[misc]
