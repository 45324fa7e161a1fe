"""The retrieval settings a version is served with: recorded on the version when ingest
builds it (its *stamp*), read back by every search of it.

Why per version: a change of fusion weights, lexical analysis or reranker changes which
chunks every question gets, exactly like a re-chunked document does. Recording the
settings on the version makes such a change travel the same road as new content: ingest
builds a new version (a copy of the served one, new stamp), the evaluation gate measures
it with *its* settings against the live version with *its* settings, and only promotion
moves users to it; a rollback brings the old settings back with the old version.

Pure functions only: the stamp is plain JSON data (what the stores keep), the live
settings are the frozen config models. A version made before stamps existed has none and
is served with the live configuration.
"""

from __future__ import annotations

from typing import Any, Mapping

from backend.common.config import (
    FusionSettings,
    LexicalSettings,
    ProfileSettings,
    RerankSettings,
    RetrievalSettings,
)
from backend.core.requests import check_strategy

#: bump when the meaning of a stamp's fields changes
STAMP_FORMAT = 1
#: the reranker fields that change its scores; endpoints, keys, timeouts and retries are
#: deployment details and stay with the live configuration
RERANK_FIELDS = ("provider", "top_n", "model", "model_path", "api", "max_chars", "sentence_weight")
#: further ``retrieval`` blocks stamped whole when this release has them (the enriched strategies'
#: depths and weights, the freshness tie-breaker)
WHOLE_BLOCKS = ("freshness", "hyde", "hierarchical")


def retrieval_stamp(retrieval: RetrievalSettings, profile: ProfileSettings) -> dict[str, Any]:
    """What decides which chunks a query of this profile gets, as JSON data: the default
    strategy, the fusion in force (the profile's own, else ``retrieval.fusion``), lexical
    analysis, the reranker and the freshness tie-breaker."""
    fusion = profile.fusion or retrieval.fusion
    stamp: dict[str, Any] = {
        "format": STAMP_FORMAT,
        "strategy": retrieval.strategy,
        "fusion": fusion.model_dump(mode="json"),
        "lexical": (profile.lexical or retrieval.lexical).model_dump(mode="json"),
        "rerank": {name: getattr(retrieval.rerank, name) for name in RERANK_FIELDS},
    }
    for block in WHOLE_BLOCKS:
        if block in RetrievalSettings.model_fields:
            stamp[block] = getattr(retrieval, block).model_dump(mode="json")
    if profile.vector_format != "float32":  # absent means float32, so older stamps stay equal
        stamp["vector_format"] = profile.vector_format
    return stamp


def _known(model: type[Any], data: Any) -> dict[str, Any]:
    """The fields of ``data`` that ``model`` declares (a stamp written by a newer release may
    carry more; they cannot be honoured here, and refusing to serve would be worse)."""
    if not isinstance(data, Mapping):
        return {}
    return {k: v for k, v in data.items() if k in model.model_fields}


def stamped_settings(live: RetrievalSettings, profile: ProfileSettings,
                     stamp: Mapping[str, Any] | None) -> RetrievalSettings:
    """The retrieval settings to search a version with, with the profile's own ``fusion`` and
    ``lexical`` already resolved into ``fusion`` / ``lexical``: the stamp's, on top of the live
    configuration (thresholds, limits, presets and the reranker's endpoint stay live); the
    live ones when the version has no stamp."""
    if not stamp:
        return live.model_copy(update={"fusion": profile.fusion or live.fusion,
                                       "lexical": profile.lexical or live.lexical})
    rerank_data = {k: v for k, v in _known(RerankSettings, stamp.get("rerank")).items() if k in RERANK_FIELDS}
    update: dict[str, Any] = {
        "fusion": FusionSettings(**_known(FusionSettings, stamp.get("fusion"))),
        "lexical": LexicalSettings(**_known(LexicalSettings, stamp.get("lexical"))),
        "rerank": live.rerank.model_copy(update=rerank_data),
    }
    for block in WHOLE_BLOCKS:
        if block in RetrievalSettings.model_fields and isinstance(stamp.get(block), Mapping):
            model = type(getattr(live, block))
            update[block] = model(**_known(model, stamp[block]))
    if isinstance(stamp.get("strategy"), str):  # the stamp's own, checked as a request's is
        update["strategy"] = check_strategy(stamp["strategy"])
    return live.model_copy(update=update)


def _flat(data: Any, prefix: str = "") -> dict[str, Any]:
    if not isinstance(data, Mapping):
        return {prefix: data}
    out: dict[str, Any] = {}
    for key, value in data.items():
        out.update(_flat(value, f"{prefix}.{key}" if prefix else str(key)))
    return out


def stamp_changes(old: Mapping[str, Any] | None, new: Mapping[str, Any]) -> list[str]:
    """``["fusion.k: 60 -> 20", ...]``: how ``new`` differs from a version's stamp. A version
    without a stamp follows the live configuration, so nothing differs from it."""
    if not old:
        return []
    before, after = _flat(old), _flat(new)
    return [f"{key}: {before.get(key)!r} -> {after.get(key)!r}"
            for key in sorted(set(before) | set(after)) if key != "format" and before.get(key) != after.get(key)]


def describe_stamp(stamp: Mapping[str, Any] | None) -> str:
    """One line for ``rag index list`` / ``rag index status``."""
    if not stamp:
        return "live config (no stamp)"
    fusion = stamp.get("fusion") or {}
    lexical = stamp.get("lexical") or {}
    rerank = stamp.get("rerank") or {}
    parts = [f"strategy {stamp.get('strategy')}"]
    if fusion.get("method") == "score":
        parts.append(f"fusion score/{fusion.get('normalization')} {fusion.get('dense_weight')}:"
                     f"{fusion.get('lexical_weight')}")
    else:
        parts.append(f"fusion rrf k={fusion.get('k')} {fusion.get('dense_weight')}:{fusion.get('lexical_weight')}")
    parts.append(f"depth {fusion.get('dense_depth')}/{fusion.get('lexical_depth')}")
    if fusion.get("dense_feedback_docs"):
        parts.append(f"dense feedback {fusion.get('dense_feedback_docs')}@{fusion.get('dense_feedback_weight')}")
    parts.append(f"lexical stop_words={lexical.get('stop_words')} feedback_docs={lexical.get('feedback_docs')}"
                 + (" query_term_frequency" if lexical.get("query_term_frequency") else ""))
    provider = rerank.get("provider", "none")
    parts.append("rerank none" if provider == "none" else f"rerank {provider}@{rerank.get('top_n')}")
    return ", ".join(parts)
