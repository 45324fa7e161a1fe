"""The enriched-retrieval rows of ``rag bench --section quality``, alone.

Same functions and settings as the full section (``quality.enriched_store`` and
``quality.measure_enriched``), without its tuning grid and header store, so the
HyDE / hierarchical figures of docs/BENCHMARKS.md can be re-measured in a few
minutes: ``.venv/bin/python scripts/bench_enriched.py [CISI_DIR] [--provider extractive]``.
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from backend.benchmarks import ingestion, quality
from backend.benchmarks.cisi import DEFAULT_DIR, load_documents, load_qrels, load_queries
from backend.benchmarks.stats import Section
from backend.common.config import DEFAULT_CONFIG, load_settings
from backend.providers.local.embedder import make_local_embedder
from backend.providers.sqlite_vs.dense import limit_blas_threads


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("cisi", nargs="?", type=Path, default=DEFAULT_DIR)
    parser.add_argument("--provider", default="extractive", help="enrichment.provider of the enriched version")
    args = parser.parse_args()
    settings = load_settings(DEFAULT_CONFIG, env={})
    limit_blas_threads(settings.store.sqlite.blas_threads)
    embedder = quality.MemoEmbedder(make_local_embedder(settings.embeddings))
    with tempfile.TemporaryDirectory(prefix="rag-bench-enriched-") as tmp:
        work = Path(tmp)
        run = quality.enriched_store(DEFAULT_CONFIG, embedder, load_documents(args.cisi), work, provider=args.provider)
        cisi = ingestion.bench_settings(DEFAULT_CONFIG, work / f"corpus-enriched-{args.provider}", work / "unused.sqlite",
                                        False)
        cisi = cisi.model_copy(update={"embeddings": cisi.embeddings.model_copy(
            update={"default_profile": ingestion.CISI_PROFILE})})
        section = Section("Retrieval quality (CISI, nDCG@10, binary gains)")
        quality.measure_enriched(cisi, run, embedder, ingestion.CISI_VERSION, load_queries(args.cisi),
                                 load_qrels(args.cisi), section)
        print(section.render())
        run.store.close()


if __name__ == "__main__":
    main()
