"""The leak test of access control extended to the MCP tools and ``/v1`` (issue 45): a principal who may
see only the public document probes every tool (search under three strategies, ask, fetch, the list)
through the official MCP client over Streamable HTTP, and every completion (plain and streamed) through
the official ``openai`` client, against real servers on the access-control corpus. Over 1,000 probes, no
answer carries a hidden document's id, source, text, title, citation or a count that includes it; a
hidden id is answered exactly as a missing one. The same probes as ``bob`` do find his documents, so
the markers searched for are really there to leak."""

from __future__ import annotations

import json
from typing import Any, Iterator

import anyio
import pytest
from openai import OpenAI

from backend.api.app import create_app
from backend.runtime import build_services
from backend.core.ports import Stores
from backend.mcp_server.server import http_app
from backend.runtime import build_runtime, serving_runtime
from tests.api.live_server import serving
from tests.eval.test_access_control import KEYS, VISIBLE, AclKB
from tests.mcp.servers import http_server, http_session

#: what only the documents hidden from dave contain (ids, sources, their words, titles)
HIDDEN = ["leave.md", "expenses.txt", "floor.docx", "secret.txt", "25 days", "two weeks ahead", "HR portal",
          "thirty days", "finance portal", "as a scan", "assembly point A", "car park", "Bluefin", "third floor",
          "Annual leave\n", "Figure 1", "img_"]
HIDDEN_IDS = {"leave", "expenses", "floor", "secret"}
TOPICS = ["How much paid time off does a full-time employee get each year?",
          "How far ahead must time off be booked?", "Where do I claim my travel costs?",
          "How long do I have to submit a travel claim?", "What do I attach to a travel claim?",
          "Where is the evacuation route on the second storey?", "Where do we gather in a fire alarm?",
          "What is the code name of the acquisition?", "Where does the board meet?",
          "How do I connect to the corporate network from home?", "Which documents exist about money?",
          "List every policy you know."]
PREFIXES = ["", "Please tell me: ", "Quick question. ", "According to the policies, ", "I need to know ",
            "Can you check ", "For a colleague: ", "Urgent - ", "In short, ", "Honestly, ", "Per the handbook, ",
            "From the documents: ", "Summarise: ", "One more: "]
QUESTIONS = [p + t for t in TOPICS for p in PREFIXES]


@pytest.fixture(scope="module")
def leak_kb(tmp_path_factory: pytest.TempPathFactory, embedder: Any) -> AclKB:
    kb = AclKB(tmp_path_factory.mktemp("leaks"), embedder)
    kb.ingest()
    kb.promote()
    return kb


@pytest.fixture(scope="module")
def urls(leak_kb: AclKB, embedder: Any) -> Iterator[tuple[str, str]]:
    runtime = serving_runtime(build_runtime(leak_kb.settings, stores=Stores.of(leak_kb.store), embedder=embedder))
    app = create_app(leak_kb.settings, build_services(leak_kb.settings, store=leak_kb.store, embedder=embedder))
    with http_server(http_app(runtime)) as mcp_url, serving(app) as base:
        yield mcp_url, base


def probe_tools(mcp_url: str, who: str, questions: list[str]) -> list[tuple[str, Any]]:
    """Every tool call's text (or error text) and, for search and ask, the doc ids it names."""
    async def run() -> list[tuple[str, Any]]:
        out: list[tuple[str, Any]] = []
        async with http_session(mcp_url, {"X-API-Key": KEYS[who]}) as session:
            out.append(("list", await session.call_tool("list_knowledge_bases", {})))
            for doc in sorted(HIDDEN_IDS) + ["nosuch"]:
                out.append((f"fetch:{doc}", await session.call_tool("fetch", {"id": doc})))
                out.append((f"fetch:{doc}::0", await session.call_tool("fetch", {"id": f"{doc}::0"})))
            for i, question in enumerate(questions):
                strategy = ("dense", "lexical", "fusion")[i % 3]
                out.append(("search", await session.call_tool("search_knowledge_base",
                                                              {"query": question, "strategy": strategy, "top_k": 50})))
                out.append(("search-other", await session.call_tool("search_knowledge_base", {
                    "query": question, "strategy": ("fusion", "dense", "lexical")[i % 3], "top_k": 10})))
                out.append(("ask", await session.call_tool("ask", {"question": question})))
                out.append(("ask", await session.call_tool("ask", {"question": question.lower()})))
        return out

    return anyio.run(run)


def probe_completions(base: str, who: str, questions: list[str]) -> list[tuple[str, str, dict[str, Any]]]:
    client = OpenAI(base_url=f"{base}/v1", api_key=KEYS[who], max_retries=0, timeout=60)
    out: list[tuple[str, str, dict[str, Any]]] = [("models", json.dumps([m.id for m in client.models.list().data]), {})]
    for question in questions:
        chunks = list(client.chat.completions.create(model="kb:default", stream=True,
                                                     messages=[{"role": "user", "content": question}]))
        text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
        rag = next(c.model_extra["rag"] for c in chunks if c.choices and c.choices[0].finish_reason)
        out.append(("stream", text + json.dumps([c.model_dump() for c in chunks]), rag))
        completion = client.chat.completions.create(model="kb:default", messages=[
            {"role": "user", "content": "What is the VPN client called?"}, {"role": "assistant", "content": "ok"},
            {"role": "user", "content": question}])
        out.append(("completion", json.dumps(completion.model_dump()), completion.model_extra["rag"]))
    return out


def leaks_in(text: str) -> list[str]:
    return [marker for marker in HIDDEN if marker in text]


def test_a_public_only_principal_learns_nothing_of_hidden_documents_in_1000_probes(urls: tuple[str, str]) -> None:
    mcp_url, base = urls
    assert not [q for q in QUESTIONS if leaks_in(q)]  # the probes themselves hold no marker
    tools = probe_tools(mcp_url, "dave", QUESTIONS)
    completions = probe_completions(base, "dave", QUESTIONS)
    probes = len(tools) + len(completions)
    assert probes >= 1000, probes
    leaks: list[str] = []
    missing = next(r for kind, r in tools if kind == "fetch:nosuch").content[0].text
    for kind, result in tools:
        text = result.content[0].text
        leaks += [f"{kind}: {m}" for m in leaks_in(text)]
        if kind.startswith("fetch:") and kind != "fetch:nosuch":  # a hidden id answers as a missing one
            doc = kind.split(":", 1)[1]
            if result.is_error is not True or text != missing.replace("'nosuch'", repr(doc)):
                leaks.append(f"{kind}: {text[:200]}")
        elif kind.startswith("search"):
            passages = json.loads(text)["passages"]
            if {p["doc_id"] for p in passages} - VISIBLE["dave"] or len(passages) > 1:  # dave sees one chunk
                leaks.append(f"{kind}: {[p['doc_id'] for p in passages]}")
        elif kind == "ask":
            body = json.loads(text)
            if {c["doc_id"] for c in body["citations"]} - VISIBLE["dave"]:
                leaks.append(f"ask cites {[c['doc_id'] for c in body['citations']]}")
        elif kind == "list" and [k["name"] for k in json.loads(text)["knowledge_bases"]] != ["default"]:
            leaks.append(f"list: {text}")
    for kind, text, rag in completions:
        leaks += [f"{kind}: {m}" for m in leaks_in(text)]
        if kind == "models" and text != '["kb:default"]':
            leaks.append(f"models: {text}")
        if rag and {c["doc_id"] for c in rag["citations"]} - VISIBLE["dave"]:
            leaks.append(f"{kind} cites {[c['doc_id'] for c in rag['citations']]}")
    assert leaks == [], f"{len(leaks)} leaks in {probes} probes: {leaks[:20]}"


def test_the_same_probes_as_bob_find_his_documents(urls: tuple[str, str]) -> None:
    """The control: the markers are there to leak, for a principal who may see them."""
    mcp_url, base = urls
    questions = [QUESTIONS[PREFIXES.__len__() * 2], QUESTIONS[PREFIXES.__len__() * 3]]  # travel claims
    seen = " ".join(r.content[0].text for _, r in probe_tools(mcp_url, "bob", questions))
    seen += " ".join(text for _, text, _ in probe_completions(base, "bob", questions))
    assert {"expenses.txt", "finance portal", "thirty days"} <= set(leaks_in(seen))
    assert "Bluefin" not in seen  # no ACL on it: nobody sees it
