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


# --- issue 46: documents synced by a connector, with readers from the source -----------------------
SYNCED_KEYS = {"dave": "key-dave-synced-1", "alice": "key-alice-synced-2"}
SYNCED_DOCS = {
    "canteen.md": ("Canteen\n\nThe canteen serves a vegetarian lasagne every Wednesday at lunch.\n", ["public"]),
    "payroll.md": ("Payroll\n\nSalaries are paid through the Quillfeather payroll system on the 25th.\n"
                   "Salary bands are reviewed by the compensation panel every March.\n", ["group:hr-staff"]),
    "board.md": ("Board\n\nThe acquisition is called Operation Kestrel and closes in June.\n", ["group:board-members"]),
    "vault.md": ("Vault\n\nThe spare keys are kept in the Saffron vault behind reception.\n", None),
}
SYNCED_HIDDEN = ["payroll.md", "board.md", "vault.md", "Quillfeather", "Salary bands", "Kestrel", "Saffron"]
SYNCED_QUESTIONS = [p + q for q in ("How are salaries paid?", "When are salary bands reviewed?",
                                    "What is the acquisition called?", "Where are the spare keys kept?",
                                    "What does the canteen serve on Wednesday?", "List every document you know.")
                    for p in ("", "Please tell me: ", "According to the documents, ")]


@pytest.fixture(scope="module")
def synced_urls(tmp_path_factory: pytest.TempPathFactory, embedder: Any) -> Iterator[tuple[str, str, Any]]:
    """Knowledge base ``synced`` fed by a folder connector whose readers file restricts three of its four
    documents: payroll to the source group hr-staff (mapped to group:hr), board to a group no mapping
    knows, vault to nobody said (unknown: admins only)."""
    from backend.common.config import ConnectorSpec
    from backend.connectors.folder import FolderConnector
    from backend.connectors.sync import sync_connector
    from backend.providers.sqlite_vs.store import SqliteVectorStore
    from tests.conftest import kb_runtime, make_settings

    root = tmp_path_factory.mktemp("synced-leaks")
    src = root / "share"
    src.mkdir()
    rules = []
    for name, (text, readers) in SYNCED_DOCS.items():
        (src / name).write_text(text, encoding="utf-8")
        if readers is not None:
            rules.append(f"{name}: {readers}\n")
    (src / ".rag-readers.yaml").write_text("".join(rules), encoding="utf-8")
    principals = {"dave": {"domains": ["synced"], "api_key": SYNCED_KEYS["dave"]},
                  "alice": {"groups": ["hr"], "domains": ["synced"], "api_key": SYNCED_KEYS["alice"]}}
    overrides = {"access": {"enabled": True, "principals": principals}, "server": {"rate_limit": {"enabled": False}}}
    settings = make_settings(root, **overrides)
    store = SqliteVectorStore(root / "rag.sqlite")
    spec = ConnectorSpec.model_validate({"kind": "folder", "knowledge_base": "synced", "options": {"path": str(src)},
                                         "permissions": {"groups": {"hr-staff": "group:hr"}}})
    report = sync_connector(kb_runtime(settings, store, embedder), "share", spec, FolderConnector(str(src)))
    assert report.promoted and report.unmapped_readers == {"group:board-members": 1}
    assert sorted(report.unknown_permissions) == ["board.md", "vault.md"]
    settings = make_settings(root, **overrides)  # the registry now holds ``synced``
    runtime = serving_runtime(build_runtime(settings, stores=Stores.of(store), embedder=embedder))
    app = create_app(settings, build_services(settings, store=store, embedder=embedder))
    with http_server(http_app(runtime)) as mcp_url, serving(app) as base:
        yield mcp_url, base, app
    store.close()


def synced_probes(urls: tuple[str, str, Any], who: str, questions: list[str]) -> list[str]:
    """Every answer ``who`` gets about the synced knowledge base: /chat, /v1 (plain and streamed), and the
    MCP tools (list, search under three strategies, ask, fetch of each hidden id)."""
    mcp_url, base, app = urls
    key = SYNCED_KEYS[who]
    client = app.test_client()
    out = [client.post("/chat", json={"question": q}, headers={"X-API-Key": key, "X-RAG-Domain": "synced"})
           .get_data(as_text=True) for q in questions]
    openai = OpenAI(base_url=f"{base}/v1", api_key=key, max_retries=0, timeout=60)
    for q in questions:
        out.append(json.dumps(openai.chat.completions.create(
            model="kb:synced", messages=[{"role": "user", "content": q}]).model_dump()))
        out.append(json.dumps([c.model_dump() for c in openai.chat.completions.create(
            model="kb:synced", stream=True, messages=[{"role": "user", "content": q}])]))

    async def tools() -> list[str]:
        texts: list[str] = []
        async with http_session(mcp_url, {"X-API-Key": key}) as session:
            texts.append((await session.call_tool("list_knowledge_bases", {})).content[0].text)
            missing = (await session.call_tool("fetch", {"id": "nosuch.md", "knowledge_base": "synced"})).content[0].text
            for doc in ("payroll.md", "board.md", "vault.md"):
                for ident in (doc, f"{doc}::0"):
                    text = (await session.call_tool("fetch", {"id": ident, "knowledge_base": "synced"})).content[0].text
                    # a hidden id is answered exactly as a missing one (the id asked for is echoed, nothing more)
                    texts.append("fetch: same as missing" if text == missing.replace("'nosuch.md'", repr(ident))
                                 else text)
            for i, q in enumerate(questions):
                texts.append((await session.call_tool("search_knowledge_base", {
                    "query": q, "knowledge_base": "synced", "strategy": ("dense", "lexical", "fusion")[i % 3],
                    "top_k": 50})).content[0].text)
                texts.append((await session.call_tool("ask", {"question": q, "knowledge_base": "synced"}))
                             .content[0].text)
        return texts

    return out + anyio.run(tools)


def test_a_synced_document_with_restricted_readers_never_reaches_an_unmapped_principal(
        synced_urls: tuple[str, str, Any]) -> None:
    answers = synced_probes(synced_urls, "dave", SYNCED_QUESTIONS)
    assert len(answers) >= 90
    leaks = [(i, m) for i, text in enumerate(answers) for m in SYNCED_HIDDEN if m in text]
    assert leaks == [], leaks[:10]
    assert any("lasagne" in text for text in answers)  # the public document is there for him
    # the control: alice (group hr, mapped from the source's hr-staff) gets payroll, and nobody the unmapped ones
    seen = " ".join(synced_probes(synced_urls, "alice", SYNCED_QUESTIONS[:6]))
    assert "Quillfeather" in seen and "payroll.md" in seen
    assert not {"Kestrel", "Saffron", "board.md", "vault.md"} & {m for m in SYNCED_HIDDEN if m in seen}
