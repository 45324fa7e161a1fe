"""Issue 16, fuzzing: property-based requests drawn from ``/openapi.json`` (schemathesis)
against the real app (real store, real model) through its WSGI interface.

Every operation the document lists at run time is exercised, whoever added it. The
properties: no 5xx; every response matches its documented schema and status; a
request the schema calls valid is never rejected with a 4xx other than the
documented auth/lookup ones (the schema is as strict as the server); every 405
names the allowed methods in ``Allow``. Examples per operation are bounded and
derandomized, so the run is reproducible and takes about a minute.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Any, Iterator

import pytest
import schemathesis
from flask import Flask
from hypothesis import HealthCheck, Phase, given, settings
from schemathesis import checks

from backend.api.app import create_app
from backend.runtime import build_services
from backend.common.config import SearchPreset, load_settings
from tests.api.corpus import Corpus, build_corpus
from tests.conftest import REPO

KEY = {"X-API-Key": "fuzz-key-0001"}
EXAMPLES = 30
#: what a well-formed request may answer: success, auth/lookup refusals (no such conversation or figure), a
#: version conflict; never 400/413/415/422 (the schema would be looser than the server) nor a 5xx
ACCEPTED = ["2xx", "401", "403", "404", "409"]


@pytest.fixture(scope="module")
def fuzz_corpus(tmp_path_factory: pytest.TempPathFactory, embedder: Any) -> Iterator[Corpus]:
    """A corpus of its own: the admin operations (promote, rollback, evaluate) run for real."""
    built = build_corpus(tmp_path_factory.mktemp("fuzz-corpus"), embedder)
    yield built
    built.store.close()


@pytest.fixture(scope="module")
def fuzz_app(fuzz_corpus: Corpus, embedder: Any, extractive: Any) -> Flask:
    """API keys on (so a valid key reads the full document, domain names included), rate limit off.
    Access control off, the test client on loopback with the admin token in its header: the
    caller is the local admin (``admin.local_admin_without_access``, issue 49 H2), so every
    /admin operation is reachable."""
    corpus = fuzz_corpus
    base = corpus.settings.model_dump(mode="json", exclude={"server"})
    cfg = load_settings(REPO / "config" / "rag.yaml", overrides=base | {"server": {"rate_limit": {"enabled": False}}},
                        env={"RAG_SERVER__API_KEYS": KEY["X-API-Key"]})
    return create_app(cfg, build_services(cfg, store=corpus.store, embedder=embedder, primary=extractive))


@pytest.fixture(scope="module")
def api_schema(fuzz_app: Flask) -> Any:
    config = schemathesis.config.SchemathesisConfig.from_dict(
        {"checks": {"positive_data_acceptance": {"expected-statuses": ACCEPTED}}})
    return schemathesis.openapi.from_wsgi("/openapi.json", fuzz_app, config=config, headers=admin_headers(fuzz_app))


def admin_headers(app: Flask) -> dict[str, str]:
    """The API key and the local admin's token (``X-RAG-Admin-Token``: a script, not a browser)."""
    from backend.api.admin_session import TOKEN_HEADER, read_token

    return {**KEY, TOKEN_HEADER: read_token(app.extensions["rag"].settings)}


CHECKS = [checks.not_a_server_error, checks.response_schema_conformance, checks.status_code_conformance,
          checks.content_type_conformance, checks.response_headers_conformance, checks.positive_data_acceptance]
#: operations whose acceptance depends on what no schema states: an upload's file contents, type and name
#: (refused with 400/413 and a per-file reason); an OpenAI body's last message (a user's, with text, within
#: server.max_question_chars: 422/413); every other check still applies to them
CONTENT_CHECKED = frozenset({"/admin/knowledge-bases/{key}/uploads", "/v1/chat/completions"})


def test_api_conforms_to_its_schema(api_schema: Any, fuzz_app: Flask) -> None:
    """Each operation in turn (schemathesis' own pytest wrapper does not run under pytest 9)."""
    operations = [result.ok() for result in api_schema.get_all_operations()]
    assert len(operations) >= 7
    assert len([op for op in operations if op.path.startswith("/admin/")]) == 16  # the admin console's, all reachable
    failures: list[str] = []
    headers = admin_headers(fuzz_app)
    for operation in operations:
        @given(case=operation.as_strategy())
        @settings(max_examples=EXAMPLES, derandomize=True, deadline=None, database=None,
                  phases=[Phase.explicit, Phase.generate], suppress_health_check=list(HealthCheck))
        def conforms(case: Any) -> None:
            wanted = [c for c in CHECKS if c is not checks.positive_data_acceptance] \
                if case.operation.path in CONTENT_CHECKED else CHECKS
            case.call_and_validate(headers=headers, checks=wanted)

        try:
            conforms()
        except (Exception, BaseExceptionGroup) as exc:  # noqa: BLE001 - collect all, then report
            failures.append(f"{operation.label}: {exc}"[:3000])
    assert not failures, "\n\n".join(failures)
    # not vacuous: every operation that takes input was called with many different requests
    served = Counter[str]()
    for metric in fuzz_app.extensions["rag_metrics"].requests.collect():
        for sample in metric.samples:
            if sample.name.endswith("_total"):
                served[re.sub(r"<(?:\w+:)?(\w+)>", r"{\1}", sample.labels["endpoint"])] += int(sample.value)
    with_input = [op.path for op in operations if op.definition.raw.get("parameters") or op.body]
    assert all(served[path] >= EXAMPLES // 2 for path in with_input), served
    # the admin operations ran as the admin (the loopback caller with the token), not refused with 403
    assert fuzz_app.test_client().get("/admin/me", headers=headers).get_json()["admin"] is True


def test_every_405_names_the_allowed_methods(fuzz_app: Flask) -> None:
    client = fuzz_app.test_client()
    doc = client.get("/openapi.json", headers=KEY).get_json()
    seen = 0
    for path, operations in doc["paths"].items():
        concrete = path.replace("{image_ref}", "doc/img_001.png").replace("{conversation_id}", "conv-0001")
        for method in {"get", "post", "put", "patch", "delete"} - set(operations):
            resp = client.open(concrete, method=method.upper(), headers=KEY)
            assert resp.status_code == 405, (method, path, resp.status_code)
            allowed = {m.strip().lower() for m in resp.headers["Allow"].split(",")}
            assert set(operations) <= allowed, (method, path, allowed)
            seen += 1
    assert seen >= 20


def test_schema_names_what_the_server_rejects(fuzz_app: Flask) -> None:
    """The three schema-valid requests the server used to reject with 400 are now schema-invalid."""
    from jsonschema import Draft202012Validator

    from backend.api.openapi import build_openapi

    doc = fuzz_app.test_client().get("/openapi.json", headers=KEY).get_json()
    image_ref = Draft202012Validator(doc["paths"]["/assets/{image_ref}"]["get"]["parameters"][0]["schema"])
    assert image_ref.is_valid("hr-handbook/img_001.png")
    assert not [r for r in ("a\\b.png", "../x.png", "a/../b.png", "./a.png", "/etc/passwd", "a//b.png", "C:x.png",
                            "a/.hidden") if image_ref.is_valid(r)]
    body = Draft202012Validator({**doc["components"]["schemas"]["ChatRequestBody"], "$defs": {}})
    assert body.is_valid({"question": "x", "filters": {"tags": {"all": ["a"]}, "doc_id": "d"}})
    rejected: list[dict[str, Any]] = [{"bad field": "v"}, {"": []}, {"colour": "red"}, {"doc_id": {"all": ["a"]}},
                                      {"tags": {"any": []}}, {"tags": [""]}]
    assert not [f for f in rejected if body.is_valid({"question": "x", "filters": f})]
    assert not body.is_valid({"question": "   "})
    settings = fuzz_app.extensions["rag"].settings
    with_preset = settings.model_copy(update={"retrieval": settings.retrieval.model_copy(update={
        "presets": (SearchPreset(name="by_topic", query_template="{query}"),)})})
    search = build_openapi(with_preset)["paths"]["/search"]["get"]["parameters"]
    preset = Draft202012Validator(next(p["schema"] for p in search if p["name"] == "preset"))
    assert preset.is_valid("by_topic") and not preset.is_valid("")
    assert "preset" not in [p["name"] for p in doc["paths"]["/search"]["get"]["parameters"]]  # none configured
