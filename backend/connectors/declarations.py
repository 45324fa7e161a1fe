"""The connectors file (``connectors.file``): read, add, remove, each write atomic under a lock.

People may edit the file by hand; ``rag connector add|remove`` write it the same way the
knowledge-base registry is written (a temporary file replaced atomically, under a lock beside it),
so two commands never lose each other's entry.
"""

from __future__ import annotations

import os
from pathlib import Path

import yaml

from backend.common.config import ConnectorSpec, Settings, read_connectors, validate_connector_name
from backend.common.errors import ConfigError
from backend.common.file_lock import locked_beside


def connectors_path(settings: Settings) -> Path:
    return settings.resolve_path(settings.connectors.file)


def declared(settings: Settings) -> dict[str, ConnectorSpec]:
    return read_connectors(connectors_path(settings))


def spec_of(settings: Settings, name: str) -> ConnectorSpec:
    specs = declared(settings)
    if name not in specs:
        raise ConfigError(f"connector {name!r} is not declared in {connectors_path(settings)}; known: "
                          f"{sorted(specs) or '(none)'}", field="name")
    return specs[name]


def _write(path: Path, specs: dict[str, ConnectorSpec]) -> None:
    body = {"connectors": {k: v.model_dump(exclude_defaults=True, mode="json") | {"kind": v.kind,
                                                                                "knowledge_base": v.knowledge_base}
                           for k, v in sorted(specs.items())}}
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text("# Connectors (docs/CONNECTORS.md); secrets are environment variable names, never values.\n"
                   + yaml.safe_dump(body, sort_keys=False, allow_unicode=True), encoding="utf-8")
    os.replace(tmp, path)


def add(settings: Settings, name: str, spec: ConnectorSpec, *, replace: bool = False) -> None:
    validate_connector_name(name)
    path = connectors_path(settings)
    with locked_beside(path):
        specs = read_connectors(path)
        if name in specs and not replace:
            raise ConfigError(f"connector {name!r} is already declared in {path}; remove it first or use --replace",
                              field="name")
        for other, existing in specs.items():
            if other != name and existing.knowledge_base == spec.knowledge_base:
                raise ConfigError(f"knowledge base {spec.knowledge_base!r} is already fed by connector {other!r}; "
                                  "a knowledge base has one connector (a sync prunes what its source lacks)",
                                  field="knowledge_base")
        _write(path, {**specs, name: spec})


def remove(settings: Settings, name: str) -> ConnectorSpec:
    path = connectors_path(settings)
    with locked_beside(path):
        specs = read_connectors(path)
        if name not in specs:
            raise ConfigError(f"connector {name!r} is not declared in {path}", field="name")
        gone = specs.pop(name)
        _write(path, specs)
    return gone
