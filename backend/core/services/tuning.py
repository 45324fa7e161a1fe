"""Retrieval tuning: run a small grid of retrieval settings over judged queries.

A *candidate* is one combination of strategy, fusion method and weights, candidate
depth, reranker and top-N, and contextual headers on or off (headers live in the
version, so a header candidate is searched on a version built with them). Each is
scored by nDCG@10 over documents, per query, with its search time. Nothing here
changes a configuration: ``suggested_config`` renders the best candidate as a YAML
snippet for a person to apply, and the gate (``rag index promote``) decides whether the
resulting version serves (docs/SEARCH.md).
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Mapping, Sequence

import yaml

from backend.common.config import FusionSettings, LexicalSettings, RerankSettings, RetrievalSettings
from backend.core.ranking_metrics import ndcg_at_k, ranked_doc_ids
from backend.core.services.search_service import SearchRequest, SearchService

K = 10
#: chunk hits fetched before collapsing to documents
CANDIDATES = 30


@dataclass(frozen=True)
class Candidate:
    strategy: str = "fusion"
    method: str = "rrf"
    dense_weight: float = 1.0
    lexical_weight: float = 1.0
    depth: int = 100
    rerank: str = "none"
    rerank_n: int = 20
    headers: bool = False
    k: int = 60
    #: retrieval.lexical: stop words and pseudo-relevance feedback documents (0 = off)
    stop_words: str = "none"
    feedback_docs: int = 0
    normalization: str = "minmax"
    #: retrieval.lexical.query_term_frequency
    query_term_frequency: bool = False
    #: retrieval.fusion.dense_feedback_docs (0 = off) at retrieval.fusion.dense_feedback_weight
    dense_feedback_docs: int = 0
    dense_feedback_weight: float = 0.5

    @property
    def label(self) -> str:
        parts = [self.strategy]
        if self.strategy == "fusion":
            norm = f"/{self.normalization}" if self.method == "score" and self.normalization != "minmax" else ""
            parts.append(f"{self.method}{norm}{'' if self.method != 'rrf' or self.k == 60 else f' k{self.k}'} "
                         f"d{self.dense_weight:g}/l{self.lexical_weight:g} depth{self.depth}")
        if self.strategy != "dense" and self.stop_words != "none":
            parts.append(f"stop {self.stop_words}")
        if self.strategy != "dense" and self.feedback_docs:
            parts.append(f"feedback {self.feedback_docs}")
        if self.strategy != "dense" and self.query_term_frequency:
            parts.append("qtf")
        if self.strategy == "fusion" and self.dense_feedback_docs:
            parts.append(f"dense-feedback {self.dense_feedback_docs}@{self.dense_feedback_weight:g}")
        if self.rerank != "none":
            parts.append(f"rerank {self.rerank}@{self.rerank_n}")
        if self.headers:
            parts.append("headers")
        return " ".join(parts)

    def retrieval(self, base: RetrievalSettings) -> RetrievalSettings:
        """``base`` with this candidate's strategy, fusion and rerank (other fields kept)."""
        fusion = base.fusion.model_copy(update={
            "method": self.method, "k": self.k, "dense_weight": self.dense_weight, "lexical_weight": self.lexical_weight,
            "dense_depth": self.depth, "lexical_depth": self.depth, "normalization": self.normalization,
            "dense_feedback_docs": self.dense_feedback_docs, "dense_feedback_weight": self.dense_feedback_weight})
        rerank = base.rerank.model_copy(update={"provider": self.rerank, "top_n": self.rerank_n})
        lexical = base.lexical.model_copy(update={"stop_words": self.stop_words, "feedback_docs": self.feedback_docs,
                                                  "query_term_frequency": self.query_term_frequency})
        return base.model_copy(update={"strategy": self.strategy, "fusion": FusionSettings.model_validate(
            fusion.model_dump()), "rerank": RerankSettings.model_validate(rerank.model_dump()),
            "lexical": LexicalSettings.model_validate(lexical.model_dump())})


def default_grid(*, rerankers: Sequence[str] = ("none",), headers: Sequence[bool] = (False,),
                 rerank_ns: Sequence[int] = (20,), depths: Sequence[int] = (100,)) -> list[Candidate]:
    """Plain dense and plain RRF first (the baselines), then weighted RRF and score fusion,
    each with every reranker and header setting asked for."""
    fusions = [("rrf", 1.0, 1.0, 60), ("rrf", 2.0, 1.0, 60), ("rrf", 2.0, 1.0, 20), ("rrf", 1.0, 2.0, 60),
               ("score", 0.5, 0.5, 60), ("score", 0.7, 0.3, 60), ("score", 0.3, 0.7, 60)]
    out: list[Candidate] = []
    for header in headers:
        for rerank in rerankers:
            ns = rerank_ns if rerank != "none" else (20,)
            for n in ns:
                out.append(Candidate("dense", rerank=rerank, rerank_n=n, headers=header))
                for depth in depths:
                    for method, dw, lw, k in fusions:
                        out.append(Candidate("fusion", method, dw, lw, depth, rerank, n, header, k))
    return list(dict.fromkeys(out))


#: lexical analysis settings the grid crosses with fusion: (stop words, feedback docs, query term
#: frequency, dense feedback docs); the last four add query term frequency and lexical-to-dense feedback
LEXICAL_SETTINGS = (("none", 0, False, 0), ("english", 0, False, 0), ("english", 5, False, 0),
                    ("english", 0, True, 0), ("english", 5, True, 0), ("english", 0, True, 5), ("english", 5, True, 5))


def lexical_grid(depths: Sequence[int] = (100, 200),
                 settings: Sequence[tuple[str, int, bool, int]] = LEXICAL_SETTINGS) -> list[Candidate]:
    """Lexical analysis (stop words, feedback, query term frequency, lexical-to-dense feedback)
    crossed with fusion methods, weights, ``k`` and depth: the grid ``rag bench --section quality``
    tunes on one half of the judged queries."""
    fusions = [("rrf", dw, 1.0, k, "minmax") for k in (20, 40, 60) for dw in (1.0, 1.5, 2.0)]
    fusions += [("score", dw, round(1 - dw, 2), 60, norm) for norm in ("minmax", "zscore") for dw in (0.6, 0.7)]
    out = [Candidate()]
    for stop, feedback, qtf, dense_feedback in settings:
        for depth in depths:
            for method, dw, lw, k, norm in fusions:
                out.append(Candidate("fusion", method, dw, lw, depth, k=k, stop_words=stop, feedback_docs=feedback,
                                     normalization=norm, query_term_frequency=qtf,
                                     dense_feedback_docs=dense_feedback))
    return list(dict.fromkeys(out))


def split_queries(query_ids: Iterable[str]) -> tuple[list[str], list[str]]:
    """A fixed split of judged queries: odd numeric ids tune, even ids judge (held out)."""
    ids = list(query_ids)
    return [q for q in ids if int(q) % 2 == 1], [q for q in ids if int(q) % 2 == 0]


def mean_on(result: "Measured", query_ids: Sequence[str]) -> float:
    return round(sum(result.per_query[q] for q in query_ids) / max(len(query_ids), 1), 4)


@dataclass
class Measured:
    candidate: Candidate
    ndcg: float
    per_query: dict[str, float]
    ms_per_query: float

    def against(self, baseline: "Measured", query_ids: Sequence[str] | None = None) -> tuple[int, int]:
        """Queries (of ``query_ids``, default all) this candidate scores higher / lower than
        ``baseline`` (nDCG@10)."""
        ids = list(self.per_query) if query_ids is None else list(query_ids)
        wins = sum(self.per_query[q] > baseline.per_query[q] + 1e-9 for q in ids)
        losses = sum(self.per_query[q] < baseline.per_query[q] - 1e-9 for q in ids)
        return wins, losses


def measure(candidate: Candidate, search: SearchService, target: str, queries: Mapping[str, str],
            relevant: Mapping[str, Mapping[str, float]]) -> Measured:
    """nDCG@10 over documents for every query, and the mean search time."""
    per_query: dict[str, float] = {}
    started = time.perf_counter()
    for qid, text in queries.items():
        outcome = search.search(SearchRequest(text, target, CANDIDATES, strategy=candidate.strategy))
        ranked = ranked_doc_ids(h.chunk.doc_id for h in outcome.hits)[:K]
        per_query[qid] = ndcg_at_k(ranked, relevant[qid], K)
    ms = (time.perf_counter() - started) * 1000 / max(len(queries), 1)
    mean = sum(per_query.values()) / max(len(per_query), 1)
    return Measured(candidate, round(mean, 4), per_query, round(ms, 2))


def run_grid(candidates: Iterable[Candidate], make_search: Callable[[Candidate], tuple[SearchService, str]],
             queries: Mapping[str, str], relevant: Mapping[str, Mapping[str, float]],
             progress: Callable[[Measured], Any] | None = None) -> list[Measured]:
    """Measure each candidate; ``make_search`` gives its service and the version to search."""
    out = []
    for candidate in candidates:
        search, target = make_search(candidate)
        result = measure(candidate, search, target, queries, relevant)
        out.append(result)
        if progress is not None:
            progress(result)
    return out


def baseline_of(results: Sequence[Measured]) -> Measured:
    """Plain fusion (unweighted RRF, no reranker, no headers), else the first result."""
    plain = Candidate()
    return next((r for r in results if dataclasses.replace(r.candidate, depth=100) == plain), results[0])


def render_table(results: Sequence[Measured], baseline: Measured) -> str:
    rows = [f"{'candidate':<52} {'nDCG@10':>8} {'vs plain':>9} {'wins':>5} {'losses':>6} {'ms/query':>9}"]
    for r in sorted(results, key=lambda r: -r.ndcg):
        wins, losses = r.against(baseline)
        rows.append(f"{r.candidate.label:<52} {r.ndcg:>8.4f} {r.ndcg - baseline.ndcg:>+9.4f} {wins:>5} "
                    f"{losses:>6} {r.ms_per_query:>9.1f}")
    return "\n".join(rows)


def suggested_config(best: Candidate, profile: str | None = None) -> str:
    """A YAML snippet for ``best`` (headers go into the profile, the rest under retrieval)."""
    retrieval: dict[str, Any] = {"strategy": best.strategy}
    if best.strategy == "fusion":
        retrieval["fusion"] = {"method": best.method, "k": best.k, "dense_weight": best.dense_weight,
                               "lexical_weight": best.lexical_weight, "dense_depth": best.depth,
                               "lexical_depth": best.depth}
        if best.method == "score":
            retrieval["fusion"]["normalization"] = best.normalization
        if best.dense_feedback_docs:
            retrieval["fusion"]["dense_feedback_docs"] = best.dense_feedback_docs
            retrieval["fusion"]["dense_feedback_weight"] = best.dense_feedback_weight
    if best.strategy != "dense" and (best.stop_words != "none" or best.feedback_docs or best.query_term_frequency):
        retrieval["lexical"] = {"stop_words": best.stop_words, "feedback_docs": best.feedback_docs}
        if best.query_term_frequency:
            retrieval["lexical"]["query_term_frequency"] = True
    retrieval["rerank"] = {"provider": best.rerank, "top_n": best.rerank_n} if best.rerank != "none" else \
        {"provider": "none"}
    doc: dict[str, Any] = {"retrieval": retrieval}
    if profile is not None:
        doc["embeddings"] = {"profiles": {profile: {"chunk_headers": best.headers}}}
    return yaml.safe_dump(doc, sort_keys=False)
