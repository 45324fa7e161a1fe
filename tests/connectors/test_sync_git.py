"""A git repository synced into a knowledge base (issue 46): a real repository made with the git
command line, read in place and cloned from a ``file://`` URL."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest

from backend.common.errors import SourceUnavailable
from backend.connectors.git_repo import GitConnector
from tests.connectors.helpers import Synced
from tests.connectors.scenario import run_scenario


class GitSource:
    def __init__(self, root: Path, *, url: bool) -> None:
        self.root, self.url = root, url
        self.readers: dict[str, list[str]] = {}
        root.mkdir(parents=True)
        self.git("init", "-q", "-b", "main")
        self.cache = root.parent / "cache"

    def git(self, *args: str) -> None:
        subprocess.run(["git", "-c", "user.email=t@example.com", "-c", "user.name=t", *args], cwd=self.root,
                       check=True, capture_output=True)

    def put(self, name: str, text: str, readers: list[str]) -> None:
        (self.root / "docs").mkdir(exist_ok=True)
        (self.root / "docs" / f"{name}.md").write_text(text, encoding="utf-8")
        self.readers[name] = readers

    def delete(self, name: str) -> None:
        (self.root / "docs" / f"{name}.md").unlink()
        self.readers.pop(name)

    def set_readers(self, name: str, readers: list[str]) -> None:
        self.readers[name] = readers

    def publish(self) -> None:
        (self.root / ".rag-readers.yaml").write_text(
            "".join(f"{n}.md: {r}\n" for n, r in self.readers.items()), encoding="utf-8")
        (self.root / "notes.bin").write_bytes(b"\0\1")  # not a document type: never listed
        self.git("add", "-A")
        self.git("commit", "-qm", "change")

    def doc_id(self, name: str) -> str:
        return f"{name}.md"

    def connector(self) -> GitConnector:
        repo = self.root.as_uri() if self.url else str(self.root)
        return GitConnector(repo, "main", subdir="docs", cache_dir=self.cache)

    def broken(self) -> GitConnector:
        return GitConnector(str(self.root), "no-such-branch")


@pytest.mark.parametrize("url", [False, True], ids=["local", "file-url"])
def test_git_repository_end_to_end(tmp_path: Path, embedder: Any, url: bool) -> None:
    synced = Synced(tmp_path, embedder, "git", {"repo": str(tmp_path / "repo"), "ref": "main", "subdir": "docs"})
    run_scenario(synced, GitSource(tmp_path / "repo", url=url))


def test_an_unreachable_remote_is_reported(tmp_path: Path) -> None:
    with pytest.raises(SourceUnavailable, match="clone failed"):
        list(GitConnector((tmp_path / "absent").as_uri(), cache_dir=tmp_path / "c").list_items())
