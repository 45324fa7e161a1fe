"""``/chat`` end to end on the sample corpus: the shipped documents, ingested by the
real pipeline with the real model, promoted through the gate, served over HTTP.

Questions come from the sample golden set, one per answer mode; the figure
question hits the DOCX with pictures, whose figure chunks must be cited with an
``image_ref`` that ``/assets`` serves, and must never reach the prompt.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from flask.testing import FlaskClient

from backend.api.app import create_app
from backend.runtime import build_services
from backend.common.config import Settings
from tests.promoting import promote
from tests.eval.conftest import SAMPLE_GOLDEN

# golden questions the shipped answer reader decides as their golden mode says (docs/CALIBRATION.md)
RAG = "How many days of annual leave do full-time employees get per year?"
# a look-alike the knowledge base partly covers (full-time staff, not interns): quoted as a partial answer
HYBRID = "How many days of annual leave do interns get?"
#: retrieves the floor-plan figures of the DOCX with pictures
FIGURE = "Where is the assembly point for the Amsterdam office during an evacuation?"
FALLBACK = "What is the capital of Australia?"
HANDBOOK = "Which safety shoes are part of the field engineer PPE kit?"
EXPLAIN_KEYS = {"mode", "thresholds", "effective_query", "short_query_active", "used_llm", "score_mode", "distance",
                "retrieval_target", "max_eligible_similarity", "gates"}


@pytest.fixture
def client(eval_settings: Settings, eval_store: Any, embedder: Any, seed_store_path: Any) -> FlaskClient:
    # the seed ingest wrote the figure images next to its database
    settings = eval_settings.model_copy(update={"docx": eval_settings.docx.model_copy(
        update={"assets_dir": str(seed_store_path.parent / "assets")})})
    promote(settings, eval_store, embedder, version="KB_SAMPLE_V1", golden=SAMPLE_GOLDEN)
    eval_store.point_alias("KB_HANDBOOK", "KB_HANDBOOK_V1")
    services = build_services(settings, store=eval_store, embedder=embedder)
    return create_app(settings, services).test_client()


@pytest.mark.parametrize(("question", "mode", "sources_used"),
                         # calibrated min_similarity_for_hybrid 0.2: every chunk of the hybrid answer is usable
                         [(RAG, "rag", "all"), (HYBRID, "hybrid", "all"), (FALLBACK, "fallback", "none")])
def test_each_mode_is_decided_explained_and_logged(client: FlaskClient, eval_store: Any, question: str, mode: str,
                                                   sources_used: str) -> None:
    before = len(eval_store.interactions(limit=1000))
    resp = client.post("/chat", json={"question": question})
    body = resp.get_json()
    assert resp.status_code == 200, body
    assert resp.headers["X-Answer-Mode"] == body["mode"] == body["decision_explain"]["mode"] == mode
    explain = body["decision_explain"]
    assert EXPLAIN_KEYS <= set(explain)
    assert (explain["retrieval_target"], explain["version"]) == ("KB_ACTIVE", "KB_SAMPLE_V1")
    assert body["answer"].strip()
    assert body["sources_used"] == sources_used
    sims = [m["similarity"] for m in body["retrieved_chunks_metadata"]]
    assert sims == sorted(sims, reverse=True)
    if mode == "fallback":
        assert body["used_chunks"] == [] and explain["used_llm"] == "fallback"
    else:
        # the sources are the passages the answer cites, as many as its distinct markers, numbered in answer order
        cited = [c for c in body["citations"] if c["marker"]]
        markers = list(dict.fromkeys(re.findall(r"\[\d+\]", body["answer"])))
        assert body["used_chunks"] and cited and {c["chunk_id"] for c in cited} <= set(body["used_chunks"])
        assert [c["marker"] for c in cited] == markers == [f"[{n}]" for n in range(1, len(markers) + 1)]
        assert not any(c["source"].startswith("/") for c in body["citations"])
    rows = eval_store.interactions(limit=1000)
    assert len(rows) == before + 1
    assert (rows[0].question, rows[0].resp_mode, rows[0].retrieval_target) == (question, mode, "KB_ACTIVE")
    assert rows[0].decision_explain["mode"] == mode


def test_figures_are_cited_with_a_servable_image_but_never_reach_the_prompt(client: FlaskClient) -> None:
    body = client.post("/chat", json={"question": FIGURE}).get_json()
    figures = [m for m in body["retrieved_chunks_metadata"] if m["chunk_type"] == "figure"]
    assert figures, "the evacuation question retrieves the floor-plan figures"
    assert all(m["excluded_from_llm"] and not m["used"] for m in figures)
    assert not {m["chunk_id"] for m in figures} & set(body["used_chunks"])
    assert len(body["used_chunks"]) >= 2
    cited = [c for c in body["citations"] if c["chunk_type"] == "figure"]
    assert cited and all(c["image_ref"] and c["marker"] is None for c in cited)
    image = client.get(f"/assets/{cited[0]['image_ref']}")
    assert image.status_code == 200 and image.mimetype == "image/png" and image.data.startswith(b"\x89PNG")


def test_domain_header_routes_to_the_handbook_alias(client: FlaskClient) -> None:
    resp = client.post("/chat", json={"question": HANDBOOK}, headers={"X-RAG-Domain": "handbook"})
    body = resp.get_json()
    assert resp.status_code == 200, body
    assert (body["decision_explain"]["retrieval_target"], body["decision_explain"]["version"]) == (
        "KB_HANDBOOK", "KB_HANDBOOK_V1")
    assert body["citations"][0]["doc_id"] == "fe-ppe-requirements"
    assert "S3" in body["answer"]
    unknown = client.post("/chat", json={"question": HANDBOOK}, headers={"X-RAG-Domain": "sales"})
    assert unknown.status_code == 400
    assert unknown.get_json()["error"]["details"]["known_domains"] == ["handbook"]
