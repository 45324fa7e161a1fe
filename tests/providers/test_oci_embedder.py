"""OciEmbedder with the real ``oci`` SDK against a local stand-in of the service."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from backend.common.config import EmbeddingSettings
from backend.common.errors import ConfigError, ProviderError, ProviderTimeout, ProviderUnavailable
from backend.providers.oci.embedder import OciEmbedder, plan_batches
from tests.contracts.embedder import EmbedderContract
from tests.providers.oci_fake_service import (  # noqa: F401 - fixtures
    KEY_ID,
    FakeOciService,
    oci_config_file,
    oci_service,
    verify_signature,
)

DIM = 4
COMPARTMENT = "ocid1.compartment.oc1..rag"


def vector_for(text: str) -> list[float]:
    """What the stand-in service embeds a text to: deterministic, from the text."""
    return [float(len(text)), float(sum(map(ord, text)) % 97), 1.0, 0.5]


def embed_ok(body: dict[str, Any], n: int) -> tuple[int, Any]:
    return 200, {"id": f"e{n}", "modelId": "cohere.embed-test", "inputs": body["inputs"],
                 "embeddings": [vector_for(t) for t in body["inputs"]]}


def settings(service: FakeOciService, config: Path, **oci: Any) -> EmbeddingSettings:
    batch = oci.pop("batch_size", 96)
    return EmbeddingSettings.model_validate({
        "provider": "oci", "model": "cohere.embed-test", "dimension": DIM,
        "batching": {"batch_size": batch},
        "retry": {"max_attempts": 3, "initial_wait_s": 0, "max_wait_s": 0},
        "oci": {"endpoint": service.url, "compartment_id": COMPARTMENT, "config_file": str(config), **oci},
    })


@pytest.fixture
def embedder(oci_service: FakeOciService, oci_config_file: Path) -> OciEmbedder:  # noqa: F811
    oci_service.reset(embed_ok)
    return OciEmbedder.from_settings(settings(oci_service, oci_config_file))


def test_documents_go_in_calls_of_at_most_96_in_input_order(embedder: OciEmbedder, oci_service: FakeOciService) -> None:
    texts = [f"chunk number {i}" for i in range(200)]
    vectors = embedder.embed_documents(texts)
    assert vectors.shape == (200, DIM) and vectors.dtype == np.float32
    np.testing.assert_allclose(vectors[137], vector_for("chunk number 137"))
    assert [len(r["body"]["inputs"]) for r in oci_service.requests] == [96, 96, 8]
    first = oci_service.requests[0]
    assert first["path"] == "/20231130/actions/embedText"
    assert first["body"]["inputType"] == "SEARCH_DOCUMENT"
    assert first["body"]["servingMode"] == {"servingType": "ON_DEMAND", "modelId": "cohere.embed-test"}
    assert first["body"]["compartmentId"] == COMPARTMENT
    assert first["body"]["truncate"] == "END"
    assert oci_service.requests[2]["body"]["inputs"][0] == "chunk number 192"
    assert embedder.calls == 3 and embedder.texts_embedded == 200


def test_requests_are_signed_with_the_config_files_api_key(embedder: OciEmbedder, oci_service: FakeOciService,
                                                           oci_config_file: Path) -> None:  # noqa: F811
    embedder.embed_queries(["hello"])
    auth = oci_service.requests[0]["headers"]["authorization"]
    assert f'keyId="{KEY_ID}"' in auth and 'algorithm="rsa-sha256"' in auth
    signed = verify_signature(oci_service.requests[0], oci_config_file.parent / "key.pem")
    assert signed == ["date", "(request-target)", "host", "content-length", "content-type", "x-content-sha256"]


def test_queries_use_the_query_input_type(embedder: OciEmbedder, oci_service: FakeOciService) -> None:
    vectors = embedder.embed_queries(["what is the leave policy?"])
    np.testing.assert_allclose(vectors[0], vector_for("what is the leave policy?"))
    assert oci_service.requests[0]["body"]["inputType"] == "SEARCH_QUERY"


def test_character_cap_splits_a_batch_before_the_count_limit(oci_service: FakeOciService, oci_config_file: Path) -> None:  # noqa: F811
    oci_service.reset(embed_ok)
    emb = OciEmbedder.from_settings(settings(oci_service, oci_config_file, max_chars_per_call=25))
    emb.embed_documents(["a" * 10] * 5)
    assert [len(r["body"]["inputs"]) for r in oci_service.requests] == [2, 2, 1]


def test_dedicated_serving_mode_names_the_endpoint(oci_service: FakeOciService, oci_config_file: Path) -> None:  # noqa: F811
    oci_service.reset(embed_ok)
    emb = OciEmbedder.from_settings(settings(oci_service, oci_config_file, serving_mode="dedicated",
                                             endpoint_id="ocid1.generativeaiendpoint.oc1..x", truncate="NONE"))
    emb.embed_documents(["x"])
    body = oci_service.requests[0]["body"]
    assert body["servingMode"] == {"servingType": "DEDICATED", "endpointId": "ocid1.generativeaiendpoint.oc1..x"}
    assert body["truncate"] == "NONE"


def test_throttling_429_is_retried_then_succeeds(embedder: OciEmbedder, oci_service: FakeOciService) -> None:
    def throttle_once(body: dict[str, Any], n: int) -> tuple[int, Any]:
        if n == 1:
            return 429, {"code": "TooManyRequests", "message": "Request was throttled"}
        return embed_ok(body, n)

    oci_service.reset(throttle_once)
    vectors = embedder.embed_documents(["alpha", "beta"])
    np.testing.assert_allclose(vectors[1], vector_for("beta"))
    assert len(oci_service.requests) == 2
    assert oci_service.requests[0]["body"] == oci_service.requests[1]["body"]


def test_permanent_400_raises_provider_error_naming_the_batch(embedder: OciEmbedder, oci_service: FakeOciService) -> None:
    def reject_second(body: dict[str, Any], n: int) -> tuple[int, Any]:
        if n == 2:
            return 400, {"code": "InvalidParameter", "message": "inputs[3] is empty"}
        return embed_ok(body, n)

    oci_service.reset(reject_second)
    with pytest.raises(ProviderError, match=r"OCI embed_text batch 2/2 \(texts 97-100, SEARCH_DOCUMENT\): rejected "
                                            r"by http://127.0.0.1:\d+ \(HTTP 400 InvalidParameter: inputs\[3\] is empty\)"):
        embedder.embed_documents([f"t{i}" for i in range(100)])
    assert len(oci_service.requests) == 2


def test_server_errors_are_retried_until_attempts_run_out(embedder: OciEmbedder, oci_service: FakeOciService) -> None:
    oci_service.reset(lambda body, n: (503, {"code": "ServiceUnavailable", "message": "try later"}))
    with pytest.raises(ProviderTimeout, match=r"batch 1/1 .* failed \(HTTP 503 ServiceUnavailable: try later\)"):
        embedder.embed_documents(["x"])
    assert len(oci_service.requests) == 3


@pytest.mark.parametrize("payload,reason", [
    ({"id": "e", "embeddings": [[1.0, 2.0, 3.0, 4.0]]}, "expected 2 embeddings, got 1"),
    ({"id": "e", "modelId": "m"}, "expected 2 embeddings, got NoneType"),
    ({"id": "e", "embeddings": [[1.0, 2.0], [3.0, 4.0]]}, r"vectors of shape \(2, 2\), expected 4 dimensions"),
    (b"<html>gateway</html>", "malformed response"),
])
def test_malformed_response_raises_provider_error(embedder: OciEmbedder, oci_service: FakeOciService,
                                                  payload: Any, reason: str) -> None:
    oci_service.reset(lambda body, n: (200, payload))
    with pytest.raises(ProviderError, match=reason):
        embedder.embed_documents(["one", "two"])
    assert len(oci_service.requests) == 1


def test_unknown_model_without_dimension_is_a_config_error(oci_config_file: Path) -> None:  # noqa: F811
    cfg = EmbeddingSettings.model_validate({"provider": "oci", "model": "cohere.mystery",
                                            "oci": {"compartment_id": COMPARTMENT, "config_file": str(oci_config_file)}})
    with pytest.raises(ConfigError, match="embeddings.dimension is required for OCI model 'cohere.mystery'"):
        OciEmbedder.from_settings(cfg)


def test_missing_config_file_is_a_config_error_naming_it(tmp_path: Path) -> None:
    cfg = EmbeddingSettings.model_validate({"provider": "oci", "model": "cohere.embed-english-v3.0",
                                            "oci": {"compartment_id": COMPARTMENT,
                                                    "config_file": str(tmp_path / "nope")}})
    with pytest.raises(ConfigError, match=f"embeddings.oci.config_file: {tmp_path / 'nope'} not found"):
        OciEmbedder.from_settings(cfg)


@pytest.mark.parametrize("lengths,max_inputs,max_chars,expected", [
    ([1] * 5, 2, 100, [(0, 2), (2, 4), (4, 5)]),
    ([10, 10, 10], 96, 20, [(0, 2), (2, 3)]),
    ([50, 1, 1], 96, 20, [(0, 1), (1, 3)]),
    ([], 96, 20, []),
])
def test_plan_batches_respects_both_caps(lengths: list[int], max_inputs: int, max_chars: int,
                                         expected: list[tuple[int, int]]) -> None:
    assert plan_batches(["x" * n for n in lengths], max_inputs, max_chars) == expected


class TestOciEmbedderContract(EmbedderContract):
    """The shared embedder contract, served by the local stand-in."""

    @pytest.fixture
    def embedder_under_test(self, oci_service: FakeOciService, oci_config_file: Path) -> OciEmbedder:  # noqa: F811
        oci_service.reset(embed_ok)
        return OciEmbedder.from_settings(settings(oci_service, oci_config_file))


def test_resource_principal_outside_oci_is_reported_as_unavailable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OCI_RESOURCE_PRINCIPAL_VERSION", raising=False)
    cfg = EmbeddingSettings.model_validate({"provider": "oci", "model": "cohere.embed-english-v3.0",
                                            "oci": {"compartment_id": COMPARTMENT, "auth": "resource_principal"}})
    with pytest.raises(ProviderUnavailable, match="embeddings.oci.auth=resource_principal: no resource principal "
                                                  "is available on this host .OSError: OCI_RESOURCE_PRINCIPAL_VERSION"):
        OciEmbedder.from_settings(cfg)
