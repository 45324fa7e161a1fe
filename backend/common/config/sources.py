"""Where configuration values come from, one function per source: ``environment_source``,
``yaml_source`` and ``overrides_source``, each returning a :class:`Layer`. Their precedence is
written once, in ``loading.SOURCES``."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

import yaml

from backend.common.errors import ConfigError

#: The seed's flag names and the config path each one sets.
FLAG_ENV_VARS: dict[str, tuple[str, ...]] = {
    "SANITIZE_ENABLED": ("sanitize", "enabled"),
    "SANITIZE_MODE": ("sanitize", "mode"),
    "SANITIZE_ENTITIES": ("sanitize", "entities"),
    "SANITIZE_SCORE_THRESHOLD": ("sanitize", "score_threshold"),
    "DOCX_EXTRACT_IMAGES": ("docx", "extract_images"),
    "DOCX_INLINE_FIGURE_PLACEHOLDERS": ("docx", "inline_figure_placeholders"),
    "DOCX_FIGURE_CHUNKS": ("docx", "figure_chunks"),
    "DOCX_IMAGE_DEBUG": ("docx", "image_debug"),
    "RAG_ASSETS_DIR": ("docx", "assets_dir"),
}
#: list fields whose environment value is comma separated
LIST_FIELDS = {("sanitize", "entities"), ("server", "api_keys"), ("ingest", "allowed_roots")}
#: list fields under a map key whose validator splits a comma-separated environment value itself
LIST_FIELDS_IN_MAPS = {("access", "principals", "<NAME>", "roles")}
ENV_PREFIX = "RAG_"


def _set_path(target: dict[str, Any], path: tuple[str, ...], value: Any) -> None:
    """``target[a][b][c] = value`` for path ``(a, b, c)``, making the inner dicts on the way."""
    node = target
    for part in path[:-1]:
        nxt = node.get(part)
        if not isinstance(nxt, dict):
            nxt = {}
            node[part] = nxt
        node = nxt
    node[path[-1]] = value


@dataclass(frozen=True)
class Layer:
    """What one source contributes: nested plain data, and for each path it sets, who wrote it
    there when that is not the config file (``environment variable RAG_X__Y``), so that a problem
    is blamed on the source that caused it."""

    data: dict[str, Any]
    origins: Mapping[tuple[str, ...], str] = field(default_factory=dict)


def environment_path(name: str) -> tuple[str, ...] | None:
    """The config path an environment variable sets: ``RAG_A__B`` -> ``(a, b)``, a seed flag
    name -> its path, anything else -> None (not ours)."""
    if name in FLAG_ENV_VARS:
        return FLAG_ENV_VARS[name]
    if name.startswith(ENV_PREFIX) and "__" in name:
        return tuple(p.lower() for p in name[len(ENV_PREFIX):].split("__"))
    return None


def environment_source(env: Mapping[str, str]) -> Layer:
    """``RAG_A__B=v`` and the seed's flag names as a nested dict, each path remembering its variable."""
    out: dict[str, Any] = {}
    origins: dict[tuple[str, ...], str] = {}
    for name, raw in env.items():
        path = environment_path(name)
        if path is None:
            continue
        value: Any = raw
        if path in LIST_FIELDS:
            value = [item.strip() for item in raw.split(",") if item.strip()]
        _set_path(out, path, value)
        origins[path] = name
    return Layer(out, origins)


def yaml_source(path: Path) -> Layer:
    """The YAML profile, refused whole when it holds a secret (those come from the environment)."""
    data = read_yaml(path)
    _refuse_committed_access_secrets(data, path)
    return Layer(data)


def overrides_source(overrides: Mapping[str, Any] | None) -> Layer:
    """Explicit overrides: CLI flags and the ``overrides`` argument of ``load_settings`` (tests)."""
    return Layer(dict(overrides or {}))


def read_yaml(path: Path) -> dict[str, Any]:
    """A YAML file's top-level mapping; ``ConfigError`` naming the file (and line) otherwise."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError as exc:
        raise ConfigError(f"{path}: config file not found", path=str(path)) from exc
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read config file: {exc.strerror}", path=str(path)) from exc
    try:
        data = yaml.safe_load(text) or {}
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{path}:{mark.line + 1}" if mark is not None else str(path)
        raise ConfigError(f"{where}: invalid YAML: {getattr(exc, 'problem', exc)}", path=str(path)) from exc
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: expected a mapping at the top level, got {type(data).__name__}", path=str(path))
    return data


def _refuse_committed_access_secrets(data: Mapping[str, Any], path: Path) -> None:
    """API keys, the JWT secret and the metrics scrape token come from the environment only: a
    config file that holds one is refused (it would be committed, copied and logged)."""
    access = data.get("access") if isinstance(data, Mapping) else None
    if not isinstance(access, Mapping):
        access = {}
    found = [f"access.principals.{name}.api_key" for name, p in (access.get("principals") or {}).items()
             if isinstance(p, Mapping) and "api_key" in p]
    if isinstance(access.get("jwt"), Mapping) and "secret" in access["jwt"]:
        found.append("access.jwt.secret")
    server = data.get("server") if isinstance(data, Mapping) else None
    if isinstance(server, Mapping) and "metrics_token" in server:
        found.append("server.metrics_token")
    telemetry = data.get("telemetry") if isinstance(data, Mapping) else None
    if isinstance(telemetry, Mapping) and "headers" in telemetry:
        found.append("telemetry.headers")
    if found:
        raise ConfigError(f"{path}: {', '.join(found)}: secrets come from the environment only "
                          "(RAG_ACCESS__PRINCIPALS__<NAME>__API_KEY, RAG_ACCESS__JWT__SECRET, RAG_SERVER__METRICS_TOKEN, "
                          "RAG_TELEMETRY__HEADERS), "
                          "never from a config file",
                          path=str(path))
