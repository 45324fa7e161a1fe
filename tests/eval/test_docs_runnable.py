"""Every command in a docs block marked ``<!-- runnable -->`` runs as written.

Why: examples drifted from the shipped config (``--filter department=it`` names a field
the shipped schema lacks) and from the shell (an unquoted ``updated_at>=...`` is a
redirection). Each marked line is split as the shell splits it (``shlex`` with shell
punctuation, so an unquoted ``>``, ``|`` or ``;`` fails the test instead of writing a
file) and run in-process against a copy of the sample store whose aliases serve the
sample and handbook versions.
"""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Any, Iterator

import pytest
from click.testing import CliRunner

from backend.cli.main import cli
from backend.common.config import Settings
from tests.conftest import REPO

MARK = "<!-- runnable -->"
SHELL_OPERATORS = set("();<>|&")


def runnable_commands() -> Iterator[tuple[str, str]]:
    """``(doc:line, command)`` for each command of each marked ```` ```bash ```` block."""
    for doc in [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]:
        lines = doc.read_text(encoding="utf-8").splitlines()
        for i, line in enumerate(lines):
            if line.strip() != MARK:
                continue
            assert lines[i + 1].strip() == "```bash", f"{doc.name}:{i + 1}: {MARK} must precede a ```bash block"
            end = next(j for j in range(i + 2, len(lines)) if lines[j].startswith("```"))
            for command in "\n".join(lines[i + 2:end]).replace("\\\n", " ").splitlines():
                if command.strip() and not command.strip().startswith("#"):
                    yield f"{doc.relative_to(REPO)}:{i + 2}", command


def shell_words(command: str) -> list[str]:
    """The words the shell would pass; an unquoted operator (a redirection, a pipe) fails."""
    lexer = shlex.shlex(command, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    words = list(lexer)
    operators = [w for w in words if w and set(w) <= SHELL_OPERATORS]
    assert not operators, f"the shell reads {operators} in {command!r} as an operator: quote the argument"
    return words


COMMANDS = list(runnable_commands())


def test_the_docs_mark_the_examples_they_promise() -> None:
    docs = {where.split(":")[0] for where, _ in COMMANDS}
    assert {"docs/SEARCH.md", "docs/CHAT_API.md", "docs/EVALUATION_AND_PROMOTION.md"} <= docs
    assert all(command.startswith("rag ") for _, command in COMMANDS)


def test_an_unquoted_comparison_is_caught() -> None:
    with pytest.raises(AssertionError, match="quote the argument"):
        shell_words("rag search q --filter updated_at>=2025-01-01")
    assert shell_words('rag search q --filter "updated_at>=2025-01-01"')[-1] == "updated_at>=2025-01-01"


@pytest.fixture
def served(cli_env: Settings, eval_store: Any) -> Settings:
    """The seed store with the default and handbook aliases serving their versions."""
    eval_store.point_alias(cli_env.embeddings.alias.name, "KB_SAMPLE_V1")
    eval_store.point_alias(cli_env.embeddings.domains["handbook"].alias_name, "KB_HANDBOOK_V1")
    return cli_env


@pytest.mark.parametrize(("where", "command"), COMMANDS, ids=[f"{w} {c[:40]}" for w, c in COMMANDS])
def test_marked_command_runs_as_written(served: Settings, where: str, command: str, tmp_path: Path,
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    words = shell_words(command)
    assert words[0] == "rag"
    monkeypatch.chdir(REPO)
    result = CliRunner().invoke(cli, words[1:])
    assert result.exit_code == 0, f"{where}: {command}\n{result.output}"
    assert result.stdout.strip(), f"{where}: {command} printed nothing"
