"""The chat service follows alias rotations without a restart, also under load."""

from __future__ import annotations

import threading
import time
from typing import Any

import httpx
import pytest

from backend.api.app import create_app
from backend.runtime import build_services
from backend.common.config import Settings
from backend.core.services.chat_service import ChatQuery
from backend.core.services.promotion import rollback
from tests.eval.conftest import SAMPLE_GOLDEN
from tests.promoting import promote

QUESTION = "How many days of annual leave do full-time employees get per year?"


def test_chat_service_follows_promotion_and_rollback_without_restart(
    eval_settings: Settings, eval_store: Any, embedder: Any
) -> None:
    services = build_services(eval_settings, store=eval_store, embedder=embedder)
    promote(eval_settings, eval_store, embedder, version="KB_SAMPLE_V1", golden=SAMPLE_GOLDEN)

    def served() -> tuple[str, str, str]:
        answer = services.chat.answer(ChatQuery(QUESTION, record=False))
        return answer.decision_explain["retrieval_target"], answer.decision_explain["version"], answer.mode

    assert served() == ("KB_ACTIVE", "KB_SAMPLE_V1", "rag")
    promote(eval_settings, eval_store, embedder, version="KB_SAMPLE_V2", golden=SAMPLE_GOLDEN)
    assert served() == ("KB_ACTIVE", "KB_SAMPLE_V2", "rag")
    rollback(eval_store, "KB_ACTIVE")
    assert served() == ("KB_ACTIVE", "KB_SAMPLE_V1", "rag")


class _Client(threading.Thread):
    """Posts /chat in a loop until stopped, recording (status, version) per request."""

    def __init__(self, base_url: str, stop: threading.Event) -> None:
        super().__init__(daemon=True)
        self.base_url, self.stop = base_url, stop
        self.results: list[tuple[int, str | None]] = []
        self.errors: list[str] = []

    def run(self) -> None:
        with httpx.Client(base_url=self.base_url, timeout=60.0) as client:
            while not self.stop.is_set():
                try:
                    r = client.post("/chat", json={"question": QUESTION})
                except httpx.HTTPError as exc:
                    self.errors.append(repr(exc))
                    continue
                version = r.json().get("decision_explain", {}).get("version") if r.status_code == 200 else None
                self.results.append((r.status_code, version))


def _wait_for(clients: list[_Client], version: str, timeout: float = 120.0) -> None:
    """Until every client has completed a request served by ``version``."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if all(any(v == version for _, v in c.results) for c in clients):
            return
        time.sleep(0.05)
    pytest.fail(f"clients did not see {version} within {timeout}s: {[c.results[-3:] for c in clients]}")


def test_promotion_and_rollback_under_steady_chat_traffic_fail_no_request(
    eval_settings: Settings, eval_store: Any, embedder: Any
) -> None:
    from werkzeug.serving import make_server

    promote(eval_settings, eval_store, embedder, version="KB_SAMPLE_V1", golden=SAMPLE_GOLDEN)
    app = create_app(eval_settings, build_services(eval_settings, store=eval_store, embedder=embedder))
    app.extensions["rag_limiter"].enabled = False  # steady traffic from one address: rotation is tested here
    server = make_server("127.0.0.1", 0, app, threaded=True)
    server_thread = threading.Thread(target=server.serve_forever, daemon=True)
    server_thread.start()
    stop = threading.Event()
    clients = [_Client(f"http://127.0.0.1:{server.server_port}", stop) for _ in range(3)]
    try:
        for c in clients:
            c.start()
        _wait_for(clients, "KB_SAMPLE_V1")
        result = promote(eval_settings, eval_store, embedder, version="KB_SAMPLE_V2", golden=SAMPLE_GOLDEN)
        assert result.promoted is True
        _wait_for(clients, "KB_SAMPLE_V2")
        rollback(eval_store, "KB_ACTIVE")
        before = [len(c.results) for c in clients]
        deadline = time.monotonic() + 120
        while any(len(c.results) <= n + 1 for c, n in zip(clients, before)) and time.monotonic() < deadline:
            time.sleep(0.05)
    finally:
        stop.set()
        for c in clients:
            c.join(timeout=120)
        server.shutdown()
        server_thread.join(timeout=10)
    results = [r for c in clients for r in c.results]
    assert [e for c in clients for e in c.errors] == []
    assert {status for status, _ in results} == {200}
    assert {v for _, v in results} == {"KB_SAMPLE_V1", "KB_SAMPLE_V2"}
    assert all(c.results[-1][1] == "KB_SAMPLE_V1" for c in clients)
    assert len(results) >= 9
