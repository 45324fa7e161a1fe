"""The MCP server as a host meets it: ``rag mcp serve`` over stdio (a subprocess the SDK's client
starts) and the Streamable HTTP app on a real port (uvicorn in a thread), both over a real store."""

from __future__ import annotations

import os
import socket
import sys
import threading
import time
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any, AsyncIterator, Iterator

import yaml

from backend.common.config import Settings
from tests.conftest import REPO


def write_config(settings: Settings, path: Path) -> Path:
    """``settings`` as a YAML profile another process loads (secrets and unset values left out:
    a config file may not hold them)."""
    def strip(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: strip(v) for k, v in value.items() if v != "**********" and not (k == "headers" and v == {})}
        return [strip(v) for v in value] if isinstance(value, list) else value

    path.write_text(yaml.safe_dump(strip(settings.model_dump(mode="json", exclude_none=True))), encoding="utf-8")
    return path


@asynccontextmanager
async def stdio_session(config: Path, *args: str) -> AsyncIterator[Any]:
    """A ``ClientSession`` over stdio to ``rag --config CONFIG mcp serve ARGS``."""
    from mcp import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    env = {k: v for k, v in os.environ.items() if not k.startswith("RAG_")}
    env.update({"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "RAG_LOGGING__LEVEL": "WARNING"})
    params = StdioServerParameters(command=sys.executable, cwd=str(REPO), env=env,
                                   args=["-m", "backend.cli.main", "--config", str(config), "mcp", "serve", *args])
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        yield session


@asynccontextmanager
async def http_session(url: str, headers: dict[str, str]) -> AsyncIterator[Any]:
    """A ``ClientSession`` over Streamable HTTP, sending ``headers`` with every request."""
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    async with create_mcp_http_client(headers=headers) as client, \
            streamable_http_client(url, http_client=client) as (read, write), \
            ClientSession(read, write) as session:
        await session.initialize()
        yield session


@contextmanager
def http_server(app: Any) -> Iterator[str]:
    """``app`` (Starlette) on a free loopback port with uvicorn; yields the MCP endpoint URL."""
    import uvicorn

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="on"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        server.should_exit = True
        thread.join(timeout=10)
