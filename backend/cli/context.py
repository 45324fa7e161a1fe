"""Shared by CLI commands: load settings once from the group's options."""

from __future__ import annotations

from typing import Any, Mapping

import click

from backend.common.config import Settings, load_settings
from backend.common.logging import configure_logging


def settings_from(ctx: click.Context, overrides: Mapping[str, Any] | None = None) -> Settings:
    obj = ctx.find_root().obj or {}
    settings = load_settings(obj.get("config_path"), overrides=overrides)
    configure_logging(settings.logging, level="DEBUG" if obj.get("debug") else None)
    if settings.telemetry.enabled:
        from backend.common.telemetry_setup import configure as configure_telemetry

        configure_telemetry(settings.telemetry)
    return settings
