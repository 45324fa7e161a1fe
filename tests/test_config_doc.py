"""docs/CONFIG.md is generated from the config models and must not drift from them."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from backend.common.config import FLAG_ENV_VARS, SOURCE_ORDER, Settings
from tests.conftest import REPO

DOC = REPO / "docs" / "CONFIG.md"
SCRIPT = REPO / "scripts" / "gen_config_doc.py"
REGENERATE = ".venv/bin/python scripts/gen_config_doc.py"


@pytest.fixture(scope="module")
def gen() -> ModuleType:
    spec = importlib.util.spec_from_file_location("gen_config_doc", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up while being built
    spec.loader.exec_module(module)
    return module


def test_config_doc_matches_the_models(gen: ModuleType) -> None:
    assert DOC.exists(), f"docs/CONFIG.md is missing; run `{REGENERATE}`"
    if DOC.read_text(encoding="utf-8") != gen.render():
        pytest.fail(f"docs/CONFIG.md is out of date with backend/common/config/; run `{REGENERATE}`")


def test_every_config_field_has_a_description(gen: ModuleType) -> None:
    assert gen.leaf_fields_without_description() == [], "add description= to these fields in backend/common/config/"


def test_doc_lists_every_top_level_section_precedence_and_seed_flag(gen: ModuleType) -> None:
    text = gen.render()
    for section in Settings.model_fields:
        assert f"## `{section}`" in text
    order = [text.index(f"{i}. {gen.SOURCE_TEXT[name]}") for i, name in enumerate(SOURCE_ORDER, start=1)]
    assert order == sorted(order)
    for flag, path in FLAG_ENV_VARS.items():
        assert f"| `{flag}` | `{'.'.join(path)}` |" in text


def test_rows_name_type_default_and_environment_variable(gen: ModuleType) -> None:
    text = gen.render()
    assert ("| `retrieval.top_k` | int | `8` | `RAG_RETRIEVAL__TOP_K` | Candidates retrieved per question. |"
            in text)
    assert "| `store.oracle.password` | secret \\| null | `null` | `RAG_STORE__ORACLE__PASSWORD` |" in text
    assert "| `docx.assets_dir` | str | `\"data/rag-assets\"` | `RAG_DOCX__ASSETS_DIR`, `RAG_ASSETS_DIR` |" in text
    assert "`RAG_SERVER__API_KEYS` (comma separated)" in text
    assert "| `embeddings.profiles.<NAME>.index_name` | str | *required* | " in text


def test_nested_defaults_are_the_ones_really_in_effect(gen: ModuleType) -> None:
    """``llm.fallback`` defaults to provider none, whatever the class default of its model says."""
    text = gen.render()
    default = Settings()
    row = next(line for line in text.splitlines() if line.startswith("| `llm.fallback.provider` |"))
    assert f'`"{default.llm.fallback.provider}"`' in row
    retry = next(line for line in text.splitlines() if line.startswith("| `llm.primary.retry.max_attempts` |"))
    assert f"`{default.llm.primary.retry.max_attempts}`" in retry


def test_check_mode_names_the_regenerate_command_when_stale(tmp_path: Path) -> None:
    stale = tmp_path / "CONFIG.md"
    stale.write_text("# old\n", encoding="utf-8")
    done = subprocess.run([sys.executable, str(SCRIPT), "--check", "--output", str(stale)],
                          capture_output=True, text=True, cwd=REPO)
    assert done.returncode == 1
    assert REGENERATE in done.stderr
    written = subprocess.run([sys.executable, str(SCRIPT), "--output", str(stale)], capture_output=True, text=True,
                             cwd=REPO, check=True)
    assert written.stdout.strip() == f"wrote {stale}"
    again = subprocess.run([sys.executable, str(SCRIPT), "--check", "--output", str(stale)], cwd=REPO)
    assert again.returncode == 0
