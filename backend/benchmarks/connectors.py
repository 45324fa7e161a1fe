"""Connector syncs at scale (issue 46): a table of 10,000 items synced into a knowledge base.

The source is a database table read through the SQL connector (SQLAlchemy over a SQLite file: the
listing is one query, so the figures are the sync's own cost, not a network's). Each run goes
through ``sync_connector``, i.e. the same path as ``rag connector sync``: the diff, the fetches,
``ingest_into_candidate`` and the gate. Figures:

* a no-change sync of all items: embeds nothing, target under 30 s;
* 1 % of the items edited: the sync's seconds against a first sync of only those items into an empty
  knowledge base (texts of the same length, never embedded before, so neither side reads the
  other's vectors from the cache), target at most 1.2x;
* 1,000 items' readers changed: a permission-only change embeds nothing.
"""

from __future__ import annotations

import random
import sqlite3
import tempfile
import time
from pathlib import Path
from typing import Any

from backend.benchmarks.stats import Section
from backend.common.config import DEFAULT_CONFIG, ConnectorSpec, load_settings

WORDS = ("invoice", "ledger", "turbine", "compressor", "harbour", "warehouse", "forklift", "pallet", "voltage",
         "gasket", "valve", "rotor", "sensor", "firmware", "badge", "locker", "canteen", "shuttle", "permit", "audit")
QUERY = "SELECT id, title, body, version, readers FROM items"


def _text(rnd: random.Random, n: int, salt: str) -> str:
    words = " ".join(rnd.choice(WORDS) for _ in range(14))
    return f"Item {n} {salt}: the {words} procedure number {n} applies to site {n % 97}."


def _spec(db: Path, kb: str, where: str = "") -> ConnectorSpec:
    return ConnectorSpec.model_validate({
        "kind": "sql", "knowledge_base": kb,
        "options": {"url": f"sqlite:///{db}", "query": QUERY + where, "content_column": "body",
                    "change_column": "version", "title_column": "title", "readers_column": "readers"},
        "permissions": {"groups": {"staff": "group:staff", "ops": "group:ops"}}, "max_delete_share": 0.0})


def measure(config: Path = DEFAULT_CONFIG, embedder: Any = None, *, items: int = 10_000) -> Section:
    from backend.connectors.sql_table import SqlConnector
    from backend.connectors.sync import sync_connector
    from backend.runtime import build_runtime, open_embedder

    section = Section(f"Connector syncs of a {items:,}-item table (SQL connector, SQLite source)")
    changed = max(1, items // 100)
    with tempfile.TemporaryDirectory(prefix="rag-bench-connectors-") as tmp_name:
        tmp = Path(tmp_name)
        settings = load_settings(config, env={}, overrides={
            "store": {"sqlite": {"path": str(tmp / "rag.sqlite")}}, "knowledge_bases": {
                "registry_file": str(tmp / "kb.yaml"), "dir": str(tmp / "kb")},
            "evaluation": {"reports_dir": str(tmp / "reports")}, "ingest": {"progress": False},
            "sanitize": {"enabled": False}})
        embedder = embedder or open_embedder(settings)
        rnd = random.Random(46)
        db = tmp / "items.db"
        with sqlite3.connect(db) as con:
            con.execute("CREATE TABLE items (id INTEGER PRIMARY KEY, title TEXT, body TEXT, version INTEGER, "
                        "readers TEXT, edited INTEGER DEFAULT 0)")
            con.executemany("INSERT INTO items (id, title, body, version, readers) VALUES (?, ?, ?, 1, 'group:staff')",
                            [(n, f"Item {n}", _text(rnd, n, "v1")) for n in range(items)])

        def sync(spec: ConnectorSpec, name: str) -> tuple[Any, float]:
            runtime = build_runtime(settings, embedder=embedder)
            o = spec.typed_options()
            source = SqlConnector(o.url, o.query, content_column=o.content_column, change_column=o.change_column,
                                  title_column=o.title_column, readers_column=o.readers_column)
            started = time.perf_counter()
            try:
                report = sync_connector(runtime, name, spec, source)
            finally:
                runtime.stores.close()
            return report, time.perf_counter() - started

        first, first_s = sync(_spec(db, "bench-items"), "items")
        section.figures["initial sync: items / embedded / seconds"] = \
            f"{first.counts['new']} / {first.embeddings_computed} / {first_s:.1f}"
        section.figures["initial sync: version / gate passed"] = f"{first.version} / {first.gate_passed}"

        same, same_s = sync(_spec(db, "bench-items"), "items")
        section.figures["no-change sync: status / embedded / seconds"] = \
            f"{same.status} / {same.embeddings_computed} / {same_s:.2f}"
        section.target("no-change sync embeds nothing (embeddings)", same.embeddings_computed, "<=", 0)
        section.target("no-change sync seconds", same_s, "<=", 30.0)

        edited = rnd.sample(range(items), changed)
        with sqlite3.connect(db) as con:
            con.executemany("UPDATE items SET body = ?, version = 2, edited = 1 WHERE id = ?",
                            [(_text(rnd, n, "v2"), n) for n in edited])
        part, part_s = sync(_spec(db, "bench-items"), "items")
        with sqlite3.connect(db) as con:  # the same items, texts of the same length never embedded: the baseline
            con.execute("CREATE TABLE only_items AS SELECT id, title, body, version, readers FROM items WHERE edited = 1")
            con.executemany("UPDATE only_items SET body = ? WHERE id = ?", [(_text(rnd, n, "v3"), n) for n in edited])
        only_spec = _spec(db, "bench-only").model_copy(update={"options": {
            **_spec(db, "bench-only").options, "query": QUERY.replace("items", "only_items")}})
        only, only_s = sync(only_spec, "only")
        section.figures[f"{changed} items edited: changed / embedded / ingest s / with the gate s"] = \
            f"{part.counts['changed']} / {part.embeddings_computed} / {part.ingest_seconds:.1f} / {part_s:.1f}"
        section.figures[f"the same {changed} items alone, empty base: embedded / ingest s / with the gate s"] = \
            f"{only.embeddings_computed} / {only.ingest_seconds:.1f} / {only_s:.1f}"
        # the ingest step: what a sync adds to ingesting the changed items is the listing, the diff, the
        # hashing of the unchanged items and carrying them; the gate's evaluation is per knowledge base
        # (its golden set), not per change, and is shown beside it
        section.target("1% changed: sync ingest / ingesting only those items", part.ingest_seconds /
                       max(only.ingest_seconds, 1e-3), "<=", 1.2)

        regrouped = rnd.sample(range(items), min(1000, items))
        with sqlite3.connect(db) as con:
            con.executemany("UPDATE items SET readers = 'group:ops' WHERE id = ?", [(n,) for n in regrouped])
        perms, perms_s = sync(_spec(db, "bench-items"), "items")
        section.figures[f"readers of {len(regrouped):,} items changed: permission-only / embedded / seconds"] = \
            f"{perms.counts['permission_only']} / {perms.embeddings_computed} / {perms_s:.1f}"
        section.target("permission-only change embeds nothing (embeddings)", perms.embeddings_computed, "<=", 0)
        section.notes.append("each sync is rag connector sync's path: listing, diff, fetch, ingest_into_candidate, "
                             "the gate on the knowledge base's starter golden set; sanitize off")
    return section
