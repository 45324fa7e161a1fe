"""Issue 32: the admin console's HTTP API (backend/api/admin.py) on a real store and the real
model: who may read and write (roles from env-style settings, read_only mode, the loopback
admin without access control), the gate on promote, confirmation, and the principal recorded
in the alias history."""

from __future__ import annotations

import json
from typing import Any, Iterator

import pytest
from flask import Flask
from flask.testing import FlaskClient

from backend.api.app import create_app
from backend.runtime import build_services
from backend.common.config import Settings, load_settings
from backend.core.types import Chunk, ConversationTurn, DocumentWrite, Feedback, VersionSpec, content_hash
from tests.api.corpus import COFFEE_VERSION, Corpus, build_corpus
from tests.conftest import REPO

ROOT = {"X-API-Key": "root-key-0001"}  # admin, every domain
READER = {"X-API-Key": "reader-key-0001"}  # no role, every domain
HR = {"X-API-Key": "hr-key-0001"}  # admin of the default alias only
GOLDEN = [
    {"id": "c1", "query": "How much coffee goes into a double espresso?", "expected_sources": ["espresso"],
     "expected_mode": "rag"},
    {"id": "c2", "query": "What pressure is espresso brewed at?", "expected_sources": ["espresso"],
     "expected_mode": "rag"},
    {"id": "c3", "query": "To what temperature is milk for a cappuccino steamed?", "expected_sources": ["espresso"],
     "expected_mode": "rag"},
    {"id": "off", "query": "What is the capital city of Australia?", "expected_mode": "fallback"},
]


@pytest.fixture(scope="module")
def kb(tmp_path_factory: pytest.TempPathFactory, embedder: Any) -> Iterator[Corpus]:
    """A corpus of its own: promote and rollback change its aliases."""
    built = build_corpus(tmp_path_factory.mktemp("admin-api"), embedder)
    golden = built.path / "coffee_golden.jsonl"
    golden.write_text("".join(json.dumps(q) + "\n" for q in GOLDEN), encoding="utf-8")
    yield built
    built.store.close()


def admin_settings(kb: Corpus, *, access: bool = True, **admin: Any) -> Settings:
    base = kb.settings.model_dump(mode="json", exclude={"server", "access", "admin"})
    base["embeddings"]["domains"]["coffee"]["golden_set"] = str(kb.path / "coffee_golden.jsonl")
    overrides = base | {"server": {"rate_limit": {"enabled": False}}, "admin": admin}
    env = {}
    if access:
        overrides["access"] = {"enabled": True, "default_acl": "public", "principals": {
            "root": {"domains": ["*"]}, "reader": {"domains": ["*"]}, "hr": {"domains": ["default"]}}}
        env = {"RAG_ACCESS__PRINCIPALS__ROOT__API_KEY": ROOT["X-API-Key"], "RAG_ACCESS__PRINCIPALS__ROOT__ROLES": "admin",
               "RAG_ACCESS__PRINCIPALS__READER__API_KEY": READER["X-API-Key"],
               "RAG_ACCESS__PRINCIPALS__HR__API_KEY": HR["X-API-Key"], "RAG_ACCESS__PRINCIPALS__HR__ROLES": "admin"}
    return load_settings(REPO / "config" / "rag.yaml", overrides=overrides, env=env)


def make_app(kb: Corpus, embedder: Any, extractive: Any, **kwargs: Any) -> Flask:
    cfg = admin_settings(kb, **kwargs)
    return create_app(cfg, build_services(cfg, store=kb.store, embedder=embedder, primary=extractive))


@pytest.fixture(scope="module")
def client(kb: Corpus, embedder: Any, extractive: Any) -> FlaskClient:
    return make_app(kb, embedder, extractive).test_client()


def test_roles_come_from_env_style_settings(kb: Corpus) -> None:
    cfg = admin_settings(kb)
    assert cfg.access.principals["root"].roles == ("admin",)
    assert cfg.access.principals["reader"].roles == ()
    with pytest.raises(Exception, match="unknown role"):
        load_settings(REPO / "config" / "rag.yaml", env={"RAG_ACCESS__PRINCIPALS__X__ROLES": "admins"})


def test_me_says_what_the_caller_may_do(client: FlaskClient) -> None:
    root = client.get("/admin/me", headers=ROOT).get_json()
    limits = root.pop("limits")
    assert root == {"admin": True, "can_view": True, "principal": "root"}
    assert limits["max_upload_bytes"] == 20_000_000 and limits["max_files_per_upload"] == 20
    assert ".docx" in limits["suffixes"] and ".pdf" in limits["suffixes"]
    assert client.get("/admin/me", headers=READER).get_json() == {"admin": False, "can_view": False,
                                                                  "principal": "reader", "limits": None}
    assert client.get("/admin/me").status_code == 401


def test_non_admins_are_refused_when_hidden(client: FlaskClient) -> None:
    for method, path in [("get", "/admin/knowledge-bases"), ("get", "/admin/knowledge-bases/coffee/versions"),
                         ("get", "/admin/knowledge-bases/coffee/golden"),
                         ("post", "/admin/knowledge-bases/coffee/rollback")]:
        resp = getattr(client, method)(path, headers=READER, json={"confirm": True})
        assert resp.status_code == 403, (path, resp.get_json())
        assert resp.get_json()["error"]["code"] == "forbidden"
        assert getattr(client, method)(path, json={"confirm": True}).status_code == 401
    # refused before the name is looked up: a non-admin learns nothing of which knowledge bases exist
    assert client.get("/admin/knowledge-bases/nope/versions", headers=READER).status_code == 403


def test_read_only_non_admins_read_but_never_write(kb: Corpus, embedder: Any, extractive: Any) -> None:
    client = make_app(kb, embedder, extractive, non_admins="read_only").test_client()
    assert client.get("/admin/me", headers=READER).get_json()["can_view"] is True
    assert client.get("/admin/knowledge-bases/coffee/versions", headers=READER).status_code == 200
    for path, body in [("/admin/knowledge-bases/coffee/promote", {"confirm": True}),
                       ("/admin/knowledge-bases/coffee/rollback", {"confirm": True}),
                       (f"/admin/knowledge-bases/coffee/versions/{COFFEE_VERSION}/evaluate", None)]:
        resp = client.post(path, headers=READER, json=body)
        assert resp.status_code == 403 and "admin role" in resp.get_json()["error"]["message"], path


def test_an_admin_is_limited_to_its_domains(client: FlaskClient) -> None:
    listed = client.get("/admin/knowledge-bases", headers=HR).get_json()["knowledge_bases"]
    assert [k["key"] for k in listed] == ["default"]
    assert client.get("/admin/knowledge-bases/coffee/documents", headers=HR).status_code == 403
    assert client.post("/admin/knowledge-bases/coffee/promote", headers=HR, json={"confirm": True}).status_code == 403


def test_lists_knowledge_bases_documents_and_golden(client: FlaskClient) -> None:
    listed = {k["key"]: k for k in client.get("/admin/knowledge-bases", headers=ROOT).get_json()["knowledge_bases"]}
    assert {"default", "coffee", "handbook"} <= set(listed)
    coffee = listed["coffee"]
    assert (coffee["alias"], coffee["documents"], coffee["managed"]) == ("KB_COFFEE", 1, False)
    assert coffee["golden"]["queries"] == 4 and coffee["golden"]["generated"] is False
    docs = client.get("/admin/knowledge-bases/coffee/documents", headers=ROOT).get_json()
    assert docs["documents"][0]["doc_id"] == "espresso" and docs["documents"][0]["chunks"] == 4
    golden = client.get("/admin/knowledge-bases/coffee/golden", headers=ROOT).get_json()
    assert [q["id"] for q in golden["queries"]] == ["c1", "c2", "c3", "off"]
    assert client.get("/admin/knowledge-bases/nope/versions", headers=ROOT).status_code == 404
    missing = client.get("/admin/knowledge-bases/coffee/versions/KB_COFFEE_V9/evaluation", headers=ROOT)
    assert missing.status_code == 404
    # a version of another knowledge base's series is not this one's: never evaluated or promoted here
    assert client.get("/admin/knowledge-bases/coffee/versions/KB_CHAT_V1/evaluation", headers=ROOT).status_code == 404
    foreign = client.post("/admin/knowledge-bases/coffee/promote", headers=ROOT,
                          json={"version": "KB_CHAT_V1", "confirm": True})
    assert foreign.status_code == 404 and foreign.get_json()["error"]["code"] == "version_not_found"


def _grinder(embedder: Any) -> DocumentWrite:
    text = "A burr grinder gives an even grind size, which espresso needs for a balanced extraction."
    return DocumentWrite("grinder", content_hash(text), [Chunk("grinder#0", "grinder", text, "coffee/grinder.md", 0)],
                         embedder.embed_documents([text]))


def test_promote_through_the_gate_and_roll_back(kb: Corpus, client: FlaskClient, embedder: Any) -> None:
    store = kb.store
    store.create_version(VersionSpec("KB_COFFEE_V2", embedder.model_id, embedder.dimension, "cosine",
                                     parent=COFFEE_VERSION))
    store.write_documents("KB_COFFEE_V2", [_grinder(embedder)])
    promote = "/admin/knowledge-bases/coffee/promote"

    unconfirmed = client.post(promote, headers=ROOT, json={"version": "KB_COFFEE_V2"})
    assert unconfirmed.status_code == 400 and unconfirmed.get_json()["error"]["details"]["field"] == "confirm"
    assert store.resolve_alias("KB_COFFEE") == COFFEE_VERSION

    done = client.post(promote, headers=ROOT, json={"version": "KB_COFFEE_V2", "confirm": True})
    assert done.status_code == 200, done.get_json()
    body = done.get_json()
    assert (body["promoted"], body["version"], body["previous"]) == (True, "KB_COFFEE_V2", COFFEE_VERSION)
    assert body["gates"] and all(g["passed"] for g in body["gates"])
    assert store.resolve_alias("KB_COFFEE") == "KB_COFFEE_V2"
    assert store.alias_history("KB_COFFEE")[0].reason.startswith("from the admin console by root: ")

    evaluation = client.get("/admin/knowledge-bases/coffee/versions/KB_COFFEE_V2/evaluation", headers=ROOT).get_json()
    assert evaluation["baseline_version"] == COFFEE_VERSION and evaluation["gates_passed"] is True
    assert len(evaluation["queries"]) == 4 and sum(evaluation["summary"].values()) == 4

    # a candidate without the espresso document fails the gate: 409 with the gates, nothing served
    store.create_version(VersionSpec("KB_COFFEE_V3", embedder.model_id, embedder.dimension, "cosine",
                                     parent="KB_COFFEE_V2"))
    store.delete_documents("KB_COFFEE_V3", ["espresso"])
    refused = client.post(promote, headers=ROOT, json={"version": "KB_COFFEE_V3", "confirm": True})
    assert refused.status_code == 409
    failed = refused.get_json()
    assert failed["error"]["code"] == "gate_failed" and any(not g["passed"] for g in failed["gates"])
    assert store.resolve_alias("KB_COFFEE") == "KB_COFFEE_V2"
    versions = client.get("/admin/knowledge-bases/coffee/versions", headers=ROOT).get_json()
    roles = {v["name"]: v["role"] for v in versions["versions"]}
    assert roles == {"KB_COFFEE_V3": "candidate", "KB_COFFEE_V2": "live", COFFEE_VERSION: "rollback"}
    assert versions["versions"][0]["evaluation"]["gates_passed"] is False

    rollback = "/admin/knowledge-bases/coffee/rollback"
    assert client.post(rollback, headers=ROOT, json={"confirm": False}).status_code == 400
    assert client.post(rollback, headers=ROOT, json={}).get_json()["error"]["details"]["field"] == "confirm"
    back = client.post(rollback, headers=ROOT, json={"confirm": True})
    assert back.status_code == 200
    assert (back.get_json()["version"], back.get_json()["previous"]) == (COFFEE_VERSION, "KB_COFFEE_V2")
    assert store.alias_history("KB_COFFEE")[0].reason == \
        "rollback from KB_COFFEE_V2 (from the admin console by root)"
    history = client.get("/admin/knowledge-bases/coffee/versions", headers=ROOT).get_json()["history"]
    assert "by root" in history[0]["reason"] and "by root" in history[1]["reason"]


def test_nothing_to_roll_back_is_409(client: FlaskClient) -> None:
    resp = client.post("/admin/knowledge-bases/handbook/rollback", headers=ROOT, json={"confirm": True})
    assert resp.status_code == 409 and resp.get_json()["error"]["code"] == "nothing_to_roll_back"


def test_feedback_of_a_knowledge_base(kb: Corpus, client: FlaskClient, embedder: Any, extractive: Any) -> None:
    store = kb.store
    for principal, rating in (("root", "up"), ("reader", "down")):
        turn = ConversationTurn(f"turn-{principal}", "conv-1", "How much coffee?", "How much coffee?", "rag",
                                COFFEE_VERSION, "coffee", principal)
        store.record_turn(turn)
        store.record_feedback(Feedback(turn.interaction_id, rating, "ok", None, turn.effective_query,  # type: ignore[arg-type]
                                       "rag", COFFEE_VERSION, "coffee", principal))
    rows = client.get("/admin/knowledge-bases/coffee/feedback", headers=ROOT).get_json()["feedback"]
    assert {(r["interaction_id"], r["vote"]) for r in rows} == {("turn-root", "up"), ("turn-reader", "down")}
    assert client.get("/admin/knowledge-bases/default/feedback", headers=ROOT).get_json()["feedback"] == []
    read_only = make_app(kb, embedder, extractive, non_admins="read_only").test_client()
    own = read_only.get("/admin/knowledge-bases/coffee/feedback", headers=READER).get_json()["feedback"]
    assert [r["interaction_id"] for r in own] == ["turn-reader"]  # a non-admin reads only its own


def test_without_access_control_the_local_admin_holds_the_token(kb: Corpus, embedder: Any, extractive: Any) -> None:
    """The loopback caller with the admin token (issue 49 H2: the address alone is not enough)."""
    from backend.api.admin_session import read_token

    cfg = admin_settings(kb, access=False)
    client = create_app(cfg, build_services(cfg, store=kb.store, embedder=embedder, primary=extractive)).test_client()
    token = {"X-RAG-Admin-Token": read_token(cfg)}
    assert {k: v for k, v in client.get("/admin/me", headers=token).get_json().items() if k != "limits"} == \
        {"admin": True, "can_view": True, "principal": "local"}
    assert client.get("/admin/me").get_json()["admin"] is False
    remote = {"REMOTE_ADDR": "10.1.2.3"}
    assert client.get("/admin/me", environ_base=remote, headers=token).get_json()["admin"] is False
    assert client.get("/admin/knowledge-bases", environ_base=remote, headers=token).status_code == 403
    relayed = client.get("/admin/me", headers={**token, "X-Forwarded-For": "203.0.113.9"}).get_json()
    assert relayed["admin"] is False  # a proxy on the same host is not the local user
    off = make_app(kb, embedder, extractive, access=False, local_admin_without_access=False).test_client()
    assert off.get("/admin/me", headers=token).get_json()["admin"] is False
    disabled = make_app(kb, embedder, extractive, access=False, enabled=False).test_client()
    assert disabled.get("/admin/knowledge-bases").status_code == 404
    assert disabled.get("/admin/me").get_json() == {"admin": False, "can_view": False, "principal": None,
                                                    "limits": None}


def test_the_openapi_document_lists_only_the_domains_the_principal_may_use(client: FlaskClient) -> None:
    """Issue 49 L6: ``hr`` may use the default alias only; the document listed every domain key."""
    def domains(headers: dict[str, str]) -> Any:
        doc = client.get("/openapi.json", headers=headers).get_json()
        [param] = [p for p in doc["paths"]["/chat"]["post"]["parameters"] if p["name"] == "X-RAG-Domain"]
        return param["schema"], json.dumps(doc)

    assert domains(ROOT)[0]["enum"] == ["coffee", "handbook"]
    schema, text = domains(HR)
    assert schema == {"type": "string"} and "coffee" not in text and "handbook" not in text
    assert domains({})[0] == {"type": "string"}  # no credential: no names at all, as before


def test_admin_routes_are_in_the_openapi_document(client: FlaskClient) -> None:
    doc = client.get("/openapi.json", headers=ROOT).get_json()
    admin = [p for p in doc["paths"] if p.startswith("/admin/")]
    assert len(admin) == 16  # with /admin/login (issue 49) and the three connector routes (issue 46)
    assert "/admin/connectors/{name}/cancel" in admin
    upload = doc["paths"]["/admin/knowledge-bases/{key}/uploads"]["post"]["requestBody"]["content"]
    assert "multipart/form-data" in upload
    assert doc["components"]["schemas"]["PromoteBody"]["properties"]["confirm"] == {
        "const": True, "description": doc["components"]["schemas"]["PromoteBody"]["properties"]["confirm"]["description"]}


def test_token_roles_come_from_the_roles_claim_else_the_configured_principal() -> None:
    import time

    import jwt

    from backend.common.config import AccessSettings
    from backend.core.access import principal_for_token

    secret = "hs256-admin-secret-" + "0123456789abcdef" * 4
    cfg = AccessSettings.model_validate({"enabled": True, "principals": {"root": {"domains": ["*"], "sso": True,
                                                                                  "roles": ["admin"]}},
                                         "jwt": {"enabled": True, "secret": secret, "audience": "rag-api"}})

    def token(**claims: Any) -> str:
        return jwt.encode({"aud": "rag-api", "exp": int(time.time()) + 60, **claims}, secret, algorithm="HS256")

    assert principal_for_token(cfg, token(sub="sso-user", rag_roles=["admin", "employee"])).roles == ("admin",)
    assert principal_for_token(cfg, token(sub="sso-user", rag_roles="employee")).is_admin is False
    assert principal_for_token(cfg, token(sub="root")).is_admin is True  # no claim: the configured roles
    assert principal_for_token(cfg, token(sub="root", rag_roles=[])).is_admin is False  # the claim wins
