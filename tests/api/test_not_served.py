"""Issue 48: a knowledge base that serves nothing says so. ``/domains`` gives the reason and the
command that serves it; ``/chat`` and ``/chat/stream`` answer 409 ``not_served`` with the same
reason (asking again will not help: never a retryable 503). Real store, real model, real files."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from flask.testing import FlaskClient

from backend.api.app import create_app
from backend.runtime import build_services
from backend.ingest.knowledge_bases import ingest_into_candidate, register
from backend.providers.sqlite_vs.store import SqliteVectorStore
from tests.conftest import kb_runtime, make_settings

REFUSED = ("the gate refused KB_NAMES_V1 (min_recall_at_k: recall_at_k = n/a, minimum 0.8500; min_ndcg_at_10: "
           "ndcg_at_10 = n/a, minimum 0.8000); serve it anyway: "
           "rag index promote --domain-key names --version KB_NAMES_V1 --force")


@pytest.fixture
def client(tmp_path: Path, embedder: Any) -> Any:
    settings = make_settings(tmp_path)
    store = SqliteVectorStore(settings.resolve_path(settings.store.sqlite.path))
    folder = tmp_path / "lists"
    folder.mkdir()
    # a list of names: no sentence a generated question could ask about, so the first version is refused
    (folder / "names.txt").write_text("Alice\nBob\nCarol\nDave\n", encoding="utf-8")
    register(settings, "names", source_dir=folder)
    register(settings, "empty")
    run = ingest_into_candidate(kb_runtime(settings, store, embedder), "names", folder, principal=None, promote=True)
    assert run.gate_refused and run.served_version is None
    app = create_app(settings, build_services(settings, store=store, embedder=embedder))
    yield app.test_client()
    store.close()


def test_domains_say_why_a_knowledge_base_is_not_served(client: FlaskClient) -> None:
    domains = {d["key"]: d for d in client.get("/domains").get_json()["domains"]}
    assert domains["names"]["not_served"] == REFUSED
    assert domains["empty"]["not_served"] == ("nothing has been ingested into it yet; add documents: "
                                              "rag ingest DIR --domain-key empty --update-alias")
    assert domains["handbook"]["not_served"].startswith("nothing has been ingested into it yet")


@pytest.mark.parametrize("path", ["/chat", "/chat/stream"])
def test_chat_with_a_knowledge_base_that_serves_nothing_is_409_with_the_reason(client: FlaskClient,
                                                                                path: str) -> None:
    resp = client.post(path, json={"question": "Who is on the list?"}, headers={"X-RAG-Domain": "names"})
    assert resp.status_code == 409
    error = resp.get_json()["error"]
    assert error["code"] == "not_served"
    assert error["message"] == f"names is not served yet: {REFUSED}"


def test_an_unknown_domain_is_still_400_not_409(client: FlaskClient) -> None:
    resp = client.post("/chat", json={"question": "Who?"}, headers={"X-RAG-Domain": "nosuch"})
    assert resp.status_code == 400 and resp.get_json()["error"]["code"] == "unknown_domain"
