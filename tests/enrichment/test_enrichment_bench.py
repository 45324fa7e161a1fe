"""`rag bench --section enrich` runs end to end on a small CISI-format collection and the sample
corpus (non-generative providers only here: the figures of the local model are a benchmark's job)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from backend.benchmarks import enrichment
from backend.common.config import DEFAULT_CONFIG
from tests.test_benchmarks_smoke import collection  # noqa: F401 - fixture


def test_enrich_section_reports_cost_and_every_strategy(collection: Path, tmp_path: Path,  # noqa: F811
                                                       embedder: Any) -> None:
    section = enrichment.measure(DEFAULT_CONFIG, embedder, tmp_path, cisi_dir=collection, llm_docs=12,
                                 providers=("none", "extractive"), corpora=("sample-sub", "cisi-sub"), sample_docs=3)
    rows = section.figures
    assert len(rows) == 4
    none = next(v for k, v in rows.items() if k.startswith("CISI sub-corpus") and k.endswith("none"))
    extractive = next(v for k, v in rows.items() if k.startswith("CISI sub-corpus") and k.endswith("extractive"))
    assert none["chunks"] == extractive["chunks"] == 12 and none["questions"] == 0 and "hyde" not in none
    assert extractive["questions"] > 0 and extractive["summaries"] == 12 and extractive["llm_calls"] == 0
    for key in ("dense", "hyde", "summary", "dense+hyde", "dense+summary", "dense+hyde+summary"):
        assert extractive[key].startswith("nDCG@10 ")
    sample = next(v for k, v in rows.items() if k.startswith("sample golden") and k.endswith("extractive"))
    assert sample["chunks"] > 3 and sample["enrich_s_per_1k_chunks"] > 0
