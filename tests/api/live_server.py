"""A real HTTP server for a test's app (werkzeug, threaded, on a free port): for clients that only
speak HTTP (the ``openai`` package, ``mcp``'s Streamable HTTP client)."""

from __future__ import annotations

import threading
from contextlib import contextmanager
from typing import Any, Iterator

from werkzeug.serving import make_server


@contextmanager
def serving(app: Any) -> Iterator[str]:
    """``app`` served on 127.0.0.1; yields its base URL and stops it afterwards."""
    server = make_server("127.0.0.1", 0, app, threaded=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}"
    finally:
        server.shutdown()
        thread.join(timeout=10)
