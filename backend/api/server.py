"""Serving the API through gunicorn: bounded workers and threads, timeouts from config.

``rag serve`` and the README's ``gunicorn -c python:backend.api.gunicorn_conf`` line
share :func:`gunicorn_options`: ``gthread`` workers (a bounded thread pool per
process; server-sent-event streams hold one thread each, which the ``sync``
worker could not do), ``server.workers`` x ``server.threads`` requests at once,
and a worker timeout that outlasts the slowest answer (``Settings.worker_timeout``).
Without access control the first worker also prints the local admin's link (a new token at
each start, ``backend/api/admin_session.py``).
Each worker builds its own app (and loads the model) after the fork: torch and
SQLite connections must not cross a fork.

:func:`check_exposure` refuses a non-loopback bind without API keys unless
``server.allow_unauthenticated_exposure`` (``--allow-unauthenticated``) says so;
the ``when_ready`` hook checks the sockets gunicorn really bound, so a ``-b`` on
gunicorn's command line cannot slip past it.
"""

from __future__ import annotations

import math
import sys
from typing import Any, Callable

from backend.api.hardening import is_loopback
from backend.common.config import Settings
from backend.common.errors import ConfigError, ServerFailed

#: printed on stderr by the first worker once it serves; tests and scripts read the URL from it
READY_LINE = "Serving on {url}  (Ctrl+C to stop)"
#: printed after it when the configuration has a local admin (access control off): the one way to become it
ADMIN_LINE = "Admin console (open in a browser on this machine; valid until the server restarts): {link}"


def bind_address(host: str, port: int) -> str:
    return f"[{host}]:{port}" if ":" in host and not host.startswith("[") else f"{host}:{port}"


def has_credentials(settings: Settings) -> bool:
    return bool(settings.server.api_keys) or settings.access.enabled


def check_exposure(settings: Settings, host: str) -> None:
    """``ConfigError`` for a bind other computers can reach while no credential is required."""
    if is_loopback(host) or has_credentials(settings) or settings.server.allow_unauthenticated_exposure:
        return
    raise ConfigError(
        f"refusing to serve on {host}, reachable from other machines, without API keys: set "
        "RAG_SERVER__API_KEYS (or access control), bind 127.0.0.1, or pass --allow-unauthenticated "
        "(server.allow_unauthenticated_exposure: true) if the exposure is intended",
        field="server.host",
    )


def _listener_hosts(server: Any) -> list[str]:
    return [str(listener.sock.getsockname()[0]) for listener in server.LISTENERS
            if isinstance(listener.sock.getsockname(), tuple)]


def _when_ready(settings: Settings) -> Callable[[Any], None]:
    def when_ready(server: Any) -> None:
        from gunicorn.errors import HaltServer

        for host in _listener_hosts(server):
            try:
                check_exposure(settings, host)
            except ConfigError as exc:
                raise HaltServer(exc.user_message, exit_status=1) from exc
    return when_ready


def _post_worker_init(settings: Settings) -> Callable[[Any], None]:
    def post_worker_init(worker: Any) -> None:
        from backend.api.admin_session import admin_link, token_or_none

        if worker.age != 1:  # the first worker, once its app is built
            return
        token = token_or_none(settings)
        for listener in worker.sockets:
            print(READY_LINE.format(url=str(listener)), file=sys.stderr, flush=True)
            if token is not None:  # printed, never logged: the terminal is where the person is
                print(ADMIN_LINE.format(link=admin_link(str(listener), token)), file=sys.stderr, flush=True)
    return post_worker_init


def gunicorn_options(settings: Settings, host: str | None = None, port: int | None = None) -> dict[str, Any]:
    """gunicorn settings for ``settings`` (``host``/``port`` override ``server.host``/``port``)."""
    server = settings.server
    return {
        "bind": [bind_address(host or server.host, server.port if port is None else port)],
        "worker_class": "gthread",
        "workers": server.workers,
        "threads": server.threads,
        # connections a worker keeps open (idle keep-alives included); past it, new ones wait in the backlog
        "worker_connections": server.threads * 4,
        "timeout": math.ceil(settings.worker_timeout()),
        "graceful_timeout": math.ceil(server.graceful_timeout_s),
        "keepalive": 5,
        "limit_request_line": 8190,
        "limit_request_fields": 100,
        "limit_request_field_size": 8190,
        "control_socket_disable": True,
        "proc_name": "rag-serve",
        "when_ready": _when_ready(settings),
        "post_worker_init": _post_worker_init(settings),
    }


def _application_class() -> type:
    from gunicorn.app.base import BaseApplication

    class RagApplication(BaseApplication):  # type: ignore[misc]
        """gunicorn serving ``create_app(settings)`` in each worker."""

        def __init__(self, settings: Settings, options: dict[str, Any]) -> None:
            self._settings = settings
            self._options = options
            super().__init__()

        def load_config(self) -> None:
            for key, value in self._options.items():
                if key in self.cfg.settings:  # control_socket_disable exists from gunicorn 24 on
                    self.cfg.set(key, value)

        def load(self) -> Any:
            from backend.api.app import create_app
            from backend.common.logging import configure_logging

            configure_logging(self._settings.logging)
            return create_app(self._settings)

    return RagApplication


def serve(settings: Settings, host: str | None = None, port: int | None = None) -> None:
    """Run gunicorn in this process until it stops; ``ConfigError`` for a refused exposure,
    ``ServerFailed`` when gunicorn exits with an error (the reason is in the log above)."""
    bound_host = host or settings.server.host
    check_exposure(settings, bound_host)
    settings = settings.model_copy(update={"server": settings.server.model_copy(update={"host": bound_host})})
    from backend.api.admin_session import local_admin_possible, new_token

    if local_admin_possible(settings):
        try:
            new_token(settings)  # before the workers fork: they all read this one; an earlier run's link stops working
        except ConfigError as exc:  # a read-only data folder: served without a local admin (logged by the workers)
            print(f"warning: no admin link: {exc.user_message}", file=sys.stderr, flush=True)
    app = _application_class()(settings, gunicorn_options(settings, bound_host, port))
    try:
        app.run()
    except SystemExit as exc:
        if exc.code not in (0, None):
            raise ServerFailed(f"the server stopped with status {exc.code}; the reason is in the log above") from exc
