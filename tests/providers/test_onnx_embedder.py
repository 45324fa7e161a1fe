"""OnnxEmbedder: the Embedder contract with the real packaged model, the export cache's
rebuild rule, length-sorted batching, and agreement with torch fp32.

The export (about 10 s on 2 cores) happens once per session into a temporary cache
(``onnx_cache``); the rebuild tests export into their own folders.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any, Iterator

import numpy as np
import pytest

from backend.common.config import EmbeddingSettings
from backend.common.errors import ConfigError, EmbeddingModelMismatch, VersionConflict
from backend.core.types import QueryVector, VersionSpec
from backend.providers.local import onnx_export
from backend.providers.local.batching import length_sorted_batches
from backend.providers.local.embedder import LocalEmbedder, make_local_embedder, packaged_model_path
from backend.providers.local.onnx_embedder import OnnxEmbedder
from backend.providers.sqlite_vs.store import SqliteVectorStore
from tests.conftest import REPO
from tests.contracts.embedder import SENTENCES, EmbedderContract
from tests.contracts.vector_store import make_doc

MODEL_ID = "sentence-transformers/all-MiniLM-L6-v2"
REAL_SENTENCES = [
    *SENTENCES,
    "How many days of annual leave do employees get?",
    "Field engineers wear safety shoes with steel toe caps on every site visit. " * 6,
    "ok",
]


@pytest.fixture(scope="session")
def onnx_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("onnx-cache")


def _settings(cache: Path, quantization: str = "none", **local: Any) -> EmbeddingSettings:
    return EmbeddingSettings(local={"runtime": "onnx", "quantization": quantization,
                                    "onnx_cache_dir": str(cache), **local})


@pytest.fixture(scope="session")
def onnx_fp32(onnx_cache: Path) -> OnnxEmbedder:
    return make_local_embedder(_settings(onnx_cache))


@pytest.fixture(scope="session")
def onnx_int8(onnx_cache: Path) -> OnnxEmbedder:
    return make_local_embedder(_settings(onnx_cache, "int8"))


@pytest.fixture(scope="module")
def torch_fp32() -> LocalEmbedder:
    return LocalEmbedder(EmbeddingSettings())


class TestOnnxFp32(EmbedderContract):
    @pytest.fixture
    def embedder_under_test(self, onnx_fp32: OnnxEmbedder) -> Any:
        return onnx_fp32


class TestOnnxInt8(EmbedderContract):
    @pytest.fixture
    def embedder_under_test(self, onnx_int8: OnnxEmbedder) -> Any:
        return onnx_int8


def test_stamps_name_runtime_and_quantization(onnx_fp32: OnnxEmbedder, onnx_int8: OnnxEmbedder,
                                              torch_fp32: LocalEmbedder) -> None:
    assert torch_fp32.model_id == MODEL_ID  # bare stamp: versions made before runtimes existed
    assert onnx_fp32.model_id == f"{MODEL_ID}@onnx-fp32"
    assert onnx_int8.model_id == f"{MODEL_ID}@onnx-int8"
    # the default compatible_runtimes pairs torch fp32 with ONNX fp32, never int8
    assert onnx_fp32.compatible_models == {MODEL_ID} and torch_fp32.compatible_models == {f"{MODEL_ID}@onnx-fp32"}
    assert onnx_int8.compatible_models == frozenset()


def test_vectors_agree_with_torch_fp32(onnx_fp32: OnnxEmbedder, onnx_int8: OnnxEmbedder,
                                       torch_fp32: LocalEmbedder) -> None:
    reference = torch_fp32.embed_documents(REAL_SENTENCES)
    fp32 = (onnx_fp32.embed_documents(REAL_SENTENCES) * reference).sum(axis=1)
    int8 = (onnx_int8.embed_documents(REAL_SENTENCES) * reference).sum(axis=1)
    assert fp32.min() > 0.9999
    # CISI abstracts and queries: min 0.995 (docs/BENCHMARKS.md); a two-letter text ("ok") is the worst here, 0.985
    assert int8.min() > 0.98 and np.median(int8) > 0.995
    np.testing.assert_allclose(np.linalg.norm(onnx_int8.embed_queries(REAL_SENTENCES), axis=1), 1.0, atol=1e-5)


def test_length_sorting_keeps_the_input_order(onnx_cache: Path, onnx_fp32: OnnxEmbedder) -> None:
    """Batches of 2 in windows of 4 reorder the texts internally; rows still follow the input."""
    texts = ["ok", REAL_SENTENCES[4], SENTENCES[0], "a", REAL_SENTENCES[3], SENTENCES[2] * 3, "b c"]
    small = OnnxEmbedder(_settings(onnx_cache, onnx_batch_size=2, sort_window=4), packaged_model_path(MODEL_ID))
    together = small.embed_documents(texts)
    alone = np.vstack([onnx_fp32.embed_documents([t]) for t in texts])
    np.testing.assert_allclose(together, alone, atol=1e-5)
    assert small.calls == 4  # windows of 4 and 3 texts, in batches of at most 2


def test_int8_runs_one_text_per_call_so_a_vector_never_depends_on_its_neighbours(onnx_int8: OnnxEmbedder) -> None:
    calls, texts = onnx_int8.calls, onnx_int8.texts_embedded
    together = onnx_int8.embed_documents(REAL_SENTENCES)
    assert (onnx_int8.calls - calls, onnx_int8.texts_embedded - texts) == (len(REAL_SENTENCES), len(REAL_SENTENCES))
    np.testing.assert_array_equal(together[1], onnx_int8.embed_documents([REAL_SENTENCES[1]])[0])


def test_batches_group_similar_lengths_inside_each_window() -> None:
    lengths = [3, 50, 7, 49, 2, 8, 100]
    batches = length_sorted_batches(lengths, batch_size=2, window=4)
    assert batches == [[1, 3], [2, 0], [6, 5], [4]]
    assert sorted(i for b in batches for i in b) == list(range(len(lengths)))


def test_unchanged_export_is_reused_and_not_exported_again(onnx_cache: Path, onnx_fp32: OnnxEmbedder,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    def no_export(*args: Any) -> None:
        raise AssertionError("the cached export should have been reused")

    monkeypatch.setattr(onnx_export, "_export_fp32", no_export)
    again = onnx_export.ensure_export(packaged_model_path(MODEL_ID), onnx_cache, "none")
    assert (again.path, again.exported) == (onnx_fp32.export.path, False)


def _copy_model(target: Path) -> Path:
    source = packaged_model_path(MODEL_ID)
    target.mkdir()
    for f in source.rglob("*"):
        if f.is_file():
            dest = target / f.relative_to(source)
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(f, dest)
    return target


def test_changed_weights_or_export_version_rebuild(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    model = _copy_model(tmp_path / "model")
    cache = tmp_path / "cache"
    first = onnx_export.ensure_export(model, cache, "none")
    assert first.exported and first.path.is_file()
    assert not onnx_export.ensure_export(model, cache, "none").exported

    monkeypatch.setattr(onnx_export, "EXPORT_VERSION", onnx_export.EXPORT_VERSION + "-next")
    bumped = onnx_export.ensure_export(model, cache, "none")
    assert bumped.exported and bumped.key != first.key

    monkeypatch.undo()
    with (model / "model.safetensors").open("ab") as fh:  # other weights: another sha256
        fh.write(b"\0")
    changed = onnx_export.cache_key(onnx_export.weights_sha256(model))
    assert changed not in {first.key, bumped.key} and not (cache / changed).exists()
    assert [p.name for p in cache.rglob("*.tmp")] == []


def test_export_failure_leaves_no_partial_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(model_dir: Path, out: Path) -> None:
        out.write_bytes(b"half an export")
        raise OSError("disk full")

    monkeypatch.setattr(onnx_export, "_export_fp32", broken)
    with pytest.raises(ConfigError, match=r"onnx_cache_dir .*disk full"):
        onnx_export.ensure_export(packaged_model_path(MODEL_ID), tmp_path, "none")
    assert [p for p in tmp_path.rglob("*") if p.is_file()] == []


def test_int8_without_onnx_is_refused() -> None:
    with pytest.raises(ValueError, match="quantization 'int8' needs runtime 'onnx'"):
        EmbeddingSettings(local={"runtime": "torch", "quantization": "int8"})


# --- the model stamp at query time and on the alias -----------------------------------
@pytest.fixture
def store_by_runtime(tmp_path: Path, torch_fp32: LocalEmbedder, onnx_fp32: OnnxEmbedder,
                     onnx_int8: OnnxEmbedder) -> Iterator[tuple[SqliteVectorStore, dict[str, Any]]]:
    """One version per runtime, each holding the same sentences embedded by that runtime."""
    store = SqliteVectorStore(tmp_path / "stamps.sqlite")
    runtimes = {"KB_TORCH": torch_fp32, "KB_ONNX": onnx_fp32, "KB_INT8": onnx_int8}
    for name, embedder in runtimes.items():
        store.create_version(VersionSpec(name, embedder.model_id, embedder.dimension, "cosine"))
        store.write_documents(name, [make_doc(f"doc{i}", [(text, "text")], {}, "s.md", embedder.embed_documents([text]))
                                     for i, text in enumerate(SENTENCES)])
    yield store, runtimes
    store.close()


def _query(embedder: Any, text: str) -> QueryVector:
    return QueryVector(embedder.embed_queries([text])[0], embedder.model_id, embedder.compatible_models)


def test_a_version_refuses_queries_from_another_runtime(store_by_runtime: tuple[SqliteVectorStore, dict[str, Any]]) -> None:
    store, runtimes = store_by_runtime
    int8_query = _query(runtimes["KB_INT8"], "vacation days")
    with pytest.raises(EmbeddingModelMismatch, match=r"query embedded with .*@onnx-int8 .* KB_TORCH holds vectors from "
                                                     r"sentence-transformers/all-MiniLM-L6-v2 \(384"):
        store.search("KB_TORCH", int8_query, 3)
    with pytest.raises(EmbeddingModelMismatch, match="compatible_runtimes"):
        store.search("KB_INT8", _query(runtimes["KB_TORCH"], "vacation days"), 3)
    assert store.search("KB_INT8", int8_query, 3).hits[0].chunk.doc_id == "doc0"


def test_declared_compatible_runtimes_share_versions(store_by_runtime: tuple[SqliteVectorStore, dict[str, Any]],
                                                     onnx_cache: Path) -> None:
    store, runtimes = store_by_runtime
    # torch fp32 <-> onnx fp32 by the default declaration, both ways, same ranking
    top = [store.search(version, _query(runtimes[runtime], "vacation days"), 3).hits[0].chunk.doc_id
           for version, runtime in (("KB_TORCH", "KB_ONNX"), ("KB_ONNX", "KB_TORCH"))]
    assert top == ["doc0", "doc0"]
    # int8 is accepted only where declared
    declared = make_local_embedder(_settings(onnx_cache, "int8", compatible_runtimes=["torch-fp32", "onnx-int8"]))
    assert store.search("KB_TORCH", _query(declared, "vacation days"), 3).hits[0].chunk.doc_id == "doc0"
    undeclared = make_local_embedder(_settings(onnx_cache, compatible_runtimes=[]))
    with pytest.raises(EmbeddingModelMismatch):
        store.search("KB_TORCH", _query(undeclared, "vacation days"), 3)


def test_the_alias_moves_between_runtimes_of_one_model_never_to_another_model(
        store_by_runtime: tuple[SqliteVectorStore, dict[str, Any]]) -> None:
    store, _ = store_by_runtime
    store.point_alias("KB", "KB_TORCH")
    assert store.point_alias("KB", "KB_INT8").previous == "KB_TORCH"
    store.create_version(VersionSpec("KB_OTHER", "some-org/other-model", 384, "cosine"))
    with pytest.raises(VersionConflict, match="serves KB_INT8 .* KB_OTHER uses some-org/other-model"):
        store.point_alias("KB", "KB_OTHER")


def test_a_fresh_process_exports_and_embeds_offline_from_installed_packages(tmp_path: Path) -> None:
    """Empty hub caches, hub switched off, empty export cache: the export and the first
    vectors come from the installed wheels alone, and nothing is written to a hub cache."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "TRANSFORMERS_", "SENTENCE_"))}
    env.update(HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", HF_HOME=str(tmp_path / "hf"))
    script = (
        "from backend.common.config import EmbeddingSettings\n"
        "from backend.providers.local.embedder import make_local_embedder\n"
        f"e = make_local_embedder(EmbeddingSettings(local={{'onnx_cache_dir': {str(tmp_path / 'cache')!r}}}))\n"
        "print(e.model_id, e.export.exported, e.embed_queries(['offline']).shape)\n"
    )
    done = subprocess.run([sys.executable, "-c", script], env=env, cwd=REPO, capture_output=True, text=True, check=True)
    assert done.stdout.strip().splitlines()[-1] == f"{MODEL_ID}@onnx-int8 True (1, 384)"
    assert not (tmp_path / "hf").exists()
    assert sorted(p.name for p in (tmp_path / "cache").rglob("*.onnx")) == ["model-fp32.onnx", "model-int8.onnx"]
