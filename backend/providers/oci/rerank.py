"""OCI Generative AI rerank (``GenerativeAiInferenceClient.rerank_text``) behind the ``Reranker`` port.

Signing, endpoint and compartment are the ones of ``embeddings.oci`` (one OCI
account for the runtime); the model is ``retrieval.rerank.model`` (e.g.
``cohere.rerank-v3.5``), on demand or, with ``serving_mode: dedicated``, the
configured endpoint. One retried call per search (see ``calls``).
"""

from __future__ import annotations

from typing import Any, Sequence

from backend.common.config import OciSettings, RerankSettings
from backend.common.errors import ConfigError, ProviderError
from backend.providers.oci import auth
from backend.providers.oci.calls import call_with_retry


class OciReranker:
    def __init__(self, client: Any, oci_settings: OciSettings, settings: RerankSettings) -> None:
        self._client = client
        self._oci = oci_settings
        self._settings = settings
        self.name = settings.model or "oci-rerank"
        self.endpoint = auth.endpoint_of(client, oci_settings)

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

        if self._oci.serving_mode == "dedicated":
            return models.DedicatedServingMode(endpoint_id=self._oci.endpoint_id)
        return models.OnDemandServingMode(model_id=self._settings.model)

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
