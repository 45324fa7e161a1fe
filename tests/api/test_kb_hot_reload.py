"""Issue 32: a running server sees a knowledge base created after it started (``/domains``,
``/chat`` with ``X-RAG-Domain``) and a newly promoted version of it, without a restart. A real
``rag serve`` process (two gunicorn workers, each refreshing on its own) and real ``rag kb
create`` / ``rag ingest DIR --update-alias`` processes on the same config."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any, Iterator

import httpx
import pytest
import yaml

from tests.api.test_cli import _wait_for_url
from tests.conftest import REPO
from tests.ingest.kb_files import write_kb_folder

QUESTION = "How many cents per kilometre is the bicycle allowance?"


@pytest.fixture
def setup(tmp_path: Path) -> Iterator[tuple[Path, Path, str]]:
    data = yaml.safe_load((REPO / "config" / "rag.yaml").read_text())
    data["store"]["sqlite"]["path"] = str(tmp_path / "rag.sqlite")
    data["docx"]["assets_dir"] = str(tmp_path / "assets")
    data["evaluation"]["reports_dir"] = str(tmp_path / "reports")
    data["ingest"] = {"allowed_roots": [str(tmp_path / "nothing")], "progress": False}
    data["knowledge_bases"] = {"registry_file": str(tmp_path / "kb.yaml"), "dir": str(tmp_path / "kb")}
    config = tmp_path / "rag.yaml"
    config.write_text(yaml.safe_dump(data))
    folder = write_kb_folder(tmp_path / "docs")
    env = {**_env(), "RAG_SERVER__WORKERS": "2", "RAG_SERVER__THREADS": "2"}
    proc = subprocess.Popen([sys.executable, "-m", "backend.cli.main", "--config", str(config), "serve", "--port", "0"],
                            cwd=REPO, env=env, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True)
    try:
        yield config, folder, _wait_for_url(proc)
    finally:
        proc.terminate()
        proc.wait(timeout=40)


def _env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith("RAG_")}


def _rag(config: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "backend.cli.main", "--config", str(config), *args], cwd=REPO,
                          env=_env(), capture_output=True, text=True, timeout=300)


def _ask(url: str) -> dict[str, Any]:
    resp = httpx.post(f"{url}/chat", json={"question": QUESTION}, headers={"X-RAG-Domain": "campus"}, timeout=60)
    assert resp.status_code == 200, resp.text
    body: dict[str, Any] = resp.json()
    return body


def test_a_new_knowledge_base_and_its_new_version_are_served_without_restart(setup: tuple[Path, Path, str]) -> None:
    config, folder, url = setup
    keys = [d["key"] for d in httpx.get(f"{url}/domains", timeout=30).json()["domains"]]
    assert "campus" not in keys
    unknown = httpx.post(f"{url}/chat", json={"question": QUESTION}, headers={"X-RAG-Domain": "campus"}, timeout=30)
    assert unknown.status_code == 400 and unknown.json()["error"]["code"] == "unknown_domain"

    created = _rag(config, "kb", "create", "campus", "--from", str(folder), "--title", "Campus life")
    assert created.returncode == 0, created.stdout + created.stderr
    assert "served: KB_CAMPUS -> KB_CAMPUS_V1" in created.stdout

    for _ in range(4):  # every worker, whichever answers, sees it
        domains = {d["key"]: d for d in httpx.get(f"{url}/domains", timeout=30).json()["domains"]}
        assert domains["campus"]["title"] == "Campus life" and domains["campus"]["alias"] == "KB_CAMPUS"
    first = _ask(url)
    assert first["mode"] == "rag" and "19 cents" in first["answer"]
    assert first["citations"][0]["doc_id"] == "bicycle-allowance.md"
    assert first["decision_explain"]["version"] == "KB_CAMPUS_V1"

    md = folder / "Bicycle Allowance.md"
    md.write_text(md.read_text(encoding="utf-8").replace("19 cents", "23 cents"), encoding="utf-8")
    updated = _rag(config, "ingest", str(folder), "--domain-key", "campus", "--update-alias")
    assert updated.returncode == 0, updated.stdout + updated.stderr
    assert "promoted: KB_CAMPUS -> KB_CAMPUS_V2" in updated.stdout
    for _ in range(4):
        second = _ask(url)
        assert second["decision_explain"]["version"] == "KB_CAMPUS_V2"
        assert "23 cents" in second["answer"] and "19 cents" not in second["answer"]


def test_refresh_takes_in_a_registered_knowledge_base_and_survives_a_broken_registry(tmp_path: Path,
                                                                                     embedder: Any) -> None:
    """The same in one process: the before_request hook merges the registry when its mtime changes."""
    from backend.api.app import create_app
    from backend.runtime import build_services
    from backend.ingest.knowledge_bases import register
    from tests.conftest import make_settings

    settings = make_settings(tmp_path)
    services = build_services(settings, embedder=embedder)
    client = create_app(settings, services).test_client()
    assert "campus" not in [d["key"] for d in client.get("/domains").get_json()["domains"]]
    register(settings, "campus", title="Campus life", source_dir=tmp_path)
    domains = {d["key"]: d for d in client.get("/domains").get_json()["domains"]}
    assert domains["campus"] == {"key": "campus", "alias": "KB_CAMPUS", "title": "Campus life",
                                 "example_questions": [],
                                 "not_served": "nothing has been ingested into it yet; add documents: "
                                               "rag ingest DIR --domain-key campus --update-alias"}
    assert services.settings.embeddings.domains["campus"].alias_name == "KB_CAMPUS"
    assert str(tmp_path.resolve()) in services.settings.ingest.allowed_roots
    # a registry broken by hand is logged, and what was served stays served
    Path(settings.knowledge_bases.registry_file).write_text("knowledge_bases: [oops\n", encoding="utf-8")
    os.utime(settings.knowledge_bases.registry_file, (1, 1))
    resp = client.get("/domains")
    assert resp.status_code == 200 and "campus" in [d["key"] for d in resp.get_json()["domains"]]
    services.stores.close()


def test_a_knowledge_base_removed_from_the_registry_is_routed_no_more_at_once(tmp_path: Path,
                                                                               embedder: Any) -> None:
    """Issue 48: removal is taken in like an addition, at the next request, without a restart;
    a knowledge base of the config file is never dropped by it."""
    from backend.api.app import create_app
    from backend.runtime import build_services
    from backend.ingest.knowledge_bases import register
    from tests.conftest import make_settings

    settings = make_settings(tmp_path)
    register(settings, "campus", source_dir=tmp_path)
    register(settings, "garden", source_dir=tmp_path)
    services = build_services(settings, embedder=embedder)
    client = create_app(settings, services).test_client()
    assert {"campus", "garden", "handbook"} <= {d["key"] for d in client.get("/domains").get_json()["domains"]}
    registry = Path(settings.knowledge_bases.registry_file)
    data = yaml.safe_load(registry.read_text(encoding="utf-8"))
    del data["knowledge_bases"]["campus"]
    registry.write_text(yaml.safe_dump(data), encoding="utf-8")
    keys = {d["key"] for d in client.get("/domains").get_json()["domains"]}
    assert "campus" not in keys and {"garden", "handbook"} <= keys
    resp = client.post("/chat", json={"question": "Who keeps the bees?"}, headers={"X-RAG-Domain": "campus"})
    assert resp.status_code == 400 and resp.get_json()["error"]["code"] == "unknown_domain"
    assert "campus" not in services.settings.embeddings.domains
    services.stores.close()
