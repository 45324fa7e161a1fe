"""``rag tune`` on the sample golden set and the seeded store: the grid is measured,
printed with a suggested config, and nothing is applied (config, aliases unchanged)."""

from __future__ import annotations

import json
from typing import Any

from click.testing import CliRunner

from backend.cli.main import cli
from backend.common.config import Settings
from backend.core.services import tuning
from backend.core.golden import load_golden_set
from backend.core.ranking_metrics import ndcg_at_k, ranked_doc_ids
from backend.core.services.search_service import SearchRequest, SearchService
from tests.conftest import REPO
from tests.eval.conftest import SAMPLE_GOLDEN


def test_tune_prints_the_grid_and_a_snippet_and_applies_nothing(cli_env: Settings, eval_store: Any,
                                                                embedder: Any) -> None:
    config_before = (REPO / "config" / "rag.yaml").read_bytes()
    result = CliRunner().invoke(cli, ["tune", "--version", "KB_SAMPLE_V1", "--header-version", "KB_SAMPLE_V2",
                                      "--rerank-n", "5", "--json"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    body = json.loads(result.stdout)
    assert body["applied"] is False and body["target"] == "KB_SAMPLE_V1"
    labels = [r["label"] for r in body["results"]]
    assert len(labels) == len(tuning.default_grid(rerankers=("none", "sentences"), headers=(False, True),
                                                  rerank_ns=(5,)))
    assert "fusion rrf d1/l1 depth100" in labels and "fusion score d0.7/l0.3 depth100 rerank sentences@5" in labels
    assert body["baseline"] == "fusion rrf d1/l1 depth100"
    best = max(body["results"], key=lambda r: r["ndcg_at_10"])
    assert body["best"] == best["label"] and "retrieval:" in body["suggested_config"]

    # the plain-dense figure is what a search over the version really gives
    golden = [q for q in load_golden_set(SAMPLE_GOLDEN).queries if q.expected_sources]
    service = SearchService(eval_store, embedder, cli_env.embeddings.profiles["sample"], cli_env.retrieval)
    scores = [ndcg_at_k(ranked_doc_ids(h.chunk.doc_id for h in service.search(
        SearchRequest(" ".join(q.query.split()), "KB_SAMPLE_V1", tuning.CANDIDATES, strategy="dense")).hits)[:10],
        q.expected_sources, 10) for q in golden]
    dense = next(r for r in body["results"] if r["label"] == "dense")
    assert body["queries"] == len(golden)
    assert abs(dense["ndcg_at_10"] - round(sum(scores) / len(scores), 4)) < 1e-4
    assert (REPO / "config" / "rag.yaml").read_bytes() == config_before
    assert eval_store.list_aliases() == {}


def test_tune_table_and_bad_options(cli_env: Settings) -> None:
    result = CliRunner().invoke(cli, ["tune", "--version", "KB_SAMPLE_V1", "--rerankers", "none"],
                                catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[0].split()[:2] == ["candidate", "nDCG@10"]
    assert "suggested config (not applied" in result.stdout and "strategy:" in result.stdout
    bad = CliRunner().invoke(cli, ["tune", "--rerankers", "cohere"])
    assert bad.exit_code == 2 and "--rerankers" in bad.output and "cohere" in bad.output
    missing = CliRunner().invoke(cli, ["tune", "--version", "KB_NOPE"])
    assert missing.exit_code != 0 and "KB_NOPE" in missing.output


def test_tune_lexical_adds_stop_words_and_feedback_to_the_grid(cli_env: Settings) -> None:
    result = CliRunner().invoke(cli, ["tune", "--version", "KB_SAMPLE_V1", "--rerankers", "none", "--lexical",
                                      "--json"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    body = json.loads(result.stdout)
    labels = {r["label"]: r for r in body["results"]}
    assert {"fusion score d0.6/l0.4 depth100 stop english feedback 5",
            "fusion rrf k20 d1.5/l1 depth100 stop english",
            "fusion rrf k20 d1/l1 depth100 stop english feedback 5 qtf dense-feedback 5@0.5"} <= set(labels)
    assert len(labels) == len(body["results"])  # no candidate measured twice
    assert all(0.0 <= r["ndcg_at_10"] <= 1.0 for r in body["results"]) and body["applied"] is False


def test_the_lexical_grid_adds_query_term_frequency_and_dense_feedback_and_the_snippet_sets_them() -> None:
    grid = tuning.lexical_grid()
    assert len(grid) == len(set(grid)) == len(tuning.LEXICAL_SETTINGS) * 2 * 13  # plain fusion is one of them
    with_feedback = [c for c in grid if c.dense_feedback_docs]
    assert with_feedback and all(c.query_term_frequency and c.dense_feedback_weight == 0.5 for c in with_feedback)
    chosen = tuning.Candidate("fusion", "rrf", 1.0, 1.0, 200, k=20, stop_words="english", feedback_docs=5,
                              query_term_frequency=True, dense_feedback_docs=5)
    assert chosen in grid
    settings = chosen.retrieval(Settings().retrieval)
    assert settings.lexical.query_term_frequency and settings.fusion.dense_feedback_docs == 5
    snippet = tuning.suggested_config(chosen)
    assert "query_term_frequency: true" in snippet and "dense_feedback_docs: 5" in snippet
    plain = tuning.suggested_config(tuning.Candidate())
    assert "query_term_frequency" not in plain and "dense_feedback" not in plain
