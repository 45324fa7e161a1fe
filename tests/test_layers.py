"""docs/ARCHITECTURE.md's layer table, checked against the imports (lazy and ``TYPE_CHECKING`` ones
included): each layer imports nothing it is marked never to import, apart from the exceptions the
page lists. A new arrow against the map fails here, as a drift of docs/CONFIG.md fails its test."""

from __future__ import annotations

import ast
from pathlib import Path

BACKEND = Path(__file__).resolve().parent.parent / "backend"
ABOVE = {"providers", "ingest", "connectors", "runtime", "api", "cli", "benchmarks", "training"}
#: layer -> the layers it never imports ("may import" in the page's table)
NEVER = {"common": ABOVE | {"core", "core.services"}, "core": ABOVE | {"core.services"}, "core.services": ABOVE,
         "providers": ABOVE | {"core.services"}, "ingest": ABOVE - {"ingest"}, "connectors": ABOVE - {"connectors", "ingest"},
         "api": {"providers", "cli", "benchmarks"},
         "cli": {"api"}}
#: the deliberate exceptions the page lists: (importing file, imported layer)
LISTED = {("providers/local/extractive.py", "core.services"), ("providers/rerank/sentences.py", "core.services"),
          ("cli/serve.py", "api")}


def layer(parts: tuple[str, ...]) -> str:
    return "core.services" if parts[:2] == ("core", "services") else parts[0].removesuffix(".py")


def test_no_import_runs_against_the_map() -> None:
    found = []
    for path in sorted(BACKEND.rglob("*.py")):
        rel = path.relative_to(BACKEND)
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else (
                [node.module] if isinstance(node, ast.ImportFrom) and node.module else [])
            for name in names:
                parts = tuple(name.split(".")[1:]) if name.startswith("backend.") else ()
                if parts and layer(parts) in NEVER.get(layer(rel.parts), set()) - {layer(rel.parts)} and \
                        (rel.as_posix(), layer(parts)) not in LISTED:
                    found.append(f"backend/{rel.as_posix()}:{node.lineno} imports {name}")
    assert found == [], "imports against docs/ARCHITECTURE.md's layers:\n" + "\n".join(found)
