"""``.rag-readers.yaml``: who may read which files of a folder or repository that has no
permissions of its own. A mapping of glob patterns (of paths relative to the root) to lists of
readers; the first pattern that matches wins; a file none matches has no readers (the
declaration's ``readers``, else unknown: admins only)."""

from __future__ import annotations

import fnmatch

import yaml

from backend.common.errors import SourceUnavailable

READERS_FILE = ".rag-readers.yaml"
Rules = list[tuple[str, tuple[str, ...]]]


def parse_rules(text: str, where: str) -> Rules:
    try:
        data = yaml.safe_load(text) or {}
    except yaml.YAMLError as exc:
        raise SourceUnavailable(f"{where}: not valid YAML: {exc}") from exc
    if not isinstance(data, dict) or not all(isinstance(v, list) for v in data.values()):
        raise SourceUnavailable(f"{where}: expected a mapping of path patterns to lists of readers")
    return [(str(k), tuple(str(r) for r in v)) for k, v in data.items()]


def readers_of(relative: str, rules: Rules) -> tuple[str, ...] | None:
    """Pure: the readers of the first rule matching ``relative`` (None: no rule matches)."""
    return next((readers for pattern, readers in rules if fnmatch.fnmatch(relative, pattern)), None)
