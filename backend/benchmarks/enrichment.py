"""``rag bench --section enrich``: what enrichment costs and whether it helps retrieval.

For each enricher (``none``, ``extractive``, ``local_llm``) the real pipeline ingests the
corpus into its own SQLite store (enrichment cached, questions and summaries embedded with
the chunks), then every query is answered by document rankings read from the store:

- ``dense``: chunk vectors (``VectorStore.search``);
- ``hyde``: hypothetical-question vectors, parent chunk's document (``search_questions``);
- ``summary``: page / document summary vectors (``search_summaries``);
- ``dense+hyde``, ``dense+summary``, ``dense+hyde+summary``: reciprocal-rank fusion (k=60).

Corpora: the sample golden set (graded judgements, ``data/golden/sample_golden.jsonl``)
and CISI; the local generative model only on the first ``llm_docs`` CISI documents that the
first queries judge relevant plus as many others (a sub-corpus on which every enricher is
measured again), because its cost per 1k chunks is far over the budget on the full set.
Cost: enrichment seconds per 1k chunks and generative calls, from the ingest report.
"""

from __future__ import annotations

import json
import tempfile
import time
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np

from backend.benchmarks import cisi
from backend.benchmarks.ingestion import write_corpus
from backend.benchmarks.stats import Section
from backend.common.config import DEFAULT_CONFIG, REPO_ROOT, load_settings
from backend.core.embedding_text import query_input
from backend.core.ranking_metrics import ndcg_at_k, ranked_doc_ids, recall_at_k
from backend.core.types import QueryVector

K = 10
DEPTH = 30
RRF_K = 60
PROVIDERS = ("none", "extractive", "local_llm")
#: the budget a default enricher must stay within on this 2-core machine
BUDGET_S_PER_1K_CHUNKS = 600.0


def _rrf(*rankings: Sequence[str]) -> list[str]:
    score: dict[str, float] = {}
    for ranking in rankings:
        for rank, doc in enumerate(ranking):
            score[doc] = score.get(doc, 0.0) + 1.0 / (RRF_K + rank + 1)
    return sorted(score, key=lambda d: -score[d])


def _settings(config: Path, folder: Path, provider: str, profile: dict[str, Any], manifest: Path,
              questions: int = 8) -> Any:
    enrichment = {"provider": provider, "questions": questions, "summaries": True}
    return load_settings(config, env={}, overrides={
        "store": {"sqlite": {"path": str(folder / f"{provider}.sqlite")}},
        "ingest": {"allowed_roots": [str(REPO_ROOT / "data"), str(manifest.parent)], "progress": False},
        "embeddings": {"profiles": {"bench": {**profile, "enrichment": enrichment}}, "default_profile": "bench"},
    })


def _rankings(store: Any, embedder: Any, version: str, profile: Any, queries: Mapping[str, str]) -> dict[str, dict[str, list[str]]]:
    out: dict[str, dict[str, list[str]]] = {}
    qids = list(queries)
    vectors = embedder.embed_queries([query_input(queries[q], profile) for q in qids])
    accepts: frozenset[str] = getattr(embedder, "compatible_models", frozenset())
    for qid, vec in zip(qids, vectors):
        qv = QueryVector(np.asarray(vec, dtype=np.float32), embedder.model_id, accepts)
        dense = ranked_doc_ids(h.chunk.doc_id for h in store.search(version, qv, DEPTH).hits)
        hyde = ranked_doc_ids(h.chunk.doc_id for h in store.search_questions(version, qv, DEPTH).hits)
        summ = ranked_doc_ids(h.summary.doc_id for h in store.search_summaries(version, qv, DEPTH).hits)
        out[qid] = {"dense": dense, "hyde": hyde, "summary": summ, "dense+hyde": _rrf(dense, hyde),
                    "dense+summary": _rrf(dense, summ), "dense+hyde+summary": _rrf(dense, hyde, summ)}
    return out


def _metrics(rankings: Mapping[str, Mapping[str, list[str]]], judged: Mapping[str, Mapping[str, float]]) -> dict[str, str]:
    out = {}
    for strategy in ("dense", "hyde", "summary", "dense+hyde", "dense+summary", "dense+hyde+summary"):
        rows = [(ndcg_at_k(r[strategy][:K], judged[q], K), recall_at_k(r[strategy][:K], judged[q], K))
                for q, r in rankings.items() if r[strategy] or strategy == "dense"]
        if rows:
            out[strategy] = f"nDCG@10 {np.mean([a for a, _ in rows]):.4f}  recall@10 {np.mean([b for _, b in rows]):.4f}"
    return out


def run_one(config: Path, folder: Path, provider: str, profile: dict[str, Any], manifest: Path, embedder: Any,
            queries: Mapping[str, str], judged: Mapping[str, Mapping[str, float]], questions: int = 8) -> dict[str, Any]:
    from backend.ingest.pipeline import IngestPipeline
    from backend.runtime import enricher_factory, open_stores

    settings = _settings(config, folder, provider, profile, manifest, questions)
    stores = open_stores(settings)  # with the enrichment cache beside the store, as `rag ingest` runs
    enricher_for = enricher_factory(settings)
    try:
        started = time.perf_counter()
        report = IngestPipeline.from_settings(settings, stores, embedder, progress=False,
                                              enricher_for=enricher_for).run(manifest)
        seconds = time.perf_counter() - started
        version = report.version
        assert version is not None
        chunks = report.chunks_written
        per_1k = report.enrichment_seconds / chunks * 1000 if chunks else 0.0
        row: dict[str, Any] = {
            "chunks": chunks, "ingest_s": round(seconds, 1), "enrich_s": round(report.enrichment_seconds, 1),
            "enrich_s_per_1k_chunks": round(per_1k, 1), "llm_calls": report.llm_calls,
            "questions": report.questions_written, "summaries": report.summaries_written,
            "metadata_dropped": report.metadata_dropped,
        }
        if provider != "none":  # a second run over the unchanged corpus: nothing enriched again
            again = IngestPipeline.from_settings(settings, stores, embedder, progress=False,
                                              enricher_for=enricher_for).run(manifest)
            row["rerun_llm_calls"] = again.llm_calls
        row.update(_metrics(_rankings(stores.vectors, embedder, version, settings.embeddings.profile_for(), queries),
                            judged))
        return row
    finally:
        stores.close()


def sample_set() -> tuple[Path, dict[str, str], dict[str, dict[str, float]]]:
    queries, judged = {}, {}
    for line in (REPO_ROOT / "data" / "golden" / "sample_golden.jsonl").read_text(encoding="utf-8").splitlines():
        if line.strip():
            row = json.loads(line)
            if row.get("expected_sources"):
                queries[row["id"]] = row["query"]
                judged[row["id"]] = {d: float(g) for d, g in row["expected_sources"].items()}
    return REPO_ROOT / "manifests" / "sample.jsonl", queries, judged


def sample_subset(folder: Path, docs: int) -> tuple[Path, dict[str, str], dict[str, dict[str, float]]]:
    """The first ``docs`` lines of the sample manifest (paths made absolute) and the golden
    queries with a judged document among them, judgements restricted to them."""
    manifest, queries, judged = sample_set()
    lines = [json.loads(x) for x in manifest.read_text(encoding="utf-8").splitlines() if x.strip()][:docs]
    for line in lines:
        line["path"] = str((manifest.parent / line["path"]).resolve())
    out = folder / "sample-subset.jsonl"
    out.write_text("\n".join(json.dumps(x) for x in lines) + "\n", encoding="utf-8")
    ids = {x["doc_id"] for x in lines}
    kept = {q: {d: g for d, g in rel.items() if d in ids} for q, rel in judged.items()}
    kept = {q: rel for q, rel in kept.items() if rel}
    return out, {q: queries[q] for q in kept}, kept


def cisi_subset(folder: Path, docs: int, cisi_dir: Path) -> tuple[Path, dict[str, str], dict[str, dict[str, float]]]:
    """The documents the first queries judge relevant, then the next ids, up to ``docs``;
    the queries with at least one relevant document in it."""
    documents, queries, qrels = cisi.load_documents(cisi_dir), cisi.load_queries(cisi_dir), cisi.load_qrels(cisi_dir)
    chosen: list[str] = []
    for qid in sorted(qrels, key=int):
        rel = sorted(qrels[qid], key=int)
        if len(chosen) + len(rel) > docs * 2 // 3:
            continue
        chosen += [d for d in rel if d not in chosen]
    chosen += [d for d in documents if d not in chosen][:max(0, docs - len(chosen))]
    subset = {d: documents[d] for d in chosen[:docs]}
    manifest = write_corpus(subset, folder / "cisi")
    kept = {q: {d: 1.0 for d in qrels[q] if d in subset} for q in qrels}
    kept = {q: rel for q, rel in kept.items() if rel and q in queries}
    return manifest, {q: queries[q] for q in kept}, kept


CISI_PROFILE = {"index_name": "CISI_ENRICH_V1", "distance": "cosine",
                "chunker": {"kind": "conditional", "size": 1200, "overlap": 150, "min_chars_before_split": 6000}}


CORPORA = ("sample", "sample-sub", "cisi-sub", "cisi")


def measure(config: Path, embedder: Any, work: Path, *, cisi_dir: Path = cisi.DEFAULT_DIR, llm_docs: int = 40,
            providers: Sequence[str] = PROVIDERS, cisi_docs: int | None = None,
            corpora: Sequence[str] = CORPORA, sample_docs: int = 8) -> Section:
    """``sample`` and ``cisi`` (whole corpora) run the non-generative providers only; ``sample-sub``
    (the first ``sample_docs`` documents) and ``cisi-sub`` (``llm_docs`` documents) run every provider."""
    section = Section("enrichment: cost and retrieval effect (extractive vs local generative model)")
    sample_profile = load_settings(config, env={}).embeddings.profile_for().model_dump(exclude={"enrichment", "fusion"})
    sample_profile["index_name"] = "SAMPLE_ENRICH_V1"
    if "sample" in corpora:
        sample_manifest, sample_q, sample_j = sample_set()
        for provider in [p for p in providers if p != "local_llm"]:
            folder = Path(tempfile.mkdtemp(dir=work, prefix=f"sample-{provider}-"))
            row = run_one(config, folder, provider, sample_profile, sample_manifest, embedder, sample_q, sample_j)
            section.figures[f"sample golden ({len(sample_q)} queries), {provider}"] = row
    if "sample-sub" in corpora:
        folder = Path(tempfile.mkdtemp(dir=work, prefix="sample-sub-"))
        manifest, queries, judged = sample_subset(folder, sample_docs)
        for provider in providers:
            sub = Path(tempfile.mkdtemp(dir=work, prefix=f"sample-sub-{provider}-"))
            row = run_one(config, sub, provider, sample_profile, manifest, embedder, queries, judged)
            section.figures[f"sample golden, first {sample_docs} documents ({len(queries)} queries), {provider}"] = row
    if "cisi-sub" in corpora:
        folder = Path(tempfile.mkdtemp(dir=work, prefix="cisi-sub-"))
        manifest, queries, judged = cisi_subset(folder, llm_docs, cisi_dir)
        for provider in providers:
            sub = Path(tempfile.mkdtemp(dir=work, prefix=f"cisi-sub-{provider}-"))
            row = run_one(config, sub, provider, CISI_PROFILE, manifest, embedder, queries, judged)
            section.figures[f"CISI sub-corpus ({llm_docs} docs, {len(queries)} queries), {provider}"] = row
    if "cisi" in corpora and cisi_docs != 0:
        documents = cisi.load_documents(cisi_dir)
        if cisi_docs:
            documents = dict(list(documents.items())[:cisi_docs])
        full = Path(tempfile.mkdtemp(dir=work, prefix="cisi-full-"))
        manifest = write_corpus(documents, full)
        qrels = cisi.load_qrels(cisi_dir)
        all_q = cisi.load_queries(cisi_dir)
        judged_full = {q: {d: 1.0 for d in rel if d in documents} for q, rel in qrels.items()}
        judged_full = {q: r for q, r in judged_full.items() if r and q in all_q}
        for provider in ("none", "extractive"):
            sub = Path(tempfile.mkdtemp(dir=work, prefix=f"cisi-full-{provider}-"))
            row = run_one(config, sub, provider, CISI_PROFILE, manifest, embedder,
                          {q: all_q[q] for q in judged_full}, judged_full)
            section.figures[f"CISI ({len(documents)} docs, {len(judged_full)} queries), {provider}"] = row
    section.notes.append(f"budget for a default enricher: {BUDGET_S_PER_1K_CHUNKS:.0f} s per 1k chunks on this 2-core machine")
    return section


def main() -> None:
    import argparse

    from backend.providers.local.embedder import make_local_embedder

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", type=Path, default=DEFAULT_CONFIG)
    parser.add_argument("--llm-docs", type=int, default=40)
    parser.add_argument("--cisi-docs", type=int, default=None, help="0 skips the full-CISI rows")
    parser.add_argument("--providers", default=",".join(PROVIDERS))
    parser.add_argument("--corpora", default=",".join(CORPORA))
    parser.add_argument("--sample-docs", type=int, default=8)
    parser.add_argument("--json-out", type=Path)
    args = parser.parse_args()
    settings = load_settings(args.config, env={})
    embedder = make_local_embedder(settings.embeddings)
    with tempfile.TemporaryDirectory(prefix="rag-bench-enrich-") as work:
        section = measure(args.config, embedder, Path(work), llm_docs=args.llm_docs,
                          providers=tuple(args.providers.split(",")), cisi_docs=args.cisi_docs,
                          corpora=tuple(args.corpora.split(",")), sample_docs=args.sample_docs)
    print(section.render(), flush=True)
    if args.json_out:
        args.json_out.write_text(json.dumps(section.as_dict(), indent=2, default=str), encoding="utf-8")


if __name__ == "__main__":
    main()
