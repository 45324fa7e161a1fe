"""OCI call classification with the real ``oci`` SDK: read timeouts are retried.

The SDK vendors its own requests (``oci._vendor.requests``) and wraps its failures in
``oci.exceptions.RequestException``; a check against the PyPI ``requests`` classes
never matches, so a slow call failed at once as "cannot reach". These tests stall the
local stand-in past the client's read timeout and check the call is retried.
"""

from __future__ import annotations

import os
import re
import time
import tomllib
from pathlib import Path
from typing import Any

import numpy as np
import oci
import pytest
from oci._vendor import requests as vendored_requests

from backend.common.config import EmbeddingSettings, Settings
from backend.common.errors import ProviderTimeout, ProviderUnavailable
from backend.core.types import ChatRequest
from backend.providers.oci.calls import map_oci_error
from backend.providers.oci.chat import OciChatModel
from backend.providers.oci.embedder import OciEmbedder
from tests.providers.oci_fake_service import FakeOciService, oci_config_file, oci_service  # noqa: F401
from tests.providers.test_oci_embedder import DIM, embed_ok, vector_for

ROOT = Path(__file__).resolve().parents[2]


def slow_settings(service: FakeOciService, config: Path, attempts: int = 3) -> EmbeddingSettings:
    return EmbeddingSettings.model_validate({
        "provider": "oci", "model": "cohere.embed-test", "dimension": DIM,
        "retry": {"max_attempts": attempts, "initial_wait_s": 0, "max_wait_s": 0},
        "oci": {"endpoint": service.url, "compartment_id": "ocid1.compartment.oc1..rag", "config_file": str(config),
                "timeout_s": 0.3, "connect_timeout_s": 2},
    })


def test_a_call_that_stalls_past_the_read_timeout_is_retried(oci_service: FakeOciService,  # noqa: F811
                                                             oci_config_file: Path) -> None:  # noqa: F811
    def stall_once(body: dict[str, Any], n: int) -> tuple[int, Any]:
        if n == 1:
            time.sleep(1.0)  # past the 0.3 s read timeout: the client gives up on this one
        return embed_ok(body, n)

    oci_service.reset(stall_once)
    embedder = OciEmbedder.from_settings(slow_settings(oci_service, oci_config_file))
    vectors = embedder.embed_documents(["alpha"])
    np.testing.assert_allclose(vectors[0], vector_for("alpha"))
    # the stalled call was given up and asked again; on a loaded machine the fast answer can miss the
    # 0.3 s timeout too and cost one more attempt (slow_settings allows three)
    assert 2 <= len(oci_service.requests) <= 3


def test_a_call_that_always_stalls_ends_as_provider_timeout(oci_service: FakeOciService,  # noqa: F811
                                                            oci_config_file: Path) -> None:  # noqa: F811
    def always_stall(body: dict[str, Any], n: int) -> tuple[int, Any]:
        time.sleep(0.8)
        return embed_ok(body, n)

    oci_service.reset(always_stall)
    embedder = OciEmbedder.from_settings(slow_settings(oci_service, oci_config_file, attempts=2))
    with pytest.raises(ProviderTimeout, match=r"OCI embed_text batch 1/1 .*: http://127.0.0.1:\d+ did not answer in time"):
        embedder.embed_queries(["slow"])
    assert len(oci_service.requests) == 2


def test_classification_uses_the_sdks_vendored_exception_classes() -> None:
    wrapped = oci.exceptions.RequestException(vendored_requests.exceptions.ReadTimeout("read timed out"))
    assert isinstance(map_oci_error(wrapped, "call", "ep"), ProviderTimeout)
    refused = oci.exceptions.RequestException(vendored_requests.exceptions.ConnectionError("refused"))
    assert isinstance(map_oci_error(refused, "call", "ep"), ProviderUnavailable)


# --- C2/C4: the oci floor has every model class the adapters use -------------------------------------------
def test_the_oci_floor_is_the_first_release_with_generic_chat_messages() -> None:
    deps = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    floor = next(re.fullmatch(r"oci>=([\d.]+)", d.replace(" ", "")) for d in deps if d.startswith("oci"))
    assert floor is not None
    # SystemMessage/UserMessage: 2.128.0; CohereResponseJsonFormat: 2.138.1; RerankTextDetails and
    # DocumentRank: 2.144.0; JsonSchemaResponseFormat, ResponseJsonSchema and GenericChatRequest.response_format
    # (the enricher's generic format): 2.158.2, so that is the floor (review C4)
    assert tuple(int(x) for x in floor.group(1).split(".")) >= (2, 158, 2)
    installed = tuple(int(x) for x in oci.__version__.split(".")[:3])
    assert installed >= tuple(int(x) for x in floor.group(1).split("."))
    if os.environ.get("RAG_TEST_OCI_FLOOR"):  # `make test-oci-floor`: this run is on the floor itself
        assert oci.__version__ == floor.group(1) == os.environ["RAG_TEST_OCI_FLOOR"]
    docs = (ROOT / "docs" / "ORACLE.md").read_text()
    assert f"oci {floor.group(1)}" in docs and "oci 2.128.0" not in docs


def test_every_oci_model_class_the_adapters_use_exists_in_the_installed_sdk() -> None:
    from oci.generative_ai_inference import models

    for name in ("SystemMessage", "UserMessage", "CohereResponseJsonFormat", "RerankTextDetails", "DocumentRank",
                 "JsonSchemaResponseFormat", "ResponseJsonSchema", "DedicatedServingMode", "OnDemandServingMode"):
        assert hasattr(models, name), name
    assert "response_format" in models.GenericChatRequest().swagger_types


def test_generic_chat_format_builds_system_and_user_messages_with_the_installed_sdk(
        oci_config_file: Path) -> None:  # noqa: F811
    from oci.generative_ai_inference import models

    settings = Settings.model_validate({
        "embeddings": {"oci": {"endpoint": "http://127.0.0.1:9", "compartment_id": "ocid1.compartment.oc1..rag",
                               "config_file": str(oci_config_file), "chat_model_id": "meta.llama-3.3-70b-instruct",
                               "chat_format": "generic"}},
        "llm": {"primary": {"provider": "oci"}}})
    model = OciChatModel.from_settings(settings.llm.primary, settings)
    request = model._chat_request(ChatRequest("rag", "Answer from the passages.", "How many days?"))
    assert isinstance(request, models.GenericChatRequest)
    assert [type(m) for m in request.messages] == [models.SystemMessage, models.UserMessage]
    assert oci.util.to_dict(request)["messages"][0] == {"role": "SYSTEM", "content": [
        {"type": "TEXT", "text": "Answer from the passages."}], "name": None}


# --- C7: documented OCI models are current -----------------------------------------------------
#: retired on demand (OCI "Model Retirement Dates"), or a rerank id OCI never used
RETIRED_IDS = ("cohere.command-r-plus", "cohere.command-r-16k", "cohere.embed-english-v3.0",
               "cohere.embed-multilingual-v3.0", "cohere.rerank-v3.5")


def test_docs_and_the_oci_adapters_name_current_model_ids_only() -> None:
    from backend.providers.oci.embedder import KNOWN_DIMENSIONS

    texts = {p: p.read_text() for p in [*(ROOT / "docs").rglob("*.md"), *(ROOT / "backend/providers/oci").glob("*.py")]}
    for path, text in texts.items():
        if path.name == "ORACLE.md":  # names the retired ids once, in the paragraph that says they are retired
            text = text.replace(text[text.index("**Models.**"):text.index("**Rerank**")], "")
        for retired in RETIRED_IDS:
            used = [m for m in re.finditer(re.escape(retired) + r"(?![\w.-])", text)
                    if not (path.name == "embedder.py" and text[m.end():m.end() + 2] == '":')]
            assert not used, f"{path.relative_to(ROOT)} names {retired}"
    oracle = texts[ROOT / "docs" / "ORACLE.md"]
    assert "chat_model_id: cohere.command-a-03-2025" in oracle and "model: cohere.embed-v4.0" in oracle
    assert "dimension: 1536" in oracle and KNOWN_DIMENSIONS["cohere.embed-v4.0"] == 1536
    assert "cohere.rerank.v3-5" in oracle and "cohere.rerank.v3-5" in texts[ROOT / "docs" / "SEARCH.md"]
