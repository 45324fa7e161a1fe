"""Shared by CLI commands: load settings once from the group's options."""

from __future__ import annotations

from typing import Any, Callable, Mapping

import click

from backend.common.config import Settings, load_settings
from backend.common.logging import configure_logging
from backend.core.ports import Stores


def settings_from(ctx: click.Context, overrides: Mapping[str, Any] | None = None, *,
                  quiet_info: bool = False) -> Settings:
    """Settings loaded once, logging configured. ``quiet_info``: a command whose report a person
    reads (``rag kb create``, ``rag ingest DIR``) logs from WARNING up when the configured level
    is INFO, so log lines do not interleave with the report; ``--debug`` still shows everything."""
    obj = ctx.find_root().obj or {}
    settings = load_settings(obj.get("config_path"), overrides=overrides)
    level = "DEBUG" if obj.get("debug") else ("WARNING" if quiet_info and settings.logging.level == "INFO" else None)
    configure_logging(settings.logging, level=level)
    if settings.telemetry.enabled:
        from backend.common.telemetry_setup import configure as configure_telemetry

        configure_telemetry(settings.telemetry)
    return settings


def json_command(group: click.Group, name: str) -> Callable[[Callable[..., None]], click.Command]:
    """A subcommand of ``group`` that prints its report as text or, with ``--json``, as JSON: the
    function gets the click context first and ``as_json`` (``rag index list``, ``rag kb show NAME``...)."""

    def register(func: Callable[..., None]) -> click.Command:
        with_json = click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
        return group.command(name)(with_json(click.pass_context(func)))

    return register


def operator() -> str:
    """Who a CLI admin action is recorded as: ``cli:<the OS user>`` (the command holds no principal)."""
    import getpass

    try:
        return f"cli:{getpass.getuser()}"
    except (KeyError, OSError):  # no user name in a bare container
        return "cli"


def audit(stores: Stores, settings: Settings, action: str, outcome: str, *, knowledge_base: str | None = None,
          version: str | None = None, detail: Mapping[str, Any] | None = None) -> None:
    """Append one CLI admin action (promote, rollback, gc, feedback export) to the store's audit trail."""
    from backend.core.services.audit import AuditTrail

    AuditTrail(stores.audit, settings.audit).record(action, outcome, principal=operator(),
                                                    knowledge_base=knowledge_base, version=version, surface="cli",
                                                    detail=detail)
