"""The knowledge-base registry (`knowledge_bases.registry_file`): entries written by the runtime
(`rag kb create`, uploads), merged into the configuration as domains."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping

from pydantic import ValidationError

from backend.common.config.base import REPO_ROOT, validate_domain_key
from backend.common.config.ingest import IngestSettings
from backend.common.config.knowledge_bases import KnowledgeBasesSettings, RegisteredKnowledgeBase
from backend.common.config.problems import format_validation_error
from backend.common.config.sources import read_yaml
from backend.common.errors import ConfigError


def registry_path(merged: Mapping[str, Any]) -> Path:
    """Where the knowledge-base registry lives, from the merged (not yet validated) layers."""
    kb = merged.get("knowledge_bases")
    value = kb.get("registry_file") if isinstance(kb, Mapping) else None
    value = value if isinstance(value, str) and value.strip() else KnowledgeBasesSettings().registry_file
    p = Path(value).expanduser()
    return p if p.is_absolute() else REPO_ROOT / p


def read_registry(path: Path) -> dict[str, RegisteredKnowledgeBase]:
    """The registry's entries, validated; a missing file is an empty registry. ``ConfigError``
    naming the file and the key for anything malformed."""
    if not path.exists():
        return {}
    data = read_yaml(path)
    entries = data.get("knowledge_bases") or {}
    if set(data) - {"knowledge_bases"} or not isinstance(entries, Mapping):
        raise ConfigError(f"{path}: expected one top-level key `knowledge_bases` holding a mapping of "
                          "key -> {title, source_dir, index_name, alias_name, ...}", path=str(path))
    out: dict[str, RegisteredKnowledgeBase] = {}
    for key, entry in entries.items():
        try:
            validate_domain_key(str(key))
            out[str(key)] = RegisteredKnowledgeBase.model_validate(entry)
        except ValidationError as exc:
            problems = format_validation_error(exc, model=RegisteredKnowledgeBase)
            raise ConfigError(f"{path}: knowledge_bases.{key}: " + "; ".join(problems), path=str(path),
                              key=str(key), problems=problems) from exc
        except ValueError as exc:
            raise ConfigError(f"{path}: knowledge_bases.{key}: {exc}", path=str(path), key=str(key)) from exc
    return out


def with_registry(merged: dict[str, Any], config_path: Path) -> dict[str, Any]:
    """The registry layer, on top of the merged sources (any of them may name the registry file):
    each registered knowledge base becomes `embeddings.domains.<key>`, its source folder and
    uploads folder join `ingest.allowed_roots`. A key the config (or the environment) defines too
    is refused: which definition wins would be a guess."""
    path = registry_path(merged)
    registry = read_registry(path)
    if not registry:
        return merged
    embeddings = dict(merged.get("embeddings") or {})
    domains = dict(embeddings.get("domains") or {})
    clash = sorted(set(registry) & set(domains))
    if clash:
        raise ConfigError(f"knowledge base(s) {', '.join(clash)} defined twice: in {config_path} (or the "
                          f"environment) as embeddings.domains and in the registry {path}; remove one",
                          path=str(path), keys=clash)
    kb = merged.get("knowledge_bases")
    kb_dir: str = KnowledgeBasesSettings().dir
    if isinstance(kb, Mapping) and isinstance(kb.get("dir"), str):
        kb_dir = kb["dir"]
    ingest = dict(merged.get("ingest") or {})
    roots = list(ingest.get("allowed_roots") or IngestSettings().allowed_roots)
    for key, entry in registry.items():
        domains[key] = entry.domain()
        for root in ([entry.source_dir] if entry.source_dir else []) + [str(Path(kb_dir) / key / "uploads")]:
            if root not in roots:
                roots.append(root)
    embeddings["domains"] = domains
    ingest["allowed_roots"] = roots
    return {**merged, "embeddings": embeddings, "ingest": ingest}
