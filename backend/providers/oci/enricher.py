"""``Enricher`` over OCI Generative AI chat (``GenerativeAiInferenceClient.chat``).

The client is the chat adapter's (``auth.inference_client``: signed requests, SDK retries
off), calls go through ``calls.call_with_retry`` (the one retry owner of OCI calls), and
the answer is constrained by a JSON response format: ``CohereResponseJsonFormat`` (cohere)
or ``JsonSchemaResponseFormat`` (generic) with the schema of
``backend.core.enrichment.reply_schema``, then validated by pydantic. One request per chunk
and per page / document summary, paced by ``enrichment.rate_limit_per_min``.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from backend.common.config import EnrichmentSettings, MetadataFieldSettings, OciSettings, Settings
from backend.providers.json_chat_enricher import JsonChatEnricher
from backend.providers.oci import auth
from backend.providers.oci.calls import call_with_retry, chat_details, chat_text


class OciEnricher(JsonChatEnricher):
    def __init__(self, client: Any, oci_settings: OciSettings, settings: EnrichmentSettings, model: str,
                 schema: Mapping[str, MetadataFieldSettings], content_types: Sequence[str], *,
                 limiter: Any = None) -> None:
        super().__init__(settings, schema, content_types)
        self._client = client
        self._oci = oci_settings
        self._model = model
        self._limiter = limiter
        self.endpoint = auth.endpoint_of(client, oci_settings)
        self.model_id = f"oci/{model}"

    @classmethod
    def from_settings(cls, settings: Settings, enrichment: EnrichmentSettings, schema: Mapping[str, MetadataFieldSettings],
                      content_types: Sequence[str], *, limiter: Any = None) -> "OciEnricher":
        oci_settings = settings.embeddings.oci
        model = auth.chat_model_id(oci_settings, enrichment.model, user="enrichment provider 'oci'",
                                   model_field="enrichment.model")
        return cls(auth.inference_client(oci_settings), oci_settings, enrichment, model, schema, content_types,
                   limiter=limiter)

    @property
    def _where(self) -> str:
        return f"OCI enrichment ({self._model}) at {self.endpoint}"

    def _request(self, messages: list[dict[str, str]], name: str, schema: Mapping[str, Any]) -> Any:
        from oci.generative_ai_inference import models

        common = {"max_tokens": self._settings.max_tokens, "temperature": self._settings.temperature}
        system, user = messages[0]["content"], messages[1]["content"]
        if self._oci.chat_format == "cohere":
            return models.CohereChatRequest(
                message=user, preamble_override=system, is_stream=False,
                response_format=models.CohereResponseJsonFormat(schema=dict(schema)), **common)
        return models.GenericChatRequest(
            messages=[models.SystemMessage(content=[models.TextContent(text=system)]),
                      models.UserMessage(content=[models.TextContent(text=user)])],
            is_stream=False, num_generations=1,
            response_format=models.JsonSchemaResponseFormat(
                json_schema=models.ResponseJsonSchema(name=name, schema=dict(schema), is_strict=True)),
            **common)

    def _ask(self, messages: list[dict[str, str]], name: str, schema: Mapping[str, Any]) -> str:
        details = chat_details(self._model, self._oci.compartment_id, self._request(messages, name, schema))
        what = f"OCI enrichment ({self._model}, {self._oci.chat_format})"

        def call() -> Any:
            if self._limiter is not None:
                self._limiter.acquire()
            self.calls += 1
            return self._client.chat(details)

        response = call_with_retry(call, self._settings.retry, what, self.endpoint)
        return chat_text(response, self._oci.chat_format, what, self.endpoint)
