"""``load_settings``: every source read, merged in precedence order, validated once.

The precedence is written once, in :data:`SOURCES` (as pydantic-settings'
``settings_customise_sources`` returns its sources): explicit overrides (CLI flags, test
arguments), then the environment (``RAG_`` prefix, ``__`` for nesting, plus the seed's flag
names in ``FLAG_ENV_VARS``), then the YAML file, then the model defaults. The knowledge-base
registry joins last (its file may be named by any source) and may only add domains.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping

from pydantic import ValidationError

from backend.common.config.base import DEFAULT_CONFIG
from backend.common.config.kb_registry import with_registry
from backend.common.config.problems import validation_problems
from backend.common.config.settings import Settings
from backend.common.config.sources import Layer, environment_source, overrides_source, yaml_source
from backend.common.errors import ConfigError


@dataclass(frozen=True)
class SourceInputs:
    """What ``load_settings`` was given, for the sources to read from."""

    path: Path
    overrides: Mapping[str, Any] | None
    env: Mapping[str, str]


#: Every source, highest precedence first; the models' defaults lie under them all.
SOURCES: dict[str, Callable[[SourceInputs], Layer]] = {
    "overrides": lambda given: overrides_source(given.overrides),
    "environment": lambda given: environment_source(given.env),
    "yaml": lambda given: yaml_source(given.path),
}
SOURCE_ORDER: tuple[str, ...] = (*SOURCES, "defaults")


def deep_merge(low: dict[str, Any], high: Mapping[str, Any]) -> dict[str, Any]:
    """``low`` with ``high`` laid over it key by key: nested mappings merge, anything else replaces."""
    merged = dict(low)
    for key, value in high.items():
        if isinstance(value, Mapping) and isinstance(merged.get(key), dict):
            merged[key] = deep_merge(merged[key], value)
        else:
            merged[key] = value
    return merged


#: the name benchmarks and tests import
_deep_merge = deep_merge


def load_settings(
    path: str | Path | None = None,
    overrides: Mapping[str, Any] | None = None,
    env: Mapping[str, str] | None = None,
) -> Settings:
    """Load and validate the configuration once.

    ``env`` defaults to the process environment; tests pass their own mapping.
    Every problem is collected, so ``rag config check`` can print them all.
    """
    given = SourceInputs(Path(path) if path is not None else DEFAULT_CONFIG, overrides,
                         os.environ if env is None else env)
    layers = [read(given) for read in SOURCES.values()]
    merged: dict[str, Any] = {}
    for layer in reversed(layers):
        merged = deep_merge(merged, layer.data)
    merged = with_registry(merged, given.path)
    try:
        return Settings.model_validate(merged)
    except ValidationError as exc:
        found = validation_problems(exc, model=Settings, layers=layers)
        problems = [p.text for p in found]
        where = "the environment" if all(p.from_environment for p in found) else str(given.path)
        raise ConfigError(
            f"{where}: {len(problems)} problem(s):\n  " + "\n  ".join(problems),
            problems=problems,
            path=str(given.path),
        ) from exc


def masked_dump(settings: Settings) -> dict[str, Any]:
    """The resolved config as plain data, secrets shown as ``**********``."""
    return settings.model_dump(mode="json")
