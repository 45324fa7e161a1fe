"""Principals from signed bearer tokens (HS256 / RS256), the config rules for access
secrets, and the deny default over HTTP: a version ingested without ACLs shows
nothing once access control is on."""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import Any

import jwt
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from flask.testing import FlaskClient

from backend.api.app import create_app
from backend.runtime import build_services
from backend.common.config import AccessSettings, load_settings
from backend.common.errors import ConfigError, Forbidden, Unauthorized
from backend.core.access import acl_labels, principal_for_key, principal_for_token
from tests.api.corpus import Corpus
from tests.conftest import REPO

SECRET = "hs256-test-secret-" + "0123456789abcdef" * 4  # 64+ bytes: no short-key warning even for HS512


def hs_settings(**jwt_extra: Any) -> AccessSettings:
    return AccessSettings.model_validate({
        "enabled": True,
        "principals": {"alice": {"groups": ["hr"], "domains": ["default", "coffee"], "sso": True},
                       "root": {"domains": ["*"], "roles": ["admin"], "api_key": "root-key-0001"}},
        "jwt": {"enabled": True, "algorithm": "HS256", "secret": SECRET, "audience": "rag-api", **jwt_extra},
    })


def token(claims: dict[str, Any], key: Any = SECRET, algorithm: str = "HS256") -> str:
    base = {"sub": "alice", "aud": "rag-api", "exp": int(time.time()) + 300}
    return jwt.encode({**base, **claims}, key, algorithm=algorithm)


def test_a_valid_hs256_token_names_the_principal_its_groups_and_its_domains() -> None:
    p = principal_for_token(hs_settings(), token({"sub": "Erin@Example.com", "groups": ["HR", "it"],
                                                  "rag_domains": ["coffee"]}))
    assert (p.name, p.groups, p.domains, p.source) == ("erin@example.com", ("hr", "it"), ("coffee",), "jwt")
    assert p.visibility.labels == ("public", "user:erin@example.com", "group:hr", "group:it")
    assert acl_labels(["erin@example.com"]) == ["user:erin@example.com"]  # the manifest can name it
    # no domains claim: the configured principal of that name decides
    assert principal_for_token(hs_settings(), token({})).domains == ("default", "coffee")
    assert principal_for_token(hs_settings(), token({"sub": "nobody"})).domains == ()


@pytest.mark.parametrize(("sub", "message"), [
    ("root", "names a configured principal that is not an SSO identity"),
    ("ROOT", "names a configured principal that is not an SSO identity"),
    (" root ", "is not a canonical principal name"),
    ("root\u200b", "is not a canonical principal name"),
    ("ALICE", "must spell the configured principal exactly"),
    ("Alice", "must spell the configured principal exactly"),
    (" alice", "is not a canonical principal name"),
])
def test_a_token_cannot_take_an_api_key_principal_s_name_or_role(sub: str, message: str) -> None:
    """Issue 49 M2: ``sub: ROOT`` or `` root `` used to run as the API-key principal ``root``,
    admin role included; only an ``sso`` principal, spelled exactly, lends a token its roles."""
    with pytest.raises(Unauthorized, match=re.escape(message)):
        principal_for_token(hs_settings(), token({"sub": sub}))
    alice = principal_for_token(hs_settings(), token({"sub": "alice"}))
    assert (alice.name, alice.domains, alice.roles) == ("alice", ("default", "coffee"), ())
    sso_root = hs_settings().model_copy(update={"principals": {
        **hs_settings().principals, "root": hs_settings().principals["root"].model_copy(update={"sso": True})}})
    assert principal_for_token(sso_root, token({"sub": "root"})).is_admin is True
    # a subject that names no configured principal is lowercased for ACL matching, and inherits nothing
    erin = principal_for_token(hs_settings(), token({"sub": "Erin@Example.com"}))
    assert (erin.name, erin.roles, erin.domains) == ("erin@example.com", (), ())


@pytest.mark.parametrize("claims, key, message", [
    ({"exp": int(time.time()) - 3600}, SECRET, "bearer token has expired"),
    ({"aud": "another-api"}, SECRET, "bearer token is for another audience"),
    ({}, "not-the-secret-" + "x" * 60, "bearer token rejected: InvalidSignatureError"),
    ({"exp": None}, SECRET, "bearer token rejected: MissingRequiredClaimError"),
    ({"sub": None}, SECRET, "bearer token rejected: MissingRequiredClaimError"),
    ({"groups": {"hr": True}}, SECRET, "claim 'groups' must be a string or a list of strings"),
])
def test_expired_foreign_forged_or_malformed_tokens_are_refused(claims: dict[str, Any], key: str,
                                                                message: str) -> None:
    full = {"sub": "alice", "aud": "rag-api", "exp": int(time.time()) + 300, **claims}
    raw = jwt.encode({k: v for k, v in full.items() if v is not None}, key, algorithm="HS256")  # None: left out
    with pytest.raises(Unauthorized, match=message):
        principal_for_token(hs_settings(), raw)


def test_unsigned_and_other_algorithm_tokens_are_refused() -> None:
    unsigned = jwt.encode({"sub": "alice", "aud": "rag-api", "exp": int(time.time()) + 60}, "", algorithm="none")
    with pytest.raises(Unauthorized, match="bearer token rejected"):
        principal_for_token(hs_settings(), unsigned)
    hs512 = jwt.encode({"sub": "alice", "aud": "rag-api", "exp": int(time.time()) + 60}, SECRET, algorithm="HS512")
    with pytest.raises(Unauthorized, match="bearer token rejected"):
        principal_for_token(hs_settings(), hs512)


def test_rs256_verifies_with_the_configured_public_key_and_refuses_an_hs256_token(tmp_path: Path) -> None:
    private = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    pem = private.public_key().public_bytes(serialization.Encoding.PEM,
                                            serialization.PublicFormat.SubjectPublicKeyInfo)
    (tmp_path / "issuer.pem").write_bytes(pem)
    settings = AccessSettings.model_validate({"enabled": True, "jwt": {
        "enabled": True, "algorithm": "RS256", "public_key_file": str(tmp_path / "issuer.pem"),
        "audience": "rag-api", "issuer": "https://sso.example"}})
    good = token({"iss": "https://sso.example", "groups": "finance"}, private, "RS256")
    assert principal_for_token(settings, good).groups == ("finance",)
    with pytest.raises(Unauthorized, match="InvalidIssuerError"):
        principal_for_token(settings, token({"iss": "https://evil.example"}, private, "RS256"))
    # algorithm confusion: an HS256 token "signed" with the public key must not pass
    with pytest.raises(Unauthorized):
        principal_for_token(settings, jwt.encode({"sub": "x", "aud": "rag-api", "exp": int(time.time()) + 60,
                                                  "iss": "https://sso.example"}, "x" * 40, algorithm="HS256"))


def test_api_keys_map_to_exactly_one_principal() -> None:
    settings = AccessSettings.model_validate({"enabled": True, "principals": {
        "alice": {"api_key": "k-alice"}, "bob": {"api_key": "k-bob", "groups": ["ops"]}}})
    assert principal_for_key(settings, "k-bob").name == "bob"  # type: ignore[union-attr]
    assert principal_for_key(settings, "k-bo") is None and principal_for_key(settings, "") is None
    with pytest.raises(ValueError, match="two principals share one API key"):
        AccessSettings.model_validate({"principals": {"a": {"api_key": "same"}, "b": {"api_key": "same"}}})
    alice = principal_for_key(settings, "k-alice")
    assert alice is not None and not alice.may_use(None)  # no domains configured: none allowed
    with pytest.raises(Forbidden, match="may not use domain default"):
        alice.check_domain(None)


def test_access_secrets_in_a_config_file_are_refused_and_unmapped_server_keys_conflict(tmp_path: Path) -> None:
    config = tmp_path / "rag.yaml"
    config.write_text((REPO / "config" / "rag.yaml").read_text()
                      + "\naccess:\n  enabled: true\n  principals:\n    alice:\n      api_key: committed\n")
    with pytest.raises(ConfigError, match="access.principals.alice.api_key: secrets come from the environment only"):
        load_settings(config, env={})
    env = {"RAG_ACCESS__ENABLED": "true", "RAG_ACCESS__PRINCIPALS__ALICE__API_KEY": "from-env"}
    settings = load_settings(REPO / "config" / "rag.yaml", env=env)
    assert settings.access.principals["alice"].api_key.get_secret_value() == "from-env"  # type: ignore[union-attr]
    assert "from-env" not in repr(settings)
    with pytest.raises(ConfigError, match="server.api_keys stand for no principal"):
        load_settings(REPO / "config" / "rag.yaml", env={**env, "RAG_SERVER__API_KEYS": "k1"})
    with pytest.raises(ConfigError, match="access.jwt.audience is required"):
        load_settings(REPO / "config" / "rag.yaml", env={"RAG_ACCESS__JWT__ENABLED": "true",
                                                          "RAG_ACCESS__JWT__SECRET": "s"})


def test_acl_entries_normalize_to_labels() -> None:
    assert acl_labels(["bob", "group:hr", "user:alice", "public", "bob"]) == [
        "group:hr", "public", "user:alice", "user:bob"]


# --- over HTTP, on the session corpus (ingested without any ACL) -------------------------------
@pytest.fixture
def token_client(corpus: Corpus, embedder: Any, extractive: Any) -> FlaskClient:
    settings = corpus.settings.model_copy(update={"access": hs_settings()})
    services = build_services(settings, store=corpus.store, embedder=embedder, primary=extractive)
    return create_app(settings, services).test_client()


def test_bearer_token_over_http_and_the_deny_default_for_unlabelled_chunks(token_client: FlaskClient) -> None:
    auth = {"Authorization": f"Bearer {token({'groups': ['hr']})}"}
    search = token_client.get("/search", query_string={"q": "annual leave", "top_k": 10}, headers=auth)
    assert search.status_code == 200
    assert search.get_json()["hits"] == []  # ingested without ACLs: nobody may see them
    chat = token_client.post("/chat", json={"question": "How many days of annual leave do employees get?"},
                             headers=auth)
    body = chat.get_json()
    assert chat.status_code == 200 and body["mode"] == "fallback" and body["retrieved_chunks_metadata"] == []
    assert token_client.get("/search", query_string={"q": "leave"},
                            headers={"Authorization": "Basic abc"}).status_code == 401
    expired = {"Authorization": f"Bearer {token({'exp': int(time.time()) - 600})}"}
    refused = token_client.get("/search", query_string={"q": "leave"}, headers=expired)
    assert refused.status_code == 401 and refused.get_json()["error"]["message"] == "bearer token has expired"
    other = {"Authorization": f"Bearer {token({'rag_domains': ['coffee']})}"}
    assert token_client.get("/search", query_string={"q": "leave"}, headers=other).status_code == 403
    ok = token_client.get("/search", query_string={"q": "espresso"}, headers={**other, "X-RAG-Domain": "coffee"})
    assert ok.status_code == 200 and ok.get_json()["hits"] == []
    spec = token_client.get("/openapi.json").get_json()  # stays open, and names both schemes
    assert set(spec["components"]["securitySchemes"]) == {"ApiKey", "Bearer"}
    assert "403" in spec["paths"]["/search"]["get"]["responses"]


def test_the_documented_example_config_and_manifest_are_valid(tmp_path: Path) -> None:
    """docs/ACCESS_CONTROL.md's example: its YAML loads with keys from the environment, its
    manifest lines parse, and its ACLs give the access the text says."""
    import json
    import re

    import yaml

    from backend.core.types import Visibility
    from backend.ingest.manifest import ManifestLine

    doc = (REPO / "docs" / "ACCESS_CONTROL.md").read_text(encoding="utf-8")
    example = yaml.safe_load(re.search(r"```yaml\n(.*?)```", doc, re.S).group(1))  # type: ignore[union-attr]
    config = yaml.safe_load((REPO / "config" / "rag.yaml").read_text(encoding="utf-8"))
    path = tmp_path / "rag.yaml"
    path.write_text(yaml.safe_dump({**config, **example}), encoding="utf-8")
    settings = load_settings(path, env={"RAG_ACCESS__PRINCIPALS__ALICE__API_KEY": "a",
                                        "RAG_ACCESS__PRINCIPALS__BOB__API_KEY": "b",
                                        "RAG_ACCESS__JWT__SECRET": "unused-with-rs256"})
    assert settings.access.enabled and settings.access.jwt.algorithm == "RS256"
    lines = [ManifestLine.model_validate(json.loads(raw))
             for raw in re.search(r"```jsonl\n(.*?)```", doc, re.S).group(1).splitlines()]  # type: ignore[union-attr]
    acl = {line.doc_id: set(acl_labels(line.acl or [])) for line in lines}
    visible = {name: {d for d, labels in acl.items() if labels & set(Visibility.of(name, p.groups).labels)}
               for name, p in settings.access.principals.items()}
    assert visible["alice"] == {"leave", "vpn"} and visible["bob"] == {"vpn", "expenses", "floor"}
    assert acl["minutes"] == set()
