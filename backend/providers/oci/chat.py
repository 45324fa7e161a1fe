"""OCI Generative AI chat behind the ``ChatModel`` port.

Two request formats, chosen by ``embeddings.oci.chat_format``: ``cohere``
(``CohereChatRequest``: the mode's instructions as ``preamble_override``, one
``message``) and ``generic`` (``GenericChatRequest``: system + user messages,
for Meta Llama and other hosted models). The numbered context passages go into
the user text so the answer can cite them as ``[1]``.
"""

from __future__ import annotations

from typing import Any

import structlog

from backend.common.config import ChatProviderSettings, OciSettings, RetrySettings, Settings
from backend.common.errors import ConfigError, ProviderError
from backend.core.types import ChatRequest
from backend.providers.oci import auth
from backend.providers.oci.calls import call_with_retry

log = structlog.get_logger(__name__)


def user_text(request: ChatRequest) -> str:
    """The question preceded by its numbered passages (none in fallback mode)."""
    if not request.context:
        return request.question
    passages = "\n\n".join(f"[{i}] ({c.source}) {c.text}" for i, c in enumerate(request.context, start=1))
    return f"Context passages:\n{passages}\n\nQuestion: {request.question}"


class OciChatModel:
    name = "oci"

    def __init__(self, client: Any, oci_settings: OciSettings, provider: ChatProviderSettings, model_id: str,
                 retry: RetrySettings) -> None:
        self._client = client
        self._oci = oci_settings
        self._provider = provider
        self._retry = retry
        self.model_id = model_id
        self.endpoint = auth.endpoint_of(client, oci_settings)

    @classmethod
    def from_settings(cls, provider: ChatProviderSettings, settings: Settings) -> "OciChatModel":
        oci_settings = settings.embeddings.oci
        model_id = provider.model or oci_settings.chat_model_id
        if not oci_settings.compartment_id:
            raise ConfigError("embeddings.oci.compartment_id is required for the 'oci' chat provider")
        if not model_id:
            raise ConfigError("llm.*.model or embeddings.oci.chat_model_id must name the OCI chat model")
        return cls(auth.inference_client(oci_settings), oci_settings, provider, model_id, settings.embeddings.retry)

    def _chat_request(self, request: ChatRequest) -> Any:
        from oci.generative_ai_inference import models

        common = {"max_tokens": self._provider.max_tokens, "temperature": self._provider.temperature}
        if self._oci.chat_format == "cohere":
            return models.CohereChatRequest(message=user_text(request), preamble_override=request.system_prompt,
                                            is_stream=False, **common)
        messages = [
            models.SystemMessage(content=[models.TextContent(text=request.system_prompt)]),
            models.UserMessage(content=[models.TextContent(text=user_text(request))]),
        ]
        return models.GenericChatRequest(messages=messages, is_stream=False, num_generations=1, **common)

    def generate(self, request: ChatRequest) -> str:
        from oci.generative_ai_inference import models

        if self.model_id.startswith("ocid1.generativeaiendpoint"):
            serving: Any = models.DedicatedServingMode(endpoint_id=self.model_id)
        else:
            serving = models.OnDemandServingMode(model_id=self.model_id)
        details = models.ChatDetails(compartment_id=self._oci.compartment_id, serving_mode=serving,
                                     chat_request=self._chat_request(request))
        what = f"OCI chat ({self.model_id}, {self._oci.chat_format})"
        response = call_with_retry(lambda: self._client.chat(details), self._retry, what, self.endpoint)
        return self._answer(response, what)

    def _answer(self, response: Any, what: str) -> str:
        chat = getattr(getattr(response, "data", None), "chat_response", None)
        if self._oci.chat_format == "cohere":
            text = getattr(chat, "text", None)
        else:
            choices = getattr(chat, "choices", None) or []
            content = getattr(getattr(choices[0], "message", None), "content", None) if choices else None
            text = "".join(getattr(part, "text", "") or "" for part in content) if content else None
        if not isinstance(text, str):
            raise ProviderError(f"{what}: malformed response from {self.endpoint}: no answer text")
        return text
