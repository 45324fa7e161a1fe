"""Production entry point: ``gunicorn -w 2 -b 127.0.0.1:8080 'backend.api.wsgi:app'``.

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
