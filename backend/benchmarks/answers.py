"""Answers you can trust on questions nobody here wrote: ``rag bench --section answers``.

One run, side by side on the same retrieval:

* **SQuAD 2.0 training articles** (``backend.benchmarks.squad``) ingested as their own
  domain, with answerable and adversarially unanswerable questions. The answerability
  model and its thresholds are fitted with folds by article, together with the shipped
  golden sets (``answerability_fit.cross_validate``); every figure below is held out:
  each query is decided by a model that never saw its article.
* **The shipped golden sets** (with their unanswerable look-alikes), held out the same way
  (folds by expected document).
* **Off-topic questions** written for the two shipped domains (``data/golden/offtopic.jsonl``),
  never used in fitting, decided by the model fitted on everything else.
* **Today's default** (``decision_score: evidence``, the thresholds in config) on the same
  candidates, for the comparison the issue asks for.

``must_contain`` on answers given as ``rag`` is measured with the real extractive
answerer under each fold's model. The follow-up set and ``/chat`` latency are measured by
``rag eval --followups`` and the ``http``/``latency`` sections.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

from backend.benchmarks import squad
from backend.benchmarks.stats import Section
from backend.common.config import REPO_ROOT, Settings, load_settings
from backend.core.services import context as ctx
from backend.core.services import ranking_metrics as rm
from backend.core.services.answerability import AnswerabilityJudge, AnswerabilityModel, attach_scores, unknown_words
from backend.core.services.answerability_fit import (
    HeldOut,
    JudgedQuery,
    _with_model,
    cross_validate,
    held_out_decisions,
    judge_query,
    scored_candidates,
)
from backend.core.services.evidence import SentenceScorer
from backend.core.services.golden import GoldenQuery, load_golden_set
from backend.core.services.retrieval_service import decide_answer_mode, is_short_query
from backend.core.services.search_service import SearchRequest, SearchService
from backend.core.types import ChatRequest

SHIPPED = ("data/golden/sample_golden.jsonl", "data/golden/handbook_golden.jsonl")
OFFTOPIC = "data/golden/offtopic.jsonl"


@dataclass(frozen=True)
class Collected:
    judged: list[JudgedQuery]
    questions: dict[str, GoldenQuery]
    #: per query id: today's default decision (evidence) and its compared score
    today: dict[str, tuple[str, float]]


def workspace_settings(base_config: Path, work: Path, squad_golden: Path | None) -> Settings:
    domains: dict[str, Any] = {}
    if squad_golden is not None:
        domains[squad.DOMAIN] = {"index_name": "KB_SQUAD_V1", "alias_name": "KB_SQUAD", "profile": "sample",
                                 "golden_set": str(squad_golden)}
    return load_settings(base_config, overrides={
        "store": {"sqlite": {"path": str(work / "answers.sqlite")}},
        "docx": {"assets_dir": str(work / "assets")},
        "ingest": {"progress": False, "allowed_roots": [str(REPO_ROOT / "data"), str(work)]},
        "embeddings": {"domains": domains},
    }, env={})


def ingest_all(settings: Settings, store: Any, embedder: Any, squad_manifest: Path | None) -> None:
    from backend.ingest.pipeline import IngestPipeline

    jobs: list[tuple[Path, str | None]] = [(REPO_ROOT / "manifests" / "sample.jsonl", None),
                                           (REPO_ROOT / "manifests" / "handbook.jsonl", "handbook")]
    if squad_manifest is not None:
        jobs.append((squad_manifest, squad.DOMAIN))
    for manifest, key in jobs:
        report = IngestPipeline(settings, store, embedder, progress=False).run(manifest, domain_key=key)
        if not report.ok or report.version is None:
            raise RuntimeError(f"benchmark ingest of {manifest} failed: {report.render()}")
        version = report.version
        alias = settings.embeddings.domains[key].alias_name if key else settings.embeddings.alias.name
        store.point_alias(alias, version, reason="benchmark")


def collect(settings: Settings, store: Any, embedder: Any, paths: Sequence[Path],
            today: Settings | None = None) -> Collected:
    """Search every query of ``paths`` through its domain's alias and judge its sentences."""
    retrieval = settings.retrieval
    scorer = SentenceScorer(embedder)
    judge = AnswerabilityJudge(scorer, AnswerabilityModel(0.0, {}))
    searches = {name: SearchService(store, embedder, profile, retrieval)
                for name, profile in settings.embeddings.profiles.items()}
    judged, questions, decided = [], {}, {}
    base_today = (today or settings).retrieval
    for path in paths:
        golden = load_golden_set(path)
        for q in golden.queries:
            alias = settings.embeddings.domains[q.domain].alias_name if q.domain else settings.embeddings.alias.name
            profile = settings.embeddings.domains[q.domain].profile if q.domain else None
            search = searches[profile or settings.embeddings.default_profile]
            question = " ".join(q.query.split())
            hits = search.search(SearchRequest(question, alias, retrieval.top_k)).hits
            cands = ctx.to_candidates(hits, retrieval.score_mode)
            short = is_short_query(question, retrieval.short_query)
            qid = f"{golden.path.name}:{q.id}"
            group = q.group or next(iter(q.expected_sources), None) or qid
            judged.append(judge_query(qid, golden.path.name, f"{golden.path.name}:{group}", q.expected_mode,
                                      q.must_contain, question, short, cands, judge, retrieval,
                                      lambda chunks: unknown_words(store, alias, question, chunks)))
            questions[qid] = q
            old = decide_answer_mode(attach_scores(cands, question, scorer, base_today), base_today, short)
            decided[qid] = (old.mode, float(old.max_evidence or 0.0))
    return Collected(judged, questions, decided)


def must_contain_on_rag(collected: Collected, queries: Sequence[JudgedQuery], model: AnswerabilityModel,
                        settings: Any, scorer: SentenceScorer, base: Settings) -> tuple[int, int]:
    """(passed, checked): the extractive answer under ``model`` of every query decided ``rag``."""
    from backend.providers.local.extractive import ExtractiveChatModel

    answerer = ExtractiveChatModel(None, answerability=settings.answerability,
                                   max_sentences=base.llm.primary.max_sentences,
                                   max_answer_chars=base.llm.primary.max_answer_chars)
    answerer.scorer = scorer
    answerer._judge = AnswerabilityJudge(scorer, model)  # one vector cache for the whole run
    passed = checked = 0
    for q in queries:
        golden = collected.questions[q.id]
        if q.expected_mode != "rag" or not golden.must_contain:
            continue
        decision = decide_answer_mode(scored_candidates(q, model, settings.answerability.min_sentence_relevance),
                                      settings, q.short_query)
        if decision.mode != "rag":
            continue
        used = decision.context.used
        text, _ = answerer.generate_explained(ChatRequest("rag", "", " ".join(golden.query.split()),
                                                          tuple(c.chunk for c in used), tuple(c.similarity for c in used)))
        checked += 1
        passed += rm.contains_all(text, golden.must_contain)[0]
    return passed, checked


def _share(held: HeldOut, golden: str, expected: str, decided: str) -> float:
    rows = [d for g, e, d, _ in held.decisions if g == golden and e == expected]
    return sum(d == decided for d in rows) / len(rows) if rows else 0.0


def measure(base_config: Path, embedder: Any, work: Path, *, source: Path | None = None, quick: bool = False,
            folds: int = 5) -> Section:
    from backend.providers.sqlite_vs.store import SqliteVectorStore

    section = Section("Answer modes on questions nobody here wrote (SQuAD 2.0 train articles, folds by article)")
    source = source or (REPO_ROOT / squad.DEFAULT_SOURCE)
    started = time.perf_counter()
    built = squad.build(source, work / "squad", max_questions_per_article=60 if quick else None) \
        if source.exists() else None
    if built is None:
        section.notes.append(f"SQuAD source {source} not found: only the shipped sets are measured")
    settings = workspace_settings(base_config, work, built.golden if built else None)
    store = SqliteVectorStore(settings.resolve_path(settings.store.sqlite.path))
    try:
        ingest_all(settings, store, embedder, built.manifest if built else None)
        calib_paths = [REPO_ROOT / p for p in SHIPPED] + ([built.golden] if built else [])
        collected = collect(settings, store, embedder, [*calib_paths, REPO_ROOT / OFFTOPIC])
        offtopic_name = Path(OFFTOPIC).name
        calib = [q for q in collected.judged if q.golden != offtopic_name]
        off = [q for q in collected.judged if q.golden == offtopic_name]
        base = settings.retrieval
        result = cross_validate(calib, base, k=folds)
        held = result.held_out
        scorer = SentenceScorer(embedder)
        for name, score in held.by_golden.items():
            section.figures[f"{name}: held-out mode accuracy"] = f"{score.accuracy:.4f} ({score.correct}/{score.queries})"
        squad_name = built.golden.name if built else None
        if squad_name:
            un_rag = _share(held, squad_name, "fallback", "rag")
            an_rag = _share(held, squad_name, "rag", "rag")
            auc = held.auc(squad_name) or 0.0
            today_rows = [(q.expected_mode, *collected.today[q.id]) for q in calib if q.golden == squad_name]
            t_un = [m for e, m, _ in today_rows if e == "fallback"]
            t_an = [m for e, m, _ in today_rows if e == "rag"]
            section.figures["squad: questions (answerable / unanswerable)"] = f"{len(t_an)} / {len(t_un)}"
            section.figures["squad today: unanswerable answered rag"] = round(t_un.count("rag") / max(1, len(t_un)), 4)
            section.figures["squad today: answerable answered rag"] = round(t_an.count("rag") / max(1, len(t_an)), 4)
            section.figures["squad today: ROC AUC of evidence score"] = _auc(today_rows)
            passed = checked = 0
            for index, _, model, setting in result.folds:
                fold_ids = _fold_members(calib, folds, index)
                fold_settings = _with_model(base, model, setting)
                p, c = must_contain_on_rag(collected, [q for q in fold_ids if q.golden == squad_name], model,
                                           fold_settings, scorer, settings)
                passed, checked = passed + p, checked + c
            mc = passed / checked if checked else 0.0
            section.figures["squad held out: must_contain on rag answers"] = f"{mc:.4f} ({passed}/{checked})"
            section.target("squad: unanswerable answered rag", un_rag, "<=", 0.10)
            section.target("squad: answerable answered rag", an_rag, ">=", 0.60)
            section.target("squad: must_contain on rag answers", mc, ">=", 0.85)
            section.target("squad: ROC AUC answerable vs unanswerable", auc, ">=", 0.80)
        final = _with_model(base, result.model, result.setting)
        off_modes = [m for _, _, m, _ in held_out_decisions(off, result.model, result.setting, base)]
        fallback_share = off_modes.count("fallback") / max(1, len(off_modes))
        section.figures["off-topic questions"] = f"{len(off_modes)}: " + ", ".join(
            f"{m} {off_modes.count(m)}" for m in ("rag", "hybrid", "fallback"))
        t_off = [collected.today[q.id][0] for q in off]
        section.figures["off-topic today"] = ", ".join(f"{m} {t_off.count(m)}" for m in ("rag", "hybrid", "fallback"))
        section.target("off-topic questions answered fallback", fallback_share, ">=", 1.0)
        shipped = [q for q in calib if q.golden != squad_name]
        shipped_rows = [d for d in held.decisions if d[0] != squad_name]
        acc = sum(e == d for _, e, d, _ in shipped_rows) / max(1, len(shipped_rows))
        unans_rag = sum(e == "fallback" and d == "rag" for _, e, d, _ in shipped_rows)
        section.figures["shipped sets: held-out queries"] = len(shipped)
        section.target("shipped sets: held-out mode accuracy", acc, ">=", 0.90)
        section.target("shipped sets: unanswerable answered rag (count)", unans_rag, "<=", 0)
        section.figures["fitted model (all folds)"] = {"intercept": result.model.intercept, **result.model.weights}
        section.figures["fitted thresholds (all folds)"] = (f"low {result.setting.threshold_low} "
                                                            f"high {result.setting.threshold_high}")
        section.figures["suggested retrieval block"] = result.suggested(base)
        section.figures["seconds"] = round(time.perf_counter() - started, 1)
        section.notes.append(f"folds: {folds} by article (SQuAD) and by expected document (shipped sets); the "
                             "off-topic set is never fitted on")
        del final
    finally:
        store.close()
    return section


def _fold_members(queries: Sequence[JudgedQuery], k: int, index: int) -> list[JudgedQuery]:
    from backend.core.services.answerability_fit import folds_by_group

    return [queries[i] for i in folds_by_group(queries, k)[index - 1]]


def _auc(rows: Sequence[tuple[str, str, float]]) -> float | None:
    pos = [s for e, _, s in rows if e == "rag"]
    neg = [s for e, _, s in rows if e == "fallback"]
    if not pos or not neg:
        return None
    from sklearn.metrics import roc_auc_score

    return round(float(roc_auc_score([1] * len(pos) + [0] * len(neg), pos + neg)), 4)
