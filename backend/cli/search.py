"""``rag search "query"``: retrieval only, the same hits and scores as ``GET /search``."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, get_args

import click

from backend.cli.context import settings_from
from backend.common.config import SearchStrategy
from backend.common.errors import RequestError
from backend.core.requests import RequestLimits
from backend.core.services.search_query import SearchResponse, run_search
from backend.runtime import build_runtime

_FILTER = re.compile(r"^([A-Za-z][A-Za-z0-9_]*)\s*(>=|<=|=)\s*(.+)$")


@dataclass(frozen=True)
class SearchOptions:
    """The command's options as the search service takes them (``search_query.SearchQuery``)."""

    q: str | None
    top_k: int | None
    strategy: str | None
    filters: str | None
    preset: str | None
    value: str | None


def filters_from_options(pairs: tuple[str, ...], raw_json: str | None) -> str | None:
    """``--filter field=value`` (repeat: any of), ``field>=date`` / ``field<=date``, plus
    ``--filters JSON``, as the JSON object ``GET /search`` takes."""
    merged: dict[str, Any] = {}
    if raw_json:
        try:
            loaded = json.loads(raw_json)
        except json.JSONDecodeError as exc:
            raise RequestError(f"--filters: not valid JSON: {exc.msg} (column {exc.colno})", field="filters") from exc
        if not isinstance(loaded, dict):
            raise RequestError("--filters: expected a JSON object of field -> condition", field="filters")
        merged.update(loaded)
    for pair in pairs:
        m = _FILTER.match(pair.strip())
        if m is None:
            raise RequestError(f"--filter {pair!r}: expected field=value, field>=date or field<=date", field="filter")
        name, op, value = m.group(1), m.group(2), m.group(3).strip()
        cond = merged.setdefault(name, {})
        if not isinstance(cond, dict):
            raise RequestError(f"--filter {pair!r}: {name} is also given in --filters", field="filter")
        if op == "=":
            cond.setdefault("any", []).append(value)
        else:
            cond["gte" if op == ">=" else "lte"] = value
    return json.dumps(merged) if merged else None


def render(body: SearchResponse) -> str:
    lines = [
        f"query: {body.query}",
        f"strategy: {body.strategy} (ordered by {body.order_by}; 'sim' is the dense similarity the thresholds see)",
        f"target: {body.retrieval_target} -> {body.version}"
        + (f"  filters: {json.dumps(body.filters)}" if body.filters else ""),
    ]
    if not body.hits:
        lines.append("no hits")
    for h in body.hits:
        scores = f"sim={h.dense_similarity:.4f}"
        if h.lexical_score is not None:
            scores += f" lex={h.lexical_score:.3f}"
        if h.fused_score is not None:
            scores += f" fused={h.fused_score:.5f}"
        preview = " ".join(h.text.split())
        lines.append(f"{h.rank:>3}. {h.chunk_id}  {scores}  {h.source}" + (f"  p. {h.page}" if h.page else ""))
        if h.matched_question:
            lines.append(f"     matched question: {h.matched_question}")
        lines.append(f"     {preview[:160]}{'...' if len(preview) > 160 else ''}")
    for d in body.tree or ():
        lines.append(f"doc {d.doc_id} ({d.source}) score={d.score:.3f}" + (f": {d.summary[:100]}" if d.summary else ""))
        for p in d.pages:
            chunks = ", ".join(c.chunk_id for c in p.chunks)
            lines.append(f"  page {p.page or '-'} score={p.score:.3f}: {chunks}")
    return "\n".join(lines)


@click.command("search")
@click.argument("query", required=False)
@click.option("--strategy", type=click.Choice(list(get_args(SearchStrategy))), default=None,
              help="Default: retrieval.strategy.")
@click.option("--filter", "filter_pairs", multiple=True, metavar="FIELD=VALUE",
              help="Metadata filter; repeat a field for any-of; FIELD>=DATE / FIELD<=DATE for dates.")
@click.option("--filters", "filters_json", default=None, metavar="JSON", help='As GET /search, e.g. \'{"tags": {"all": ["policy"]}}\'.')
@click.option("--top-k", type=int, default=None, help="Hits to return (default retrieval.top_k).")
@click.option("--domain", default=None, help="Domain key (as X-RAG-Domain): search that domain's alias.")
@click.option("--preset", default=None, help="A configured preset (see GET /search/presets).")
@click.option("--value", default=None, help="The preset's filter value.")
@click.option("--json", "as_json", is_flag=True, help="Print the GET /search response body as JSON.")
@click.option("--as", "run_as_name", default=None, metavar="PRINCIPAL",
              help="See only what this configured principal may see (access.principals); default: everything.")
@click.pass_context
def search(ctx: click.Context, query: str | None, strategy: str | None, filter_pairs: tuple[str, ...],
           filters_json: str | None, top_k: int | None, domain: str | None, preset: str | None, value: str | None,
           as_json: bool, run_as_name: str | None) -> None:
    """Search the knowledge base for QUERY and show ranked chunks with their scores (no answer)."""
    from backend.core.access import run_as

    settings = settings_from(ctx)
    limits = RequestLimits.from_settings(settings)  # checked once, as GET /search checks them
    limits.text(query, field="q")
    limits.top_k(top_k)
    options = SearchOptions(q=query, top_k=top_k, strategy=strategy, preset=preset, value=value,
                            filters=filters_from_options(filter_pairs, filters_json))
    body = run_search(build_runtime(settings), options, domain, run_as(settings.access, run_as_name, domain))
    click.echo(json.dumps(body.model_dump(mode="json"), indent=2, ensure_ascii=False) if as_json else render(body))
