"""What OpenTelemetry tracing costs a question: ``/chat`` p50 with tracing off and on.

The sample corpus is ingested once; two apps share its store and models: one built with
telemetry off (no hook, null spans, as a server runs by default) and one built with it on.
Two recorders run side by side: the production set-up (``BatchSpanProcessor`` exporting over
OTLP/HTTP to a receiver on loopback, which decodes each body in this process, and the periodic
metric export) and ``SimpleSpanProcessor`` into the SDK's in-memory exporter (each exported
span records its stage's duration in an in-memory reader). Requests go
through the whole WSGI app (Flask's test client: every hook, no socket), one at a time; each
question is asked in every mode back to back, their order rotating, switching by
installing the mode's recorder (instant), so drift in machine load falls on all of them alike.
A fourth mode exports over OTLP at ``telemetry.sample_ratio`` 0.1 (the stages of a dropped trace
skip the SDK).
``scripts/bench_tracing.py`` runs it.
"""

from __future__ import annotations

import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Callable

import numpy as np

from backend.benchmarks.serving import QUESTIONS  # the same mix /chat is measured with
from backend.benchmarks.stats import Section, percentiles
from backend.common.config import REPO_ROOT, TelemetrySettings, load_settings

MODES = ("off", "off_control", "otlp", "memory", "otlp_sampled")
#: ``telemetry.sample_ratio`` of the ``otlp_sampled`` mode
SAMPLED = 0.1
#: the issue's target: tracing on (OTLP, batch) costs at most this share of /chat p50
MAX_OVERHEAD = 0.05


class Receiver:
    """An OTLP/HTTP receiver on 127.0.0.1: decodes each ``/v1/traces`` body and counts its spans."""

    def __init__(self) -> None:
        from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

        owner = self
        self.spans = 0
        self.posts = 0
        self._lock = threading.Lock()

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server's naming
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                count = 0
                if self.path == "/v1/traces":
                    request = ExportTraceServiceRequest()
                    request.ParseFromString(body)
                    count = sum(len(ss.spans) for rs in request.resource_spans for ss in rs.scope_spans)
                with owner._lock:
                    owner.posts += 1
                    owner.spans += count
                self.send_response(200)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                return

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self._thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def measure(base_config: Path, embedder: Any, work: Path, rounds: int = 12, per_round: int = 2,
            emit: Callable[[str], None] | None = None) -> Section:
    """``rounds`` rounds; in each, every question is asked ``per_round`` times in each mode, the
    modes back to back (their order rotating), so each group shares the machine's state."""
    from opentelemetry.sdk.metrics.export import InMemoryMetricReader
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    from backend.api.app import create_app
    from backend.common import telemetry, telemetry_setup
    from backend.ingest.pipeline import IngestPipeline
    from backend.core.ports import Stores
    from backend.providers.sqlite_vs.store import SqliteVectorStore
    from backend.runtime import build_runtime, enricher_factory

    section = Section("Tracing overhead: HTTP /chat p50, OpenTelemetry off vs on (sample corpus, extractive answers)")
    settings = load_settings(base_config, overrides={
        "store": {"sqlite": {"path": str(work / "tracing.sqlite")}},
        "docx": {"assets_dir": str(work / "assets")},
        "ingest": {"progress": False},
        "server": {"rate_limit": {"enabled": False}},
        "telemetry": {"enabled": False},
    }, env={})
    store = SqliteVectorStore(settings.resolve_path(settings.store.sqlite.path))
    receiver = Receiver()
    telemetry_setup.shutdown()
    otlp = TelemetrySettings(enabled=True, endpoint=receiver.url, metrics=True, metrics_interval_s=5.0)
    # the production set-up (BatchSpanProcessor and periodic metric export to OTLP/HTTP), and the in-memory one
    otlp_built = telemetry_setup.build(otlp)
    memory = InMemorySpanExporter()
    memory_built = telemetry_setup.build(otlp, span_exporter=memory, batch=False, metric_reader=InMemoryMetricReader())
    sampled_built = telemetry_setup.build(otlp.model_copy(update={"sample_ratio": SAMPLED}))
    recorders = {"off": None, "otlp": otlp_built.recorder, "memory": memory_built.recorder,
                 "otlp_sampled": sampled_built.recorder}
    try:
        report = IngestPipeline.from_settings(settings, store, embedder, progress=False,
                                         enricher_for=enricher_factory(settings)).run(REPO_ROOT / "manifests" / "sample.jsonl")
        version = report.version or settings.embeddings.profile_for().index_name
        store.point_alias(settings.embeddings.alias.name, version, reason="benchmark")
        services = build_runtime(settings, stores=Stores.of(store), embedder=embedder)
        off_app = create_app(settings, services)  # built while off: no request-span hook, as in production
        control_app = create_app(settings, services)  # the same again: off vs off shows the noise floor
        telemetry.install(otlp_built.recorder)
        on_app = create_app(settings, services)  # built while on: its request-span hooks are registered
        telemetry.install(None)
        clients = {"off": off_app.test_client(), "off_control": control_app.test_client(),
                   **{m: on_app.test_client() for m in MODES if m.startswith(("otlp", "memory"))}}
        recorders["off_control"] = None

        def ask(mode: str, question: str) -> tuple[float, float]:
            """Wall and request-thread CPU milliseconds of one /chat."""
            telemetry.install(recorders[mode])  # an instant switch: each provider keeps running
            started, cpu = time.perf_counter(), time.thread_time()
            response = clients[mode].post("/chat", json={"question": question})
            elapsed, cpu = (time.perf_counter() - started) * 1000, (time.thread_time() - cpu) * 1000
            telemetry.install(None)
            if response.status_code != 200:
                raise RuntimeError(f"/chat answered {response.status_code}: {response.get_data(as_text=True)[:300]}")
            return elapsed, cpu

        for mode in MODES:  # warm every path (models, caches, the exporter's connection)
            for q in QUESTIONS:
                ask(mode, q)
        otlp_built.tracer_provider.force_flush()
        memory.clear()
        exported_before = receiver.spans
        samples: dict[str, list[float]] = {m: [] for m in MODES}
        cpu: dict[str, list[float]] = {m: [] for m in MODES}
        ratios: dict[str, list[float]] = {m: [] for m in MODES}
        spans = 0
        turn = 0
        for r in range(rounds):
            for _ in range(per_round):
                for q in QUESTIONS:
                    order = MODES[turn % len(MODES):] + MODES[: turn % len(MODES)]
                    turn += 1
                    timed = {mode: ask(mode, q) for mode in order}
                    for mode, (ms, cpu_ms) in timed.items():
                        samples[mode].append(ms)
                        cpu[mode].append(cpu_ms)
                        ratios[mode].append(ms / timed["off"][0])
            spans += len(memory.get_finished_spans())
            memory.clear()
            if emit is not None:
                emit(f"   round {r + 1}/{rounds}: p50 so far " + ", ".join(
                    f"{m} {percentiles(samples[m])['p50']} ms" for m in MODES))
        otlp_built.tracer_provider.force_flush()
        time.sleep(0.2)
    finally:
        telemetry.install(None)
        for built in (otlp_built, memory_built, sampled_built):
            built.shutdown()
        receiver.close()
        store.close()
    stats = {m: percentiles(samples[m]) for m in MODES}
    cpu_p50 = {m: float(np.median(cpu[m])) for m in MODES}
    requests = len(samples["off"])
    section.figures["requests per mode"] = requests
    section.figures["spans per /chat (sampled at 1.0)"] = round(spans / requests, 2)
    section.figures["spans received over OTLP (measured)"] = f"{receiver.spans - exported_before} for {requests} " \
        f"requests at 1.0 and {requests} at {SAMPLED}"
    section.figures["mode: wall p50 / p95 ms, p50 ratio to off, median paired ratio, request-thread CPU p50 ms"] = ""
    for mode in MODES:
        section.figures[f"  {mode}"] = (f"{stats[mode]['p50']} / {stats[mode]['p95']}, "
                                        f"{stats[mode]['p50'] / stats['off']['p50']:.4f}, "
                                        f"{float(np.median(ratios[mode])):.4f}, {cpu_p50[mode]:.2f}")
    otlp_ratio = stats["otlp"]["p50"] / stats["off"]["p50"]
    section.figures["p50 difference (OTLP - off)"] = f"{round(stats['otlp']['p50'] - stats['off']['p50'], 2)} ms"
    section.figures["request-thread CPU p50 ratio (OTLP / off)"] = round(cpu_p50["otlp"] / cpu_p50["off"], 4)
    section.target("tracing on (OTLP) /chat p50 ratio", otlp_ratio, "<=", 1 + MAX_OVERHEAD)
    section.notes.append("off_control is a second app built like off: its ratio is the noise floor of this machine now")
    section.notes.append(f"{rounds} rounds x {per_round} x {len(QUESTIONS)} questions; each question asked in every "
                         "mode back to back (order rotating), one request at a time through the whole WSGI app; the "
                         "receiver decodes every export in this process, so its cost lands on the same cores")
    return section
