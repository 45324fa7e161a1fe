"""The contract every ``Embedder`` passes (same shape as the vector store suite).

A provider's test class inherits :class:`EmbedderContract` and overrides the
``embedder_under_test`` fixture; remote providers run it against a local HTTP
server that speaks their protocol.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

SENTENCES = (
    "Employees accrue two days of paid vacation leave for every month worked.",
    "To connect to the corporate VPN, install the client and sign in with your badge number.",
    "The office kitchen is cleaned every Friday afternoon.",
)


class EmbedderContract:
    @pytest.fixture
    def embedder_under_test(self) -> Any:
        raise NotImplementedError("a provider's test class overrides `embedder_under_test`")

    def test_model_id_and_dimension_are_declared(self, embedder_under_test: Any) -> None:
        assert isinstance(embedder_under_test.model_id, str) and embedder_under_test.model_id
        assert isinstance(embedder_under_test.dimension, int) and embedder_under_test.dimension > 0

    @pytest.mark.parametrize("method", ["embed_documents", "embed_queries"])
    def test_one_float32_row_of_the_declared_dimension_per_text(self, embedder_under_test: Any, method: str) -> None:
        out = getattr(embedder_under_test, method)(list(SENTENCES))
        assert out.shape == (3, embedder_under_test.dimension)
        assert out.dtype == np.float32
        assert np.isfinite(out).all()
        assert len({row.tobytes() for row in out}) == 3

    @pytest.mark.parametrize("method", ["embed_documents", "embed_queries"])
    def test_input_order_is_preserved(self, embedder_under_test: Any, method: str) -> None:
        fn = getattr(embedder_under_test, method)
        together = fn([SENTENCES[2], SENTENCES[0], SENTENCES[1]])
        alone = np.vstack([fn([s]) for s in (SENTENCES[2], SENTENCES[0], SENTENCES[1])])
        np.testing.assert_allclose(together, alone, atol=1e-5)

    @pytest.mark.parametrize("method", ["embed_documents", "embed_queries"])
    def test_empty_input_gives_an_empty_matrix(self, embedder_under_test: Any, method: str) -> None:
        out = getattr(embedder_under_test, method)([])
        assert out.shape == (0, embedder_under_test.dimension)
        assert out.dtype == np.float32

    def test_the_same_text_embeds_to_the_same_vector(self, embedder_under_test: Any) -> None:
        first = embedder_under_test.embed_documents([SENTENCES[0]])
        again = embedder_under_test.embed_documents([SENTENCES[0], SENTENCES[1]])[:1]
        np.testing.assert_allclose(first, again, atol=1e-5)
