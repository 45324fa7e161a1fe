"""CISI retrieval quality through the product's own search service.

Parses the CISI test collection (``CISI.ALL`` / ``CISI.QRY`` / ``CISI.REL``),
embeds title + abstract of its 1,460 documents with the real embedder into a
real store (once: unchanged documents are skipped on the next run), runs the 76
judged queries through ``SearchService`` per strategy and scores nDCG@10 with
binary gains. ``rag bench`` calls :func:`run_cisi`; run this file directly for a
quick report::

    .venv/bin/python scripts/cisi.py --store /tmp/cisi.sqlite [--strategy fusion ...]

Baselines and fusion are always measured in the same run, on the same store.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import sys
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from backend.common.config import ProfileSettings, RetrievalSettings  # noqa: E402
from backend.core.embedding_text import document_input  # noqa: E402
from backend.core.types import Chunk, DocumentWrite, VersionSpec, content_hash  # noqa: E402

DEFAULT_DIR = Path("/work/shared/bench/cisi")
VERSION = "CISI_V1"
_MARKER = re.compile(r"^\.([A-Z])(?:\s+(\S+))?\s*$")


def parse_records(path: Path) -> dict[str, dict[str, str]]:
    """``id -> {field letter: text}`` for the ``.I`` / ``.T`` / ``.W`` ... format;
    a field's text runs until the next marker line."""
    records: dict[str, dict[str, str]] = {}
    current: dict[str, list[str]] | None = None
    field = ""
    for line in path.read_text(encoding="latin-1").splitlines():
        m = _MARKER.match(line)
        if m and m.group(1) == "I" and m.group(2):
            current = {}
            records[m.group(2)] = current  # type: ignore[assignment]
            field = ""
        elif m and m.group(2) is None and current is not None:
            field = m.group(1)
            current.setdefault(field, [])
        elif current is not None and field:
            current[field].append(line.strip())
    return {rid: {f: " ".join(" ".join(lines).split()) for f, lines in rec.items()}  # type: ignore[union-attr]
            for rid, rec in records.items()}


def load_documents(folder: Path) -> dict[str, str]:
    """Title plus abstract, as the collection's README prescribes."""
    recs = parse_records(folder / "CISI.ALL")
    return {rid: f"{r.get('T', '')}\n{r.get('W', '')}".strip() for rid, r in recs.items()}


def load_queries(folder: Path) -> dict[str, str]:
    recs = parse_records(folder / "CISI.QRY")
    return {rid: " ".join(r.get(f, "") for f in ("T", "W") if r.get(f)).strip() for rid, r in recs.items()}


def load_qrels(folder: Path) -> dict[str, set[str]]:
    qrels: dict[str, set[str]] = {}
    for line in (folder / "CISI.REL").read_text(encoding="latin-1").splitlines():
        parts = line.split()
        if len(parts) >= 2:
            qrels.setdefault(parts[0], set()).add(parts[1])
    return qrels


def ndcg_at_k(ranked: Sequence[str], relevant: Iterable[str], k: int = 10) -> float:
    """nDCG@k with binary gains: DCG = sum over relevant ranks i of 1/log2(i+1),
    divided by the DCG of a perfect ranking of min(k, |relevant|) documents."""
    rel = set(relevant)
    if not rel:
        return 0.0
    dcg = sum(1.0 / math.log2(i + 2) for i, doc in enumerate(ranked[:k]) if doc in rel)
    ideal = sum(1.0 / math.log2(i + 2) for i in range(min(k, len(rel))))
    return dcg / ideal


def build_store(store: Any, embedder: Any, documents: Mapping[str, str], profile: ProfileSettings,
                batch: int = 64, progress: bool = True) -> int:
    """Embed and write every document whose text changed; returns how many were embedded."""
    from tqdm import tqdm

    store.create_version(VersionSpec(VERSION, embedder.model_id, embedder.dimension, profile.distance, "cisi"))
    known = store.document_hashes(VERSION)
    todo = [d for d, text in documents.items() if known.get(d) != content_hash(document_input(text, profile))]
    for start in tqdm(range(0, len(todo), batch), desc="cisi embed", unit="batch", disable=not progress,
                      file=sys.stderr):
        ids = todo[start:start + batch]
        inputs = [document_input(documents[d], profile) for d in ids]
        vectors = embedder.embed_documents(inputs)
        writes = [
            DocumentWrite(d, content_hash(inp), [Chunk(f"cisi-{d}#0", d, documents[d], f"CISI.ALL#{d}", 0)], vectors[i:i + 1])
            for i, (d, inp) in enumerate(zip(ids, inputs))
        ]
        store.write_documents(VERSION, writes)
    return len(todo)


class QueryMemo:
    """Wraps an embedder so each query is embedded once for all strategies of a run
    (the strategies differ in ranking, not in the query vector)."""

    def __init__(self, embedder: Any) -> None:
        self._embedder = embedder
        self.model_id = embedder.model_id
        self.dimension = embedder.dimension
        self._memo: dict[str, Any] = {}

    def embed_documents(self, texts: Sequence[str]) -> Any:
        return self._embedder.embed_documents(texts)

    def embed_queries(self, texts: Sequence[str]) -> Any:
        import numpy as np

        missing = [t for t in dict.fromkeys(texts) if t not in self._memo]
        if missing:
            self._memo.update(zip(missing, self._embedder.embed_queries(missing)))
        return np.stack([self._memo[t] for t in texts])


def evaluate(service: Any, queries: Mapping[str, str], qrels: Mapping[str, set[str]],
             strategies: Sequence[str], k: int = 10) -> dict[str, float]:
    """Mean nDCG@k per strategy over the judged queries."""
    from backend.core.services.search_service import SearchRequest

    judged = sorted((q for q in qrels if q in queries), key=int)
    scores: dict[str, float] = {}
    for strategy in strategies:
        total = 0.0
        for qid in judged:
            outcome = service.search(SearchRequest(queries[qid], VERSION, k, strategy=strategy))
            total += ndcg_at_k([h.chunk.doc_id for h in outcome.hits], qrels[qid], k)
        scores[strategy] = round(total / len(judged), 4)
    return scores


def run_cisi(store_path: str | Path, embedder: Any, strategies: Sequence[str] = ("dense", "lexical", "fusion"),
             retrieval: RetrievalSettings | None = None, folder: Path = DEFAULT_DIR,
             progress: bool = True) -> dict[str, float]:
    """nDCG@10 per strategy on CISI, through ``SearchService`` over a SQLite store at
    ``store_path`` (built on first use, reused afterwards)."""
    from backend.core.services.search_service import SearchService
    from backend.providers.sqlite_vs.store import SqliteVectorStore

    profile = ProfileSettings(index_name=VERSION)
    store = SqliteVectorStore(store_path)
    try:
        build_store(store, embedder, load_documents(folder), profile, progress=progress)
        service = SearchService(store, QueryMemo(embedder), profile, retrieval or RetrievalSettings())
        return evaluate(service, load_queries(folder), load_qrels(folder), strategies)
    finally:
        store.close()


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--store", default="data/bench/cisi.sqlite", help="SQLite file (reused between runs).")
    parser.add_argument("--dir", default=str(DEFAULT_DIR), help="Folder with CISI.ALL, CISI.QRY, CISI.REL.")
    parser.add_argument("--strategy", action="append", choices=["dense", "lexical", "fusion"],
                        help="Repeat for several; default all three.")
    parser.add_argument("--fusion", default="{}", help='JSON overrides of retrieval.fusion, e.g. \'{"k": 30}\'.')
    args = parser.parse_args(argv)

    from backend.common.config import FusionSettings, Settings
    from backend.common.logging import configure_logging
    from backend.providers.local.embedder import LocalEmbedder

    configure_logging()
    retrieval = RetrievalSettings(fusion=FusionSettings(**json.loads(args.fusion)))
    scores = run_cisi(args.store, LocalEmbedder(Settings().embeddings), args.strategy or ("dense", "lexical", "fusion"),
                      retrieval, Path(args.dir))
    print(json.dumps({"ndcg@10": scores, "fusion": retrieval.fusion.model_dump()}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
