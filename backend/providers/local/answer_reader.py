"""The answer reader on ONNX Runtime: P(sentence answers question) from the committed model.

The model (``models/answer-reader/``: an int8 ONNX cross-encoder and its tokenizer, made by
``rag train answerability``, see its ``CARD.md``) reads ``question [SEP] heading | sentence``
and returns one logit per pair. The Rust fast tokenizer (``tokenizers``) encodes the pairs; pairs
are sorted by length so a batch pads little. Nothing is downloaded: a missing file is a
``ConfigError`` naming it and the command that makes it.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from backend.common.errors import ConfigError
from backend.providers.local.threads import available_cores

_LOCK = threading.Lock()
_READERS: dict[tuple[str, int, int], "OnnxAnswerReader"] = {}
#: pairs scored per ONNX call
BATCH = 64


class OnnxAnswerReader:
    """Scores (question, text) pairs; thread-safe (ONNX Runtime sessions are)."""

    def __init__(self, model_path: Path, tokenizer_dir: Path, *, max_length: int = 128, threads: int | None = None) -> None:
        try:
            import onnxruntime as ort
            from tokenizers import Tokenizer
        except ImportError as exc:  # pragma: no cover - both are installed by default
            raise ConfigError(f"the answer reader needs {exc.name}; run `make setup`") from exc
        tokenizer_file = tokenizer_dir / "tokenizer.json"
        for path in (model_path, tokenizer_file):
            if not path.is_file():
                raise ConfigError(f"answer reader: {path} is missing; the model is committed under models/answer-reader/ "
                                  "(rebuild it with `rag train answerability`)",
                                  field="retrieval.answerability.reader.path")
        self.model_path = model_path
        self.max_length = max_length
        self._tokenizer = Tokenizer.from_file(str(tokenizer_file))
        self._tokenizer.no_padding()
        self._tokenizer.enable_truncation(max_length, strategy="only_second")
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = threads or available_cores()
        opts.inter_op_num_threads = 1
        opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        opts.log_severity_level = 3
        opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
        self._session = ort.InferenceSession(str(model_path), opts, providers=["CPUExecutionProvider"])
        self._inputs = {i.name for i in self._session.get_inputs()}

    def logits(self, questions: Sequence[str], texts: Sequence[str]) -> np.ndarray:
        if len(questions) != len(texts):
            raise ValueError("answer reader: as many questions as texts")
        if not questions:
            return np.zeros(0, dtype=np.float32)
        encodings = self._tokenizer.encode_batch(list(zip(questions, texts)))
        order = sorted(range(len(encodings)), key=lambda i: len(encodings[i].ids))
        out = np.zeros(len(encodings), dtype=np.float32)
        for start in range(0, len(order), BATCH):
            idx = order[start:start + BATCH]
            width = max(len(encodings[i].ids) for i in idx)
            ids = np.zeros((len(idx), width), dtype=np.int64)
            mask = np.zeros_like(ids)
            types = np.zeros_like(ids)
            for row, i in enumerate(idx):
                enc = encodings[i]
                n = len(enc.ids)
                ids[row, :n], mask[row, :n], types[row, :n] = enc.ids, enc.attention_mask, enc.type_ids
            feed = {"input_ids": ids, "attention_mask": mask, "token_type_ids": types}
            result = self._session.run(None, {k: v for k, v in feed.items() if k in self._inputs})[0]
            out[idx] = np.asarray(result, dtype=np.float32).reshape(-1)
        return out

    def score_pairs(self, questions: Sequence[str], texts: Sequence[str]) -> np.ndarray:
        """P(answers) per pair."""
        z = self.logits(questions, texts).astype(np.float64)
        return 1.0 / (1.0 + np.exp(-np.clip(z, -40, 40)))

    def score(self, question: str, texts: Sequence[str]) -> np.ndarray:
        return self.score_pairs([question] * len(texts), texts)


def model_file(folder: Path) -> Path:
    """The model file a reader folder ships: int8 when it held its figures, else fp32 (``card.json``)."""
    import json

    card = folder / "card.json"
    if card.is_file():
        name = json.loads(card.read_text(encoding="utf-8")).get("file")
        if name:
            return folder / str(name)
    return folder / "model-int8.onnx"


def load_reader(folder: Path, *, max_length: int = 128, threads: int | None = None) -> OnnxAnswerReader:
    """The process-wide reader for ``folder`` (loaded once)."""
    key = (str(folder.resolve()), max_length, threads or 0)
    with _LOCK:
        if key not in _READERS:
            _READERS[key] = OnnxAnswerReader(model_file(folder), folder, max_length=max_length, threads=threads)
        return _READERS[key]


def reader_or_none(folder: Path | None, **kwargs: Any) -> OnnxAnswerReader | None:
    return load_reader(folder, **kwargs) if folder is not None else None
