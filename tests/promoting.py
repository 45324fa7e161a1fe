"""Promotion in tests as the entry points run it: one store object serving every port."""

from __future__ import annotations

from typing import Any

from backend.common.config import Settings
from backend.core.ports import Stores
from backend.core.services.evaluation import Evaluator
from backend.core.services.promotion import PromotionResult, promote_configured
from tests.conftest import decision_scorer


def promote(settings: Settings, store: Any, embedder: Any, *, chat: Any = None, reranker: Any = None,
            rerankers: Any = None, **options: Any) -> PromotionResult:
    """``promote_configured`` with an evaluator over ``store`` (modes from the hits unless ``chat``)."""
    stores = store if isinstance(store, Stores) else Stores.of(store)
    evaluator = Evaluator.from_settings(settings, stores.vectors, stores.admin, embedder, chat=chat,
                                        reranker=reranker, rerankers=rerankers,
                                        scorer=decision_scorer(settings, embedder))
    return promote_configured(settings, stores, evaluator, **options)
