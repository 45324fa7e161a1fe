"""Walk a folder into manifest lines (``rag kb create --from DIR``, ``rag ingest DIR``).

Why a walker and not a ``{"dir": ...}`` manifest line: a folder someone keeps their own
documents in holds things that must not be indexed (``.git``, an editor's ``~$report.docx``
lock file, a ``.~lock`` file, drafts listed in ``.ragignore``) and links that may lead out of
it. Each is skipped with a reason the user sees, never silently. What is kept gets a doc_id
made from its path relative to the folder, so the same file keeps its id run after run and
wherever the folder lives.

Rules, in order: hidden files and folders (a name starting with ``.``) are skipped; editor and
office temporary files (``~$x.docx``, ``.~lock.x#``, ``x~``, ``#x#``, ``*.tmp``) are skipped;
paths matching a gitignore pattern of the folder's ``.ragignore`` are skipped; links are
followed only when they resolve inside the folder (a link to a folder is never followed: its
files are walked where they live); files of an unsupported type are skipped.
"""

from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable

import pathspec

from backend.common.errors import ManifestError
from backend.ingest.loaders import supported_suffixes

IGNORE_FILE = ".ragignore"
_SLUG_DROP = re.compile(r"[^a-z0-9._/-]+")
_DASHES = re.compile(r"-{2,}")


@dataclass(frozen=True)
class FolderFile:
    """A file to ingest: its real path, its path relative to the folder and its doc_id."""

    path: Path
    relative: str
    doc_id: str


@dataclass(frozen=True)
class Skipped:
    file: str
    reason: str

    def to_dict(self) -> dict[str, str]:
        return {"file": self.file, "reason": self.reason}


@dataclass(frozen=True)
class FolderWalk:
    root: Path
    files: tuple[FolderFile, ...]
    skipped: tuple[Skipped, ...]

    def manifest_lines(self) -> list[dict[str, Any]]:
        """One ``{"path", "doc_id"}`` manifest line per file, absolute paths (the manifest is
        written elsewhere: the knowledge base's workspace)."""
        return [{"path": str(f.path), "doc_id": f.doc_id} for f in self.files]


def temp_reason(name: str) -> str | None:
    """Why a file name is hidden or an editor's temporary file, or None (pure)."""
    if name.startswith(".~lock") or name.startswith("~$"):
        return "office lock/temporary file"
    if name.startswith("."):
        return "hidden"
    if name.endswith("~") or (name.startswith("#") and name.endswith("#")) or name.lower().endswith(".tmp"):
        return "editor temporary file"
    return None


def slug(relative: str) -> str:
    """``Policies/Annual Leave 2026.docx`` -> ``policies/annual-leave-2026.docx`` (pure)."""
    parts = []
    for part in relative.split("/"):
        s = _DASHES.sub("-", _SLUG_DROP.sub("-", part.lower())).strip("-")
        parts.append(s or "x")
    return "/".join(parts)


def doc_ids(relatives: Iterable[str]) -> dict[str, str]:
    """relative path -> doc_id: its slug, or, when two paths share a slug (``A b.md`` and
    ``a-b.md``), the slug plus a hash of the path, so neither id depends on the other file (pure)."""
    rels = list(relatives)
    counts: dict[str, int] = {}
    for rel in rels:
        counts[slug(rel)] = counts.get(slug(rel), 0) + 1
    out = {}
    for rel in rels:
        s = slug(rel)
        out[rel] = s if counts[s] == 1 else f"{s}-{hashlib.sha1(rel.encode()).hexdigest()[:8]}"
    return out


def read_ignore(root: Path) -> pathspec.PathSpec:
    """The folder's ``.ragignore`` (gitignore syntax), or an empty spec."""
    path = root / IGNORE_FILE
    if not path.is_file():
        return pathspec.PathSpec([])
    try:
        lines = path.read_text(encoding="utf-8-sig").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise ManifestError(f"{path}: cannot read ignore file: {exc}", path=str(path)) from exc
    try:
        return pathspec.GitIgnoreSpec.from_lines(lines)
    except (ValueError, TypeError) as exc:
        raise ManifestError(f"{path}: invalid pattern: {exc}", path=str(path)) from exc


def walk_folder(folder: Path, *, suffixes: Iterable[str] | None = None) -> FolderWalk:
    """Every file of ``folder`` (recursively) to ingest, and every skipped one with its reason,
    both in path order. ``ManifestError`` when the folder does not exist."""
    try:
        root = folder.expanduser().resolve(strict=True)
    except (OSError, RuntimeError) as exc:
        raise ManifestError(f"{folder}: no such folder", path=str(folder)) from exc
    if not root.is_dir():
        raise ManifestError(f"{folder}: not a folder", path=str(folder))
    wanted = frozenset(s.lower() for s in (suffixes if suffixes is not None else supported_suffixes()))
    ignore = read_ignore(root)
    found: list[tuple[str, Path, bool]] = []
    skipped: list[Skipped] = []
    for current, dirnames, filenames in os.walk(root, followlinks=False):
        here = Path(current)
        dirnames.sort()
        for name in list(dirnames):
            rel = (here / name).relative_to(root).as_posix()
            reason = _dir_reason(here / name, name, rel, root, ignore)
            if reason:
                dirnames.remove(name)
                skipped.append(Skipped(rel + "/", reason))
        for name in sorted(filenames):
            path = here / name
            rel = path.relative_to(root).as_posix()
            if rel == IGNORE_FILE:
                continue
            reason = temp_reason(name)
            if reason is None and ignore.match_file(rel):
                reason = f"matches {IGNORE_FILE}"
            real = path
            if reason is None and path.is_symlink():
                real, reason = _link_target(path, root)
            if reason is None and path.suffix.lower() not in wanted:
                reason = f"unsupported type {path.suffix.lower() or '(none)'}"
            if reason is None and not real.is_file():
                reason = "not a regular file"
            if reason:
                skipped.append(Skipped(rel, reason))
                continue
            found.append((rel, real, path.is_symlink()))
    kept, twice = _one_per_file(found)
    skipped += twice
    ids = doc_ids(rel for rel, _ in kept)
    files = tuple(FolderFile(real, rel, ids[rel]) for rel, real in kept)
    return FolderWalk(root, files, tuple(sorted(skipped, key=lambda s: s.file)))


def _one_per_file(found: list[tuple[str, Path, bool]]) -> tuple[list[tuple[str, Path]], list[Skipped]]:
    """One entry per real file: the file itself rather than a link to it, else the first link (pure)."""
    by_real: dict[Path, tuple[str, Path, bool]] = {}
    for item in sorted(found, key=lambda f: (f[2], f[0])):
        by_real.setdefault(item[1], item)
    kept = sorted((rel, real) for rel, real, _ in by_real.values())
    chosen = {rel for rel, _ in kept}
    twice = [Skipped(rel, f"same file as {by_real[real][0]} (a link to it)") for rel, real, _ in found
             if rel not in chosen]
    return kept, twice


def _dir_reason(path: Path, name: str, rel: str, root: Path, ignore: pathspec.PathSpec) -> str | None:
    if name.startswith("."):
        return "hidden folder"
    if ignore.match_file(rel + "/"):
        return f"matches {IGNORE_FILE}"
    if path.is_symlink():
        _, reason = _link_target(path, root)
        return reason or "link to a folder (not followed; its files are walked where they are)"
    return None


def _link_target(path: Path, root: Path) -> tuple[Path, str | None]:
    """Where a link leads, and why it is skipped: a loop, a dangling link, or outside the folder."""
    try:
        real = path.resolve(strict=True)
    except RuntimeError:
        return path, "symlink loop"
    except OSError:
        return path, "dangling link"
    if real != root and not real.is_relative_to(root):
        return real, f"link points outside the folder ({real})"
    return real, None
