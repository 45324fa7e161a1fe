"""A four-document knowledge base that can be edited between builds, with its golden set.

``write_kb(root, edition)`` writes the corpus for one edition: the leave policy
states ``edition.days`` days, and the floor plan DOCX holds a picture of
``edition.color`` (so each edition's figure is a different file). ``broken``
replaces the VPN and expense documents with unrelated text, which a golden set
that asks about them must refuse at the gate.
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import docx

from tests.conftest import make_settings
from tests.fixtures.docx import make_fixtures as mk

VERSION = "KB_LC_V1"
ALIAS = "KB_ACTIVE"
LEAVE_Q = "How many days of annual leave does every full-time employee receive?"
FIGURE_Q = "Where is the evacuation route to the assembly point on floor 2?"


@dataclass(frozen=True)
class Edition:
    days: int = 25
    color: tuple[int, int, int] = mk.RED
    broken: bool = False


def write_kb(root: Path, edition: Edition = Edition()) -> Path:
    """The corpus of ``edition`` under ``root`` and its manifest (returned)."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "leave.md").write_text(
        "# Annual leave\n\n"
        f"Every full-time employee receives {edition.days} days of paid annual leave per calendar year. "
        "Leave is booked in the HR portal at least two weeks ahead.\n", encoding="utf-8")
    if edition.broken:
        vpn = expenses = "The cafeteria serves soup on Mondays and fresh bread every morning.\n"
    else:
        vpn = ("Connect to the corporate VPN with the GlobalConnect client and sign in with your badge number "
               "and a one-time code from the authenticator app.\n")
        expenses = ("Travel expenses are claimed in the finance portal within thirty days, with every receipt "
                    "attached as a scan.\n")
    (root / "vpn.txt").write_text(vpn, encoding="utf-8")
    (root / "expenses.txt").write_text(expenses, encoding="utf-8")
    stamp = root / ".floor-edition"  # a DOCX saved again differs by its zip timestamps: save only on change
    if not (root / "floor.docx").is_file() or stamp.read_text() != repr(edition.color):
        _write_floor_plan(root / "floor.docx", edition.color)
        stamp.write_text(repr(edition.color))
    manifest = root / "manifest.jsonl"
    manifest.write_text("".join(json.dumps({"path": name, "doc_id": name.split(".")[0], "tags": ["policy"]}) + "\n"
                                for name in ("leave.md", "vpn.txt", "expenses.txt", "floor.docx")))
    return manifest


def _write_floor_plan(path: Path, color: tuple[int, int, int]) -> None:
    d = docx.Document()
    d.add_paragraph("Floor 2 evacuation plan. The evacuation route leads to assembly point A in the car park.")
    mk.picture(d.add_paragraph(), mk.image_bytes(color, size=(16, 16)), alt="Evacuation route floor 2")
    d.add_paragraph("Figure 1: Evacuation route from floor 2 to assembly point A.")
    d.save(str(path))


GOLDEN = [
    {"id": "g1", "query": LEAVE_Q, "expected_sources": {"leave": 3}, "expected_mode": "rag"},
    {"id": "g2", "query": "How do I sign in to the corporate VPN?", "expected_sources": {"vpn": 3}, "expected_mode": "rag"},
    {"id": "g3", "query": "Within how many days must travel expenses be claimed?", "expected_sources": {"expenses": 3}, "expected_mode": "rag"},
    {"id": "g4", "query": FIGURE_Q, "expected_sources": {"floor": 3}, "expected_mode": "rag"},
]


def lifecycle_settings(tmp_path: Path, kb: Path, **overrides: Any) -> Any:
    golden = tmp_path / "golden.jsonl"
    golden.write_text("".join(json.dumps(q) + "\n" for q in GOLDEN))
    base: dict[str, Any] = {
        "embeddings": {"profiles": {"sample": {"index_name": VERSION}}},
        "ingest": {"allowed_roots": [str(kb)], "progress": False},
        "docx": {"assets_gc_grace_seconds": 0},
        "server": {"rate_limit": {"enabled": False}},  # one address reads in a loop: rotation is tested here
        "evaluation": {"golden_set": str(golden), "reports_dir": str(tmp_path / "reports"),
                       "gates": {"min_recall_at_k": 0.7, "min_ndcg_at_10": 0.6, "min_mode_accuracy": None,
                                 "max_regression": 0.05}},
    }
    from backend.common.config import _deep_merge

    return make_settings(tmp_path, **_deep_merge(base, overrides))


def table_rows(db: Path, version: str) -> list[tuple[Any, ...]]:
    """Every stored column of every row, in rowid order: what "byte-identical" compares."""
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        return con.execute(f"SELECT rowid, * FROM {version} ORDER BY rowid").fetchall()
    finally:
        con.close()


def files(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}
