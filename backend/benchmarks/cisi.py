"""The CISI test collection (``../shared/bench/cisi``): documents, queries, judgements."""

from __future__ import annotations

import re
from pathlib import Path

from backend.common.config import REPO_ROOT

DEFAULT_DIR = REPO_ROOT.parent / "shared" / "bench" / "cisi"
_MARKER = re.compile(r"^\.([A-Z])(?:\s+(\S+))?\s*$")


def parse_records(path: Path) -> dict[str, dict[str, str]]:
    """``id -> {field letter: text}`` for the ``.I`` / ``.T`` / ``.W`` ... format;
    a field's text runs until the next marker line."""
    records: dict[str, dict[str, list[str]]] = {}
    current: dict[str, list[str]] | None = None
    field = ""
    for line in path.read_text(encoding="latin-1").splitlines():
        m = _MARKER.match(line)
        if m and m.group(1) == "I" and m.group(2):
            current = {}
            records[m.group(2)] = current
            field = ""
        elif m and m.group(2) is None and current is not None:
            field = m.group(1)
            current.setdefault(field, [])
        elif current is not None and field:
            current[field].append(line.strip())
    return {rid: {f: " ".join(" ".join(lines).split()) for f, lines in rec.items()} for rid, rec in records.items()}


def load_documents(folder: Path = DEFAULT_DIR) -> dict[str, str]:
    """Title plus abstract, as the collection's README prescribes."""
    recs = parse_records(folder / "CISI.ALL")
    return {rid: f"{r.get('T', '')}\n{r.get('W', '')}".strip() for rid, r in recs.items()}


def load_titles(folder: Path = DEFAULT_DIR) -> dict[str, str]:
    """Each document's title (``.T``), for contextual chunk headers."""
    return {rid: r.get("T", "") for rid, r in parse_records(folder / "CISI.ALL").items()}


def load_queries(folder: Path = DEFAULT_DIR) -> dict[str, str]:
    recs = parse_records(folder / "CISI.QRY")
    return {rid: " ".join(r.get(f, "") for f in ("T", "W") if r.get(f)).strip() for rid, r in recs.items()}


def load_qrels(folder: Path = DEFAULT_DIR) -> dict[str, set[str]]:
    """Relevant documents per query (binary; the last two columns are unused)."""
    qrels: dict[str, set[str]] = {}
    for line in (folder / "CISI.REL").read_text(encoding="latin-1").splitlines():
        parts = line.split()
        if len(parts) >= 2:
            qrels.setdefault(parts[0], set()).add(parts[1])
    return qrels
