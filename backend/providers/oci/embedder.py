"""OCI Generative AI embeddings (``embed_text``) behind the ``Embedder`` port.

A call carries at most ``max_inputs_per_call`` texts (the service caps at 96)
and at most ``max_chars_per_call`` characters, so a batch of long chunks is
split before the service would refuse it. Documents are sent with
``input_types.documents`` (SEARCH_DOCUMENT) and queries with
``input_types.queries`` (SEARCH_QUERY). Each batch is one retried call (see
``calls``); a permanent failure raises ``ProviderError`` naming the batch.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np
import structlog

from backend.common.config import EmbeddingSettings
from backend.common.errors import ConfigError, ProviderError
from backend.core.types import Vector
from backend.providers.oci import auth
from backend.providers.oci.calls import call_with_retry

log = structlog.get_logger(__name__)

#: Output dimensions of the OCI-hosted embedding models we know; others need embeddings.dimension.
KNOWN_DIMENSIONS = {
    "cohere.embed-english-v3.0": 1024,
    "cohere.embed-multilingual-v3.0": 1024,
    "cohere.embed-english-light-v3.0": 384,
    "cohere.embed-multilingual-light-v3.0": 384,
    "cohere.embed-v4.0": 1536,
}


def plan_batches(texts: Sequence[str], max_inputs: int, max_chars: int) -> list[tuple[int, int]]:
    """``[start, end)`` slices: at most ``max_inputs`` texts and ``max_chars`` characters
    each (a single text longer than the cap travels alone; ``truncate`` handles it)."""
    batches: list[tuple[int, int]] = []
    start, chars = 0, 0
    for i, text in enumerate(texts):
        if i > start and (i - start >= max_inputs or chars + len(text) > max_chars):
            batches.append((start, i))
            start, chars = i, 0
        chars += len(text)
    if start < len(texts):
        batches.append((start, len(texts)))
    return batches


class OciEmbedder:
    """``Embedder`` on ``GenerativeAiInferenceClient.embed_text``."""

    def __init__(self, client: Any, settings: EmbeddingSettings, dimension: int) -> None:
        self._client = client
        self._settings = settings
        self._oci = settings.oci
        self.model_id = settings.model
        self.dimension = dimension
        self.endpoint = auth.endpoint_of(client, settings.oci)
        self.calls = 0
        self.texts_embedded = 0

    @classmethod
    def from_settings(cls, settings: EmbeddingSettings) -> "OciEmbedder":
        oci_settings = settings.oci
        if not oci_settings.compartment_id:
            raise ConfigError("embeddings.oci.compartment_id is required with embeddings.provider 'oci'")
        if oci_settings.serving_mode == "dedicated" and not oci_settings.endpoint_id:
            raise ConfigError("embeddings.oci.endpoint_id is required with serving_mode 'dedicated'")
        dimension = settings.dimension or KNOWN_DIMENSIONS.get(settings.model)
        if dimension is None:
            raise ConfigError(f"embeddings.dimension is required for OCI model {settings.model!r} "
                              f"(known models: {', '.join(sorted(KNOWN_DIMENSIONS))})")
        return cls(auth.inference_client(oci_settings), settings, dimension)

    def _serving_mode(self) -> Any:
        from oci.generative_ai_inference import models

        if self._oci.serving_mode == "dedicated":
            return models.DedicatedServingMode(endpoint_id=self._oci.endpoint_id)
        return models.OnDemandServingMode(model_id=self.model_id)

    def _embed(self, texts: Sequence[str], input_type: str) -> Vector:
        from oci.generative_ai_inference import models

        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        max_inputs = min(self._oci.max_inputs_per_call, self._settings.batching.batch_size)
        batches = plan_batches(texts, max_inputs, self._oci.max_chars_per_call)
        out = np.empty((len(texts), self.dimension), dtype=np.float32)
        for number, (start, end) in enumerate(batches, start=1):
            what = f"OCI embed_text batch {number}/{len(batches)} (texts {start + 1}-{end}, {input_type})"
            details = models.EmbedTextDetails(
                inputs=list(texts[start:end]), serving_mode=self._serving_mode(),
                compartment_id=self._oci.compartment_id, input_type=input_type, truncate=self._oci.truncate)
            response = call_with_retry(lambda: self._client.embed_text(details), self._settings.retry, what,
                                       self.endpoint)
            out[start:end] = self._vectors(response, end - start, what)
            self.calls += 1
        self.texts_embedded += len(texts)
        log.debug("oci.embedded", texts=len(texts), calls=len(batches), input_type=input_type)
        return out

    def _vectors(self, response: Any, expected: int, what: str) -> Vector:
        embeddings = getattr(getattr(response, "data", None), "embeddings", None)
        if not isinstance(embeddings, list) or len(embeddings) != expected:
            got = len(embeddings) if isinstance(embeddings, list) else type(embeddings).__name__
            raise ProviderError(f"{what}: malformed response from {self.endpoint}: expected {expected} embeddings, "
                                f"got {got}")
        try:
            matrix = np.asarray(embeddings, dtype=np.float32)
        except (TypeError, ValueError) as exc:
            raise ProviderError(f"{what}: malformed response from {self.endpoint}: embeddings are not numbers") from exc
        if matrix.ndim != 2 or matrix.shape[1] != self.dimension:
            raise ProviderError(f"{what}: malformed response from {self.endpoint}: vectors of shape {matrix.shape}, "
                                f"expected {self.dimension} dimensions for {self.model_id}")
        return matrix

    def embed_documents(self, texts: Sequence[str]) -> Vector:
        return self._embed(texts, self._settings.input_types.documents)

    def embed_queries(self, texts: Sequence[str]) -> Vector:
        return self._embed(texts, self._settings.input_types.queries)
