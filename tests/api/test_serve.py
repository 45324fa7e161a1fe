"""Issue 16: ``rag serve`` runs gunicorn (gthread, bounded threads, a timeout from config)
and refuses an unauthenticated exposure. The server tests start a real process."""

from __future__ import annotations

import importlib
import json
import os
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any, Iterator

import httpx
import pytest
import yaml
from click.testing import CliRunner

from backend.api.server import check_exposure, gunicorn_options
from backend.cli.main import cli
from backend.common.config import load_settings
from backend.common.errors import ConfigError
from tests.api.corpus import RAG_QUESTION, build_corpus
from tests.api.test_cli import _wait_for_url, config_file  # noqa: F401 - the fixture
from tests.conftest import REPO

IDLE_CONNECTIONS = 24


def _threads(pid: int) -> int:
    """Threads of ``pid`` and all its descendants (gunicorn's master and workers)."""
    total = len(os.listdir(f"/proc/{pid}/task"))
    for task in os.listdir(f"/proc/{pid}/task"):
        children = Path(f"/proc/{pid}/task/{task}/children").read_text().split()
        total += sum(_threads(int(c)) for c in children)
    return total


@pytest.fixture(scope="module")
def server(embedder: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[subprocess.Popen[str], str]]:
    """One ``rag serve`` process for the module (a worker loads the model once), on a corpus of
    its own: other modules rotate the shared one's aliases."""
    corpus = build_corpus(tmp_path_factory.mktemp("serve-corpus"), embedder)
    corpus.store.close()
    data = yaml.safe_load((REPO / "config" / "rag.yaml").read_text())
    data["store"]["sqlite"]["path"] = str(corpus.settings.resolve_path(corpus.settings.store.sqlite.path))
    data["docx"]["assets_dir"] = str(tmp_path_factory.mktemp("assets"))
    config = tmp_path_factory.mktemp("serve") / "rag.yaml"
    config.write_text(yaml.safe_dump(data))
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAG_")}
    env["RAG_SERVER__THREADS"] = "4"
    proc = subprocess.Popen(
        [sys.executable, "-m", "backend.cli.main", "--config", str(config), "serve", "--port", "0"],
        cwd=REPO, env=env, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True,
    )
    try:
        yield proc, _wait_for_url(proc)
    finally:
        proc.terminate()
        proc.wait(timeout=40)


def test_idle_connections_do_not_each_cost_a_thread(server: tuple[subprocess.Popen[str], str]) -> None:
    proc, url = server
    assert httpx.get(f"{url}/healthz", timeout=30).json() == {"status": "ok"}
    before = _threads(proc.pid)
    host, port = url.removeprefix("http://").rsplit(":", 1)
    idle = [socket.create_connection((host, int(port)), timeout=10) for _ in range(IDLE_CONNECTIONS)]
    try:
        resp = httpx.post(f"{url}/chat", json={"question": RAG_QUESTION}, timeout=60)
        assert resp.status_code == 200 and resp.headers["X-Answer-Mode"] == "rag"
        grown = _threads(proc.pid) - before
        assert grown < IDLE_CONNECTIONS // 2, f"{grown} more threads for {IDLE_CONNECTIONS} idle connections"
    finally:
        for s in idle:
            s.close()


def test_real_server_answers_413_for_a_chunked_body_over_the_limit(server: tuple[subprocess.Popen[str], str]) -> None:
    _, url = server
    big = json.dumps({"question": "q" * 200_000}).encode()

    def chunks() -> Iterator[bytes]:
        for i in range(0, len(big), 8192):
            yield big[i:i + 8192]

    resp = httpx.post(f"{url}/chat", content=chunks(), headers={"Content-Type": "application/json"}, timeout=30)
    assert resp.status_code == 413 and resp.json()["error"]["code"] == "request_too_large"
    assert resp.headers["X-Request-ID"] and resp.headers["Cache-Control"] == "no-store"


def test_server_sent_events_stream_through_gthread_workers(server: tuple[subprocess.Popen[str], str]) -> None:
    _, url = server
    with httpx.stream("POST", f"{url}/chat/stream", json={"question": RAG_QUESTION}, timeout=60) as resp:
        assert resp.status_code == 200 and resp.headers["content-type"].startswith("text/event-stream")
        events = [line.split(": ", 1)[1] for line in resp.iter_lines() if line.startswith("event: ")]
    assert events[0] == "meta" and events[-1] == "done" and "delta" in events


def test_non_loopback_bind_without_keys_is_refused(config_file: Path) -> None:  # noqa: F811
    result = CliRunner().invoke(cli, ["--config", str(config_file), "serve", "--host", "0.0.0.0", "--port", "0"])
    assert result.exit_code == 2  # a configuration error
    assert result.stderr.startswith("error: refusing to serve on 0.0.0.0, reachable from other machines, without "
                                    "API keys")
    assert "--allow-unauthenticated" in result.stderr


@pytest.mark.parametrize(("host", "env", "allowed"), [
    ("127.0.0.1", {}, True), ("localhost", {}, True), ("::1", {}, True),
    ("0.0.0.0", {}, False), ("192.168.1.20", {}, False), ("::", {}, False),
    ("0.0.0.0", {"RAG_SERVER__API_KEYS": "k1"}, True),
    ("0.0.0.0", {"RAG_SERVER__ALLOW_UNAUTHENTICATED_EXPOSURE": "true"}, True),
])
def test_exposure_rule(host: str, env: dict[str, str], allowed: bool) -> None:
    settings = load_settings(REPO / "config" / "rag.yaml", env=env)
    if allowed:
        check_exposure(settings, host)
    else:
        with pytest.raises(ConfigError, match=f"refusing to serve on {host}"):
            check_exposure(settings, host)


def test_worker_timeout_outlasts_the_slowest_answer() -> None:
    llm = {"primary": {"provider": "openai_compat", "base_url": "http://127.0.0.1:1/v1", "model": "m", "timeout_s": 60,
                       "retry": {"max_attempts": 3, "max_wait_s": 10}}}
    settings = load_settings(REPO / "config" / "rag.yaml", overrides={"llm": llm})
    options = gunicorn_options(settings, "127.0.0.1", 0)
    assert options["timeout"] == 60 * 3 + 10 * 2 + 30
    assert (options["worker_class"], options["threads"], options["workers"]) == ("gthread", 8, 1)
    with pytest.raises(ConfigError, match=r"server.worker_timeout_s \(120\) must exceed the longest answer.*200 s"):
        load_settings(REPO / "config" / "rag.yaml", overrides={"llm": llm, "server": {"worker_timeout_s": 120}})


def test_gunicorn_config_module_reads_the_same_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RAG_SERVER__THREADS", "3")
    monkeypatch.setenv("RAG_SERVER__WORKERS", "2")
    monkeypatch.setenv("RAG_SERVER__PORT", "9123")
    conf: Any = importlib.reload(importlib.import_module("backend.api.gunicorn_conf"))
    assert (conf.worker_class, conf.workers, conf.threads, conf.bind) == ("gthread", 2, 3, ["127.0.0.1:9123"])
    assert callable(conf.when_ready) and conf.timeout >= 30
