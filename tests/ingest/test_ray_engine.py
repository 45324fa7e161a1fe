"""``rag ingest --engine ray`` on a real two-node Ray cluster started here (one CPU per node).

The repo's sample corpus (Markdown, text, HTML, PDF and DOCX with figures) is ingested and gated
once in one process and once on Ray: same version, same chunk ids and texts byte for byte, same
gate figures. A cancelled run leaves a candidate the next run resumes; a worker killed mid-run is
restarted by Ray and the run ends with the same rows, or stops cleanly and the same command
resumes it to them.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any, Iterator

import numpy as np
import pytest
import yaml
from click.testing import CliRunner

os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")  # before Ray is imported: nothing reported
pytest.importorskip("ray.data", reason="the `ray` extra is not installed (pip install -e '.[ray]'; "
                    "make setup-test installs it)")

from tests.ingest.stored import documents_stored  # noqa: E402
from backend.runtime import worker_cache_db, worker_embedder, worker_vector_cache  # noqa: E402
from backend.cli.main import cli  # noqa: E402
from backend.common.config import ProfileSettings, load_settings  # noqa: E402
from backend.ingest.cancel import CancelToken, IngestCancelled  # noqa: E402
from backend.ingest.ingest_config import IngestConfig  # noqa: E402
from backend.ingest.manifest import read_manifest  # noqa: E402
from backend.ingest.pipeline import IngestPipeline  # noqa: E402
from backend.ingest.targets import Planned, Target  # noqa: E402
from backend.ingest.ray_engine import RayEngine, RayEngineError, enrichment_refusal  # noqa: E402
from backend.core.ports import Stores  # noqa: E402
from backend.ingest.ray_engine.stages import EmbedStage, PrepareStage, Row, decode, encode  # noqa: E402
from backend.providers.sqlite_vs.store import SqliteVectorStore  # noqa: E402
from tests.conftest import make_settings  # noqa: E402
from tests.ingest import hostile  # noqa: E402
from tests.ingest.helpers import REPO, write_manifest  # noqa: E402

pytestmark = pytest.mark.slow

MANIFEST = REPO / "manifests" / "sample.jsonl"
VERSION = "KB_SAMPLE_V1"
ROWS = "chunk_id, doc_id, chunk_index, text, content_hash, doc_hash, embed_hash, metadata"


def _config(folder: Path, **sections: Any) -> Path:
    """The repo's config, with every path it writes under ``folder``."""
    config = yaml.safe_load((REPO / "config" / "rag.yaml").read_text(encoding="utf-8"))
    config["store"]["sqlite"]["path"] = str(folder / "rag.sqlite")
    config["docx"]["assets_dir"] = str(folder / "assets")
    config["ingest"] = {"allowed_roots": [str(REPO / "data")], "progress": False}
    config["evaluation"]["reports_dir"] = str(folder / "reports")
    config["knowledge_bases"] = {"registry_file": str(folder / "knowledge-bases.yaml"), "dir": str(folder / "kb")}
    for key, value in sections.items():
        config[key] = {**config.get(key, {}), **value}
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "rag.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    return path


def _ingest(config: Path, *extra: str) -> dict[str, Any]:
    result = CliRunner().invoke(cli, ["--config", str(config), "ingest", str(MANIFEST), "--profile", "sample",
                                      "--update-alias", "--json", *extra])
    assert result.exit_code == 0, result.output
    body: dict[str, Any] = json.loads(result.stdout)
    return body


def _rows(db: Path) -> tuple[list[tuple[Any, ...]], np.ndarray]:
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        rows = con.execute(f"SELECT {ROWS} FROM {VERSION} ORDER BY chunk_id").fetchall()
        blobs = con.execute(f"SELECT embedding FROM {VERSION} ORDER BY chunk_id").fetchall()
    finally:
        con.close()
    return rows, np.stack([np.frombuffer(b[0], dtype=np.float32) for b in blobs])


def _figures(promotion: dict[str, Any]) -> dict[str, Any]:
    """What the gate decided on: every gate and metric but the latencies (timings of this machine)."""
    metrics = {k: v for k, v in promotion["metrics"].items() if not k.startswith("latency_")}
    return {"version": promotion["version"], "promoted": promotion["promoted"], "gates": promotion["gates"],
            "metrics": metrics}


@pytest.fixture(scope="module")
def cluster() -> Iterator[str]:
    """Two Ray nodes on this machine (a head and a worker, one CPU each); yields the address."""
    from ray.cluster_utils import Cluster

    nodes = Cluster(initialize_head=True, head_node_args={"num_cpus": 1, "include_dashboard": False})
    try:
        nodes.add_node(num_cpus=1)
        nodes.wait_for_nodes()
        yield str(nodes.address)
    finally:
        nodes.shutdown()


@pytest.fixture(scope="module")
def single(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    """The sample corpus ingested and gated by the default engine: its store and JSON summary."""
    folder = tmp_path_factory.mktemp("single")
    return folder / "rag.sqlite", _ingest(_config(folder))


def test_two_node_cluster_writes_and_gates_what_one_process_does(tmp_path: Path, cluster: str,
                                                                  single: tuple[Path, dict[str, Any]]) -> None:
    import ray

    single_db, expected = single
    body = _ingest(_config(tmp_path / "ray"), "--engine", "ray", "--address", cluster)
    assert not ray.is_initialized()  # the CLI disconnected; the cluster runs on
    assert body["ingest"]["versions"] == expected["ingest"]["versions"] == [VERSION]
    counts = ("documents_seen", "documents_written", "chunks_written", "duplicates_dropped", "failures", "notes")
    assert {k: body["ingest"][k] for k in counts} == {k: expected["ingest"][k] for k in counts}
    assert body["ingest"]["documents_written"] == 34 and body["ingest"]["failures"] == []
    assert _figures(body["promotion"]) == _figures(expected["promotion"])
    assert body["promotion"]["promoted"] is True
    rows, vectors = _rows(tmp_path / "ray" / "rag.sqlite")
    single_rows, single_vectors = _rows(single_db)
    assert rows == single_rows  # chunk ids, texts, hashes and metadata, byte for byte
    assert np.allclose(vectors, single_vectors, atol=1e-5)


def _embed_workers() -> list[int]:
    """Process ids of the embedding actors (Ray titles each worker process after its actor)."""
    found = []
    for proc in Path("/proc").iterdir():
        try:
            title = (proc / "cmdline").read_bytes()
        except OSError:
            continue
        if proc.name.isdigit() and b"MapBatches(EmbedStage)" in title:
            found.append(int(proc.name))
    return found


def _documents(db: Path) -> int:
    return documents_stored(db, VERSION)


def test_cancel_then_a_worker_killed_mid_run_leave_the_same_version(tmp_path: Path, cluster: str, embedder: Any,
                                                                    single: tuple[Path, dict[str, Any]]) -> None:
    # small groups and paced embedding calls, so the cancel and the kill land while documents are in flight
    config = _config(tmp_path, ingest={"allowed_roots": [str(REPO / "data")], "progress": False,
                                       "documents_per_transaction": 2},
                     embeddings={"batching": {"batch_size": 4, "rate_limit_per_min": 600}})
    settings = load_settings(config, env={})
    db = tmp_path / "rag.sqlite"
    outcome: dict[str, Any] = {}
    engine = RayEngine(worker_embedder, address=cluster)
    engine.connection()  # one connection for every run below, made in the main thread

    def ingest(token: CancelToken | None = None) -> None:
        outcome.clear()
        pipeline = IngestPipeline.from_settings(settings, SqliteVectorStore(db), embedder, engine=engine,
                                                cancel=token)
        try:
            outcome["report"] = pipeline.run(MANIFEST, profile="sample")
        except (RayEngineError, IngestCancelled) as exc:  # stopped cleanly: the candidate keeps what was written
            outcome["stopped"] = exc

    def in_flight(token: CancelToken | None = None) -> tuple[threading.Thread, list[int]]:
        """A run started in a thread, once it has written a few more documents; with its embedding
        workers (not those of an earlier run, which may still be exiting)."""
        earlier = set(_embed_workers())
        run = threading.Thread(target=ingest, args=(token,))
        run.start()
        written = _documents(db)
        deadline = time.monotonic() + 120
        while ((_documents(db) < written + 4 or not set(_embed_workers()) - earlier) and run.is_alive()
               and time.monotonic() < deadline):
            time.sleep(0.1)
        assert run.is_alive(), "the run ended before it could be interrupted"
        return run, sorted(set(_embed_workers()) - earlier)

    try:
        token = CancelToken()
        run, _ = in_flight(token)
        token.set("test")
        run.join(timeout=120)
        assert isinstance(outcome.get("stopped"), IngestCancelled), outcome
        cancelled_at = _documents(db)
        assert 4 <= cancelled_at < 34

        run, workers = in_flight()  # resumes the candidate; an embedding worker is killed while it runs
        os.kill(workers[0], signal.SIGKILL)
        killed_at = _documents(db)
        run.join(timeout=180)
        assert not run.is_alive()
        assert cancelled_at < killed_at < 34
        if "stopped" in outcome:  # the same command resumes the candidate
            assert isinstance(outcome["stopped"], RayEngineError), outcome
            ingest()
    finally:
        engine.close()
    report = outcome["report"]
    assert report.ok and report.versions == [VERSION]
    assert report.skipped_unchanged >= cancelled_at  # resumed, not started over
    single_rows, single_vectors = _rows(single[0])
    rows, vectors = _rows(db)
    assert rows == single_rows
    assert np.allclose(vectors, single_vectors, atol=1e-5)
    store = SqliteVectorStore(db)
    try:
        assert store.list_aliases() == {}  # an ingest never serves
    finally:
        store.close()


def test_engine_ray_without_the_extra_names_it(tmp_path: Path) -> None:
    config = _config(tmp_path)
    code = ("import sys; sys.modules['ray'] = None\n"  # as if the extra were not installed
            "from backend.cli.main import cli\n"
            f"cli(['--config', {str(config)!r}, 'ingest', {str(MANIFEST)!r}, '--engine', 'ray'])")
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "oracle-rag-runtime[ray]" in done.stderr and "pip install" in done.stderr
    assert not (tmp_path / "rag.sqlite").exists()  # refused before anything was opened


def test_ray_options_need_engine_ray(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["--config", str(_config(tmp_path)), "ingest", str(MANIFEST),
                                      "--address", "auto"])
    assert result.exit_code == 2
    assert "--address, --ray-actors, --ray-prepare-actors and --ray-writers need --engine ray" in result.output


def test_an_address_nothing_answers_at_is_refused_before_anything_is_written(tmp_path: Path) -> None:
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    result = CliRunner().invoke(cli, ["--config", str(_config(tmp_path)), "ingest", str(MANIFEST), "--engine", "ray",
                                      "--address", f"127.0.0.1:{port}"])
    assert result.exit_code == 2, result.output
    assert f"--address 127.0.0.1:{port}: no Ray cluster answers there" in result.output
    assert not (tmp_path / "rag.sqlite").exists()


def test_enriching_profiles_are_refused_by_name() -> None:
    profile = ProfileSettings.model_validate({"index_name": "KB_X_V1", "enrichment": {"provider": "extractive"}})
    assert enrichment_refusal("x", profile) == (
        "embeddings.profiles.x.enrichment.provider is 'extractive': the Ray engine does not enrich yet; ingest this "
        "profile with the default engine (leave out --engine)")
    assert enrichment_refusal("x", ProfileSettings.model_validate({"index_name": "KB_X_V1"})) is None


def _prepared(folder: Path, paths: list[str], **sections: Any) -> tuple[IngestConfig, Target, dict[str, Any]]:
    """The files of ``folder`` through the prepare stage, as a Ray actor runs it: config, target, batch."""
    settings = make_settings(folder, **sections)
    parsed = read_manifest(write_manifest(folder / "m.jsonl", [{"path": p} for p in paths]), settings)
    target = Target("sample", settings.embeddings.profiles["sample"], "KB_SAMPLE_V1")
    config = IngestConfig.of(settings)
    prepare = PrepareStage(config, target, worker_embedder)
    try:
        return config, target, prepare(encode([Row(i, Planned(e, f"hash{i}")) for i, e in enumerate(parsed.entries)]))
    finally:
        prepare.preparer.close()


def test_the_stages_keep_the_loader_limits_and_fail_only_the_hostile_file(tmp_path: Path) -> None:
    """The stages' own code, called here as a Ray actor calls it: the loader worker's timeout fails
    the slow file with the same reason as in one process, the next file is chunked and embedded."""
    hostile.shared_stream_pdf(tmp_path / "slow.pdf")
    (tmp_path / "ok.txt").write_text("The parking policy: staff park in level two.", encoding="utf-8")
    config, target, prepared = _prepared(tmp_path, ["slow.pdf", "ok.txt"], ingest={"limits": {"timeout_seconds": 1.0}})
    rows = decode(EmbedStage(config, target, worker_embedder, 1)(prepared))
    assert [row.seq for row in rows] == [0, 1]
    assert rows[0].write is None
    assert rows[0].scratch is not None and [path for path, _ in rows[0].scratch.failures] == [str(tmp_path / "slow.pdf")]
    assert "ingest.limits.timeout_seconds (1.0 s)" in rows[0].scratch.failures[0][1]
    written = rows[1].write
    assert written is not None and written.doc_id == "ok.txt" and written.doc_hash == "hash1"
    assert [c.text for c in written.chunks] == ["The parking policy: staff park in level two."]
    assert written.vectors.shape == (1, 384) and rows[0].computed == 1


def test_embedding_actors_read_the_driver_s_cache_and_embed_only_new_texts(tmp_path: Path) -> None:
    """Never embed the same content twice, on Ray too: an embedding actor on the driver's machine reads
    the embedding cache of the driver's SQLite file; a text some version already holds is reused."""
    (tmp_path / "a.txt").write_text("The parking policy: staff park in level two.", encoding="utf-8")
    (tmp_path / "b.txt").write_text("Visitors sign in at the front desk.", encoding="utf-8")
    config, target, prepared = _prepared(tmp_path, ["a.txt", "b.txt"])
    db = tmp_path / "cache.sqlite"
    stage = EmbedStage(config, target, worker_embedder, 1, None)
    first = decode(stage(prepared))
    assert first[0].computed == 2  # no cache: both texts embedded
    store = SqliteVectorStore(db)
    try:  # a version of the driver's store holds document a (its text hash with its vector)
        from backend.core.types import VersionSpec

        write = first[0].write
        assert write is not None
        store.create_version(VersionSpec("KB_OLD_V1", stage.embedder.model_id, stage.embedder.dimension, "cosine"))
        store.write_documents("KB_OLD_V1", [write])
        assert worker_cache_db(Stores.of(store)) == str(db.resolve())
    finally:
        store.close()
    again = decode(EmbedStage(config, target, worker_embedder, 1, str(db), worker_vector_cache)(prepared))
    assert again[0].computed == 1  # only b's text was embedded; a's vector came from the cache
    assert again[0].write is not None and np.allclose(again[0].write.vectors, write.vectors)
    assert decode(EmbedStage(config, target, worker_embedder, 1, str(tmp_path / "elsewhere.sqlite"),
                              worker_vector_cache)(prepared))[
        0].computed == 2  # a node that does not see the file embeds everything
