"""What the front doors other than ``/chat`` show of an answer (pure).

``/v1/chat/completions`` (OpenAI clients) and the MCP server's ``ask`` tool give a model or a chat
front end the answer, its mode, its citations and *why*, in a few fields instead of the full
``decision_explain`` of ``/chat``: a host model reads them, and every extra key costs it context.
Both call these functions, so the two surfaces say the same thing about one answer.
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping

#: the keys of ``decision_explain`` a short explanation keeps (the rest: ``/chat``)
SHORT_EXPLAIN_KEYS = ("mode", "reasons", "max_similarity", "effective_query", "condensed_by", "retrieval_target",
                      "version", "domain", "strategy", "used_llm", "answered_by")


def short_explain(explain: Mapping[str, Any]) -> dict[str, Any]:
    """``decision_explain`` cut to what a reader needs to trust or doubt the answer: the mode and
    its reasons, the best similarity, the question actually searched, and the version answered from."""
    return {key: explain.get(key) for key in SHORT_EXPLAIN_KEYS}


def citation_row(citation: Mapping[str, Any], image_url: str | None = None) -> dict[str, Any]:
    """One citation as the MCP tools and ``/v1`` list it: marker, ids, source, section, page, score,
    and a figure's (signed) image link."""
    return {"marker": citation.get("marker"), "chunk_id": citation["chunk_id"], "doc_id": citation["doc_id"],
            "source": citation["source"], "section": citation.get("section"), "page": citation.get("page"),
            "score": round(float(citation["score"]), 6), "chunk_type": citation["chunk_type"],
            "image_url": image_url}


def word_count(texts: Iterable[str]) -> int:
    """Whitespace-separated words: the ``usage`` counts of ``/v1`` (the runtime has no tokenizer of
    the answering model; an extractive answer has none at all), documented as such."""
    return sum(len(text.split()) for text in texts)


def numbered_sources(citations: Iterable[Mapping[str, Any]]) -> str:
    """The citations as lines a chat front end shows under the answer: ``[1] handbook.pdf, Leave, p. 3``.
    Figures (no marker) are left out: their link is in the citation rows."""
    lines = []
    for c in citations:
        if not c.get("marker"):
            continue
        where = ", ".join(str(part) for part in (c.get("section"), f"p. {c['page']}" if c.get("page") else None)
                          if part)
        lines.append(f"{c['marker']} {c['source']}" + (f", {where}" if where else ""))
    return "\n".join(lines)
