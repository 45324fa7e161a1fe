"""Old command names kept for one release, hidden from ``--help``: ``rag promote``,
``rag rollback`` (now ``rag index promote|rollback``) and ``rag alias status|prune``
(now ``rag index status`` and the one retention verb ``rag index gc``). Each runs the
new command unchanged and then says on stderr which name to use."""

from __future__ import annotations

from typing import Any

import click

from backend.cli import index


def _deprecation(old: str, new: str) -> None:
    """The note goes out when the whole command is done (after its output or its error line),
    so scripts reading stdout, and tests reading the first stderr line, see what they saw before."""
    click.get_current_context().find_root().call_on_close(
        lambda: click.echo(f"note: `rag {old}` is deprecated and goes in the next release; use `rag {new}`",
                           err=True))


def hidden_alias(command: click.Command, old: str, new: str) -> click.Command:
    """``command`` under its old name ``old`` (the last word is the command's name), hidden."""
    target = command.callback
    assert target is not None

    def callback(**kwargs: Any) -> Any:
        _deprecation(old, new)
        return click.get_current_context().invoke(target, **kwargs)

    return click.Command(old.split()[-1], callback=callback, params=list(command.params), help=command.help,
                         short_help=f"Deprecated: use `rag {new}`.", hidden=True)


@click.group("alias", hidden=True)
def alias() -> None:
    """Deprecated: use `rag index status` and `rag index gc`."""


alias.add_command(hidden_alias(index.status, "alias status", "index status"))


@alias.command("prune")
@click.option("--domain-key", default=None)
@click.option("--alias", "alias_name", default=None)
@click.option("--dry-run", is_flag=True, help="Only list what would be dropped.")
@click.pass_context
def prune(ctx: click.Context, domain_key: str | None, alias_name: str | None, dry_run: bool) -> None:
    """Deprecated: `rag index gc --alias NAME` (the alias's series; the default alias's without one)."""
    _deprecation("alias prune", "index gc")
    if not (domain_key or alias_name):  # `alias prune` alone pruned the default alias's series (`gc` alone: all)
        from backend.cli.context import settings_from

        alias_name = settings_from(ctx).embeddings.alias.name
    ctx.invoke(index.gc, domain_key=domain_key, alias_name=alias_name, dry_run=dry_run, as_json=False)


COMMANDS = (
    hidden_alias(index.promote, "promote", "index promote"),
    hidden_alias(index.rollback, "rollback", "index rollback"),
    alias,
)
