"""``rag ask "question"``: the same answer and decision as ``POST /chat``, in the terminal."""

from __future__ import annotations

import json
from typing import get_args

import click

from backend.cli.context import settings_from
from backend.common.config import SearchStrategy
from backend.core.requests import RequestLimits
from backend.core.services.chat_service import ChatAnswer, ChatQuery
from backend.runtime import build_runtime


def render(answer: ChatAnswer) -> str:
    explain = answer.decision_explain
    th = explain["thresholds"]
    score = explain.get("decision_score")
    by_evidence = score in ("evidence", "answerability")
    best = explain["max_evidence"] if by_evidence else explain["max_eligible_similarity"]
    label = {"evidence": "max evidence", "answerability": "best sentence's answerability"}.get(str(score), "max similarity")
    judged = explain.get("answerability") or {}
    why = explain.get("answer_explain") or {}
    lines = [
        answer.answer,
        "",
        f"mode: {answer.mode}  (used_llm={answer.used_llm}, answered_by={explain['answered_by']}, "
        f"sources_used={answer.sources_used})",
        f"{label}: {'-' if best is None else f'{best:.4f}'}  "
        f"vs  low={th['low']:.4g} high={th['high']:.4g} "
        f"({th['kind']}{', short query' if explain['short_query_active'] else ''})",
        f"gates: {explain['gates']['usable_chunks']} usable chunks (min {explain['gates']['min_chunks_for_hybrid']}), "
        f"{explain['gates']['usable_context_chars']} chars (min {explain['gates']['min_total_context_chars']})",
        f"target: {explain['retrieval_target']} -> {explain['version']}  strategy={explain['strategy']}",
        "reasons: " + "; ".join(explain["reasons"]),
        *([f"verdict: {judged['verdict']}"] if judged.get("verdict") else []),
    ]
    # the answer's markers were renumbered in answer order; the explanation keeps context positions
    shown = {c.chunk_id: c.marker for c in answer.citations if c.marker}
    for sentence in why.get("sentences", []):
        lines.append(f"{sentence['role']}: {shown.get(sentence['chunk_id'], sentence['marker'])} score {sentence['score']:.3f} (dense {sentence['dense']:.3f}, "
                     f"lexical {sentence['lexical']:.2f}, answer type {'yes' if sentence['answer_type_match'] else 'no'}"
                     f"{', asks ' + why['question_type'] if why.get('question_type') else ''})")
    if answer.citations:
        lines.append("sources:")
        for c in answer.citations:
            extra = f"  image={c.image_ref}" if c.image_ref else ""
            lines.append(f"  {c.marker or '[fig]'} {c.source}  ({c.chunk_id}, {c.score:.4f}){extra}")
    return "\n".join(lines)


@click.command("ask")
@click.argument("question")
@click.option("--domain", default=None, help="Domain key (as X-RAG-Domain): query that domain's alias.")
@click.option("--top-k", type=int, default=None, help="Candidates to retrieve.")
@click.option("--strategy", type=click.Choice(list(get_args(SearchStrategy))), default=None)
@click.option("--json", "as_json", is_flag=True, help="Print the /chat response body as JSON.")
@click.option("--as", "run_as_name", default=None, metavar="PRINCIPAL",
              help="Answer from what this configured principal may see (access.principals); default: everything.")
@click.pass_context
def ask(ctx: click.Context, question: str, domain: str | None, top_k: int | None, strategy: str | None,
        as_json: bool, run_as_name: str | None) -> None:
    """Answer QUESTION and show how the answer mode was decided (not recorded as an interaction)."""
    from backend.core.access import run_as

    settings = settings_from(ctx)
    top_k = RequestLimits.from_settings(settings).top_k(top_k)  # checked once, as POST /chat checks it
    visibility = run_as(settings.access, run_as_name, domain)
    runtime = build_runtime(settings)
    answer = runtime.chat.answer(ChatQuery(question, domain=domain, top_k=top_k, strategy=strategy, record=False,
                                            visibility=visibility))
    click.echo(json.dumps(answer.to_dict(), indent=2, ensure_ascii=False) if as_json else render(answer))
