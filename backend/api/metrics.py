"""Prometheus metrics, one ``CollectorRegistry`` per app.

A per-app registry (not the process-global default) lets every test build its
own app, and two apps in one process never share counters. Under gunicorn each
worker reports its own numbers; scrape each worker or run one worker per port.
"""

from __future__ import annotations

import time
from typing import Iterator

from flask import Blueprint, Flask, Response, current_app, g, request
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.core import CounterMetricFamily
from prometheus_client.registry import Collector

from backend.api.runtime import serving
from backend.core.services.chat_service import ChatService

bp = Blueprint("metrics", __name__)
EXTENSION = "rag_metrics"


class ApiMetrics:
    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        self.requests = Counter(
            "rag_http_requests", "HTTP requests by endpoint and status.", ["endpoint", "method", "status"],
            registry=self.registry,
        )
        self.chat = Counter(
            "rag_chat_requests", "POST /chat and /chat/stream requests by answer mode ('none' when no answer) and status.",
            ["mode", "status"], registry=self.registry,
        )
        self.latency = Histogram(
            "rag_http_request_duration_seconds", "Request latency by endpoint.", ["endpoint"], registry=self.registry,
            buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0),
        )
        self.denials = Counter(
            "rag_access_denials", "Requests denied by access control: unauthenticated (401), domain (403), "
            "asset (a figure the principal may not see, 404).", ["reason"], registry=self.registry,
        )
        self.feedback = Counter(
            "rag_feedback", "Answer feedback (POST /feedback) by rating, answer mode and the version that answered.",
            ["rating", "mode", "version"], registry=self.registry,
        )


def count_denial(reason: str) -> None:
    """One more access-control denial (``unauthenticated``, ``domain`` or ``asset``)."""
    metrics: ApiMetrics = current_app.extensions[EXTENSION]
    metrics.denials.labels(reason).inc()


def count_feedback(rating: str, mode: str, version: str) -> None:
    """One more thumbs up or down on an answer given in ``mode`` by ``version``."""
    metrics: ApiMetrics = current_app.extensions[EXTENSION]
    metrics.feedback.labels(rating, mode, version).inc()


def _start() -> None:
    g.rag_started = time.perf_counter()


def _observe(response: Response) -> Response:
    metrics: ApiMetrics = current_app.extensions[EXTENSION]
    endpoint = request.url_rule.rule if request.url_rule is not None else "unmatched"
    status = str(response.status_code)
    metrics.requests.labels(endpoint, request.method, status).inc()
    started = g.get("rag_started")
    if started is not None:
        metrics.latency.labels(endpoint).observe(time.perf_counter() - started)
    if endpoint in ("/chat", "/chat/stream"):
        metrics.chat.labels(response.headers.get("X-Answer-Mode", "none"), status).inc()
    return response


@bp.get("/metrics")
def metrics_endpoint() -> Response:
    metrics: ApiMetrics = current_app.extensions[EXTENSION]
    return Response(generate_latest(metrics.registry), content_type=CONTENT_TYPE_LATEST)


class _RecordFailures(Collector):
    """Interactions the chat service could not write (logging is best effort)."""

    def __init__(self, chat: ChatService) -> None:
        self._chat = chat

    def collect(self) -> Iterator[CounterMetricFamily]:
        yield CounterMetricFamily("rag_interaction_log_failures", "Answered requests whose interaction row could not "
                                  "be written (locked or failing store); the answer was still returned.",
                                  value=self._chat.record_failures)


def init_app(app: Flask) -> None:
    app.extensions[EXTENSION] = metrics = ApiMetrics()
    if "rag" in app.extensions:
        metrics.registry.register(_RecordFailures(serving(app).chat))
    app.before_request(_start)
    app.after_request(_observe)
    app.register_blueprint(bp)
