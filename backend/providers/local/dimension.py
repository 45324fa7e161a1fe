"""The embedding width check both local embedders (torch and ONNX Runtime) make.

Its own module so that ``onnx_embedder`` need not import ``embedder``, which imports it back
(``make_local_embedder``): no import cycle between the two.
"""

from __future__ import annotations

from backend.common.config import EmbeddingSettings
from backend.common.errors import ConfigError


def checked_dimension(settings: EmbeddingSettings, model_id: str, produced: int) -> int:
    """The model's vector width, refused when ``embeddings.dimension`` expects another."""
    if settings.dimension is not None and settings.dimension != produced:
        raise ConfigError(f"embeddings.dimension is {settings.dimension} but model {model_id} produces {produced}")
    return produced
