"""OCI Generative AI rerank (``GenerativeAiInferenceClient.rerank_text``) behind the ``Reranker`` port.

Signing, service endpoint and compartment are the ones of ``embeddings.oci`` (one OCI
account for the runtime). OCI serves Cohere Rerank 3.5 (``cohere.rerank.v3-5``) on dedicated
AI clusters only, so every call goes out as ``DedicatedServingMode`` to the rerank model's own
endpoint: ``retrieval.rerank.endpoint_id``, or an ``ocid1.generativeaiendpoint`` OCID given as
``retrieval.rerank.model`` (as ``calls.chat_details`` reads a chat model). Never on demand, and
never ``embeddings.oci.endpoint_id`` (the embedding model's endpoint). One retried call per
search (see ``calls``).
"""

from __future__ import annotations

from typing import Any, Sequence

from backend.common.config import OciSettings, RerankSettings
from backend.common.errors import ConfigError, ProviderError
from backend.providers.oci import auth
from backend.providers.oci.calls import ENDPOINT_OCID_PREFIX, call_with_retry


def rerank_endpoint(settings: RerankSettings) -> str | None:
    """The dedicated endpoint that serves the rerank model: ``endpoint_id``, else ``model`` when it is
    an endpoint OCID; None when neither names one."""
    if settings.endpoint_id:
        return settings.endpoint_id
    model = settings.model or ""
    return model if model.startswith(ENDPOINT_OCID_PREFIX) else None


class OciReranker:
    def __init__(self, client: Any, oci_settings: OciSettings, settings: RerankSettings) -> None:
        self._client = client
        self._oci = oci_settings
        self._settings = settings
        self.name = settings.model or "oci-rerank"
        self.endpoint = auth.endpoint_of(client, oci_settings)
        self.endpoint_id = rerank_endpoint(settings)
        if self.endpoint_id is None:
            raise ConfigError("retrieval.rerank.endpoint_id is required with retrieval.rerank.provider 'oci': OCI "
                              "serves Cohere Rerank 3.5 on dedicated AI clusters only; set the OCID of the rerank "
                              "endpoint, or put it in retrieval.rerank.model")

    @classmethod
    def from_settings(cls, oci_settings: OciSettings, settings: RerankSettings) -> "OciReranker":
        if not oci_settings.compartment_id:
            raise ConfigError("embeddings.oci.compartment_id is required with retrieval.rerank.provider 'oci'")
        if not settings.model:
            raise ConfigError("retrieval.rerank.model is required with retrieval.rerank.provider 'oci'")
        oci_settings = oci_settings.model_copy(update={"timeout_s": settings.timeout_s})
        return cls(auth.inference_client(oci_settings), oci_settings, settings)

    def _serving_mode(self) -> Any:
        from oci.generative_ai_inference import models

        return models.DedicatedServingMode(endpoint_id=self.endpoint_id)

    def rerank(self, query: str, texts: Sequence[str]) -> list[float]:
        from oci.generative_ai_inference import models

        if not texts:
            return []
        details = models.RerankTextDetails(
            input=query, documents=list(texts), top_n=len(texts), is_echo=False,
            compartment_id=self._oci.compartment_id, serving_mode=self._serving_mode())
        what = f"OCI rerank_text ({len(texts)} documents)"
        response = call_with_retry(lambda: self._client.rerank_text(details), self._settings.retry, what,
                                   self.endpoint)
        ranks = getattr(getattr(response, "data", None), "document_ranks", None)
        if not isinstance(ranks, list):
            raise ProviderError(f"{what}: malformed response from {self.endpoint}: no document_ranks")
        scores: list[float | None] = [None] * len(texts)
        for rank in ranks:
            index, score = getattr(rank, "index", None), getattr(rank, "relevance_score", None)
            if not isinstance(index, int) or not 0 <= index < len(texts) or not isinstance(score, (int, float)):
                raise ProviderError(f"{what}: malformed response from {self.endpoint}: "
                                    f"rank index={index!r} relevance_score={score!r}")
            scores[index] = float(score)
        if any(s is None for s in scores):
            raise ProviderError(f"{what}: {self.endpoint} scored {sum(s is not None for s in scores)} of "
                                f"{len(texts)} documents")
        return [float(s) for s in scores if s is not None]
