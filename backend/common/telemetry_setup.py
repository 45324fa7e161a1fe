"""The one place that configures OpenTelemetry: a tracer provider and a meter provider of our own
(the process-wide globals are left alone), exporting over OTLP/HTTP.

Called at app creation (each gunicorn worker builds its app, so each has its own exporter
thread) and at CLI start. With ``telemetry.enabled`` false it returns at once and imports
nothing. Tests and the benchmark pass their own span exporter and metric reader (the SDK's
in-memory exporter and reader).

What a traced stage costs on the request's thread is the SDK's span, nothing more: the
``rag.stage.duration`` histogram is recorded from the finished spans where they are exported
(the ``BatchSpanProcessor``'s thread), so it counts the stages of sampled traces.
"""

from __future__ import annotations

import atexit
import contextvars
import os
from contextlib import nullcontext
from dataclasses import dataclass
from typing import Any, ContextManager, Mapping

import structlog

from backend.common import telemetry
from backend.common.config import TelemetrySettings

log = structlog.get_logger(__name__)

#: bucket bounds (seconds) of ``rag.stage.duration``: stages run from tens of microseconds to minutes
DURATION_BUCKETS_S = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0,
                      60.0, 300.0)
INSTRUMENTATION = "oracle_rag_runtime"

_state: dict[str, Any] = {}


def configure(settings: TelemetrySettings, *, span_exporter: Any = None, batch: bool = True,
              metric_reader: Any = None, force: bool = False) -> bool:
    """Install the SDK behind ``telemetry`` when ``settings.enabled`` (or an exporter is given);
    returns whether telemetry is on. A second call in the same process keeps what the first
    installed unless ``force`` (after a fork it configures anew: the exporter thread stayed behind)."""
    if _state and _state.get("pid") == os.getpid() and not force:
        return True
    if _state:
        shutdown()
    if not settings.enabled and span_exporter is None:
        return False
    built = build(settings, span_exporter=span_exporter, batch=batch, metric_reader=metric_reader)
    _state.update(pid=os.getpid(), built=built)
    telemetry.install(built.recorder)
    if not _state.get("atexit"):
        atexit.register(shutdown)
        _state["atexit"] = True
    log.info("telemetry.enabled", endpoint=settings.endpoint if span_exporter is None else "(in-process exporter)",
             sample_ratio=settings.sample_ratio, metrics=built.meter_provider is not None)
    return True


@dataclass
class Built:
    """Providers and the recorder over them, not installed (``configure`` installs one; the
    benchmark switches between several)."""

    recorder: Any
    tracer_provider: Any
    meter_provider: Any

    def shutdown(self) -> None:
        for provider in (self.tracer_provider, self.meter_provider):  # spans first: they feed the histogram
            if provider is not None:
                try:
                    provider.shutdown()
                except Exception as exc:  # noqa: BLE001 - a collector that is gone must not fail the exit
                    log.warning("telemetry.shutdown_failed", error_type=type(exc).__name__)


def build(settings: TelemetrySettings, *, span_exporter: Any = None, batch: bool = True,
          metric_reader: Any = None) -> Built:
    """A tracer provider exporting through a ``BatchSpanProcessor`` (``batch=False``: a
    ``SimpleSpanProcessor``, for tests) to OTLP/HTTP unless ``span_exporter``; with
    ``telemetry.metrics`` or a ``metric_reader``, a meter provider whose ``rag.stage.duration``
    is recorded from the exported spans."""
    from opentelemetry.sdk.metrics import AlwaysOffExemplarFilter, MeterProvider
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor
    from opentelemetry.sdk.trace.sampling import ParentBased, TraceIdRatioBased

    resource = Resource.create({"service.name": settings.service_name})
    if span_exporter is None:
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

        span_exporter = OTLPSpanExporter(endpoint=f"{settings.endpoint}/v1/traces", headers=settings.header_map(),
                                         timeout=settings.timeout_s)
    meter_provider = None
    if metric_reader is None and settings.metrics and settings.enabled:
        from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter
        from opentelemetry.sdk.metrics.export import PeriodicExportingMetricReader

        metric_reader = PeriodicExportingMetricReader(
            OTLPMetricExporter(endpoint=f"{settings.endpoint}/v1/metrics", headers=settings.header_map(),
                               timeout=settings.timeout_s),
            export_interval_millis=settings.metrics_interval_s * 1000)
    if metric_reader is not None:
        # no exemplars: each would copy trace and span ids for nothing the histogram needs
        meter_provider = MeterProvider(resource=resource, metric_readers=[metric_reader],
                                       exemplar_filter=AlwaysOffExemplarFilter())
        span_exporter = _StageDurations(span_exporter, meter_provider)
    tracer_provider = TracerProvider(resource=resource, sampler=ParentBased(TraceIdRatioBased(settings.sample_ratio)))
    tracer_provider.add_span_processor(BatchSpanProcessor(span_exporter) if batch else SimpleSpanProcessor(span_exporter))
    return Built(_Recorder(tracer_provider), tracer_provider, meter_provider)


class _StageDurations:
    """A span exporter in front of the real one: records each finished stage span's duration in
    ``rag.stage.duration`` (by ``rag.stage``, plus ``error.type`` when it failed), then passes the
    spans on. It runs where spans are exported, off the request's thread."""

    def __init__(self, inner: Any, meter_provider: Any) -> None:
        from opentelemetry.trace import SpanKind, StatusCode

        self._inner, self._internal, self._error = inner, SpanKind.INTERNAL, StatusCode.ERROR
        self._histogram = meter_provider.get_meter(INSTRUMENTATION).create_histogram(
            "rag.stage.duration", unit="s", description="Duration of one stage of a question or an ingest",
            explicit_bucket_boundaries_advisory=list(DURATION_BUCKETS_S))

    def export(self, spans: Any) -> Any:
        for span in spans:
            if span.kind is self._internal and span.end_time is not None and span.start_time is not None:
                stage = {"rag.stage": span.name}
                if span.status.status_code is self._error:
                    stage["error.type"] = str((span.attributes or {}).get("error.type", "error"))
                self._histogram.record((span.end_time - span.start_time) / 1e9, stage)
        return self._inner.export(spans)

    def shutdown(self) -> None:
        self._inner.shutdown()

    def force_flush(self, timeout_millis: int = 30_000) -> bool:
        flush = getattr(self._inner, "force_flush", None)
        return bool(flush(timeout_millis)) if callable(flush) else True


def shutdown() -> None:
    """Flush and stop the exporters; the helpers go back to doing nothing."""
    telemetry.install(None)
    built = _state.pop("built", None)
    _state.pop("pid", None)
    if built is not None:
        built.shutdown()


def force_flush(timeout_ms: int = 10_000) -> bool:
    built = _state.get("built")
    return bool(built.tracer_provider.force_flush(timeout_ms)) if built is not None else True


class _Recorder:
    """``telemetry``'s backend while telemetry is on."""

    def __init__(self, tracer_provider: Any) -> None:
        from opentelemetry import context, trace

        self._trace, self._context = trace, context
        self._tracer = tracer_provider.get_tracer(INSTRUMENTATION)

    def span(self, name: str, attributes: Mapping[str, Any], *, server: bool = False,
             current: bool = True, group: bool = False) -> ContextManager[Any]:
        parent = self._trace.get_current_span()
        if not parent.is_recording() and parent.get_span_context().is_valid:
            return _MERGED  # a trace the sampler dropped: its stages would be dropped too, skip the SDK
        if group:
            owner = _GROUP_OWNER.get()
            if owner is not None and owner is parent:
                if attributes:
                    owner.set_attributes(attributes)
                return _MERGED
        return _Stage(self, name, attributes, server, current, server or group)

    def annotate(self, attributes: Mapping[str, Any]) -> None:
        if attributes:
            self._trace.get_current_span().set_attributes(attributes)


#: the request span or group span that a group span directly under it merges into (``telemetry.span``)
_GROUP_OWNER: contextvars.ContextVar[Any] = contextvars.ContextVar("rag_trace_group_owner", default=None)
_MERGED: ContextManager[Any] = nullcontext()


class _Stage:
    """One span: started on enter, ended on exit with the error type (never the message)."""

    __slots__ = ("_rec", "_name", "_attributes", "_server", "_current", "_owns", "_span", "_token", "_owner_token")

    def __init__(self, rec: _Recorder, name: str, attributes: Mapping[str, Any], server: bool, current: bool,
                 owns: bool = False) -> None:
        self._rec, self._name, self._attributes = rec, name, attributes
        self._server, self._current, self._owns = server, current, owns and current
        self._token: Any = None
        self._owner_token: Any = None

    def __enter__(self) -> Any:
        trace = self._rec._trace
        kind = trace.SpanKind.SERVER if self._server else trace.SpanKind.INTERNAL
        attributes = self._attributes
        rid = telemetry.request_id()  # on every span of a request (set here: cheaper than a span processor)
        if rid is not None:
            attributes = {**attributes, "rag.request_id": rid}
        self._span = self._rec._tracer.start_span(self._name, kind=kind, attributes=attributes,
                                                  record_exception=False, set_status_on_exception=False)
        if self._current:
            self._token = self._rec._context.attach(trace.set_span_in_context(self._span))
        if self._owns:
            self._owner_token = _GROUP_OWNER.set(self._span)
        return self._span

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        trace = self._rec._trace
        if exc_type is not None:
            self._span.set_attribute("error.type", exc_type.__name__)
            self._span.set_status(trace.Status(trace.StatusCode.ERROR, exc_type.__name__))
        if self._owner_token is not None:
            try:
                _GROUP_OWNER.reset(self._owner_token)
            except ValueError:  # ended in another context (a streamed response)
                _GROUP_OWNER.set(None)
        if self._token is not None:
            self._rec._context.detach(self._token)  # logs (never raises) when ended in another context
        self._span.end()
