"""``rag tune``: a small grid of retrieval settings on a golden set (or CISI), printed
as a table with a suggested config snippet. It never changes the configuration: a
person applies the snippet, ingests (headers build a new version) and the gate
(``rag index promote``) decides whether the result serves."""

from __future__ import annotations

import dataclasses
import json
import tempfile
from pathlib import Path
from typing import Any

import click

from backend.cli.context import settings_from
from backend.common.config import DEFAULT_CONFIG, ProfileSettings, Settings
from backend.common.errors import EvaluationError, VersionNotFound
from backend.core.ports import Embedder, Stores
from backend.core.services import tuning
from backend.core.golden import load_golden_set
from backend.core.services.promotion import resolve_target
from backend.core.services.search_service import SearchService


#: profile name, profile, {headers on?: (store, version)}, version searched, queries, relevance
_Tuning = tuple[str, ProfileSettings, dict[bool, Any], str, dict[str, str], dict[str, dict[str, float]]]


def _ints(value: str, option: str) -> tuple[int, ...]:
    try:
        out = tuple(int(v) for v in value.split(",") if v.strip())
    except ValueError:
        raise click.BadParameter(f"expected comma-separated integers, got {value!r}", param_hint=option) from None
    if not out or min(out) < 1:
        raise click.BadParameter(f"expected integers >= 1, got {value!r}", param_hint=option)
    return out


@click.command()
@click.option("--golden", help="Golden set (JSONL); default: the domain's or evaluation.golden_set.")
@click.option("--version", "version", help="Version to search (default: the version the alias serves).")
@click.option("--alias", help="Alias whose version is searched (default: embeddings.alias.name).")
@click.option("--domain-key", help="Use this domain's alias and golden set.")
@click.option("--header-version", help="A version of the same documents built with chunk_headers on: adds "
              "header-on candidates searched there.")
@click.option("--cisi", "cisi_dir", type=click.Path(file_okay=False, path_type=Path),
              help="Tune on the CISI collection in this folder instead (built in a temporary store, with and "
              "without headers).")
@click.option("--rerankers", default="none,sentences", show_default=True,
              help="Rerankers to try (none, sentences, or the configured retrieval.rerank.provider).")
@click.option("--rerank-n", default="20", show_default=True, help="Rerank top-N values to try (comma separated).")
@click.option("--depths", default="100", show_default=True, help="Fusion candidate depths to try (comma separated).")
@click.option("--lexical", is_flag=True, help="Also try lexical analysis (English stop words, pseudo-relevance "
              "feedback, query term frequency) and lexical-to-dense feedback crossed with RRF / score fusion "
              "settings (retrieval.lexical, retrieval.fusion.dense_feedback_docs; docs/SEARCH.md).")
@click.option("--json", "as_json", is_flag=True, help="Print the results as JSON.")
@click.pass_context
def tune(ctx: click.Context, golden: str | None, version: str | None, alias: str | None, domain_key: str | None,
         header_version: str | None, cisi_dir: Path | None, rerankers: str, rerank_n: str, depths: str,
         lexical: bool, as_json: bool) -> None:
    """Grid over fusion method/weights, depths, rerank N and headers; prints the table and a suggested config
    (never applied)."""
    from backend.runtime import open_embedder, open_reranker, open_stores

    settings = settings_from(ctx)
    names = tuple(r.strip() for r in rerankers.split(",") if r.strip())
    allowed = {"none", "sentences", settings.retrieval.rerank.provider}
    unknown = [r for r in names if r not in allowed]
    if unknown:
        raise click.BadParameter(f"{', '.join(unknown)}: choose from {', '.join(sorted(allowed))} (a remote or "
                                 "cross-encoder reranker must be configured in retrieval.rerank first)",
                                 param_hint="--rerankers")
    ns, depth_list = _ints(rerank_n, "--rerank-n"), _ints(depths, "--depths")
    from backend.providers.rerank.sentences import SentenceReranker

    embedder = open_embedder(settings)
    by_name: dict[str, Any] = {"sentences": SentenceReranker(
        embedder, sentence_weight=settings.retrieval.rerank.sentence_weight)}
    if settings.retrieval.rerank.provider not in ("none", "sentences") and \
            settings.retrieval.rerank.provider in names:
        by_name[settings.retrieval.rerank.provider] = open_reranker(settings, embedder)
    config_path = Path((ctx.find_root().obj or {}).get("config_path") or DEFAULT_CONFIG)

    opened: Stores | None = None
    with tempfile.TemporaryDirectory(prefix="rag-tune-") as tmp:
        if cisi_dir is not None:
            profile_name, profile, stores, target, queries, relevant = _cisi(config_path, embedder, cisi_dir,
                                                                             Path(tmp))
        else:
            opened = open_stores(settings)
            profile_name, profile, stores, target, queries, relevant = _golden(
                settings, opened, golden, version, alias, domain_key, header_version)
        profile = profile.model_copy(update={"fusion": None, "lexical": None})
        headers = (False, True) if True in stores else (False,)

        def make_search(candidate: tuning.Candidate) -> tuple[SearchService, str]:
            store, version_name = stores[candidate.headers]
            reranker = None if candidate.rerank == "none" else by_name[candidate.rerank]
            return SearchService(store, embedder, profile, candidate.retrieval(settings.retrieval), reranker), \
                version_name

        def progress(result: tuning.Measured) -> None:
            click.echo(f"  {result.candidate.label}: nDCG@10 {result.ndcg:.4f}", err=True)

        grid = tuning.default_grid(rerankers=names, headers=headers, rerank_ns=ns, depths=depth_list)
        if lexical:
            grid = list(dict.fromkeys(grid + [dataclasses.replace(c, headers=h) for h in headers
                                              for c in tuning.lexical_grid(depth_list)]))
        click.echo(f"tuning {len(grid)} candidates on {len(queries)} queries ({target})", err=True)
        results = tuning.run_grid(grid, make_search, queries, relevant, progress)
        for store, _ in {id(s): (s, v) for s, v in stores.values()}.values():
            if hasattr(store, "close"):
                store.close()
        if opened is not None:
            opened.close()
    baseline = tuning.baseline_of(results)
    best = max(results, key=lambda r: r.ndcg)
    snippet = tuning.suggested_config(best.candidate, profile_name)
    if as_json:
        click.echo(json.dumps({
            "target": target, "queries": len(queries), "baseline": baseline.candidate.label,
            "results": [{"candidate": r.candidate.__dict__, "label": r.candidate.label, "ndcg_at_10": r.ndcg,
                         "wins_losses_vs_baseline": r.against(baseline), "ms_per_query": r.ms_per_query}
                        for r in results],
            "best": best.candidate.label, "suggested_config": snippet, "applied": False}, indent=2))
        return
    click.echo(tuning.render_table(results, baseline))
    click.echo(f"\nbest: {best.candidate.label} (nDCG@10 {best.ndcg:.4f}, plain fusion {baseline.ndcg:.4f})")
    click.echo("suggested config (not applied; edit your profile, ingest, then `rag index promote` lets the gate decide):")
    click.echo(snippet.rstrip())


def _golden(settings: Settings, opened: Stores, golden: str | None, version: str | None, alias: str | None,
            domain_key: str | None, header_version: str | None) -> _Tuning:
    store, vectors = opened.admin, opened.vectors
    target = resolve_target(settings, domain_key=domain_key, alias=alias, golden=golden)
    name = version or store.resolve_alias(target.alias)
    if name is None:
        raise VersionNotFound(f"alias {target.alias} serves no version; name one with --version", alias=target.alias)
    found = store.get_version(name)
    golden_set = load_golden_set(target.golden)
    judged = [(q.id or str(n), q) for n, q in enumerate(golden_set.queries, start=1) if q.expected_sources]
    if not judged:
        raise EvaluationError(f"{target.golden}: no query names expected_sources; tuning needs judged queries",
                              field="golden")
    stores: dict[bool, Any] = {False: (vectors, name)}
    if header_version is not None:
        store.get_version(header_version)  # VersionNotFound names it
        stores[True] = (vectors, header_version)
    profile = found.profile if found.profile in settings.embeddings.profiles else settings.embeddings.default_profile
    queries = {qid: " ".join(q.query.split()) for qid, q in judged}
    relevant = {qid: dict(q.expected_sources) for qid, q in judged}
    return profile, settings.embeddings.profiles[profile], stores, name, queries, relevant


def _cisi(config: Path, embedder: Embedder, folder: Path, work: Path) -> _Tuning:
    from backend.benchmarks import ingestion, quality
    from backend.benchmarks.cisi import load_documents, load_qrels, load_queries, load_titles
    if not (folder / "CISI.ALL").is_file():
        raise click.BadParameter(f"{folder}/CISI.ALL not found", param_hint="--cisi")
    documents = load_documents(folder)
    memo = quality.MemoEmbedder(embedder)
    manifest = ingestion.write_corpus(documents, work / "corpus")
    bench = ingestion.bench_settings(config, work / "corpus", work / "plain.sqlite", False, worker=False)
    plain = ingestion.run_pipeline(bench, memo, manifest).store
    headed = quality.header_store(config, memo, documents, load_titles(folder), work)
    queries, qrels = load_queries(folder), load_qrels(folder)
    judged = {q: queries[q] for q in sorted(qrels, key=int) if q in queries}
    return (ingestion.CISI_PROFILE, bench.embeddings.profiles[ingestion.CISI_PROFILE], {False: (plain, ingestion.CISI_VERSION), True: (headed, ingestion.CISI_VERSION)},
            ingestion.CISI_VERSION, judged, {q: {d: 1.0 for d in qrels[q]} for q in judged})
