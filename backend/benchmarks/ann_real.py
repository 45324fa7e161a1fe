"""The embedded store's HNSW index on real embeddings: the largest real set built here (issue 33).

The 1M figures of ``ann_scale`` use vectors generated to MiniLM's neighbour statistics. This
checks the index on vectors the configured model really produced: every sentence and 80-word
passage of the CISI abstracts, every paragraph and sentence of the SQuAD 2.0 training articles
(``../shared/bench``) and every sentence of this project's docs/, embedded as documents,
searched by the CISI queries and SQuAD questions embedded as queries (held out: they are not in
the store). Above ``store.sqlite.ann.min_vectors`` rows, so ``finish_load`` builds the index;
figures as ``ann_scale``'s: build time, dense p50 by the index and by the exact scan, recall@10 of
the one against the other, the index's size against the raw float32 vectors.
"""

from __future__ import annotations

import json
import random
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from backend.benchmarks import ann_scale, cisi, squad
from backend.benchmarks.stats import Section, percentiles
from backend.common.config import REPO_ROOT, SqliteAnnSettings
from backend.core.sentence_segments import split_sentences
from backend.core.types import QueryVector
from backend.providers.sqlite_vs import ann
from backend.providers.sqlite_vs.store import SqliteVectorStore

QUERIES = 300
DOCS = REPO_ROOT / "docs"


def texts(cisi_dir: Path, squad_file: Path) -> tuple[list[str], list[str]]:
    """``(sentences to store, questions to ask)``, each list without repeats, in a fixed order."""
    sentences: dict[str, None] = {}
    for abstract in cisi.load_documents(cisi_dir).values():
        sentences.update((s, None) for s in split_sentences(" ".join(abstract.split())) if len(s.split()) >= 4)
    questions = list(cisi.load_queries(cisi_dir).values())
    for abstract in cisi.load_documents(cisi_dir).values():  # and 80-word passages, as the chunker cuts them
        words = abstract.split()
        sentences.update((" ".join(words[i:i + 80]), None) for i in range(0, len(words), 80))
    for doc in sorted(DOCS.glob("*.md")):  # this project's own documentation, sentence by sentence
        sentences.update((s, None) for s in split_sentences(doc.read_text(encoding="utf-8"))
                         if len(s.split()) >= 4)
    if squad_file.is_file():
        data = json.loads(squad_file.read_text(encoding="utf-8"))["data"]
        for article in data:
            for p in article["paragraphs"]:
                context = " ".join(p["context"].split())
                sentences[context] = None
                sentences.update((s, None) for s in split_sentences(context) if len(s.split()) >= 4)
        asked = [q["question"] for a in data for p in a["paragraphs"] for q in p["qas"]]
        questions += random.Random(7).sample(asked, min(len(asked), QUERIES))
    return list(sentences), list(dict.fromkeys(" ".join(q.split()) for q in questions))[:QUERIES]


def measure(embedder: Any, settings: SqliteAnnSettings, cisi_dir: Path,
            squad_file: Path = squad.DEFAULT_SOURCE, *, limit: int | None = None, queries_limit: int = QUERIES) -> Section:
    """``limit``: store only the first texts (a smoke run)."""
    section = Section("ANN index on real embeddings (CISI, SQuAD and docs/ text, the configured model)")
    corpus, questions = texts(cisi_dir, squad_file)
    corpus, questions = corpus[:limit], questions[:queries_limit]
    n = len(corpus) // ann_scale.PER_DOC * ann_scale.PER_DOC
    t0 = time.perf_counter()
    vectors = np.asarray(embedder.embed_documents(corpus[:n]), dtype=np.float32)
    queries = np.asarray(embedder.embed_queries(questions), dtype=np.float32)
    section.figures["vectors / held-out queries"] = f"{n} / {len(queries)} (model {embedder.model_id}, " \
                                                    f"{vectors.shape[1]} dims, embedded in {time.perf_counter() - t0:.0f} s)"
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "real.sqlite"
        store = SqliteVectorStore(db, ann_settings=settings)
        ann_scale.fill(store, vectors, embedder.model_id)
        exact = SqliteVectorStore(db, ann_settings=SqliteAnnSettings(enabled=False))
        model = embedder.model_id
        exact.dense_candidates(ann_scale.VERSION, QueryVector(queries[0], model), 10)
        t0 = time.perf_counter()
        store.finish_load(ann_scale.VERSION)
        build_s = time.perf_counter() - t0
        approx_ms, exact_ms, recall, kinds = ann_scale.index_against_exact(store, exact, queries, model)
        index_path = ann.index_file(store.path, ann_scale.VERSION)
        index_bytes = index_path.stat().st_size if index_path.exists() else 0
        raw = n * vectors.shape[1] * 4
        ap, ex = percentiles(approx_ms), percentiles(exact_ms)
        section.figures["index build s (finish_load)"] = round(build_s, 1)
        section.figures["dense candidates ms, HNSW"] = ann_scale._fmt(ap)
        section.figures["dense candidates ms, exact"] = ann_scale._fmt(ex)
        section.figures["path used"] = ",".join(sorted(str(k) for k in kinds))
        section.figures["recall@10 vs exact"] = round(recall, 4)
        section.figures["index MB / raw float32 MB"] = f"{index_bytes / 2**20:.1f} / {raw / 2**20:.1f}"
        section.target(f"real embeddings ({n}): dense p50 ms", ap["p50"], "<=", 2.0)
        section.target(f"real embeddings ({n}): recall@10 vs exact", recall, ">=", 0.97)
        section.target(f"real embeddings ({n}): the index served the searches", float("hnsw" in kinds), ">=", 1.0)
        exact.close()
        store.close()
    section.notes.append("sentences of at least 4 words, each stored once; queries never stored; one query at a time "
                         "in one thread; the store's own settings (store.sqlite.ann)")
    return section
