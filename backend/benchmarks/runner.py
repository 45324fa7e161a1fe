"""Runs every benchmark section and prints figures, ratios and targets."""

from __future__ import annotations

import contextlib
import json
import platform
import os
import tempfile
import time
from pathlib import Path
from typing import Any

from backend.benchmarks import embedding, ingestion, pii, quality, scale, serving
from backend.benchmarks.cisi import load_documents, load_qrels, load_queries, load_titles
from backend.benchmarks.stats import Section, peak_rss_mb
from backend.common.config import DEFAULT_CONFIG, load_settings

#: the rule decision of issue 29 that the answer reader replaced (``--section answers-features`` measures it)
RULES_CONFIG = DEFAULT_CONFIG.with_name("evidence-rules.yaml")


def machine() -> dict[str, Any]:
    import torch

    return {
        "python": platform.python_version(),
        "platform": platform.platform(),
        "cpu": platform.processor() or platform.machine(),
        "cores": os.cpu_count(),
        "torch": torch.__version__,
        "torch_threads": torch.get_num_threads(),
    }


def run(cisi_dir: Path, sizes: tuple[int, ...], sections: tuple[str, ...], config: Path = DEFAULT_CONFIG,
        emit: Any = print, quick: bool = False, ann_sizes: tuple[int, ...] = (100_000,),
        docs: int = 100_000, work_dir: Path | None = None, pii_set: Path | None = None,
        connector_items: int = 10_000) -> list[Section]:
    """``pii_set``: the folder of the public labelled PII set (default ``data/pii_public``)."""
    from backend.providers.local.embedder import make_local_embedder
    from backend.providers.sqlite_vs.dense import limit_blas_threads

    settings = load_settings(config, env={})
    limit_blas_threads(settings.store.sqlite.blas_threads)  # as build_store does for rag serve
    out: list[Section] = []
    started = time.perf_counter()
    emit(f"machine: {json.dumps(machine())}")
    # --work keeps the workspace (stores, built sets) for a later run, which re-embeds nothing already there
    with (contextlib.nullcontext(str(work_dir)) if work_dir else tempfile.TemporaryDirectory(prefix="rag-bench-")) as tmp:
        work = Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        if "embed" in sections:  # first: its runtimes run in fresh processes, before this one grows
            section = embedding.measure(config, cisi_dir, work)
            out.append(section)
            emit(section.render())
        # the configured runtime (embeddings.local.runtime), as `rag ingest` and `rag serve` build it
        if "ingest-scale" in sections:  # its own `rag ingest` processes, before this one loads a model
            from backend.benchmarks import ingest_scale

            section = ingest_scale.measure(config, docs, work / "ingest-scale", emit=emit)
            out.append(section)
            emit(section.render())
        embedder = (make_local_embedder(settings.embeddings)
                    if set(sections) - {"embed", "pii", "ocr", "ingest-scale"} else None)
        if {"ingest", "quality"} & set(sections):
            documents = load_documents(cisi_dir)
            if "ingest" in sections:
                ingest_section, plain = ingestion.measure(config, embedder, documents, work)
                out.append(ingest_section)
                emit(ingest_section.render())
            else:  # quality alone needs the plain store only
                manifest = ingestion.write_corpus(documents, work / "corpus")
                plain = ingestion.run_pipeline(
                    ingestion.bench_settings(config, work / "corpus", work / "plain.sqlite", False), embedder, manifest)
            if "quality" in sections:
                cisi_settings = ingestion.bench_settings(config, work / "corpus", work / "plain.sqlite", False)
                cisi_settings = cisi_settings.model_copy(update={"embeddings": cisi_settings.embeddings.model_copy(
                    update={"default_profile": ingestion.CISI_PROFILE})})
                memo = quality.MemoEmbedder(embedder)  # each document text embedded once for the whole section
                headed = quality.header_store(config, memo, documents, load_titles(cisi_dir), work)
                section = quality.measure(cisi_settings, plain.store, memo, ingestion.CISI_VERSION, documents,
                                          load_queries(cisi_dir), load_qrels(cisi_dir), headed_store=headed)
                headed.close()
                # seeds 001/002 on the non-generative enricher (offline, no model download)
                enriched = quality.enriched_store(config, memo, documents, work, provider="extractive")
                quality.measure_enriched(cisi_settings, enriched, memo, ingestion.CISI_VERSION,
                                         load_queries(cisi_dir), load_qrels(cisi_dir), section)
                enriched.store.close()
                out.append(section)
                emit(section.render())
            plain.store.close()
        if "latency" in sections:
            section = scale.measure(embedder, sizes, settings=settings)
            out.append(section)
            emit(section.render())
        if "ray" in sections:  # the Ray engine against the single process, side by side (the `ray` extra)
            from backend.benchmarks import ray_ingest

            section = ray_ingest.measure(config, embedder, load_documents(cisi_dir), work)
            out.append(section)
            emit(section.render())
        if "scale" in sections:
            from backend.benchmarks import ann_scale

            section = ann_scale.measure(ann_sizes, settings.store.sqlite.ann, embedder=embedder, app_settings=settings)
            out.append(section)
            emit(section.render())
            from backend.benchmarks import ann_real

            section = ann_real.measure(embedder, settings.store.sqlite.ann, cisi_dir)
            out.append(section)
            emit(section.render())
        if "http" in sections:
            section = serving.measure(config, embedder, work)
            out.append(section)
            emit(section.render())
        if "pii" in sections:
            from backend.benchmarks import pii_fp, pii_public

            for section in (pii.measure(config), pii_public.measure(config, pii_set or pii_public.DEFAULT_DIR),
                            pii_fp.measure(config)):
                out.append(section)
                emit(section.render())
        if "ocr" in sections:
            from backend.benchmarks import ocr

            section = ocr.measure(settings, work / "ocr")
            out.append(section)
            emit(section.render())
        if "kb-folder" in sections:
            from backend.benchmarks import kb_folder

            section = kb_folder.measure(config, embedder)
            out.append(section)
            emit(section.render())
        if "connectors" in sections:
            from backend.benchmarks import connectors

            section = connectors.measure(config, embedder, items=connector_items)
            out.append(section)
            emit(section.render())
        if "answers" in sections:
            from backend.benchmarks import answer_decision

            section = answer_decision.measure(config, embedder, work, quick=quick)
            out.append(section)
            emit(section.render())
        if "answers-features" in sections:
            from backend.benchmarks import answers

            # the logistic features and the evidence decision: the rules' profile unless another is given
            features = RULES_CONFIG if config == DEFAULT_CONFIG else config
            section = answers.measure(features, embedder, work, quick=quick)
            out.append(section)
            emit(section.render())
        if "enrich" in sections:
            from backend.benchmarks import enrichment

            section = enrichment.measure(config, embedder, work, cisi_dir=cisi_dir, llm_docs=24, sample_docs=8,
                                         corpora=enrichment.CORPORA)
            out.append(section)
            emit(section.render())
    emit(f"total seconds: {time.perf_counter() - started:.0f}; peak RSS MB: {peak_rss_mb():.0f}")
    return out
