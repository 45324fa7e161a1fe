"""Figure image files under ``docx.assets_dir``, and their garbage collection.

Files are content-addressed and shared by every version that cites them (a
document carried into the next version keeps citing the same file). A file goes
only when no remaining version cites it and it is older than the grace period,
so a build that has just written (or reused) an image and not yet committed the
chunks citing it keeps it.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

import structlog

log = structlog.get_logger(__name__)


@dataclass(frozen=True)
class AssetFiles:
    root: Path

    def files(self) -> dict[str, Path]:
        """``image_ref -> path`` of every image file (``<folder>/img_*``), temp files excluded."""
        if not self.root.is_dir():
            return {}
        out = {}
        for path in sorted(self.root.glob("*/img_*")):
            if path.is_file() and not path.is_symlink():
                out[path.relative_to(self.root).as_posix()] = path
        return out

    def unreferenced(self, cited: set[str], *, grace_seconds: float, now: float | None = None) -> list[str]:
        """References of files nobody cites, older than the grace period."""
        limit = (time.time() if now is None else now) - grace_seconds
        return [ref for ref, path in self.files().items() if ref not in cited and path.stat().st_mtime <= limit]

    def remove(self, refs: list[str]) -> int:
        removed = 0
        for ref in refs:
            path = self.root / ref
            try:
                path.unlink()
                removed += 1
            except FileNotFoundError:
                continue
            try:
                path.parent.rmdir()  # only succeeds once the document's folder is empty
            except OSError:
                pass
        if removed:
            log.info("assets.removed", files=removed, root=str(self.root))
        return removed
