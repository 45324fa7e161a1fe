"""A git repository as a source: the files of one ref, through the ``git`` command line.

A local repository is read in place; a URL is cloned bare once into the connector's cache
folder and fetched at each sync. An item is a file of the ref's tree (under ``subdir``, of a type
the loaders read); its token is its blob id, so two syncs differ exactly where the commits' trees
differ (what ``git diff --name-status`` between the synced and the new commit would list). The
ref's own ``.rag-readers.yaml`` gives the readers, so a permission change is a commit too.
"""

from __future__ import annotations

import hashlib
import subprocess
from pathlib import Path
from typing import Iterator

from backend.common.errors import SourceItemFailed, SourceUnavailable
from backend.connectors.readers_file import READERS_FILE, parse_rules, readers_of
from backend.core.connector import LOADABLE, FetchedItem, SourceItem, suffix_for


def _is_url(repo: str) -> bool:
    return "://" in repo or repo.startswith("git@")


class GitConnector:
    kind = "git"

    def __init__(self, repo: str, ref: str = "HEAD", *, subdir: str = "", cache_dir: Path | None = None,
                 timeout_s: float = 300.0) -> None:
        self.repo, self.ref, self.subdir = repo, ref, subdir.strip("/")
        self.timeout_s = timeout_s
        if _is_url(repo):
            base = cache_dir or Path.home() / ".cache" / "rag-git"
            self.git_dir = base / hashlib.sha256(repo.encode()).hexdigest()[:16]
        else:
            self.git_dir = Path(repo).expanduser()
        self.commit = ""

    def _git(self, *args: str) -> bytes:
        try:
            done = subprocess.run(["git", "--git-dir" if _is_url(self.repo) else "-C", str(self.git_dir), *args],
                                  capture_output=True, timeout=self.timeout_s, check=False)
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise SourceUnavailable(f"git repository {self.repo}: {exc}") from exc
        if done.returncode != 0:
            raise SourceUnavailable(f"git repository {self.repo}: git {args[0]} failed: "
                                    f"{done.stderr.decode(errors='replace').strip()[:300]}")
        return done.stdout

    def _update(self) -> None:
        if not _is_url(self.repo):
            if not self.git_dir.exists():
                raise SourceUnavailable(f"git repository {self.repo}: no such folder")
            return
        if not (self.git_dir / "HEAD").exists():
            self.git_dir.parent.mkdir(parents=True, exist_ok=True)
            done = subprocess.run(["git", "clone", "--bare", "--quiet", self.repo, str(self.git_dir)],
                                  capture_output=True, timeout=self.timeout_s, check=False)
            if done.returncode != 0:
                raise SourceUnavailable(f"git repository {self.repo}: clone failed: "
                                        f"{done.stderr.decode(errors='replace').strip()[:300]}")
            return
        self._git("fetch", "--quiet", "--force", "--prune", "origin", "+refs/heads/*:refs/heads/*",
                  "+refs/tags/*:refs/tags/*")

    def list_items(self) -> Iterator[SourceItem]:
        self._update()
        self.commit = self._git("rev-parse", "--verify", f"{self.ref}^{{commit}}").decode().strip()
        rules = []
        try:
            rules = parse_rules(self._git("show", f"{self.commit}:{READERS_FILE}").decode("utf-8"), READERS_FILE)
        except SourceUnavailable as exc:
            if "does not exist" not in exc.user_message and "exists on disk, but not in" not in exc.user_message:
                raise
        listing = self._git("ls-tree", "-r", "-z", "--full-tree", self.commit, *([self.subdir] if self.subdir else []))
        for entry in listing.split(b"\0"):
            if not entry:
                continue
            meta, _, raw_path = entry.partition(b"\t")
            _mode, kind, blob = meta.decode().split()
            path = raw_path.decode("utf-8", errors="replace")
            name = path.rsplit("/", 1)[-1]
            if kind != "blob" or name.startswith(".") or not any(name.lower().endswith(s) for s in LOADABLE):
                continue
            relative = path[len(self.subdir) + 1:] if self.subdir else path
            yield SourceItem(relative, blob, title=name.rsplit(".", 1)[0], url=f"{self.repo}#{self.ref}:{path}",
                             readers=readers_of(relative, rules))

    def fetch(self, item: SourceItem) -> FetchedItem:
        try:
            content = self._git("cat-file", "blob", item.token)
        except SourceUnavailable as exc:
            raise SourceItemFailed(f"{item.item_id}: {exc.user_message}") from exc
        return FetchedItem(item.item_id, content, suffix_for("", item.item_id))
