"""Changing the local runtime on an existing store goes through the lifecycle: the
next version is built from scratch with the new stamp, the gate evaluates it with the
new runtime, the alias moves, and a reader on the old runtime is refused, not answered
from vectors of another runtime."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from backend.api.app import create_app
from backend.runtime import build_services
from backend.common.config import EmbeddingSettings
from backend.providers.local.embedder import LocalEmbedder, make_local_embedder
from tests.eval.lifecycle import LEAVE_Q, VERSION
from tests.eval.test_lifecycle import KB

MODEL = "sentence-transformers/all-MiniLM-L6-v2"


@pytest.fixture
def torch_kb(tmp_path: Path) -> Any:
    built = KB(tmp_path, LocalEmbedder(EmbeddingSettings()))
    yield built
    built.store.close()


def test_switching_torch_to_onnx_int8_builds_a_new_version_that_the_gate_promotes(
        torch_kb: KB, tmp_path_factory: pytest.TempPathFactory) -> None:
    kb = torch_kb
    assert kb.ingest().ok and kb.promote().promoted
    assert kb.store.get_version(VERSION).model == MODEL  # torch fp32: the bare stamp
    before = kb.ask(LEAVE_Q)

    int8 = make_local_embedder(EmbeddingSettings(local={
        "runtime": "onnx", "quantization": "int8", "onnx_cache_dir": str(tmp_path_factory.mktemp("onnx"))}))
    kb.embedder = int8
    report = kb.ingest()
    [build] = report.builds
    assert (build["action"], build["version"], build["parent"]) == ("new_version", "KB_LC_V2", None)
    assert report.embeddings_computed > 0 and kb.store.get_version("KB_LC_V2").model == f"{MODEL}@onnx-int8"

    result = kb.promote()
    assert (result.promoted, result.previous) == (True, VERSION)
    assert any("cannot be evaluated with this embedder" in note for note in result.notes)

    refused = kb.client.post("/chat", json={"question": LEAVE_Q})  # a reader still on torch
    assert refused.status_code == 409 and refused.get_json()["error"]["code"] == "embedding_model_mismatch"
    reader = create_app(kb.settings, build_services(kb.settings, store=kb.store, embedder=int8)).test_client()
    answer = reader.post("/chat", json={"question": LEAVE_Q})
    assert answer.status_code == 200 and answer.headers["X-Answer-Mode"] == before["mode"]
    assert "25 days" in answer.get_json()["answer"] and "25 days" in before["answer"]
