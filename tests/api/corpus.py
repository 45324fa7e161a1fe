"""A small real corpus for the chat tests: three clearly different topics.

Written with the real embedder into a real SQLite store: version KB_CHAT_V1 (HR
handbook with one figure chunk, volcanoes) behind the default alias KB_ACTIVE
and the ``handbook`` domain's KB_HANDBOOK, and version KB_COFFEE_V1 (espresso)
behind the ``coffee`` domain's alias KB_COFFEE.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from backend.common.config import Settings
from backend.core.types import Chunk, DocumentWrite, VersionSpec, content_hash
from tests.conftest import make_settings

HR = [
    "Full-time employees receive 25 days of paid annual leave per calendar year. Part-time employees receive "
    "annual leave in proportion to their contracted hours.",
    "Annual leave requests must be submitted through the HR portal at least two weeks in advance. Your line "
    "manager approves or rejects the request within five working days.",
    "Up to five days of unused annual leave may be carried over into the next calendar year. Carried-over days "
    "expire on 31 March if they are not taken.",
    "Employees who are ill must notify their manager before 10:00 on the first day of absence. A medical "
    "certificate is required for sick leave longer than three consecutive days.",
    "Parents are entitled to sixteen weeks of paid parental leave after the birth or adoption of a child. "
    "Parental leave can be split into at most three separate blocks.",
    "Employees may work from home up to two days per week with the agreement of their manager. Remote work "
    "equipment such as a laptop and a headset is provided by the company.",
]
HR_FIGURE = (
    "Figure: flowchart of the annual leave request approval workflow in the HR portal, from submission to "
    "manager approval."
)
VOLCANO = [
    "A volcano is an opening in the Earth's crust through which molten rock, ash and gases escape. Most "
    "volcanoes form along the boundaries of tectonic plates.",
    "Shield volcanoes, such as Mauna Loa in Hawaii, are built by fluid basaltic lava flows and have gentle, "
    "broad slopes.",
    "Stratovolcanoes are steep cones built from alternating layers of lava and ash. Their eruptions are often "
    "explosive because their magma is viscous and rich in gas.",
    "Pyroclastic flows are fast-moving currents of hot gas and volcanic debris that can travel down the slopes "
    "of a volcano at more than 100 kilometres per hour.",
    "Volcanologists monitor seismic activity, ground deformation and gas emissions to forecast eruptions and "
    "warn nearby communities.",
]
COFFEE = [
    "Espresso is brewed by forcing hot water at about nine bars of pressure through finely ground coffee for "
    "25 to 30 seconds.",
    "A standard double espresso uses 18 grams of ground coffee and yields about 36 grams of liquid in the cup.",
    "Coffee beans should be ground just before brewing, because ground coffee loses its aroma within minutes "
    "of exposure to air.",
    "Milk for a cappuccino is steamed to about 60 degrees Celsius, producing a fine microfoam that is poured "
    "over the espresso.",
]

MAIN_VERSION, COFFEE_VERSION = "KB_CHAT_V1", "KB_COFFEE_V1"
FIGURE_ID = "hr-handbook#fig-001"
IMAGE_REF = "hr-handbook/img_001.png"

#: Questions whose similarity on this corpus lands clearly in each band (all-MiniLM-L6-v2).
RAG_QUESTION = "How many days of paid annual leave do full-time employees get?"  # top ~0.85
HYBRID_QUESTION = "What are the rules for taking time off work?"  # top ~0.45, five chunks >= 0.35
FALLBACK_QUESTION = "What is the capital city of Australia?"  # top ~0.11
FIGURE_QUESTION = "What is the approval workflow for leave requests?"  # figure ~0.68 above text ~0.60
COFFEE_QUESTION = "How much coffee goes into a double espresso?"  # coffee ~0.83


def _document(doc_id: str, source: str, texts: list[str], embedder: Any) -> DocumentWrite:
    chunks = [Chunk(f"{doc_id}#{i}", doc_id, t, source, i, metadata={"topic": doc_id}) for i, t in enumerate(texts)]
    return DocumentWrite(doc_id, content_hash("".join(texts)), chunks, embedder.embed_documents(texts))


def _hr_document(embedder: Any) -> DocumentWrite:
    source = "data/hr/handbook.docx"
    chunks = [Chunk(f"hr-handbook#{i}", "hr-handbook", t, source, i, metadata={"topic": "hr-handbook"})
              for i, t in enumerate(HR)]
    figure = Chunk(
        FIGURE_ID, "hr-handbook", HR_FIGURE, source, len(HR), chunk_type="figure",
        metadata={"topic": "hr-handbook", "figure_id": "fig-001", "image_ref": IMAGE_REF,
                  "parent_chunk_id": "hr-handbook#1"},
    )
    return DocumentWrite("hr-handbook", content_hash("".join(HR)), [*chunks, figure],
                         embedder.embed_documents([*HR, HR_FIGURE]))


def corpus_settings(tmp: Path, **extra: Any) -> Settings:
    base: dict[str, Any] = {
        "embeddings": {"domains": {"coffee": {"index_name": COFFEE_VERSION, "alias_name": "KB_COFFEE"}}},
        # the fixture questions were written for the chunk-similarity decision and these thresholds;
        # the shipped (calibrated, evidence) profile is tested on the golden sets in tests/eval
        "retrieval": {"decision_score": "similarity", "threshold_low": 0.35, "threshold_high": 0.55,
                      "hybrid": {"min_similarity_for_hybrid": 0.35, "min_chunks_for_hybrid": 2,
                                 "min_total_context_chars": 300}},
    }
    from backend.common.config import _deep_merge

    return make_settings(tmp, **_deep_merge(base, extra))


@dataclass
class Corpus:
    settings: Settings
    store: Any
    path: Path


def build_corpus(tmp: Path, embedder: Any) -> Corpus:
    """Two versions, three aliases, 16 chunks; takes about a second of embedding."""
    from backend.providers.sqlite_vs.store import SqliteVectorStore

    settings = corpus_settings(tmp)
    store = SqliteVectorStore(settings.resolve_path(settings.store.sqlite.path))
    for name in (MAIN_VERSION, COFFEE_VERSION):
        store.create_version(VersionSpec(name, embedder.model_id, embedder.dimension, "cosine", "sample"))
    store.write_documents(MAIN_VERSION, [_hr_document(embedder),
                                         _document("volcanoes", "data/science/volcanoes.md", VOLCANO, embedder)])
    store.write_documents(COFFEE_VERSION, [_document("espresso", "data/coffee/espresso.md", COFFEE, embedder)])
    store.point_alias("KB_ACTIVE", MAIN_VERSION, reason="test corpus")
    store.point_alias("KB_HANDBOOK", MAIN_VERSION, reason="test corpus")
    store.point_alias("KB_COFFEE", COFFEE_VERSION, reason="test corpus")
    return Corpus(settings, store, tmp)
