"""Citations end to end on real files ingested by the real pipeline into the embedded store
(``tests/api/citation_corpus.py``): only the passages the answer cites are sources, numbered
in the order the answer cites them; each carries the section and page of the sentence it
quoted; ``source`` is never a server path; ``/chat/stream``'s ``done`` carries the final
citations; feedback export expects only the cited documents."""

from __future__ import annotations

import json
import re
from typing import Any, Iterator

import pytest
from flask.testing import FlaskClient

from backend.api.app import create_app
from backend.runtime import build_services
from backend.core.feedback_export import export_feedback
from backend.core.types import ChatRequest
from tests.api.citation_corpus import (
    LEGACY_QUESTION,
    PDF_QUESTION,
    ROW_QUESTION,
    CitationCorpus,
    build,
)
from tests.conftest import make_settings

#: one sentence from the PDF's page 3 and one table row of the guide: two passages, two markers
MIXED = "How often is the generator tested and what does a blinking red LED mean?"
#: three passages reach the context, two are quoted
TWO_PARTS = "Within how many days are expense claims submitted, and how often is the diesel generator tested?"
ROW_SECTION = "NWA-C200 Appliance Guide > Blinking red LED"
_MARKER = re.compile(r"\[\d+\]")


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory, embedder: Any) -> Iterator[CitationCorpus]:
    built = build(tmp_path_factory.mktemp("citations"), embedder)
    yield built
    built.store.close()


@pytest.fixture
def client(corpus: CitationCorpus, embedder: Any, extractive: Any) -> FlaskClient:
    services = build_services(corpus.settings, store=corpus.store, embedder=embedder, primary=extractive)
    return create_app(corpus.settings, services).test_client()


def chat(client: FlaskClient, question: str) -> dict[str, Any]:
    resp = client.post("/chat", json={"question": question})
    assert resp.status_code == 200, resp.get_json()
    return resp.get_json()


def events(resp: Any) -> list[tuple[str, dict[str, Any]]]:
    out = []
    for block in resp.get_data(as_text=True).split("\n\n"):
        if block.strip():
            lines = dict(line.split(": ", 1) for line in block.splitlines())
            out.append((lines["event"], json.loads(lines["data"])))
    return out


def distinct_markers(text: str) -> list[str]:
    return list(dict.fromkeys(_MARKER.findall(text)))


def text_citations(body: dict[str, Any]) -> list[dict[str, Any]]:
    return [c for c in body["citations"] if c["marker"] is not None]


@pytest.mark.parametrize("question", [MIXED, TWO_PARTS, ROW_QUESTION, PDF_QUESTION, LEGACY_QUESTION])
def test_sources_are_the_cited_passages_numbered_in_answer_order(client: FlaskClient, question: str) -> None:
    body = chat(client, question)
    assert body["mode"] in ("rag", "hybrid")
    markers = distinct_markers(body["answer"])
    cited = text_citations(body)
    # as many sources as distinct markers, numbered [1]..[m] in the order the answer first cites them
    assert markers == [f"[{n}]" for n in range(1, len(markers) + 1)] and markers
    assert [c["marker"] for c in cited] == markers
    assert {c["chunk_id"] for c in cited} <= set(body["used_chunks"])
    # the answerer's own record numbers passages by context position: the same passages, in the same order
    sentences = body["decision_explain"]["answer_explain"]["sentences"]
    assert [c["chunk_id"] for c in cited] == list(dict.fromkeys(s["chunk_id"] for s in sentences))
    for s in sentences:
        assert body["used_chunks"][int(s["marker"].strip("[]")) - 1] == s["chunk_id"]


def test_a_passage_in_the_context_but_not_quoted_is_no_source(client: FlaskClient) -> None:
    body = chat(client, TWO_PARTS)
    cited = {c["chunk_id"] for c in text_citations(body)}
    assert len(body["used_chunks"]) > len(cited)  # e.g. 3 passages in the context, 2 quoted
    assert len(text_citations(body)) == len(distinct_markers(body["answer"]))


def test_section_and_page_are_those_of_the_cited_sentence(client: FlaskClient) -> None:
    body = chat(client, MIXED)
    by_doc = {c["doc_id"]: c for c in text_citations(body)}
    meta = {m["chunk_id"]: m["metadata"] for m in body["retrieved_chunks_metadata"]}
    row, pdf = by_doc["appliance-guide"], by_doc["facility-handbook"]
    # the table row stands under "Blinking red LED"; the chunk starts under the title, before "Firmware"
    assert row["section"] == ROW_SECTION and row["page"] is None
    assert meta[row["chunk_id"]]["heading_path"] == ["NWA-C200 Appliance Guide"]
    # the PDF sentence is on page 3; its chunk starts on page 1
    assert pdf["page"] == "3" and meta[pdf["chunk_id"]]["page"] == 1
    assert "Status LED: Blinking red" in body["answer"] and "generator is tested" in body["answer"]


def test_no_source_is_a_server_path(client: FlaskClient, corpus: CitationCorpus) -> None:
    shown: dict[str, str] = {}
    for question in (MIXED, TWO_PARTS, LEGACY_QUESTION):
        body = chat(client, question)
        for c in [*body["citations"], *body["retrieved_chunks_metadata"]]:
            shown[c["doc_id"]] = c["source"]
        hits = client.get("/search", query_string={"q": question}).get_json()["hits"]
        shown.update({h["doc_id"]: h["source"] for h in hits})
    # ingested from outside the repository: relative to the manifest's folder
    assert shown["appliance-guide"] == "docs/appliance-guide.md"
    assert shown["facility-handbook"] == "docs/facility-handbook.pdf"
    assert shown["expenses"] == "docs/expenses.txt"
    # stored by an older ingest with an absolute path: its file name only
    assert shown["parking-permits"] == "parking-permits.md"
    assert not any(s.startswith("/") or str(corpus.kb) in s for s in shown.values())


def test_the_stream_sends_the_same_citations_in_meta_and_done(client: FlaskClient) -> None:
    got = events(client.post("/chat/stream", json={"question": MIXED}))
    meta, done = got[0][1], got[-1][1]
    assert (got[0][0], got[-1][0]) == ("meta", "done")
    # the extractive answer exists before meta is sent: both carry the final, renumbered citations
    assert meta["citations"] == done["citations"] and meta["sources"] == done["sources"]
    assert [s["marker"] for s in done["sources"] if s["marker"]] == distinct_markers(done["answer"])
    sources = {s["doc_id"]: s for s in done["sources"]}
    assert sources["appliance-guide"]["section"] == ROW_SECTION
    assert sources["facility-handbook"]["page"] == 3
    assert sources["appliance-guide"]["source"] == "docs/appliance-guide.md"


class ScriptedLLM:
    """A token-streaming LLM double: cites the last passage of its context first, then the first
    (again the last), then a passage that does not exist."""

    name = "scripted"

    def __init__(self) -> None:
        self.requests: list[ChatRequest] = []

    @staticmethod
    def text(n: int) -> str:
        return f"Generators are tested monthly [{n}]. Permits [1] are renewed in January [{n}]. See also [{n + 5}]."

    def generate(self, request: ChatRequest) -> str:
        self.requests.append(request)
        return self.text(len(request.context))

    def stream(self, request: ChatRequest) -> Iterator[str]:
        self.requests.append(request)
        text = self.text(len(request.context))
        yield from (text[i:i + 7] for i in range(0, len(text), 7))


@pytest.fixture
def llm_client(corpus: CitationCorpus, embedder: Any) -> tuple[FlaskClient, ScriptedLLM]:
    # every chunk reaches the context, so the answer leaves some of them uncited
    settings = make_settings(corpus.settings.resolve_path(corpus.settings.store.sqlite.path).parent, retrieval={
        "decision_score": "similarity", "threshold_low": 0.01, "threshold_high": 0.02,
        "hybrid": {"min_similarity_for_hybrid": 0.0, "min_chunks_for_hybrid": 1, "min_total_context_chars": 0}})
    llm = ScriptedLLM()
    services = build_services(settings, store=corpus.store, embedder=embedder, primary=llm)
    return create_app(settings, services).test_client(), llm


def test_an_llm_answer_is_renumbered_and_done_carries_the_final_citations(
        llm_client: tuple[FlaskClient, ScriptedLLM]) -> None:
    client, llm = llm_client
    got = events(client.post("/chat/stream", json={"question": PDF_QUESTION}))
    context = [c.chunk_id for c in llm.requests[-1].context]
    n = len(context)
    assert n >= 3
    meta, done = got[0][1], got[-1][1]
    deltas = "".join(d["text"] for name, d in got if name == "delta")
    assert deltas == ScriptedLLM.text(n)  # the tokens as the LLM wrote them
    # meta went out before the text existed: every used passage, in context order
    assert [c["chunk_id"] for c in meta["citations"] if c["marker"]] == context
    # done: the text renumbered, the unknown marker dropped, only the two cited passages
    assert done["answer"] == "Generators are tested monthly [1]. Permits [2] are renewed in January [1]. See also."
    assert [(c["marker"], c["chunk_id"]) for c in done["citations"] if c["marker"]] == \
        [("[1]", context[n - 1]), ("[2]", context[0])]
    assert [(s["marker"], s["chunk_id"]) for s in done["sources"] if s["marker"]] == \
        [("[1]", context[n - 1]), ("[2]", context[0])]
    # /chat answers the same way
    body = client.post("/chat", json={"question": PDF_QUESTION}).get_json()
    assert body["answer"] == done["answer"] and body["used_chunks"] == context
    assert [c["chunk_id"] for c in text_citations(body)] == [context[n - 1], context[0]]


def test_feedback_export_expects_only_the_cited_documents(llm_client: tuple[FlaskClient, ScriptedLLM],
                                                          corpus: CitationCorpus) -> None:
    client, llm = llm_client
    done = events(client.post("/chat/stream", json={"question": LEGACY_QUESTION}))[-1][1]
    request = llm.requests[-1]
    docs = [c.doc_id for c in request.context]
    assert len(set(docs)) >= 3
    resp = client.post("/feedback", json={"interaction_id": done["interaction_id"], "rating": "up"})
    assert resp.status_code == 201, resp.get_json()
    export = export_feedback(corpus.store.feedback())
    mine = [c for c in export.candidates if c["id"] == f"feedback-{resp.get_json()['feedback_id']}"]
    assert mine, export
    # the answer cites the last passage, then the first: those documents only, not every one in the context
    expected = mine[0]["expected_sources"]  # a golden query's sources: doc_id -> relevance grade
    assert set(expected) == {docs[-1], docs[0]} and set(docs) - set(expected)
