"""``rag serve``: run the HTTP API with Flask's threaded server (development, ``make run``).

Production uses gunicorn: ``gunicorn -w 2 -b 127.0.0.1:8080 'backend.api.wsgi:app'``.
"""

from __future__ import annotations

import click

from backend.cli.context import settings_from


@click.command("serve")
@click.option("--host", default=None, help="Bind address (default: server.host).")
@click.option("--port", type=int, default=None, help="Port (default: server.port; 0 picks a free one).")
@click.pass_context
def serve(ctx: click.Context, host: str | None, port: int | None) -> None:
    """Serve /chat, /healthz, /readyz, /metrics and /openapi.json."""
    from werkzeug.serving import make_server

    from backend.api.app import create_app

    settings = settings_from(ctx)
    app = create_app(settings)
    server = make_server(host or settings.server.host, settings.server.port if port is None else port, app,
                         threaded=True)
    click.echo(f"Serving on http://{server.host}:{server.port}  (Ctrl+C to stop)", err=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        click.echo("stopped", err=True)
    finally:
        server.server_close()
