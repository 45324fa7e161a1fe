"""Golden-set evaluation and the promotion gates."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from backend.common.config.base import _Model


class GateSettings(_Model):
    min_recall_at_k: float | None = Field(0.6, ge=0, le=1, description="Lowest mean recall@k a version may have to be promoted; null disables.")
    min_ndcg_at_10: float | None = Field(0.5, ge=0, le=1, description="Lowest mean nDCG@10 a version may have to be promoted; null disables.")
    min_mode_accuracy: float | None = Field(0.6, ge=0, le=1, description="Lowest share of golden queries whose decided answer mode equals the expected one; null disables.")
    max_unanswerable_as_rag: float | None = Field(
        0.0, ge=0, le=1, description="Abstention gate: largest share of the golden set's unanswerable questions "
        "(expected hybrid or fallback) that may be answered rag; null disables. A golden set without such questions "
        "is not gated.")
    max_regression: float | None = Field(0.05, ge=0, le=1, description="Largest allowed drop of any gated metric against the active version.")
    first_version_below_floor: Literal["serve", "refuse"] = Field(
        "serve", description="A knowledge base's FIRST version gated on its GENERATED starter set that misses a "
        "min_* floor: `serve` promotes it with the floor shown as a warning (the starter set is written from the "
        "documents, not by their users); `refuse` keeps it unserved and names the command that promotes it anyway "
        "(`rag index promote --domain-key KEY --version V --force`). A real golden set, a later version and the "
        "abstention gate are always enforced.")


class EvaluationSettings(_Model):
    golden_set: str | None = Field("data/golden/sample_golden.jsonl", description="Default golden-query file.")
    followup_set: str | None = Field(
        None, description="Two-turn conversations `rag eval` also runs (those of the evaluated domain, on the "
        "evaluated version), checking the follow-up's answer (docs/EVALUATION_AND_PROMOTION.md); null: none.")
    k: int = Field(5, ge=1, le=100, description="k of hit@k and recall@k.")
    gates: GateSettings = GateSettings()
    keep_versions: int = Field(3, ge=2, description="Retention: versions kept per alias (active and previous are never dropped).")
    reports_dir: str = Field("data/eval-reports", description="Where JSON reports are written.")
    search_depth: int = Field(
        40, ge=10, le=1000,
        description="Chunks retrieved per golden query for the document-level metrics (deduplicated to doc_ids, "
        "so nDCG@10 sees ten distinct documents when the version has them).",
    )
