"""HTTP /chat latency under concurrent clients, on the sample corpus, and beside it the same
questions through ``/v1/chat/completions`` (the OpenAI-compatible route over the same chat service):
their p50s in one run, and the ratio (target: /v1 within 1.2x of /chat).

A real threaded server on 127.0.0.1 (werkzeug, the same WSGI app gunicorn
serves), clients in threads with httpx; bounded request count, loopback only.
"""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
from werkzeug.serving import make_server

from backend.api.app import create_app
from backend.benchmarks.stats import Section, percentiles
from backend.common.config import REPO_ROOT, load_settings
from backend.core.ports import Stores
from backend.ingest.pipeline import IngestPipeline
from backend.providers.sqlite_vs.store import SqliteVectorStore
from backend.runtime import build_runtime, enricher_factory

QUESTIONS = [
    "How many days of annual leave do employees get?",
    "How do I report a security incident?",
    "What is the learning budget per year?",
    "Who can approve a purchase above the procurement threshold?",
    "What is the capital of Australia?",
    "leave",
]


def measure(base_config: Path, embedder: Any, work: Path, clients: int = 8, per_client: int = 25) -> Section:
    section = Section(f"HTTP /chat under {clients} concurrent clients (sample corpus, extractive answers)")
    settings = load_settings(base_config, overrides={
        "store": {"sqlite": {"path": str(work / "serving.sqlite")}},
        "docx": {"assets_dir": str(work / "assets")},
        "ingest": {"progress": False},
        "server": {"rate_limit": {"enabled": False}},  # throughput is measured here, not the per-client limit
    }, env={})
    store = SqliteVectorStore(settings.resolve_path(settings.store.sqlite.path))
    report = IngestPipeline.from_settings(settings, store, embedder, progress=False,
                                         enricher_for=enricher_factory(settings)).run(REPO_ROOT / "manifests" / "sample.jsonl")
    version = report.version or settings.embeddings.profile_for().index_name
    store.point_alias(settings.embeddings.alias.name, version, reason="benchmark")
    app = create_app(settings, build_runtime(settings, stores=Stores.of(store), embedder=embedder))
    server = make_server("127.0.0.1", 0, app, threaded=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    base = f"http://127.0.0.1:{server.server_port}"

    def request(http: httpx.Client, path: str, question: str) -> httpx.Response:
        if path == "/chat":
            return http.post("/chat", json={"question": question})
        return http.post(path, json={"model": "kb:default", "messages": [{"role": "user", "content": question}]})

    def rounds(path: str) -> tuple[list[tuple[int, float]], float]:
        def client(n: int) -> list[tuple[int, float]]:
            out = []
            with httpx.Client(base_url=base, timeout=60) as http:
                for i in range(per_client):
                    t = time.perf_counter()
                    resp = request(http, path, QUESTIONS[(n + i) % len(QUESTIONS)])
                    out.append((resp.status_code, (time.perf_counter() - t) * 1000))
            return out

        client(0)[:1]  # warm caches
        start = time.perf_counter()
        with ThreadPoolExecutor(clients) as pool:
            results = [r for chunk in pool.map(client, range(clients)) for r in chunk]
        return results, time.perf_counter() - start

    try:
        results, wall = rounds("/chat")
        v1_results, v1_wall = rounds("/v1/chat/completions")
    finally:
        server.shutdown()
        thread.join(timeout=10)
        server.server_close()
    errors = sum(1 for status, _ in results + v1_results if status != 200)
    p = percentiles([ms for _, ms in results])
    v1 = percentiles([ms for _, ms in v1_results])
    section.figures["requests"] = len(results)
    section.figures["errors"] = errors
    section.figures["latency ms"] = " / ".join(f"{k}={v}" for k, v in p.items())
    section.figures["throughput requests/s"] = round(len(results) / wall, 1)
    section.figures["/v1/chat/completions latency ms"] = " / ".join(f"{k}={v}" for k, v in v1.items())
    section.figures["/v1/chat/completions throughput requests/s"] = round(len(v1_results) / v1_wall, 1)
    section.target("p50 /v1/chat/completions / p50 /chat", v1["p50"] / p["p50"], "<=", 1.2)
    section.notes.append("2 cores: the embedding of each question dominates; clients queue behind the GIL and torch")
    store.close()
    return section
