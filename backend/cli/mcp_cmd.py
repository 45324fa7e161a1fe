"""``rag mcp serve``: the knowledge bases as an MCP server, over stdio or Streamable HTTP (docs/MCP.md).

Read-only: the tools search, answer, list and fetch; nothing here writes, promotes or uploads. Over
stdio the principal is ``--as`` (required with access control on); over HTTP each call brings the
credential it would send to ``/chat``. The MCP SDK is the extra ``mcp``.
"""

from __future__ import annotations

import click

from backend.cli.context import settings_from
from backend.common.errors import ConfigError


@click.group("mcp")
def mcp() -> None:
    """The MCP server: search and ask the knowledge bases from an assistant host."""


def _server_module():  # type: ignore[no-untyped-def]
    try:
        from backend.mcp_server import server
    except ModuleNotFoundError as exc:
        if exc.name and exc.name.split(".")[0] == "mcp":
            raise ConfigError("rag mcp serve needs the MCP SDK: pip install -e '.[mcp]'", field="mcp") from exc
        raise
    return server


@mcp.command("serve")
@click.option("--transport", type=click.Choice(["stdio", "http"]), default="stdio", show_default=True,
              help="stdio (a host starts this command) or Streamable HTTP (at --host:--port/mcp).")
@click.option("--as", "run_as", default=None, metavar="PRINCIPAL",
              help="stdio: run every call as this configured principal (access.principals); required with "
                   "access.enabled. Over HTTP each call authenticates instead.")
@click.option("--host", default=None, help="http: bind address (default: server.host).")
@click.option("--port", type=int, default=8765, show_default=True, help="http: port.")
@click.pass_context
def serve(ctx: click.Context, transport: str, run_as: str | None, host: str | None, port: int) -> None:
    """Serve the tools search_knowledge_base, ask, list_knowledge_bases and fetch."""
    from backend.runtime import build_runtime, serving_runtime

    settings = settings_from(ctx)
    server = _server_module()
    runtime = serving_runtime(build_runtime(settings))
    if transport == "stdio":
        server.stdio_server(runtime, run_as).run("stdio")
        return
    if run_as is not None:
        raise ConfigError("--as is for stdio; over HTTP each call authenticates with its own credential", field="--as")
    import uvicorn

    bind = host or settings.server.host
    click.echo(f"MCP over Streamable HTTP at http://{bind}:{port}/mcp", err=True)
    uvicorn.run(server.http_app(runtime, bind), host=bind, port=port, log_level="warning")
