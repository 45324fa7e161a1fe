"""Shared by the tracing tests: the SDK's in-memory exporter and reader installed through
``telemetry_setup`` (as the app would install OTLP), and the scan that no span carries text."""

from __future__ import annotations

import re
from contextlib import contextmanager
from typing import Any, Iterable, Iterator, Sequence

from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from backend.common import telemetry
from backend.common.config import TelemetrySettings
from backend.common.telemetry_setup import configure, shutdown

_WORD = re.compile(r"\w+")


@contextmanager
def in_memory_telemetry() -> Iterator[tuple[InMemorySpanExporter, InMemoryMetricReader]]:
    """Telemetry on for the block, recording into memory; off again after it."""
    exporter, reader = InMemorySpanExporter(), InMemoryMetricReader()
    configure(TelemetrySettings(enabled=True), span_exporter=exporter, batch=False, metric_reader=reader, force=True)
    try:
        yield exporter, reader
    finally:
        shutdown()
    assert not telemetry.enabled()


def shingles(text: str, n: int = 3) -> set[str]:
    """Every run of ``n`` consecutive words of ``text`` (lower case): a value holding any of them
    quotes the text."""
    words = [w.lower() for w in _WORD.findall(text)]
    return {" ".join(words[i:i + n]) for i in range(max(0, len(words) - n + 1))}


def string_values(span: ReadableSpan) -> Iterator[tuple[str, str]]:
    """``(key, text)`` of every string attribute value of a span, its events' and its resource's."""
    sources = [dict(span.attributes or {}), *(dict(e.attributes or {}) for e in span.events),
               dict(span.resource.attributes)]
    for attrs in sources:
        for key, value in attrs.items():
            for item in (value if isinstance(value, (list, tuple)) else (value,)):
                if isinstance(item, str):
                    yield key, item
    yield "(name)", span.name
    if span.status.description:
        yield "(status)", span.status.description


def assert_no_text(spans: Sequence[ReadableSpan], texts: Iterable[str]) -> None:
    """No attribute of any span quotes (three words in a row of) any of ``texts``, nor holds a
    whole short text; every attribute key is a declared one."""
    texts = [t for t in texts if t.strip()]
    marks = set().union(*(shingles(t) for t in texts))
    assert marks, "nothing to look for"
    for span in spans:
        assert set(span.attributes or {}) <= set(telemetry.ATTRIBUTES), (span.name, span.attributes)
        for key, value in string_values(span):
            norm = " ".join(w.lower() for w in _WORD.findall(value))
            leaked = [m for m in marks if m in norm] + [t for t in texts if len(t) >= 6 and t.lower() in value.lower()]
            assert not leaked, f"span {span.name} attribute {key} quotes text: {leaked[:2]}"


def by_name(spans: Sequence[ReadableSpan]) -> dict[str, list[ReadableSpan]]:
    out: dict[str, list[ReadableSpan]] = {}
    for span in spans:
        out.setdefault(span.name, []).append(span)
    return out


def parent_name(span: ReadableSpan, spans: Sequence[ReadableSpan]) -> str | None:
    if span.parent is None:
        return None
    ids = {s.context.span_id: s.name for s in spans}
    return ids.get(span.parent.span_id)


def metric_points(reader: InMemoryMetricReader, name: str) -> dict[str, Any]:
    """``{rag.stage: data point}`` of one histogram collected now."""
    data = reader.get_metrics_data()
    out: dict[str, Any] = {}
    for rm in (data.resource_metrics if data else ()):
        for sm in rm.scope_metrics:
            for metric in sm.metrics:
                if metric.name == name:
                    for point in metric.data.data_points:
                        out[str(point.attributes.get("rag.stage"))] = point
    return out
