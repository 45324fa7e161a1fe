"""The local generative enricher with the real Gemma 3 270M GGUF (llama-cpp-python): one short
chunk, grammar-constrained JSON that always parses. A few seconds of generation, marked slow;
skipped without the optional extra ``local-llm`` (``make local-llm``; CI installs it)."""

from __future__ import annotations

from pathlib import Path

import pytest

from backend.common.config import EnrichmentSettings, MetadataFieldSettings
from backend.common.errors import ConfigError
from backend.core.enrichment import EnrichmentInput, accept
from backend.providers.local import llm_runtime

SCHEMA = {"department": MetadataFieldSettings(type="enum", values=("People", "Finance"))}


def test_a_missing_package_names_the_extra() -> None:
    with pytest.raises(ConfigError, match=r"local-llm.*llama-cpp-python"):
        llm_runtime._import("llama_cpp_not_installed")


@pytest.mark.slow
def test_gemma_answers_schema_shaped_json_for_a_short_chunk(tmp_path: Path) -> None:
    pytest.importorskip("llama_cpp", reason=llm_runtime.SKIP_REASON)
    pytest.importorskip(llm_runtime.MODEL_PACKAGE, reason=llm_runtime.SKIP_REASON)
    from backend.providers.local.llm_enricher import LocalLlmEnricher

    settings = EnrichmentSettings(provider="local_llm", questions=2, max_tokens=120)
    enricher = LocalLlmEnricher(settings, SCHEMA, ("policy", "faq"), tmp_path / "llm")
    assert enricher.model_id == "local_llm/gemma-3-270m-q4_k_m"
    assert (tmp_path / "llm" / "gemma-3-270m-q4_k_m.gguf").is_file()  # assembled offline into the configured dir
    item = EnrichmentInput("leave::0", "Every employee receives 25 days of paid annual leave per year.",
                           "Annual leave policy", ("Annual leave",))
    (got,) = enricher.enrich([item])
    assert enricher.calls == 1 and enricher.failures == 0  # the constrained answer parsed
    assert got.content_type in ("policy", "faq", None)  # the grammar allows nothing else
    assert set(got.metadata) <= {"department"} and len(got.questions) == 2
    assert accept(got, SCHEMA, ("policy", "faq"), 2).dropped == 0
