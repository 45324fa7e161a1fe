"""A local or mounted folder as a source: the files ``walk_folder`` keeps (``.ragignore``, hidden
and temporary files skipped, links confined), each item's token its size and sha256, so a file
touched without a change is unchanged. Files carry no readers of their own: a readers file in the
folder (``.rag-readers.yaml``: glob of relative paths -> readers, the first match wins) gives them,
and a file it does not match has the declaration's ``readers`` (else unknown: admins only)."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Iterator

from backend.common.errors import SourceItemFailed, SourceUnavailable
from backend.core.connector import FetchedItem, SourceItem, suffix_for
from backend.connectors.readers_file import READERS_FILE, Rules, parse_rules, readers_of
from backend.ingest.folder import walk_folder


def file_token(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return f"{path.stat().st_size}:{digest.hexdigest()}"


class FolderConnector:
    kind = "folder"

    def __init__(self, path: str, readers_file: str = READERS_FILE) -> None:
        self.root = Path(path).expanduser()
        self.readers_file = readers_file
        self._paths: dict[str, Path] = {}

    def _rules(self) -> Rules:
        path = self.root / self.readers_file
        return parse_rules(path.read_text(encoding="utf-8"), str(path)) if path.is_file() else []

    def list_items(self) -> Iterator[SourceItem]:
        if not self.root.is_dir():
            raise SourceUnavailable(f"folder {self.root}: no such folder (unmounted?)")
        rules = self._rules()
        walk = walk_folder(self.root)
        self._paths = {f.relative: f.path for f in walk.files}
        for f in walk.files:
            try:
                token = file_token(f.path)
            except OSError as exc:
                raise SourceUnavailable(f"folder {self.root}: {f.relative}: {exc.strerror}") from exc
            yield SourceItem(f.relative, token, title=f.path.stem, url=f.path.as_uri(),
                             readers=readers_of(f.relative, rules))

    def fetch(self, item: SourceItem) -> FetchedItem:
        path = self._paths.get(item.item_id, self.root / item.item_id)
        try:
            return FetchedItem(item.item_id, path.read_bytes(), suffix_for("", path.name))
        except OSError as exc:
            raise SourceItemFailed(f"{item.item_id}: {exc.strerror}") from exc
