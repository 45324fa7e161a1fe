"""The one typed door to the app's state: ``current_runtime()``.

``create_app`` keeps the served runtime (a ``ServingRuntime``) in ``app.extensions["rag"]``, never in a
module global, as Flask's factory pattern asks. Flask types ``extensions`` as ``dict[str, Any]``, so a
route that reads it directly gets ``Any``; routes read the ``Runtime`` served now through here
instead, typed, and each call returns one coherent whole (the holder swaps in a new runtime when
the knowledge-base registry changes).
"""

from __future__ import annotations

from flask import Flask, current_app

from backend.runtime import Runtime, ServingRuntime


def serving(app: Flask | None = None) -> ServingRuntime:
    """The app's holder (``app``, else the current app): what ``refresh`` runs on before a request."""
    held = (app or current_app).extensions["rag"]
    assert isinstance(held, ServingRuntime), "create_app keeps a ServingRuntime in app.extensions['rag']"
    return held


def current_runtime() -> Runtime:
    """The runtime serving the current request."""
    return serving().runtime
