"""``rag serve``: the HTTP API through gunicorn (gthread workers, bounded threads).

The same options as the production line ``gunicorn -c python:backend.api.gunicorn_conf
'backend.api.wsgi:app'`` (see ``backend.api.server``). The store is opened once here
first, so an unreachable one is reported like every other command's error before
any worker starts.
"""

from __future__ import annotations

import click

from backend.cli.context import settings_from


@click.command("serve")
@click.option("--host", default=None, help="Bind address (default: server.host).")
@click.option("--port", type=int, default=None, help="Port (default: server.port; 0 picks a free one).")
@click.option("--allow-unauthenticated", is_flag=True, default=False,
              help="Allow a non-loopback --host without API keys (server.allow_unauthenticated_exposure).")
@click.pass_context
def serve(ctx: click.Context, host: str | None, port: int | None, allow_unauthenticated: bool) -> None:
    """Serve /chat, /search, /healthz, /readyz, /metrics and /openapi.json."""
    from backend.api.server import check_exposure, serve as run_server
    from backend.runtime import open_stores

    settings = settings_from(ctx)
    if allow_unauthenticated:
        settings = settings.model_copy(update={"server": settings.server.model_copy(
            update={"allow_unauthenticated_exposure": True})})
    check_exposure(settings, host or settings.server.host)
    open_stores(settings).close()
    run_server(settings, host, port)
    click.echo("stopped", err=True)
