"""Production entry point: ``gunicorn -c python:backend.api.gunicorn_conf 'backend.api.wsgi:app'``
(workers, threads, bind and timeouts from ``server.*``; see ``backend.api.server``).

Settings come from ``config/rag.yaml`` and the ``RAG_*`` environment; each
gunicorn worker imports this module and builds its own app (and loads the model).
"""

from __future__ import annotations

from backend.api.app import create_app
from backend.common.config import load_settings
from backend.common.logging import configure_logging

_settings = load_settings()
configure_logging(_settings.logging)
app = create_app(_settings)
