"""Many clients against a real threaded server: no errors, one interaction row per request."""

from __future__ import annotations

import threading
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from typing import Iterator

import httpx
import pytest
from flask import Flask
from werkzeug.serving import BaseWSGIServer, make_server

from tests.api.corpus import FALLBACK_QUESTION, HYBRID_QUESTION, RAG_QUESTION, Corpus

CLIENTS, REQUESTS_EACH = 8, 50
QUESTIONS = {RAG_QUESTION: "rag", HYBRID_QUESTION: "hybrid", FALLBACK_QUESTION: "fallback"}


@pytest.fixture
def server(app: Flask) -> Iterator[BaseWSGIServer]:
    app.extensions["rag_limiter"].enabled = False  # 400 requests from one address: concurrency is tested here
    srv = make_server("127.0.0.1", 0, app, threaded=True)
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    yield srv
    srv.shutdown()
    thread.join(timeout=10)
    srv.server_close()


def _client_run(base_url: str, client_no: int) -> list[tuple[int, str, str]]:
    results = []
    questions = list(QUESTIONS)
    with httpx.Client(base_url=base_url, timeout=60) as http:
        for i in range(REQUESTS_EACH):
            question = questions[(client_no + i) % len(questions)]
            resp = http.post("/chat", json={"question": question, "conversation_id": f"client-{client_no}"})
            results.append((resp.status_code, resp.headers.get("X-Answer-Mode", ""), question))
    return results


def test_concurrent_clients_get_answers_and_one_row_each(server: BaseWSGIServer, corpus: Corpus) -> None:
    before = corpus.store.count_interactions()
    base_url = f"http://127.0.0.1:{server.server_port}"
    with ThreadPoolExecutor(max_workers=CLIENTS) as pool:
        runs = list(pool.map(lambda n: _client_run(base_url, n), range(CLIENTS)))
    results = [r for run in runs for r in run]
    assert len(results) == CLIENTS * REQUESTS_EACH
    assert Counter(status for status, _, _ in results) == {200: CLIENTS * REQUESTS_EACH}
    assert all(mode == QUESTIONS[question] for _, mode, question in results)
    assert corpus.store.count_interactions() == before + CLIENTS * REQUESTS_EACH
    rows = corpus.store.interactions(limit=CLIENTS * REQUESTS_EACH)
    assert Counter(r.conversation_id for r in rows) == {f"client-{n}": REQUESTS_EACH for n in range(CLIENTS)}
    assert Counter(r.resp_mode for r in rows) == Counter(QUESTIONS[q] for _, _, q in results)
