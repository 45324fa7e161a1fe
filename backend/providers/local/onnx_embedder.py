"""Local embeddings on ONNX Runtime, from an export of the packaged weights.

Same vectors as sentence-transformers (mean pooling over the attention mask, then L2
normalisation) at a fraction of the cost: the Rust fast tokenizer, texts sorted by
token length so a batch pads little, and an int8 variant (dynamic quantization).
The runtime and quantization are part of ``model_id`` (the version's model stamp).
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from backend.common.config import REPO_ROOT, EmbeddingSettings
from backend.common.errors import ConfigError, ProviderError
from backend.core.model_stamp import compatible_stamps, model_stamp, runtime_tag
from backend.core.types import Vector
from backend.providers.local.batching import length_sorted_batches
from backend.providers.local.dimension import checked_dimension
from backend.providers.local.onnx_export import ensure_export
from backend.providers.local.threads import available_cores

_LOAD_LOCK = threading.Lock()
_SESSIONS: dict[tuple[str, int], Any] = {}


def _session(path: Path, threads: int) -> Any:
    key = (str(path), threads)
    with _LOAD_LOCK:
        if key not in _SESSIONS:
            try:
                import onnxruntime as ort
            except ImportError as exc:  # pragma: no cover - installed by default
                raise ConfigError("embeddings.local.runtime 'onnx' needs onnxruntime; run `make setup`") from exc
            opts = ort.SessionOptions()
            opts.intra_op_num_threads = threads
            opts.inter_op_num_threads = 1
            opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
            opts.log_severity_level = 3
            # idle pool threads sleep instead of spinning: a spinning pool holds every core between
            # calls, starving what shares them (the PII worker process during ingest, other jobs)
            opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
            _SESSIONS[key] = ort.InferenceSession(str(path), opts, providers=["CPUExecutionProvider"])
        return _SESSIONS[key]


def _max_seq_length(model_dir: Path, override: int | None) -> int:
    if override:
        return override
    conf = model_dir / "sentence_bert_config.json"
    return int(json.loads(conf.read_text()).get("max_seq_length", 256)) if conf.is_file() else 256


class OnnxEmbedder:
    """``Embedder`` over ONNX Runtime; ``calls``/``texts_embedded`` count work like ``LocalEmbedder``'s."""

    def __init__(self, settings: EmbeddingSettings, model_dir: Path) -> None:
        from tokenizers import Tokenizer

        local = settings.local
        cache_dir = Path(local.onnx_cache_dir).expanduser()
        cache_dir = cache_dir if cache_dir.is_absolute() else REPO_ROOT / cache_dir
        self.export = ensure_export(model_dir, cache_dir, local.quantization)
        self.threads = local.threads or available_cores()
        self._session = _session(self.export.path, self.threads)
        self._model_dir = model_dir
        self._batch_size = 1 if local.quantization == "int8" else local.onnx_batch_size
        self._window = max(local.sort_window, self._batch_size)
        self._normalize = local.normalize
        self._tok = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
        self._tok.no_padding()
        self._tok.enable_truncation(max_length=_max_seq_length(model_dir, local.max_seq_length))
        self._hf_tokenizer: Any = None
        self.runtime = runtime_tag("onnx", local.quantization)
        self.model_id = model_stamp(settings.model, self.runtime)
        self.compatible_models = compatible_stamps(self.model_id, local.compatible_runtimes)
        self.dimension = checked_dimension(settings, self.model_id,
                                           int(self._run([self._tok.encode("dimension")]).shape[1]))
        self.calls = 0
        self.texts_embedded = 0

    @property
    def tokenizer(self) -> Any:
        """The Hugging Face fast tokenizer of the same folder (token chunker)."""
        if self._hf_tokenizer is None:
            from transformers import AutoTokenizer

            self._hf_tokenizer = AutoTokenizer.from_pretrained(str(self._model_dir), local_files_only=True)
        return self._hf_tokenizer

    def _run(self, encodings: Sequence[Any]) -> np.ndarray:
        width = max(len(e.ids) for e in encodings)
        ids = np.zeros((len(encodings), width), dtype=np.int64)
        mask = np.zeros_like(ids)
        types = np.zeros_like(ids)
        for row, enc in enumerate(encodings):
            n = len(enc.ids)
            ids[row, :n] = enc.ids
            mask[row, :n] = enc.attention_mask
            types[row, :n] = enc.type_ids
        try:
            hidden = self._session.run(None, {"input_ids": ids, "attention_mask": mask, "token_type_ids": types})[0]
        except Exception as exc:  # onnxruntime raises its own exception types
            raise ProviderError(f"local embedding model {self.model_id} failed: {exc}") from exc
        weights = mask[:, :, None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
        if self._normalize:
            pooled /= np.clip(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12, None)
        return pooled.astype(np.float32, copy=False)

    def _encode(self, texts: Sequence[str]) -> Vector:
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        encodings = self._tok.encode_batch(list(texts))
        out = np.empty((len(texts), self.dimension), dtype=np.float32)
        batches = length_sorted_batches([len(e.ids) for e in encodings], self._batch_size, self._window)
        for batch in batches:
            out[batch] = self._run([encodings[i] for i in batch])
        self.calls += len(batches)
        self.texts_embedded += len(texts)
        return out

    def embed_documents(self, texts: Sequence[str]) -> Vector:
        return self._encode(texts)

    def embed_queries(self, texts: Sequence[str]) -> Vector:
        return self._encode(texts)
