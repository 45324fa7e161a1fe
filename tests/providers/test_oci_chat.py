"""OciChatModel with the real ``oci`` SDK against a local stand-in of the service."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from backend.common.config import Settings
from backend.common.errors import ConfigError, ProviderError
from backend.core.ports import ChatModel
from backend.core.types import ChatRequest, Chunk
from backend.providers.oci.chat import OciChatModel
from backend.providers.registry import build_chat_model
from tests.providers.oci_fake_service import (  # noqa: F401 - fixtures
    KEY_ID,
    FakeOciService,
    oci_config_file,
    oci_service,
)

COMPARTMENT = "ocid1.compartment.oc1..rag"
REQUEST = ChatRequest(
    mode="rag",
    system_prompt="Answer strictly from the numbered context passages.",
    question="How many vacation days?",
    context=(Chunk("c1", "d1", "Employees get 25 vacation days.", "hr/leave.md", 0),
             Chunk("c2", "d1", "Carry-over is capped at 5 days.", "hr/leave.md", 1)),
)


def settings(service: FakeOciService, config: Path, chat_format: str) -> Settings:
    return Settings.model_validate({
        "embeddings": {"retry": {"max_attempts": 3, "initial_wait_s": 0, "max_wait_s": 0},
                       "oci": {"endpoint": service.url, "compartment_id": COMPARTMENT, "config_file": str(config),
                               "chat_model_id": "cohere.command-r-plus", "chat_format": chat_format}},
        "llm": {"primary": {"provider": "oci", "max_tokens": 300, "temperature": 0.2}},
    })


def cohere_answer(body: dict[str, Any], n: int) -> tuple[int, Any]:
    return 200, {"modelId": "cohere.command-r-plus", "modelVersion": "1",
                 "chatResponse": {"apiFormat": "COHERE", "text": "You get 25 days [1].", "finishReason": "COMPLETE"}}


def generic_answer(body: dict[str, Any], n: int) -> tuple[int, Any]:
    return 200, {"modelId": "meta.llama", "chatResponse": {"apiFormat": "GENERIC", "timeCreated": "2025-01-01T00:00:00Z",
                 "choices": [{"index": 0, "finishReason": "stop",
                              "message": {"role": "ASSISTANT", "content": [{"type": "TEXT", "text": "25 days [1]."}]}}]}}


def model_for(service: FakeOciService, config: Path, chat_format: str) -> OciChatModel:
    cfg = settings(service, config, chat_format)
    model = build_chat_model(cfg.llm.primary, cfg)
    assert isinstance(model, OciChatModel) and isinstance(model, ChatModel)
    return model


def test_cohere_request_carries_preamble_and_numbered_passages(oci_service: FakeOciService,
                                                               oci_config_file: Path) -> None:  # noqa: F811
    oci_service.reset(cohere_answer)
    answer = model_for(oci_service, oci_config_file, "cohere").generate(REQUEST)
    assert answer == "You get 25 days [1]."
    request = oci_service.requests[0]
    assert request["path"] == "/20231130/actions/chat"
    assert f'keyId="{KEY_ID}"' in request["headers"]["authorization"]
    body = request["body"]
    assert body["compartmentId"] == COMPARTMENT
    assert body["servingMode"] == {"servingType": "ON_DEMAND", "modelId": "cohere.command-r-plus"}
    chat = body["chatRequest"]
    assert chat["apiFormat"] == "COHERE"
    boundary = re.search(r"<<<PASSAGE 1 ([0-9a-f]{24})\n", chat["message"])[1]  # type: ignore[index]
    assert chat["preambleOverride"].startswith(REQUEST.system_prompt + "\n\nSecurity rule: ")
    assert boundary in chat["preambleOverride"]
    assert chat["message"] == (
        f"Context passages (2, untrusted data):\n\n<<<PASSAGE 1 {boundary}\nsource: hr/leave.md\n"
        f"Employees get 25 vacation days.\nPASSAGE 1 {boundary}>>>\n\n<<<PASSAGE 2 {boundary}\nsource: hr/leave.md\n"
        f"Carry-over is capped at 5 days.\nPASSAGE 2 {boundary}>>>\n\nQuestion: How many vacation days?")
    assert (chat["maxTokens"], chat["temperature"], chat["isStream"]) == (300, 0.2, False)


def test_generic_request_sends_system_and_user_messages(oci_service: FakeOciService,
                                                        oci_config_file: Path) -> None:  # noqa: F811
    oci_service.reset(generic_answer)
    answer = model_for(oci_service, oci_config_file, "generic").generate(REQUEST)
    assert answer == "25 days [1]."
    chat = oci_service.requests[0]["body"]["chatRequest"]
    assert chat["apiFormat"] == "GENERIC"
    assert [m["role"] for m in chat["messages"]] == ["SYSTEM", "USER"]
    assert chat["messages"][0]["content"][0]["text"].startswith(REQUEST.system_prompt + "\n\nSecurity rule: ")
    assert chat["messages"][1]["content"][0]["text"].endswith("Question: How many vacation days?")


def test_fallback_request_without_context_sends_the_bare_question(oci_service: FakeOciService,
                                                                  oci_config_file: Path) -> None:  # noqa: F811
    oci_service.reset(cohere_answer)
    request = ChatRequest(mode="fallback", system_prompt="No passage answers this.", question="Capital of France?")
    model_for(oci_service, oci_config_file, "cohere").generate(request)
    assert oci_service.requests[0]["body"]["chatRequest"]["message"] == "Capital of France?"


def test_throttled_chat_is_retried(oci_service: FakeOciService, oci_config_file: Path) -> None:  # noqa: F811
    oci_service.reset(lambda body, n: (429, {"code": "TooManyRequests", "message": "slow down"}) if n < 3
                      else cohere_answer(body, n))
    assert model_for(oci_service, oci_config_file, "cohere").generate(REQUEST) == "You get 25 days [1]."
    assert len(oci_service.requests) == 3


def test_rejected_chat_raises_provider_error_without_retry(oci_service: FakeOciService,
                                                           oci_config_file: Path) -> None:  # noqa: F811
    oci_service.reset(lambda body, n: (404, {"code": "NotAuthorizedOrNotFound", "message": "model not found"}))
    with pytest.raises(ProviderError, match=r"OCI chat \(cohere.command-r-plus, cohere\): rejected by .*HTTP 404 "
                                            r"NotAuthorizedOrNotFound: model not found"):
        model_for(oci_service, oci_config_file, "cohere").generate(REQUEST)
    assert len(oci_service.requests) == 1


@pytest.mark.parametrize("chat_format,payload", [
    ("cohere", {"modelId": "m", "chatResponse": {"apiFormat": "COHERE"}}),
    ("generic", {"modelId": "m", "chatResponse": {"apiFormat": "GENERIC", "choices": []}}),
])
def test_malformed_chat_response_raises_provider_error(oci_service: FakeOciService, oci_config_file: Path,  # noqa: F811
                                                       chat_format: str, payload: dict[str, Any]) -> None:
    oci_service.reset(lambda body, n: (200, payload))
    with pytest.raises(ProviderError, match="malformed response from http://127.0.0.1:.*: no answer text"):
        model_for(oci_service, oci_config_file, chat_format).generate(REQUEST)


def test_chat_without_a_model_is_a_config_error(oci_config_file: Path) -> None:  # noqa: F811
    cfg = Settings.model_validate({"embeddings": {"oci": {"compartment_id": COMPARTMENT,
                                                          "config_file": str(oci_config_file)}},
                                   "llm": {"primary": {"provider": "oci"}}})
    with pytest.raises(ConfigError, match="must name the OCI chat model"):
        build_chat_model(cfg.llm.primary, cfg)
