"""OpenTelemetry spans of a question, through the real app, store and model (docs/OBSERVABILITY.md):
the tree and names of the stages, their attributes, and that no span ever carries question,
chunk or answer text; then the same spans exported over OTLP/HTTP to a receiver on loopback."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from flask.testing import FlaskClient
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import ExportMetricsServiceRequest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.trace import SpanKind, StatusCode
from pydantic import SecretStr

from backend.api.app import create_app
from backend.runtime import build_services
from backend.common import telemetry
from backend.common.config import TelemetrySettings
from backend.common.errors import UnknownDomain
from backend.common.telemetry_setup import configure, shutdown
from backend.core.services.chat_service import ChatQuery
from tests.api.corpus import COFFEE, HR, HR_FIGURE, RAG_QUESTION, VOLCANO, Corpus, corpus_settings
from tests.local_http import LocalHttpServer
from tests.telemetry_checks import assert_no_text, by_name, in_memory_telemetry, metric_points, parent_name

REQUEST_ID = "trace-test-0001"
STAGES = ("rag.embed", "rag.lexical", "rag.dense", "rag.fuse", "rag.rerank")
CORPUS_TEXTS = [*HR, HR_FIGURE, *VOLCANO, *COFFEE]


def _client(corpus: Corpus, embedder: Any, extractive: Any, tmp_path: Path) -> FlaskClient:
    """Fusion and the sentence reranker: every stage of a question runs."""
    settings = corpus_settings(tmp_path, retrieval={"strategy": "fusion", "rerank": {"provider": "sentences",
                                                                                     "top_n": 6}})
    services = build_services(settings, store=corpus.store, embedder=embedder, primary=extractive)
    return create_app(settings, services).test_client()


def test_chat_is_one_trace_with_a_span_per_stage_and_no_text(corpus: Corpus, embedder: Any, extractive: Any,
                                                             tmp_path: Path) -> None:
    with in_memory_telemetry() as (exporter, reader):
        client = _client(corpus, embedder, extractive, tmp_path)
        response = client.post("/chat", json={"question": RAG_QUESTION}, headers={"X-Request-ID": REQUEST_ID})
        assert response.status_code == 200
        body = response.get_json()
        spans = exporter.get_finished_spans()
        durations = metric_points(reader, "rag.stage.duration")
    named = by_name(spans)
    # the grouping spans (rag.chat, rag.search) fold into the request span: every stage is its child
    assert set(named) == {"POST /chat", "rag.decide", "rag.answer", *STAGES}
    assert all(len(group) == 1 for group in named.values())
    assert len({s.context.trace_id for s in spans}) == 1
    [root] = named["POST /chat"]
    assert root.parent is None and root.kind is SpanKind.SERVER
    assert {(s.name, parent_name(s, spans)) for s in spans} == {("POST /chat", None), *(
        (name, "POST /chat") for name in named if name != "POST /chat")}
    # the request id on every span of the request, not only the root
    assert {s.attributes["rag.request_id"] for s in spans} == {REQUEST_ID}

    explain = body["decision_explain"]
    attrs = dict(root.attributes or {})
    assert {k: attrs[k] for k in ("http.request.method", "http.route", "http.response.status_code",
                                  "rag.request_id")} == {"http.request.method": "POST", "http.route": "/chat",
                                                         "http.response.status_code": 200,
                                                         "rag.request_id": REQUEST_ID}
    assert (attrs["rag.strategy"], attrs["rag.version"], attrs["rag.target"], attrs["rag.mode"]) == (
        "fusion", explain["version"], "KB_ACTIVE", "rag")
    assert attrs["rag.k"] == explain["top_k"] and attrs["rag.hits"] >= 1
    assert attrs["rag.top_score"] == pytest.approx(explain["max_similarity"], abs=1e-4)
    [embed] = named["rag.embed"]
    assert (embed.attributes["gen_ai.operation.name"], embed.attributes["gen_ai.request.model"]) == (
        "embeddings", embedder.model_id)
    [answer] = named["rag.answer"]
    assert (answer.attributes["gen_ai.operation.name"], answer.attributes["gen_ai.provider.name"]) == (
        "chat", "extractive")
    assert answer.attributes["rag.mode"] == body["mode"] == "rag"
    [decide] = named["rag.decide"]
    assert decide.attributes["rag.mode"] == "rag" and decide.attributes["rag.context_chunks"] >= 1
    [rerank] = named["rag.rerank"]
    assert (rerank.attributes["rag.rerank.provider"], rerank.attributes["rag.rerank.top_n"]) == ("sentences", 6)
    assert all(s.status.status_code is StatusCode.UNSET for s in spans)

    assert_no_text(spans, [RAG_QUESTION, body["answer"], *CORPUS_TEXTS])
    # one duration per stage span (the request span is not a stage)
    assert set(durations) == set(named) - {"POST /chat"}
    assert all(p.count == len(named[stage]) and p.sum > 0 for stage, p in durations.items())


def test_search_in_the_query_string_and_a_bad_domain_header_never_reach_a_span(
        corpus: Corpus, embedder: Any, extractive: Any, tmp_path: Path) -> None:
    secret_domain = "jane.doe@example.com"
    with in_memory_telemetry() as (exporter, _):
        client = _client(corpus, embedder, extractive, tmp_path)
        assert client.get("/search", query_string={"q": RAG_QUESTION}).status_code == 200
        refused = client.post("/chat", json={"question": RAG_QUESTION}, headers={"X-RAG-Domain": secret_domain})
        assert 400 <= refused.status_code < 500
        spans = exporter.get_finished_spans()
    named = by_name(spans)
    [get] = named["GET /search"]
    assert get.attributes["http.route"] == "/search" and get.attributes["rag.hits"] >= 1
    assert {parent_name(s, spans) for s in named["rag.dense"]} == {"GET /search"}
    [post] = named["POST /chat"]
    assert post.attributes["http.response.status_code"] == refused.status_code
    assert "rag.domain" not in post.attributes  # the header was refused: never recorded
    assert not any(s.events for s in spans)
    assert_no_text(spans, [RAG_QUESTION, secret_domain, "jane doe example", *CORPUS_TEXTS])


def test_a_streamed_answer_is_one_trace_under_its_request(corpus: Corpus, embedder: Any, extractive: Any,
                                                          tmp_path: Path) -> None:
    with in_memory_telemetry() as (exporter, _):
        client = _client(corpus, embedder, extractive, tmp_path)
        response = client.post("/chat/stream", json={"question": RAG_QUESTION}, headers={"X-Request-ID": REQUEST_ID})
        body = response.get_data(as_text=True)  # the generator runs here, inside the request span
        spans = exporter.get_finished_spans()
    assert response.status_code == 200 and "event: done" in body
    named = by_name(spans)
    [root] = named["POST /chat/stream"]
    assert root.attributes["http.response.status_code"] == 200 and root.parent is None
    assert {"rag.embed", "rag.dense", "rag.decide", "rag.answer"} <= set(named)
    assert {parent_name(s, spans) for s in spans if s is not root} == {"POST /chat/stream"}
    assert {s.attributes["rag.request_id"] for s in spans} == {REQUEST_ID}
    assert_no_text(spans, [RAG_QUESTION, *CORPUS_TEXTS])


def test_outside_a_request_the_question_is_its_own_trace(corpus: Corpus, embedder: Any, extractive: Any,
                                                          tmp_path: Path) -> None:
    """``rag ask`` and the evaluation: no request span, so ``rag.chat`` is the root (the search's
    attributes on it) and a failing stage ends in error by exception type only."""
    client = _client(corpus, embedder, extractive, tmp_path)
    chat = client.application.extensions["rag"].chat
    with in_memory_telemetry() as (exporter, _):
        answer = chat.answer(ChatQuery(RAG_QUESTION, record=False))
        with pytest.raises(UnknownDomain):
            chat.answer(ChatQuery(RAG_QUESTION, domain="jane.doe@example.com", record=False))
        spans = exporter.get_finished_spans()
    named = by_name(spans)
    ok, failed = named["rag.chat"]
    assert ok.parent is None and (ok.attributes["rag.mode"], ok.attributes["rag.strategy"]) == (answer.mode, "fusion")
    assert {parent_name(s, spans) for s in spans if s.name != "rag.chat"} == {"rag.chat"}
    assert (failed.status.status_code, failed.status.description, failed.attributes["error.type"]) == (
        StatusCode.ERROR, "UnknownDomain", "UnknownDomain")
    assert_no_text(spans, [RAG_QUESTION, "jane.doe@example.com", "jane doe example", answer.answer, *CORPUS_TEXTS])


def test_telemetry_off_records_nothing_and_registers_no_hook(corpus: Corpus, embedder: Any, extractive: Any,
                                                            tmp_path: Path) -> None:
    assert not telemetry.enabled()
    assert telemetry.span("rag.dense") is telemetry.span("rag.embed")  # one shared null context
    client = _client(corpus, embedder, extractive, tmp_path)
    assert "backend.api.tracing" not in {f.__module__ for f in client.application.before_request_funcs[None]}
    assert client.post("/chat", json={"question": RAG_QUESTION}).status_code == 200


class _Collector(LocalHttpServer):
    """An OTLP/HTTP receiver: keeps each POSTed protobuf body by path, answers 200."""

    def __init__(self) -> None:
        super().__init__(url_suffix="")
        self.posts: list[tuple[str, dict[str, str], bytes]] = []

    def respond(self, path: str, headers: dict[str, str], body: bytes) -> tuple[int, str, bytes]:
        self.posts.append((path, {k.lower(): v for k, v in headers.items()}, body))
        return 200, "application/x-protobuf", b""


def test_spans_and_stage_durations_arrive_at_an_otlp_receiver_on_loopback(
        corpus: Corpus, embedder: Any, extractive: Any, tmp_path: Path) -> None:
    with _Collector().running() as collector:
        settings = TelemetrySettings(enabled=True, endpoint=collector.url, service_name="rag-test",
                                     headers=SecretStr("x-collector-key=k%3D1,x-team=rag"))
        assert configure(settings, force=True)
        try:
            client = _client(corpus, embedder, extractive, tmp_path)
            assert client.post("/chat", json={"question": RAG_QUESTION},
                               headers={"X-Request-ID": REQUEST_ID}).status_code == 200
        finally:
            shutdown()  # flushes the batch processor and the metric reader
    traces = [(h, b) for p, h, b in collector.posts if p == "/v1/traces"]
    metrics = [b for p, _, b in collector.posts if p == "/v1/metrics"]
    assert traces and metrics
    assert {h["content-type"] for h, _ in traces} == {"application/x-protobuf"}
    assert {(h["x-collector-key"], h["x-team"]) for h, _ in traces} == {("k=1", "rag")}
    names, request_ids, service = set(), set(), set()
    for _, raw in traces:
        request = ExportTraceServiceRequest()
        request.ParseFromString(raw)
        for rs in request.resource_spans:
            service |= {a.value.string_value for a in rs.resource.attributes if a.key == "service.name"}
            for ss in rs.scope_spans:
                for span in ss.spans:
                    names.add(span.name)
                    request_ids |= {a.value.string_value for a in span.attributes if a.key == "rag.request_id"}
    assert names == {"POST /chat", "rag.decide", "rag.answer", *STAGES}
    assert request_ids == {REQUEST_ID} and service == {"rag-test"}
    stages = set()
    for raw in metrics:
        request = ExportMetricsServiceRequest()
        request.ParseFromString(raw)
        for rm in request.resource_metrics:
            for sm in rm.scope_metrics:
                for metric in sm.metrics:
                    if metric.name == "rag.stage.duration":
                        for point in metric.histogram.data_points:
                            stages |= {a.value.string_value for a in point.attributes if a.key == "rag.stage"}
    assert stages == names - {"POST /chat"}
