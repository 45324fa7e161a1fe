"""``rag ask`` (CliRunner) and ``rag serve`` (a real process on 127.0.0.1)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml
from click.testing import CliRunner

from backend.cli.main import cli
from tests.api.corpus import COFFEE_QUESTION, FALLBACK_QUESTION, RAG_QUESTION, Corpus
from tests.conftest import REPO


@pytest.fixture
def config_file(corpus: Corpus, tmp_path: Path) -> Path:
    """A YAML profile on disk that points at the session corpus store."""
    data = yaml.safe_load((REPO / "config" / "rag.yaml").read_text())
    data["store"]["sqlite"]["path"] = str(corpus.settings.resolve_path(corpus.settings.store.sqlite.path))
    data["embeddings"]["domains"]["coffee"] = {"index_name": "KB_COFFEE_V1", "alias_name": "KB_COFFEE"}
    data["docx"]["assets_dir"] = str(tmp_path / "assets")
    data.setdefault("knowledge_bases", {})["dir"] = str(tmp_path / "kb")
    path = tmp_path / "rag.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def test_ask_prints_answer_mode_similarity_and_sources(config_file: Path, corpus: Corpus) -> None:
    before = corpus.store.count_interactions()
    result = CliRunner().invoke(cli, ["--config", str(config_file), "ask", RAG_QUESTION])
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert "25 days of paid annual leave" in out
    assert "mode: rag  (used_llm=primary, answered_by=extractive, sources_used=partial)" in out
    # the shipped profile decides with the answer reader (docs/CALIBRATION.md) and says which sentence won
    assert re.search(r"best sentence's answerability: 0\.\d{4}  vs  low=0\.2 high=0\.9 \(normalized\)", out)
    assert "verdict: " in out
    assert re.search(r"lead: \[1\] score \d\.\d{3} \(dense 0\.\d{3}, lexical \d\.\d\d, answer type yes, asks number\)", out)
    assert "target: KB_ACTIVE -> KB_CHAT_V1  strategy=dense" in out
    assert "[1] data/hr/handbook.docx  (hr-handbook#0, 0.8" in out
    assert corpus.store.count_interactions() == before


def test_ask_json_with_domain_matches_chat_body(config_file: Path) -> None:
    result = CliRunner().invoke(cli, ["--config", str(config_file), "ask", COFFEE_QUESTION, "--domain", "coffee", "--json"])
    assert result.exit_code == 0, result.output
    body = json.loads(result.stdout)
    assert body["mode"] == "rag" and body["decision_explain"]["retrieval_target"] == "KB_COFFEE"
    assert {c["source"] for c in body["citations"]} == {"data/coffee/espresso.md"}


def test_ask_fallback_and_unknown_domain(config_file: Path) -> None:
    runner = CliRunner()
    fallback = runner.invoke(cli, ["--config", str(config_file), "ask", FALLBACK_QUESTION])
    assert fallback.exit_code == 0 and "mode: fallback  (used_llm=fallback, answered_by=none" in fallback.stdout
    unknown = runner.invoke(cli, ["--config", str(config_file), "ask", RAG_QUESTION, "--domain", "legal"])
    assert unknown.exit_code == 1
    assert "error: X-RAG-Domain: unknown domain 'legal'; known domains: coffee, handbook" in unknown.stderr


def test_serve_runs_the_app_on_the_printed_url(config_file: Path, tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAG_")}
    proc = subprocess.Popen(
        [sys.executable, "-m", "backend.cli.main", "--config", str(config_file), "serve", "--port", "0"],
        cwd=REPO, env=env, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True,
    )
    try:
        url = _wait_for_url(proc)
        assert url.startswith("http://127.0.0.1:")
        assert httpx.get(f"{url}/healthz", timeout=10).json() == {"status": "ok"}
        resp = httpx.post(f"{url}/chat", json={"question": RAG_QUESTION}, timeout=60)
        assert resp.status_code == 200 and resp.headers["X-Answer-Mode"] == "rag"
        # issue 49 H1/H2: the admin link is printed after the URL, and only it makes the local admin
        link = _wait_for(proc, r"Admin console \(open in a browser on this machine; [^)]*\): (http://\S+)")
        token_file = tmp_path / "kb" / "admin-token"
        token = token_file.read_text()
        assert link == f"{url}/admin/login?token={token}" and token_file.stat().st_mode & 0o777 == 0o600
        assert httpx.get(f"{url}/admin/me", timeout=10).json()["admin"] is False
        with httpx.Client(timeout=10) as browser:
            assert browser.get(link).status_code == 303 and browser.cookies["rag_admin"] == token
            assert browser.get(f"{url}/admin/me").json()["admin"] is True
            assert browser.get(f"{url}/admin/me", headers={"Via": "1.1 nginx"}).json()["admin"] is False
    finally:
        proc.terminate()
        proc.wait(timeout=20)


def _wait_for_url(proc: subprocess.Popen[Any]) -> str:
    return _wait_for(proc, r"Serving on (http://\S+)")


def _wait_for(proc: subprocess.Popen[Any], pattern: str) -> str:
    deadline = time.monotonic() + 180
    assert proc.stderr is not None
    while time.monotonic() < deadline:
        line = proc.stderr.readline()
        if not line and proc.poll() is not None:
            raise AssertionError(f"rag serve exited with {proc.returncode}")
        match = re.search(pattern, line)
        if match:
            return match.group(1)
    raise AssertionError(f"rag serve printed no {pattern!r} within 180 s")
