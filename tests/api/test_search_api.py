"""GET /search and GET /search/presets on the real chat corpus (real store, real model)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from flask.testing import FlaskClient

from backend.api.app import create_app
from backend.runtime import build_services
from backend.common.errors import RequestError
from backend.core.types import QueryVector
from tests.api.corpus import COFFEE_VERSION, MAIN_VERSION, Corpus, corpus_settings

RETRIEVAL = {
    "metadata_schema": {"topic": {"type": "enum", "values": ["hr-handbook", "volcanoes", "espresso"]}},
    "presets": [
        {"name": "by_topic", "description": "Search within one topic.", "filter_field": "topic"},
        {"name": "topic_overview", "description": "Overview of a topic.", "filter_field": "topic",
         "query_template": "overview of {value}"},
    ],
}
ERUPTION = "Why are some volcanic eruptions explosive?"


@pytest.fixture
def client(corpus: Corpus, embedder: Any, extractive: Any, tmp_path: Path) -> FlaskClient:
    settings = corpus_settings(tmp_path, retrieval=RETRIEVAL)
    services = build_services(settings, store=corpus.store, embedder=embedder, primary=extractive)
    return create_app(settings, services).test_client()


def get(client: FlaskClient, headers: dict[str, str] | None = None, **params: Any) -> Any:
    return client.get("/search", query_string=params, headers=headers or {})


def dense_similarities(corpus: Corpus, embedder: Any, target: str, query: str) -> dict[str, float]:
    q = QueryVector(embedder.embed_queries([query])[0], embedder.model_id)
    return {h.chunk.chunk_id: h.score for h in corpus.store.search(target, q, 50).hits}


def test_fusion_search_returns_ranked_chunks_with_all_three_scores(client: FlaskClient, corpus: Corpus, embedder: Any) -> None:
    resp = get(client, q=ERUPTION, strategy="fusion", top_k=4)
    body = resp.get_json()
    assert resp.status_code == 200
    assert resp.headers["X-Retrieval-Target"] == "KB_ACTIVE"
    assert (body["strategy"], body["score_source"], body["order_by"]) == ("fusion", "dense_similarity", "fused_score")
    assert (body["retrieval_target"], body["version"], body["domain"], body["top_k"]) == ("KB_ACTIVE", MAIN_VERSION, None, 4)
    hits = body["hits"]
    assert [h["rank"] for h in hits] == [1, 2, 3, 4]
    assert hits[0]["chunk_id"] == "volcanoes#2"
    fused = [h["fused_score"] for h in hits]
    assert fused == sorted(fused, reverse=True)
    sims = dense_similarities(corpus, embedder, "KB_ACTIVE", ERUPTION)
    assert [h["dense_similarity"] for h in hits] == pytest.approx([sims[h["chunk_id"]] for h in hits], abs=1e-5)
    assert hits[0]["lexical_score"] > 0
    assert hits[0]["metadata"] == {"topic": "volcanoes"}
    assert "Stratovolcanoes" in hits[0]["text"]
    assert "answer" not in body


def test_lexical_search_orders_by_lexical_score(client: FlaskClient) -> None:
    body = get(client, q="espresso pressure crust", strategy="lexical").get_json()
    assert body["order_by"] == "lexical_score"
    assert [h["chunk_id"] for h in body["hits"]] == ["volcanoes#0"]
    assert body["hits"][0]["fused_score"] is None


def test_filters_parameter_restricts_hits_to_matching_metadata(client: FlaskClient) -> None:
    body = get(client, q="rules for leave", top_k=10, filters=json.dumps({"topic": {"any": ["volcanoes"]}})).get_json()
    assert {h["metadata"]["topic"] for h in body["hits"]} == {"volcanoes"}
    assert len(body["hits"]) == 5
    assert body["filters"] == [{"field": "topic", "any": ["volcanoes"]}]


@pytest.mark.parametrize(("filters", "message"), [
    ({"topic": "cooking"}, "filters.topic: 'cooking' not allowed; allowed values: hr-handbook, volcanoes, espresso"),
    ({"department": "it"}, "filters: unknown field 'department'; filterable fields: chunk_type, doc_id, lang, source, "
                           "tags, topic, updated_at"),
    ({"updated_at": {"gte": "2025-02-30"}}, "filters.updated_at.gte: '2025-02-30' is not an ISO-8601 date"),
])
def test_invalid_filters_are_400_naming_the_field(client: FlaskClient, filters: dict[str, Any], message: str) -> None:
    resp = get(client, q="leave", filters=json.dumps(filters))
    assert resp.status_code == 400
    error = resp.get_json()["error"]
    assert error["code"] == "bad_request"
    assert error["message"].startswith(message)


def test_enum_rejection_lists_allowed_values_in_details(client: FlaskClient) -> None:
    error = get(client, q="leave", filters='{"topic": ["cooking"]}').get_json()["error"]
    assert error["details"] == {"field": "filters.topic", "allowed": ["hr-handbook", "volcanoes", "espresso"]}


def test_filters_that_are_not_json_are_400(client: FlaskClient) -> None:
    resp = get(client, q="leave", filters="{topic: volcanoes}")
    assert resp.status_code == 400
    assert resp.get_json()["error"]["message"].startswith("filters: not valid JSON: Expecting property name")


def test_domain_header_routes_to_the_domains_alias(client: FlaskClient) -> None:
    resp = get(client, {"X-RAG-Domain": "coffee"}, q="How much coffee goes into a double espresso?", top_k=2)
    body = resp.get_json()
    assert resp.headers["X-Retrieval-Target"] == "KB_COFFEE"
    assert (body["version"], body["domain"]) == (COFFEE_VERSION, "coffee")
    assert body["hits"][0]["chunk_id"] == "espresso#1"


def test_unknown_domain_is_400_listing_known_domains(client: FlaskClient) -> None:
    resp = get(client, {"X-RAG-Domain": "tea"}, q="green tea")
    assert resp.status_code == 400
    error = resp.get_json()["error"]
    assert error["code"] == "unknown_domain"
    assert error["details"]["known_domains"] == ["coffee", "handbook"]


def test_preset_applies_filter_field_and_query(client: FlaskClient) -> None:
    body = get(client, preset="by_topic", value="volcanoes", q=ERUPTION, top_k=10).get_json()
    assert body["preset"] == "by_topic"
    assert body["query"] == ERUPTION
    assert body["filters"] == [{"field": "topic", "any": ["volcanoes"]}]
    assert len(body["hits"]) == 5 and {h["metadata"]["topic"] for h in body["hits"]} == {"volcanoes"}


def test_preset_template_builds_the_query_from_the_value(client: FlaskClient) -> None:
    body = get(client, {"X-RAG-Domain": "coffee"}, preset="topic_overview", value="espresso", top_k=3).get_json()
    assert body["query"] == "overview of espresso"
    assert len(body["hits"]) == 3
    assert {h["doc_id"] for h in body["hits"]} == {"espresso"}


@pytest.mark.parametrize(("params", "message"), [
    ({"preset": "by_topic", "value": "cooking", "q": "x"}, "filters.topic: 'cooking' not allowed"),
    ({"preset": "by_topic", "q": "x"}, "preset by_topic: parameter 'value' is required"),
    ({"preset": "by_muscle", "value": "x"}, "preset: unknown preset 'by_muscle'; known presets: by_topic, topic_overview"),
    ({"value": "volcanoes", "q": "x"}, "value: only meaningful with preset"),
    ({}, "q: the query parameter is required (or use a preset)"),
])
def test_bad_preset_calls_and_missing_query_are_400(client: FlaskClient, params: dict[str, Any], message: str) -> None:
    resp = get(client, **params)
    assert resp.status_code == 400
    assert resp.get_json()["error"]["message"].startswith(message)


@pytest.mark.parametrize(("params", "field"), [
    ({"q": "x", "strategy": "hybrid"}, "strategy"),
    ({"q": "x", "top_k": "0"}, "top_k"),
    ({"q": "x", "top_k": "many"}, "top_k"),
    ({"q": "x", "colour": "red"}, "colour"),
])
def test_malformed_parameters_are_422(client: FlaskClient, params: dict[str, Any], field: str) -> None:
    resp = get(client, **params)
    assert resp.status_code == 422
    assert [d["field"] for d in resp.get_json()["error"]["details"]] == [field]


def test_top_k_above_the_configured_maximum_is_422(client: FlaskClient) -> None:
    resp = get(client, q="leave", top_k=51)
    assert resp.status_code == 422
    assert resp.get_json()["error"]["message"] == "top_k must be between 1 and 50, got 51"


def test_presets_are_listed_with_their_parameters(client: FlaskClient) -> None:
    body = client.get("/search/presets").get_json()
    assert [p["name"] for p in body["presets"]] == ["by_topic", "topic_overview"]
    by_topic = body["presets"][0]
    assert by_topic["description"] == "Search within one topic."
    assert by_topic["parameters"] == {
        "q": {"type": "string", "required": True, "description": "The search query."},
        "value": {"type": "string", "required": True, "description": "Value of topic to filter on.",
                  "enum": ["hr-handbook", "volcanoes", "espresso"]},
    }
    assert set(body["presets"][1]["parameters"]) == {"value"}
    assert body["filterable_fields"]["topic"] == {"type": "enum", "values": ["hr-handbook", "volcanoes", "espresso"]}
    assert body["filterable_fields"]["tags"] == {"type": "string_list"}


# --- rag search (same body through the CLI) -----------------------------------------------
@pytest.fixture
def cli_config(corpus: Corpus, tmp_path: Path) -> Path:
    """A YAML profile for the CLI: the repo's config over the corpus's store, plus the schema and presets."""
    import yaml

    from tests.conftest import REPO

    data = yaml.safe_load((REPO / "config" / "rag.yaml").read_text(encoding="utf-8"))
    data["store"]["sqlite"]["path"] = str(corpus.settings.resolve_path(corpus.settings.store.sqlite.path))
    data["embeddings"]["domains"]["coffee"] = {"index_name": COFFEE_VERSION, "alias_name": "KB_COFFEE"}
    data["retrieval"].update(RETRIEVAL)
    data["logging"] = {"format": "console", "level": "WARNING"}
    path = tmp_path / "rag.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    return path


def run_cli(config: Path, *args: str) -> Any:
    from click.testing import CliRunner

    from backend.cli.main import cli

    return CliRunner().invoke(cli, ["--config", str(config), "search", *args])


def test_cli_search_json_matches_the_http_body(cli_config: Path, client: FlaskClient) -> None:
    result = run_cli(cli_config, ERUPTION, "--strategy", "fusion", "--top-k", "3", "--filter", "topic=volcanoes", "--json")
    assert result.exit_code == 0, result.output
    body = json.loads(result.stdout)
    http = get(client, q=ERUPTION, strategy="fusion", top_k=3, filters='{"topic": {"any": ["volcanoes"]}}').get_json()
    assert [h["chunk_id"] for h in body["hits"]] == [h["chunk_id"] for h in http["hits"]]
    assert [h["dense_similarity"] for h in body["hits"]] == pytest.approx([h["dense_similarity"] for h in http["hits"]])
    assert body["filters"] == [{"field": "topic", "any": ["volcanoes"]}]


def test_cli_search_renders_scores_and_routes_by_domain(cli_config: Path) -> None:
    result = run_cli(cli_config, "double espresso dose", "--domain", "coffee", "--top-k", "1", "--strategy", "lexical")
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[2].startswith("target: KB_COFFEE -> KB_COFFEE_V1")
    assert lines[3].startswith("  1. espresso#1  sim=0.")
    assert " lex=" in lines[3] and "data/coffee/espresso.md" in lines[3]


def test_cli_search_rejects_an_enum_value_outside_the_schema(cli_config: Path) -> None:
    result = run_cli(cli_config, "leave", "--filter", "topic=cooking")
    assert result.exit_code == 1
    assert "error: filters.topic: 'cooking' not allowed; allowed values: hr-handbook, volcanoes, espresso" in result.stderr


def test_cli_filter_pairs_build_any_lists_and_date_ranges() -> None:
    from backend.cli.search import filters_from_options

    merged = filters_from_options(("topic=volcanoes", "topic=espresso", "updated_at>=2025-01-01"), '{"tags": ["hr"]}')
    assert json.loads(merged or "") == {"tags": ["hr"], "topic": {"any": ["volcanoes", "espresso"]},
                                        "updated_at": {"gte": "2025-01-01"}}
    with pytest.raises(RequestError, match="--filter 'topic': expected field=value"):
        filters_from_options(("topic",), None)
