"""The MCP server with the official client (``mcp``'s ``ClientSession``) over stdio and Streamable
HTTP, on the access-control corpus of tests/eval (real ingest, real model, real store): the tools
and resources listed, search and ask as a principal, a document the principal may not read, a
knowledge base it may not use, and a wrong credential, each refused as an MCP tool error."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterator

import anyio
import pytest

from backend.mcp_server.server import http_app
from backend.runtime import build_runtime, serving_runtime
from tests.eval.lifecycle import LEAVE_Q
from tests.eval.test_access_control import KEYS, VISIBLE, AclKB
from tests.mcp.servers import http_server, http_session, stdio_session, write_config

TOOLS = ["list_knowledge_bases", "search_knowledge_base", "ask", "fetch"]


@pytest.fixture(scope="module")
def acl_kb(tmp_path_factory: pytest.TempPathFactory, embedder: Any) -> AclKB:
    kb = AclKB(tmp_path_factory.mktemp("mcp-acl"), embedder)
    kb.ingest()
    kb.promote()
    return kb


@pytest.fixture(scope="module")
def mcp_url(acl_kb: AclKB, embedder: Any) -> Iterator[str]:
    from backend.core.ports import Stores

    runtime = serving_runtime(build_runtime(acl_kb.settings, stores=Stores.of(acl_kb.store), embedder=embedder))
    with http_server(http_app(runtime)) as url:
        yield url


def payload(result: Any) -> Any:
    assert result.is_error is False, result.content
    return json.loads(result.content[0].text)


def error_text(result: Any) -> str:
    """The tool error's message, after the SDK's own "Error executing tool <name>: "."""
    assert result.is_error is True
    prefix, _, message = str(result.content[0].text).partition(": ")
    assert prefix.startswith("Error executing tool ")
    return message


def test_stdio_runs_every_call_as_the_principal_given_at_start(acl_kb: AclKB, tmp_path: Path) -> None:
    config = write_config(acl_kb.settings, tmp_path / "rag.yaml")

    async def run() -> dict[str, Any]:
        async with stdio_session(config, "--as", "dave") as session:
            tools = await session.list_tools()
            kbs = payload(await session.call_tool("list_knowledge_bases", {}))["knowledge_bases"]
            search = payload(await session.call_tool("search_knowledge_base",
                                                     {"query": "annual leave VPN merger", "top_k": 50}))
            answer = payload(await session.call_tool("ask", {"question": LEAVE_Q}))
            hidden = await session.call_tool("fetch", {"id": "leave"})
            vpn = payload(await session.call_tool("fetch", {"id": "vpn"}))
            other = await session.call_tool("ask", {"question": LEAVE_Q, "knowledge_base": "handbook"})
            resources = await session.list_resources()
            one = await session.read_resource("rag://knowledge-bases/default")
            listed = await session.read_resource("rag://knowledge-bases")
            return {"tools": tools, "kbs": kbs, "search": search, "answer": answer, "hidden": hidden, "vpn": vpn,
                    "other": other, "resources": resources, "listed": listed, "one": one}

    got = anyio.run(run)
    assert [t.name for t in got["tools"].tools] == TOOLS
    assert all(t.annotations.read_only_hint for t in got["tools"].tools)
    assert [kb["name"] for kb in got["kbs"]] == ["default"] and got["kbs"][0]["served_version"] == "KB_LC_V1"
    assert {p["doc_id"] for p in got["search"]["passages"]} == VISIBLE["dave"]
    assert got["answer"]["mode"] != "rag" and "25 days" not in json.dumps(got["answer"])
    assert {c["doc_id"] for c in got["answer"]["citations"]} <= VISIBLE["dave"]
    assert error_text(got["hidden"]) == ("passage_not_found (404): id: no passage or document 'leave' in knowledge "
                                         "base 'default' that you may read")
    assert got["vpn"]["kind"] == "document" and [p["id"] for p in got["vpn"]["passages"]] == ["vpn::0"]
    assert error_text(got["other"]) == ("knowledge_base_not_found (404): knowledge_base: no knowledge base 'handbook' "
                                        "you may use; known: default")
    assert [str(r.uri) for r in got["resources"].resources] == ["rag://knowledge-bases"]
    assert [kb["name"] for kb in json.loads(got["listed"].contents[0].text)["knowledge_bases"]] == ["default"]
    assert json.loads(got["one"].contents[0].text)["served_version"] == "KB_LC_V1"
    # every tool call is in the audit trail (the store's), as dave, from stdio; no question text
    trail = [e for e in acl_kb.store.audit_events() if e.surface == "mcp-stdio"][::-1]
    assert [(e.action, e.outcome, e.principal, e.knowledge_base, e.version) for e in trail] == [
        ("mcp.list_knowledge_bases", "ok", "dave", None, None),
        ("mcp.search_knowledge_base", "ok", "dave", "default", "KB_LC_V1"),
        ("mcp.ask", "ok", "dave", "default", "KB_LC_V1"),
        ("mcp.fetch", "denied", "dave", "default", None),
        ("mcp.fetch", "ok", "dave", "default", "KB_LC_V1"),
        ("mcp.ask", "denied", "dave", "handbook", None)]
    assert trail[1].detail == {"top_k": 50} and trail[3].detail == {"id": "leave", "code": "passage_not_found",
                                                                      "status": 404}
    assert len({e.request_id for e in trail}) == 6


def test_stdio_refuses_to_start_without_a_principal_when_access_control_is_on(acl_kb: AclKB, tmp_path: Path) -> None:
    import subprocess
    import sys

    from tests.conftest import REPO

    config = write_config(acl_kb.settings, tmp_path / "rag.yaml")
    done = subprocess.run([sys.executable, "-m", "backend.cli.main", "--config", str(config), "mcp", "serve"],
                          cwd=REPO, capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines()[-1] == (
        "error: access.enabled is true: rag mcp serve over stdio needs --as PRINCIPAL, one of "
        "['alice', 'bob', 'dave']")


def test_http_authenticates_each_call_with_the_credential_of_chat(mcp_url: str, acl_kb: AclKB) -> None:
    async def run(headers: dict[str, str]) -> dict[str, Any]:
        async with http_session(mcp_url, headers) as session:
            tools = await session.list_tools()
            search = await session.call_tool("search_knowledge_base", {"query": "annual leave", "top_k": 50})
            answer = await session.call_tool("ask", {"question": LEAVE_Q})
            fetched = await session.call_tool("fetch", {"id": "leave"})
            return {"tools": tools, "search": search, "answer": answer, "fetch": fetched}

    alice = anyio.run(run, {"X-API-Key": KEYS["alice"]})
    assert [t.name for t in alice["tools"].tools] == TOOLS
    assert {p["doc_id"] for p in payload(alice["search"])["passages"]} == VISIBLE["alice"]
    answer = payload(alice["answer"])
    assert answer["mode"] == "rag" and "25 days" in answer["answer"]
    assert answer["citations"][0]["doc_id"] == "leave" and answer["citations"][0]["marker"] == "[1]"
    assert answer["decision_explain"]["version"] == "KB_LC_V1"
    assert payload(alice["fetch"])["kind"] == "document"

    bob = anyio.run(run, {"Authorization": f"Bearer {KEYS['bob']}"})  # an API key as a bearer token
    assert {p["doc_id"] for p in payload(bob["search"])["passages"]} == VISIBLE["bob"]
    assert error_text(bob["fetch"]).startswith("passage_not_found (404)")

    wrong = anyio.run(run, {"X-API-Key": "key-nobody"})
    assert error_text(wrong["search"]) == "unauthorized (401): X-API-Key header is wrong; it names no principal"
    assert error_text(wrong["answer"]) == error_text(wrong["search"])
    trail = [(e.action, e.outcome, e.principal) for e in acl_kb.store.audit_events() if e.surface == "mcp-http"][::-1]
    assert trail == [("mcp.search_knowledge_base", "ok", "alice"), ("mcp.ask", "ok", "alice"), ("mcp.fetch", "ok", "alice"),
                     ("mcp.search_knowledge_base", "ok", "bob"), ("mcp.ask", "ok", "bob"), ("mcp.fetch", "denied", "bob"),
                     ("mcp.search_knowledge_base", "denied", None), ("mcp.ask", "denied", None),
                     ("mcp.fetch", "denied", None)]


def test_the_mcp_inspector_cli_lists_the_tools_and_calls_one(acl_kb: AclKB, tmp_path: Path) -> None:
    """The MCP Inspector's CLI (npm ``@modelcontextprotocol/inspector``), when npx has it cached:
    nothing is downloaded (``--offline``); without node or the cached package the test skips."""
    import shutil
    import subprocess
    import sys

    from tests.conftest import REPO

    if shutil.which("npx") is None:
        pytest.skip("npx is not installed")
    config = write_config(acl_kb.settings, tmp_path / "rag.yaml")
    inspector = ["npx", "--offline", "-y", "@modelcontextprotocol/inspector", "--cli", "-e", "HF_HUB_OFFLINE=1",
                 "-e", "RAG_LOGGING__LEVEL=WARNING"]
    server = ["--", sys.executable, "-m", "backend.cli.main", "--config", str(config), "mcp", "serve", "--as", "dave"]
    listed = subprocess.run([*inspector, "--method", "tools/list", *server], cwd=REPO, capture_output=True, text=True,
                            timeout=300)
    if listed.returncode != 0 and "ENOTCACHED" in listed.stderr + listed.stdout:
        pytest.skip("the MCP Inspector is not in the npm cache and this machine is offline")
    assert listed.returncode == 0, listed.stderr[-2000:]
    assert [t["name"] for t in json.loads(listed.stdout)["tools"]] == TOOLS
    called = subprocess.run([*inspector, "--tool-arg", "id=leave", "--method", "tools/call", "--tool-name",
                             "fetch", *server], cwd=REPO, capture_output=True, text=True, timeout=300)
    assert called.returncode == 0 or called.stdout, called.stderr[-2000:]
    result = json.loads(called.stdout)
    assert result["isError"] is True and "passage_not_found (404)" in result["content"][0]["text"]


def test_a_tool_call_past_the_principal_s_quota_is_a_tool_error(acl_kb: AclKB, embedder: Any) -> None:
    from backend.core.ports import Stores

    settings = acl_kb.settings.model_copy(update={"quotas": type(acl_kb.settings.quotas).model_validate(
        {"enabled": True, "principals": {"bob": {"per_day": 2}}})})  # a day: no window turns mid-test
    runtime = serving_runtime(build_runtime(settings, stores=Stores.of(acl_kb.store), embedder=embedder))

    async def run(url: str) -> list[Any]:
        async with http_session(url, {"X-API-Key": KEYS["bob"]}) as session:
            return [await session.call_tool("list_knowledge_bases", {}) for _ in range(3)]

    with http_server(http_app(runtime)) as url:
        calls = anyio.run(run, url)
    assert [c.is_error for c in calls] == [False, False, True]
    assert error_text(calls[2]).startswith("quota_exceeded (429): quota exceeded: principal 'bob' made 3 requests "
                                           "this day; its budget is 2 per day (quotas.principals.bob.per_day)")
    assert acl_kb.store.audit_events(1)[0].detail["code"] == "quota_exceeded"


def test_http_takes_an_sso_token_as_chat_does(acl_kb: AclKB, embedder: Any) -> None:
    """``Authorization: Bearer <JWT>`` over MCP: the token's subject and groups, as /chat reads them."""
    import jwt

    from backend.core.ports import Stores
    from tests.eval.test_access_control import PRINCIPALS

    secret = "mcp-jwt-secret-" + "0123456789abcdef" * 4
    principals = {name: {**p, "api_key": KEYS[name]} for name, p in PRINCIPALS.items()}
    access = type(acl_kb.settings.access).model_validate({"enabled": True, "principals": principals, "jwt": {
        "enabled": True, "algorithm": "HS256", "secret": secret, "audience": "rag-api"}})
    runtime = serving_runtime(build_runtime(acl_kb.settings.model_copy(update={"access": access}),
                                            stores=Stores.of(acl_kb.store), embedder=embedder))
    token = jwt.encode({"sub": "erin", "groups": ["facilities"], "rag_domains": ["default"], "aud": "rag-api",
                        "exp": 4102444800}, secret, algorithm="HS256")

    async def run(url: str, headers: dict[str, str]) -> Any:
        async with http_session(url, headers) as session:
            return await session.call_tool("search_knowledge_base", {"query": "evacuation route VPN", "top_k": 50})

    with http_server(http_app(runtime)) as url:
        erin = anyio.run(run, url, {"Authorization": f"Bearer {token}"})
        expired = anyio.run(run, url, {"Authorization": "Bearer " + jwt.encode(
            {"sub": "erin", "aud": "rag-api", "exp": 1}, secret, algorithm="HS256")})
    assert {p["doc_id"] for p in payload(erin)["passages"]} == {"vpn", "floor"}  # public + group:facilities
    assert error_text(expired) == "unauthorized (401): bearer token has expired"
    assert acl_kb.store.audit_events(2)[1].principal == "erin"


def test_rag_mcp_serve_over_http_as_a_process(acl_kb: AclKB, tmp_path: Path) -> None:
    """The command itself (uvicorn, the Streamable HTTP app, keys from the environment), with the client."""
    import os
    import socket
    import subprocess
    import sys
    import time

    from tests.conftest import REPO

    config = write_config(acl_kb.settings, tmp_path / "rag.yaml")
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAG_")}
    env.update({"HF_HUB_OFFLINE": "1", "RAG_LOGGING__LEVEL": "WARNING",
                **{f"RAG_ACCESS__PRINCIPALS__{name.upper()}__API_KEY": key for name, key in KEYS.items()}})
    server = subprocess.Popen([sys.executable, "-m", "backend.cli.main", "--config", str(config), "mcp", "serve",
                               "--transport", "http", "--port", str(port)], cwd=REPO, env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", port)) == 0:
                    break
            assert server.poll() is None, server.stderr.read() if server.stderr else ""
            time.sleep(0.2)

        async def run() -> Any:
            async with http_session(f"http://127.0.0.1:{port}/mcp", {"X-API-Key": KEYS["alice"]}) as session:
                return await session.call_tool("ask", {"question": LEAVE_Q})

        answer = payload(anyio.run(run))
    finally:
        server.terminate()
        server.wait(timeout=30)
    assert answer["mode"] == "rag" and "25 days" in answer["answer"]
