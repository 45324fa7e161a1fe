"""Issue 48: the examples ``make run`` prints before serving are the README's two ``curl``
examples, question and header alike (a new user copies one or the other)."""

from __future__ import annotations

import json
import re

from tests.conftest import REPO


def _asked(text: str) -> list[tuple[str | None, str]]:
    """``(X-RAG-Domain or None, question)`` of each ``curl ... /chat`` in ``text``, in order."""
    out = []
    for command in re.findall(r"curl -s -X POST \S+/chat.*?-d '(?:[^'])*'", text, flags=re.S):
        domain = re.search(r"X-RAG-Domain: ([\w-]+)", command)
        body = re.search(r"-d '(.*)'", command, flags=re.S)
        assert body is not None, command
        question = json.loads(body.group(1).replace('\\"', '"'))["question"]
        out.append((domain.group(1) if domain else None, question))
    return out


def test_the_banner_shows_the_readme_examples() -> None:
    makefile = (REPO / "Makefile").read_text(encoding="utf-8")
    banner = makefile[makefile.index("run: setup"):makefile.index("$(RAG) serve")]
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert _asked(banner) == _asked(readme)[:2] == [
        (None, "How many days of annual leave do employees get?"), ("handbook", "How many days of annual leave?")]
