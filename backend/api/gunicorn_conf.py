"""gunicorn settings from the runtime config: ``gunicorn -c python:backend.api.gunicorn_conf
'backend.api.wsgi:app'``. Bind, workers, threads and timeouts come from ``server.*``
(``RAG_SERVER__*`` in the environment), exactly as ``rag serve`` uses them."""

from __future__ import annotations

from backend.api.server import gunicorn_options
from backend.common.config import load_settings

globals().update(gunicorn_options(load_settings()))
