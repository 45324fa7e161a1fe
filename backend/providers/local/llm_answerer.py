"""``ChatModel`` over the local generative model (Gemma 3 270M GGUF, ``llm_runtime``).

An optional answerer (``llm.primary.provider: local_llm``, extra ``local-llm``): it
writes the answer from the numbered context passages instead of quoting them. The mode
decision does not change (it is made before any answerer runs); a blank answer still
falls back. docs/BENCHMARKS.md compares it with the extractive answerer on the golden
sets: it answers far worse and about 1000x slower there, so it is not offered as an
answerer; it exists so the comparison can be re-run (e.g. with a larger model).

The prompt holds the mode's system prompt, the passages (cut to ``max_input_chars`` in
all: a 270M model loses the thread on long inputs, and prompt time grows with them) and
the question. The answer is generated under a JSON schema (``{"answer": "..."}``), so it
always parses unless ``max_tokens`` cuts it off; then the text so far is used.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from backend.common.config import ChatProviderSettings
from backend.core.types import ChatRequest
from backend.providers.local.llm_runtime import MODEL_ID, LlamaRuntime

_SCHEMA = {"type": "object", "properties": {"answer": {"type": "string"}}, "required": ["answer"]}
_CUT_ANSWER = re.compile(r'"answer"\s*:\s*"((?:[^"\\]|\\.)*)')


class LocalLlmChatModel:
    """Answers with the local Gemma 3 270M model; see the module docstring."""

    name = "local_llm"
    model_id = MODEL_ID

    def __init__(self, provider: ChatProviderSettings, model_dir: Path, runtime: LlamaRuntime | None = None) -> None:
        self._provider = provider
        self._max_chars = provider.local.max_input_chars
        self._runtime = runtime or LlamaRuntime(provider.local, model_dir)

    def messages(self, request: ChatRequest) -> list[dict[str, str]]:
        """One user turn: the passages numbered like the citations ``[n]``, a one-line
        instruction, then the question. Gemma has no system role, and with the mode's
        system prompt in front (or a system turn) the 270M model answered worse on a
        probe question ("10 days" for "25 days", or digits until ``max_tokens``)."""
        budget, passages = self._max_chars, []
        for n, chunk in enumerate(request.context, start=1):
            if budget <= 0:
                break
            text = " ".join(chunk.text.split())[:budget]
            budget -= len(text)
            passages.append(f"[{n}] {text}")
        user = ("Passages:\n" + "\n".join(passages) + "\n\nUsing only the passages, answer the question in one "
                "sentence and cite the passage number like [1].\n" + f"Question: {request.question}")
        return [{"role": "user", "content": user}]

    def generate(self, request: ChatRequest) -> str:
        raw = self._runtime.chat_json(self.messages(request), _SCHEMA, max_tokens=self._provider.max_tokens,
                                      temperature=self._provider.temperature)
        return _answer_of(raw)


def _answer_of(raw: str) -> str:
    """The ``answer`` field; from a reply cut off by ``max_tokens``, the text so far. A raw line break
    inside the string is accepted, and what follows a blank line is dropped: a small model that runs on
    past its answer starts echoing the prompt there."""
    try:
        value: Any = json.loads(raw, strict=False)
    except ValueError:
        match = _CUT_ANSWER.search(raw)
        try:
            value = {"answer": json.loads(f'"{match.group(1)}"', strict=False)} if match else None
        except ValueError:  # cut inside an escape
            return ""
    if not isinstance(value, dict):
        return ""
    return str(value.get("answer", "")).split("\n\n", 1)[0].strip()
