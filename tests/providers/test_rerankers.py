"""The three outside-system rerankers with their real client libraries:

* ``HttpReranker`` (httpx) against a ``/rerank`` server started here, in both the
  Cohere-compatible and the text-embeddings-inference shapes;
* ``OciReranker`` (the ``oci`` SDK's ``rerank_text``) against the local stand-in of
  the OCI service, with really signed requests;
* ``CrossEncoderReranker`` (sentence-transformers) on a tiny BERT cross-encoder built
  and saved in the test, scored against the model's own forward pass.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable, Iterator

import pytest

from backend.common.config import OciSettings, RerankSettings, Settings
from backend.common.errors import ConfigError, ProviderError, ProviderTimeout, ProviderUnavailable
from backend.core.ports import Reranker
from backend.providers.oci.rerank import OciReranker
from backend.providers.registry import build_reranker
from backend.providers.rerank.cross_encoder import CrossEncoderReranker
from backend.providers.rerank.http import HttpReranker
from tests.local_http import LocalHttpServer, json_reply
from tests.providers.oci_fake_service import (  # noqa: F401 - fixtures
    FakeOciService,
    oci_config_file,
    oci_service,
    verify_signature,
)

TEXTS = ["The cat sat on the mat.", "Quarterly revenue grew by four percent.", "Cats purr when content."]
NO_WAIT = {"max_attempts": 3, "initial_wait_s": 0, "max_wait_s": 0}


# --- a local /rerank server -------------------------------------------------------------
class RerankServer(LocalHttpServer):
    def __init__(self) -> None:
        super().__init__(url_suffix="")
        self.requests: list[dict[str, Any]] = []
        self.handler: Callable[[dict[str, Any], int], tuple[int, Any]] = lambda body, n: (500, {})

    def respond(self, path: str, headers: dict[str, str], body: bytes) -> tuple[int, str, bytes]:
        request = json.loads(body or b"{}")
        self.requests.append({"path": path, "body": request, "headers": {k.lower(): v for k, v in headers.items()}})
        return json_reply(*self.handler(request, len(self.requests)))


def word_score(query: str, text: str) -> float:
    """What the stand-in server scores: shared lowercase words (deterministic, order-relevant)."""
    return float(len(set(query.lower().split()) & set(text.lower().strip(".").split())))


def cohere_ok(body: dict[str, Any], n: int) -> tuple[int, Any]:
    scored = [{"index": i, "relevance_score": word_score(body["query"], t)} for i, t in enumerate(body["documents"])]
    return 200, {"id": f"r{n}", "results": sorted(scored, key=lambda r: -r["relevance_score"])}


def tei_ok(body: dict[str, Any], n: int) -> tuple[int, Any]:
    scored = [{"index": i, "score": word_score(body["query"], t)} for i, t in enumerate(body["texts"])]
    return 200, sorted(scored, key=lambda r: -r["score"])


@pytest.fixture(scope="module")
def rerank_server() -> Iterator[RerankServer]:
    with RerankServer().running() as server:
        yield server


def http_settings(server: RerankServer, **extra: Any) -> RerankSettings:
    return RerankSettings.model_validate({"provider": "http", "base_url": server.url + "/v1", "model": "rerank-test",
                                          "retry": NO_WAIT, **extra})


def test_http_cohere_shape_returns_scores_in_input_order(rerank_server: RerankServer) -> None:
    rerank_server.requests.clear()
    rerank_server.handler = cohere_ok
    reranker = HttpReranker(http_settings(rerank_server, api_key="s3cret"))
    assert isinstance(reranker, Reranker)
    scores = reranker.rerank("the cat purr", TEXTS)
    assert scores == [2.0, 0.0, 1.0]
    request = rerank_server.requests[0]
    assert request["path"] == "/v1/rerank"
    assert request["body"] == {"query": "the cat purr", "documents": TEXTS, "top_n": 3, "model": "rerank-test"}
    assert request["headers"]["authorization"] == "Bearer s3cret"


def test_http_tei_shape(rerank_server: RerankServer) -> None:
    rerank_server.requests.clear()
    rerank_server.handler = tei_ok
    settings = RerankSettings.model_validate({"provider": "http", "base_url": rerank_server.url, "api": "tei",
                                              "retry": NO_WAIT})
    assert HttpReranker(settings).rerank("revenue grew", TEXTS) == [0.0, 2.0, 0.0]
    assert rerank_server.requests[0]["path"] == "/rerank"
    assert rerank_server.requests[0]["body"] == {"query": "revenue grew", "texts": TEXTS, "truncate": True}


def test_http_throttling_and_server_errors_are_retried(rerank_server: RerankServer) -> None:
    rerank_server.requests.clear()
    rerank_server.handler = lambda body, n: (429, {}) if n == 1 else (503, {}) if n == 2 else cohere_ok(body, n)
    assert HttpReranker(http_settings(rerank_server)).rerank("cat", TEXTS) == [1.0, 0.0, 0.0]
    assert len(rerank_server.requests) == 3


def test_http_retries_run_out_on_a_failing_server(rerank_server: RerankServer) -> None:
    rerank_server.requests.clear()
    rerank_server.handler = lambda body, n: (502, {"message": "bad gateway"})
    with pytest.raises(ProviderTimeout, match=r"rerank endpoint http://127.0.0.1:\d+/v1/rerank failed with HTTP 502"):
        HttpReranker(http_settings(rerank_server)).rerank("cat", TEXTS)
    assert len(rerank_server.requests) == 3


def test_http_client_error_fails_at_once(rerank_server: RerankServer) -> None:
    rerank_server.requests.clear()
    rerank_server.handler = lambda body, n: (400, {"message": "documents too long"})
    with pytest.raises(ProviderError, match=r"rejected the request with HTTP 400: .*documents too long"):
        HttpReranker(http_settings(rerank_server)).rerank("cat", TEXTS)
    assert len(rerank_server.requests) == 1


@pytest.mark.parametrize("payload, message", [
    ({"results": [{"index": 0, "relevance_score": 1.0}]}, "no score for 2 of 3 texts"),
    ({"results": [{"index": 7, "relevance_score": 1.0}]}, "result index 7 outside 0..2"),
    ({"results": [{"index": 0}]}, "malformed result"),
    ({"unexpected": True}, "expected a list of results"),
])
def test_http_malformed_answers_raise_provider_error(rerank_server: RerankServer, payload: Any, message: str) -> None:
    rerank_server.handler = lambda body, n: (200, payload)
    with pytest.raises(ProviderError, match=message):
        HttpReranker(http_settings(rerank_server)).rerank("cat", TEXTS)


def test_http_unreachable_endpoint_is_provider_unavailable() -> None:
    settings = RerankSettings.model_validate({"provider": "http", "base_url": "http://127.0.0.1:9", "retry": NO_WAIT})
    with pytest.raises(ProviderUnavailable, match="cannot be reached"):
        HttpReranker(settings).rerank("cat", TEXTS)


def test_rerank_settings_name_the_missing_field() -> None:
    with pytest.raises(ValueError, match="rerank.base_url is required with rerank.provider 'http'"):
        RerankSettings(provider="http")
    with pytest.raises(ValueError, match="rerank.model_path is required"):
        RerankSettings(provider="cross_encoder")
    assert build_reranker(Settings()) is None


# --- OCI rerank_text against the local stand-in ---------------------------------------------
COMPARTMENT = "ocid1.compartment.oc1..rag"


def oci_rerank_ok(body: dict[str, Any], n: int) -> tuple[int, Any]:
    ranks = [{"index": i, "relevanceScore": word_score(body["input"], t) / 10} for i, t in enumerate(body["documents"])]
    return 200, {"id": f"r{n}", "modelId": "cohere.rerank-test",
                 "documentRanks": sorted(ranks, key=lambda r: -r["relevanceScore"])}


RERANK_ENDPOINT = "ocid1.generativeaiendpoint.oc1.us-chicago-1.rerank"
EMBED_ENDPOINT = "ocid1.generativeaiendpoint.oc1.us-chicago-1.embed"


def oci_reranker(service: FakeOciService, config: Path, **rerank: Any) -> OciReranker:
    # the embedding model is served by a dedicated endpoint of its own: the reranker must not use it
    oci = OciSettings(endpoint=service.url, compartment_id=COMPARTMENT, config_file=str(config),
                      serving_mode="dedicated", endpoint_id=EMBED_ENDPOINT)
    return OciReranker.from_settings(oci, RerankSettings.model_validate(
        {"provider": "oci", "model": "cohere.rerank.v3-5", "endpoint_id": RERANK_ENDPOINT, "retry": NO_WAIT,
         **rerank}))


def test_oci_rerank_text_is_signed_and_scores_come_back_in_input_order(
        oci_service: FakeOciService, oci_config_file: Path) -> None:  # noqa: F811
    oci_service.reset(oci_rerank_ok)
    scores = oci_reranker(oci_service, oci_config_file).rerank("the cat purr", TEXTS)
    assert scores == pytest.approx([0.2, 0.0, 0.1])
    request = oci_service.requests[0]
    assert request["path"] == "/20231130/actions/rerankText"
    assert request["body"]["input"] == "the cat purr" and request["body"]["documents"] == TEXTS
    assert request["body"]["topN"] == 3 and request["body"]["compartmentId"] == COMPARTMENT
    assert request["body"]["servingMode"] == {"servingType": "DEDICATED", "endpointId": RERANK_ENDPOINT}
    assert "(request-target)" in verify_signature(request, oci_config_file.parent / "key.pem")


def test_oci_rerank_goes_to_its_own_dedicated_endpoint_given_as_the_model(
        oci_service: FakeOciService, oci_config_file: Path) -> None:  # noqa: F811
    """C3: Cohere Rerank 3.5 is dedicated-only; an endpoint OCID in rerank.model is that endpoint (as for chat),
    never an on-demand model id, and never the embedding endpoint, whatever embeddings.oci.serving_mode says."""
    oci_service.reset(oci_rerank_ok)
    oci_reranker(oci_service, oci_config_file, model=RERANK_ENDPOINT, endpoint_id=None).rerank("cat", TEXTS)
    assert oci_service.requests[0]["body"]["servingMode"] == {"servingType": "DEDICATED",
                                                              "endpointId": RERANK_ENDPOINT}
    oci = OciSettings(endpoint=oci_service.url, compartment_id=COMPARTMENT, config_file=str(oci_config_file))
    OciReranker.from_settings(oci, RerankSettings(provider="oci", model="cohere.rerank.v3-5",
                                                  endpoint_id=RERANK_ENDPOINT, retry=NO_WAIT)).rerank("cat", TEXTS)
    assert oci_service.requests[1]["body"]["servingMode"] == {"servingType": "DEDICATED",
                                                              "endpointId": RERANK_ENDPOINT}


def test_oci_rerank_without_a_dedicated_endpoint_is_refused_at_configuration() -> None:
    with pytest.raises(ValueError, match=r"rerank.endpoint_id is required with rerank.provider 'oci'.*dedicated"):
        RerankSettings(provider="oci", model="cohere.rerank.v3-5")
    with pytest.raises(ValueError, match=r"rerank.endpoint_id must be a dedicated endpoint OCID"):
        RerankSettings(provider="oci", model="cohere.rerank.v3-5", endpoint_id="cohere.rerank.v3-5")
    unchecked = RerankSettings.model_construct(provider="oci", model="cohere.rerank.v3-5", endpoint_id=None)
    with pytest.raises(ConfigError, match=r"retrieval.rerank.endpoint_id is required"):
        OciReranker(object(), OciSettings(compartment_id=COMPARTMENT), unchecked)


def test_oci_rerank_throttling_is_retried(oci_service: FakeOciService, oci_config_file: Path) -> None:  # noqa: F811
    oci_service.reset(lambda body, n: (429, {"code": "TooManyRequests", "message": "slow down"}) if n == 1
                      else oci_rerank_ok(body, n))
    assert oci_reranker(oci_service, oci_config_file).rerank("cat", TEXTS) == pytest.approx([0.1, 0.0, 0.0])
    assert len(oci_service.requests) == 2


def test_oci_rerank_missing_ranks_raise_provider_error(oci_service: FakeOciService, oci_config_file: Path) -> None:  # noqa: F811
    oci_service.reset(lambda body, n: (200, {"id": "r", "documentRanks": [{"index": 0, "relevanceScore": 0.5}]}))
    with pytest.raises(ProviderError, match=r"OCI rerank_text \(3 documents\): .* scored 1 of 3 documents"):
        oci_reranker(oci_service, oci_config_file).rerank("cat", TEXTS)


def test_oci_rerank_client_error_names_the_call(oci_service: FakeOciService, oci_config_file: Path) -> None:  # noqa: F811
    oci_service.reset(lambda body, n: (400, {"code": "InvalidParameter", "message": "unknown model"}))
    with pytest.raises(ProviderError, match=r"OCI rerank_text \(3 documents\): rejected .*HTTP 400 InvalidParameter"):
        oci_reranker(oci_service, oci_config_file).rerank("cat", TEXTS)
    assert len(oci_service.requests) == 1


# --- a tiny cross-encoder built here ----------------------------------------------------------
@pytest.fixture(scope="module")
def tiny_cross_encoder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    import torch
    from transformers import BertConfig, BertForSequenceClassification, BertTokenizerFast

    folder = tmp_path_factory.mktemp("tiny-cross-encoder")
    words = sorted({w.strip(".").lower() for t in TEXTS + ["the cat purr revenue"] for w in t.split()})
    vocab = folder / "vocab.txt"
    vocab.write_text("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *words]) + "\n")
    torch.manual_seed(7)
    config = BertConfig(vocab_size=5 + len(words), hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                        intermediate_size=32, max_position_embeddings=64, num_labels=1,
                        initializer_range=0.5)
    BertForSequenceClassification(config).eval().save_pretrained(folder)
    BertTokenizerFast(vocab_file=str(vocab), do_lower_case=True).save_pretrained(folder)
    return folder


def test_cross_encoder_scores_each_pair_with_the_models_own_logit(tiny_cross_encoder: Path) -> None:
    import torch
    from transformers import AutoTokenizer, BertForSequenceClassification

    reranker = CrossEncoderReranker(tiny_cross_encoder, batch_size=2)
    scores = reranker.rerank("the cat purr", TEXTS)
    tokenizer = AutoTokenizer.from_pretrained(tiny_cross_encoder)
    model = BertForSequenceClassification.from_pretrained(tiny_cross_encoder).eval()
    with torch.no_grad():
        logits = model(**tokenizer(["the cat purr"] * 3, TEXTS, padding=True, return_tensors="pt")).logits[:, 0]
    expected = logits.tolist()
    # sentence-transformers applies a sigmoid to a one-label model's logit (same order as the logit)
    assert sorted(range(3), key=lambda i: -scores[i]) == sorted(range(3), key=lambda i: -expected[i])
    assert scores == pytest.approx(torch.sigmoid(torch.tensor(expected)).tolist(), abs=1e-5)
    assert len({round(s, 6) for s in scores}) >= 2  # the model really tells the texts apart


def test_cross_encoder_through_the_registry_and_a_missing_path(tiny_cross_encoder: Path, tmp_path: Path) -> None:
    settings = Settings.model_validate({"retrieval": {"rerank": {"provider": "cross_encoder",
                                                                 "model_path": str(tiny_cross_encoder)}}})
    reranker = build_reranker(settings)
    assert isinstance(reranker, CrossEncoderReranker) and len(reranker.rerank("cat", TEXTS)) == 3
    with pytest.raises(ConfigError, match=r"rerank.model_path: .*nowhere is not a model folder"):
        CrossEncoderReranker(tmp_path / "nowhere")
