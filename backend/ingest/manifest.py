"""JSONL manifests: what to ingest, one JSON object per line.

A line names exactly one of ``path`` (a file), ``dir`` (its files, ``recursive``
optional) or ``glob`` (relative to the manifest's folder), plus optional
``doc_id``, ``tags``, ``lang``, ``profiles``, ``content_type``, ``updated_at`` and
free ``metadata``. Relative paths resolve against the manifest's folder and every
resolved file must lie inside ``ingest.allowed_roots`` after following symlinks, so
neither ``..`` nor a symlink can reach files outside them.

Problems are reported as ``manifest.jsonl:17: <what is wrong>``: strict mode raises
the first as ``ManifestError``; otherwise the line is skipped and the problem is
returned with the good entries.

Chunks store a document's ``source`` as a path relative to the repository, the manifest's
folder or the allowed root that holds the file (:func:`source_name`), never as the absolute
path the server read it from.
"""

from __future__ import annotations

import errno
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Sequence

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from backend.common.config import REPO_ROOT
from backend.common.errors import ManifestError
from backend.common.jsonl import parse_model_line
from backend.core.access import acl_labels, default_labels
from backend.core.metadata_schema import validate_metadata
from backend.core.types import ACL_FIELD
from backend.ingest.loaders import supported_suffixes
from backend.ingest.ingest_config import ConfigLike


class ManifestLine(BaseModel):
    """One manifest line as written by an operator."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    path: str | None = Field(None, description="One file.")
    dir: str | None = Field(None, description="Every supported file in this folder.")
    glob: str | None = Field(None, description="Files matching this pattern (relative to the manifest folder).")
    recursive: bool = Field(False, description="`dir`: include sub-folders.")
    doc_id: str | None = Field(None, min_length=1, max_length=512, description="Stable id; only with `path`.")
    tags: list[str] = Field(default_factory=list)
    lang: str | None = Field(None, min_length=2, max_length=16, description="Language hint, e.g. `en`.")
    profiles: list[str] = Field(default_factory=list, description="Embedding profiles to ingest into.")
    content_type: str | None = Field(None, description="Selects the profile's embedding template.")
    updated_at: str | None = Field(None, description="ISO date; used by the freshness tie-break.")
    metadata: dict[str, Any] = Field(default_factory=dict, description="Free metadata stored with every chunk.")
    acl: list[str] | None = Field(
        None, description="Who may see the document: `public`, principal names (`alice` or `user:alice`) and "
        "`group:<name>`; without it, `access.default_acl` applies when access control is on.")

    @field_validator("tags", "profiles")
    @classmethod
    def _non_empty_strings(cls, v: list[str]) -> list[str]:
        if any(not item.strip() for item in v):
            raise ValueError("entries must be non-empty strings")
        return v

    @model_validator(mode="after")
    def _one_source(self) -> "ManifestLine":
        given = [k for k in ("path", "dir", "glob") if getattr(self, k)]
        if len(given) != 1:
            raise ValueError(f"exactly one of 'path', 'dir' or 'glob' is required (got {given or 'none'})")
        if self.doc_id and not self.path:
            raise ValueError("'doc_id' is only allowed with 'path' (a dir or glob yields several documents)")
        if self.recursive and not self.dir:
            raise ValueError("'recursive' is only allowed with 'dir'")
        return self


@dataclass(frozen=True)
class ManifestEntry:
    """One document to ingest, resolved and confined."""

    path: Path
    doc_id: str
    where: str
    profiles: tuple[str, ...] = ()
    metadata: Mapping[str, Any] = field(default_factory=dict)
    #: what chunks store as ``source`` (:func:`source_name`); never an absolute server path
    source: str = ""


@dataclass
class Manifest:
    path: Path
    entries: list[ManifestEntry]
    errors: list[tuple[str, str]]


def allowed_roots(settings: ConfigLike) -> list[Path]:
    return [settings.resolve_path(root).resolve() for root in settings.ingest.allowed_roots]


def confine(candidate: Path, roots: list[Path], shown: str) -> Path:
    """The real path of ``candidate`` if it lies inside one of ``roots``; a symlink loop
    (``a -> b -> a``) is an error of the line that reaches it, not of the run."""
    try:
        real = candidate.resolve()
    except RuntimeError as exc:  # Python 3.11: "Symlink loop from '<path>'"
        raise ManifestError(f"{shown!r}: symlink loop: {candidate} never reaches a file") from exc
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise ManifestError(f"{shown!r}: symlink loop: {candidate} never reaches a file") from exc
        raise ManifestError(f"{shown!r}: cannot resolve {candidate}: {exc.strerror}") from exc
    if not any(inside(real, root) for root in roots):
        raise ManifestError(
            f"{shown!r} resolves to {real}, outside ingest.allowed_roots ({', '.join(str(r) for r in roots)})"
        )
    return real


def inside(path: Path, folder: Path) -> bool:
    """``path`` is ``folder`` or lies beneath it, both absolute and normalized: ``is_relative_to`` by
    string prefix at a separator (pathlib's builds two part lists a call: a manifest of 10,000 lines
    spent seconds in it)."""
    p, f = str(path), str(folder)
    return p == f or p.startswith(f if f.endswith(os.sep) else f + os.sep)


def _expand(line: ManifestLine, base: Path, roots: list[Path]) -> list[tuple[Path, Path]]:
    """Each file the line names, as named (``base`` joined) and resolved (confined to ``roots``)."""
    if line.path:
        target = confine(base / line.path, roots, line.path)
        if not target.is_file():
            raise ManifestError(f"path {line.path!r}: no such file ({target})")
        return [(target, target)]
    if line.dir:
        folder = confine(base / line.dir, roots, line.dir)
        if not folder.is_dir():
            raise ManifestError(f"dir {line.dir!r}: no such folder ({folder})")
        found = folder.rglob("*") if line.recursive else folder.glob("*")
        suffixes = supported_suffixes()
        candidates = sorted(p for p in found if p.suffix.lower() in suffixes)
    else:
        if Path(str(line.glob)).is_absolute():
            raise ManifestError(f"glob {line.glob!r}: must be relative to the manifest folder")
        candidates = sorted(base.glob(str(line.glob)))
    files = []
    for p in candidates:
        real = confine(p, roots, str(p.relative_to(base)) if p.is_relative_to(base) else str(p))
        if real.is_file():
            files.append((p, real))
    if not files:
        raise ManifestError(f"{'dir' if line.dir else 'glob'} {line.dir or line.glob!r} matches no files")
    return files


def default_doc_id(path: Path, base: Path) -> str:
    """The path relative to the manifest folder, with ``/``: stable wherever the repo lives."""
    return Path(os.path.relpath(path, base)).as_posix()


def source_name(path: Path, base: Path, roots: Sequence[Path], metadata: Mapping[str, Any] | None = None) -> str:
    """What a document's chunks store as ``source``, never an absolute server path: the path
    relative to the repository when the file lies in it (as before, so in-repo documents keep
    their stored source and hash), else relative to the manifest's folder, else to the
    innermost allowed root that holds it; a file beneath none of them (only possible for an
    entry not built from a manifest) is named by its manifest ``title`` or its file name.
    ``path`` is the file as the manifest names it, resolved or not."""
    return _source_name(path, path.resolve(), base.resolve(), roots, metadata)


def _source_name(path: Path, real: Path, base: Path, roots: Sequence[Path], metadata: Mapping[str, Any] | None) -> str:
    """``source_name`` with ``path``'s real path and the real ``base`` already known (a manifest
    of 10,000 lines resolved each path three times)."""
    if inside(real, REPO_ROOT):
        return real.relative_to(REPO_ROOT).as_posix()
    for candidate in (Path(os.path.normpath(path.absolute())), real):
        if inside(candidate, base):
            return candidate.relative_to(base).as_posix()
    holding = [root for root in roots if inside(real, root)]
    if holding:
        return real.relative_to(max(holding, key=lambda r: len(r.parts))).as_posix()
    title = (metadata or {}).get("title")
    return title.strip() if isinstance(title, str) and title.strip() else real.name


def chunk_metadata(line: ManifestLine) -> dict[str, Any]:
    meta: dict[str, Any] = dict(line.metadata)
    meta["tags"] = list(line.tags)
    for key in ("lang", "content_type", "updated_at"):
        value = getattr(line, key)
        if value is not None:
            meta[key] = value
    return meta


def _validate_metadata(meta: dict[str, Any], settings: ConfigLike, where: str) -> dict[str, Any]:
    """Typed check against ``retrieval.metadata_schema``."""
    if not settings.retrieval.metadata_schema:
        return meta
    return dict(validate_metadata(meta, settings.retrieval.metadata_schema, where))


def _parse_line(raw: str) -> ManifestLine:
    try:
        return parse_model_line(raw, ManifestLine)
    except ValueError as exc:
        raise ManifestError(str(exc)) from exc


def _entries(line: ManifestLine, base: Path, roots: list[Path], settings: ConfigLike, where: str) -> list[ManifestEntry]:
    unknown = [p for p in line.profiles if p not in settings.embeddings.profiles]
    if unknown:
        raise ManifestError(f"profiles: unknown profile(s) {unknown}; configured: {sorted(settings.embeddings.profiles)}")
    if ACL_FIELD in line.metadata:
        raise ManifestError(f"metadata: {ACL_FIELD!r} is reserved for access control; use the line's 'acl'")
    meta = _validate_metadata(chunk_metadata(line), settings, where)
    if line.acl is not None:
        meta[ACL_FIELD] = acl_labels(line.acl)
    elif settings.access.enabled:
        meta[ACL_FIELD] = default_labels(settings.access)
    entries = []
    for p, real in _expand(line, base, roots):
        entries.append(ManifestEntry(path=real, doc_id=line.doc_id or default_doc_id(p, base), where=where,
                                     profiles=tuple(line.profiles), metadata=meta,
                                     source=_source_name(p, real, base, roots, meta)))
    return entries


def read_manifest(path: Path, settings: ConfigLike, *, strict: bool = False) -> Manifest:
    """Parse, validate and expand a manifest. ``ManifestError`` if the file itself is
    unreadable, or (``strict``) at the first bad line."""
    try:
        lines = path.read_text(encoding="utf-8-sig").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise ManifestError(f"{path}: cannot read manifest: {exc}", path=str(path)) from exc
    base, roots = path.resolve().parent, allowed_roots(settings)
    manifest = Manifest(path=path, entries=[], errors=[])
    seen: dict[str, str] = {}
    for number, raw in enumerate(lines, start=1):
        if not raw.strip() or raw.lstrip().startswith("#"):
            continue
        where = f"{path.name}:{number}"
        try:
            entries = _entries(_parse_line(raw), base, roots, settings, where)
            for entry in entries:
                if entry.doc_id in seen:
                    raise ManifestError(f"doc_id {entry.doc_id!r} is already listed at {seen[entry.doc_id]}")
        except ManifestError as exc:
            if strict:
                raise ManifestError(f"{where}: {exc.user_message}", where=where) from exc
            manifest.errors.append((where, exc.user_message.removeprefix(f"{where}: ")))
            continue
        for entry in entries:
            seen[entry.doc_id] = where
        manifest.entries.extend(entries)
    return manifest
