"""``Reranker`` on a sentence-transformers ``CrossEncoder`` loaded from a local folder.

For users who have the weights (e.g. a ms-marco MiniLM cross-encoder copied to the
host): the path must exist and nothing is downloaded (``local_files_only``). The
score is the model's raw logit for (query, passage); only the order is used.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence

from backend.common.errors import ConfigError


class CrossEncoderReranker:
    def __init__(self, model_path: Path, *, batch_size: int = 16, device: str = "cpu",
                 max_length: int | None = 512) -> None:
        if not (model_path / "config.json").is_file():
            raise ConfigError(f"retrieval.rerank.model_path: {model_path} is not a model folder (no config.json)",
                              field="model_path")
        from sentence_transformers import CrossEncoder

        self._model: Any = CrossEncoder(str(model_path), device=device, max_length=max_length,
                                        local_files_only=True)
        self._batch_size = batch_size
        self.name = model_path.name

    def rerank(self, query: str, texts: Sequence[str]) -> list[float]:
        if not texts:
            return []
        scores = self._model.predict([(query, t) for t in texts], batch_size=self._batch_size,
                                     show_progress_bar=False, convert_to_numpy=True)
        return [float(s) for s in scores.reshape(len(texts), -1)[:, -1]]
