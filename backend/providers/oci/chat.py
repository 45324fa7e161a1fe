"""OCI Generative AI chat behind the ``ChatModel`` port.

Two request formats, chosen by ``embeddings.oci.chat_format``: ``cohere``
(``CohereChatRequest``: the mode's instructions as ``preamble_override``, one
``message``) and ``generic`` (``GenericChatRequest``: system + user messages,
for Meta Llama and other hosted models). The numbered context passages go into
the user text, fenced as untrusted data (``backend.core.prompt``), so the answer
can cite them as ``[1]`` and never takes orders from them. ``stream`` sends ``is_stream``
and yields the text of each server-sent event as it arrives.
"""

from __future__ import annotations

import json
from typing import Any, Iterator

import structlog

from backend.common.config import ChatProviderSettings, OciSettings, RetrySettings, Settings
from backend.common.errors import ProviderError
from backend.core.prompt import Prompt, build_prompt
from backend.core.types import ChatRequest
from backend.providers.oci import auth
from backend.providers.oci.calls import call_with_retry, chat_details, chat_text

log = structlog.get_logger(__name__)


def prompt_for(request: ChatRequest) -> Prompt:
    """System text and user text: the fenced passages and the question (the question alone
    in fallback mode); see ``backend.core.prompt``."""
    prompt = build_prompt(request)
    return prompt if request.context else Prompt(prompt.system, request.question)


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
        model_id = auth.chat_model_id(oci_settings, provider.model, user="the 'oci' chat provider",
                                      model_field="llm.*.model")
        return cls(auth.inference_client(oci_settings), oci_settings, provider, model_id, settings.embeddings.retry)

    def _chat_request(self, request: ChatRequest, stream: bool = False) -> Any:
        from oci.generative_ai_inference import models

        common = {"max_tokens": self._provider.max_tokens, "temperature": self._provider.temperature}
        prompt = prompt_for(request)
        if self._oci.chat_format == "cohere":
            return models.CohereChatRequest(message=prompt.user, preamble_override=prompt.system,
                                            is_stream=stream, **common)
        messages = [
            models.SystemMessage(content=[models.TextContent(text=prompt.system)]),
            models.UserMessage(content=[models.TextContent(text=prompt.user)]),
        ]
        kwargs = {"num_generations": 1} if not stream else {}
        return models.GenericChatRequest(messages=messages, is_stream=stream, **kwargs, **common)

    def _details(self, request: ChatRequest, stream: bool) -> Any:
        return chat_details(self.model_id, self._oci.compartment_id, self._chat_request(request, stream))

    def generate(self, request: ChatRequest) -> str:
        details = self._details(request, stream=False)
        what = f"OCI chat ({self.model_id}, {self._oci.chat_format})"
        response = call_with_retry(lambda: self._client.chat(details), self._retry, what, self.endpoint)
        return self._answer(response, what)

    def stream(self, request: ChatRequest) -> Iterator[str]:
        """The answer's text as OCI streams it (``is_stream``): one server-sent event per
        piece, ``{"text": ...}`` (cohere) or ``{"message": {"content": [{"text": ...}]}}``
        (generic); the closing event carries ``finishReason``, and its text is taken only
        when nothing came before (a model that sends the whole answer at the end)."""
        details = self._details(request, stream=True)
        what = f"OCI chat stream ({self.model_id}, {self._oci.chat_format})"
        response = call_with_retry(lambda: self._client.chat(details), self._retry, what, self.endpoint)
        events = getattr(getattr(response, "data", None), "events", None)
        if not callable(events):  # answered as one JSON body after all
            yield self._answer(response, what)
            return
        sent = False
        for event in events():
            raw = getattr(event, "data", "") or ""
            if not raw.strip() or raw.strip() == "[DONE]":
                continue
            try:
                payload = json.loads(raw)
            except ValueError as exc:
                raise ProviderError(f"{what}: malformed stream event from {self.endpoint}: {raw[:120]}") from exc
            text = _event_text(payload)
            if "finishReason" in payload and sent:
                break
            if text:
                sent = True
                yield text
            if "finishReason" in payload:
                break

    def _answer(self, response: Any, what: str) -> str:
        return chat_text(response, self._oci.chat_format, what, self.endpoint)


def _event_text(payload: Any) -> str:
    """The text of one OCI chat stream event, in either format."""
    if not isinstance(payload, dict):
        return ""
    if isinstance(payload.get("text"), str):
        return str(payload["text"])
    content = (payload.get("message") or {}).get("content") if isinstance(payload.get("message"), dict) else None
    if isinstance(content, list):
        return "".join(str(part.get("text") or "") for part in content if isinstance(part, dict))
    return ""
