"""Issue 32: the knowledge-base registry (merged by load_settings, written atomically under a
lock) and ``ingest_into_candidate``: manifest kept for the record, gate on the knowledge base's
own (starter) golden set, both reports written, promotion only when asked."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from backend.common.config import load_settings
from backend.common.errors import ConfigError, KnowledgeBaseExists
from backend.core.services.promotion import resolve_target
from backend.ingest.knowledge_bases import (apply_registry, index_names, ingest_into_candidate, list_registered,
                                            register, set_golden_set, uploads_dir, workspace)
from backend.providers.sqlite_vs.store import SqliteVectorStore
from tests.conftest import REPO, make_settings
from tests.ingest.kb_files import write_kb_folder
from tests.conftest import kb_runtime


def test_index_names_from_the_key() -> None:
    assert index_names("policies-2026") == ("KB_POLICIES_2026_V1", "KB_POLICIES_2026")
    with pytest.raises(ConfigError, match="too long"):
        index_names("a" * 40)
    with pytest.raises(ConfigError, match="knowledge base name 'Bad Name'"):
        index_names("Bad Name")


def test_register_writes_the_registry_and_load_settings_merges_it(tmp_path: Path) -> None:
    settings = make_settings(tmp_path)
    folder = write_kb_folder(tmp_path / "docs")
    entry = register(settings, "campus", title="Campus life", source_dir=folder, principal="alice")
    assert (entry.index_name, entry.alias_name, entry.created_by) == ("KB_CAMPUS_V1", "KB_CAMPUS", "alice")
    data = yaml.safe_load(Path(settings.knowledge_bases.registry_file).read_text())
    assert data["knowledge_bases"]["campus"]["source_dir"] == str(folder.resolve())
    assert list(list_registered(settings)) == ["campus"]
    reloaded = make_settings(tmp_path)
    assert reloaded.embeddings.domains["campus"].alias_name == "KB_CAMPUS"
    assert reloaded.embeddings.domains["campus"].title == "Campus life"
    assert str(folder.resolve()) in reloaded.ingest.allowed_roots
    assert str(Path(reloaded.knowledge_bases.dir) / "campus" / "uploads") in reloaded.ingest.allowed_roots
    assert uploads_dir(reloaded, "campus") == workspace(reloaded, "campus") / "uploads"
    # a process that loaded its settings before gets the same view
    assert apply_registry(settings).embeddings.domains["campus"] == reloaded.embeddings.domains["campus"]


def test_a_name_is_registered_once(tmp_path: Path) -> None:
    settings = make_settings(tmp_path)
    register(settings, "campus", title=None, source_dir=tmp_path)
    with pytest.raises(KnowledgeBaseExists, match="rag ingest DIR --domain-key campus --update-alias"):
        register(settings, "campus", title=None, source_dir=tmp_path)
    with pytest.raises(KnowledgeBaseExists):
        register(settings, "handbook", title=None, source_dir=tmp_path)  # a domain of config/rag.yaml
    with pytest.raises(ConfigError, match="default knowledge base"):
        register(settings, "default", title=None, source_dir=tmp_path)
    with pytest.raises(ConfigError, match="no such folder"):
        register(settings, "other", title=None, source_dir=tmp_path / "absent")


def test_a_key_in_both_files_is_refused_naming_both(tmp_path: Path) -> None:
    registry = tmp_path / "kb.yaml"
    registry.write_text(yaml.safe_dump({"knowledge_bases": {"handbook": {
        "index_name": "KB_X_V1", "alias_name": "KB_X"}}}))
    with pytest.raises(ConfigError) as err:
        load_settings(REPO / "config" / "rag.yaml", env={"RAG_KNOWLEDGE_BASES__REGISTRY_FILE": str(registry)})
    assert str(registry) in err.value.user_message and "config/rag.yaml" in err.value.user_message
    assert "handbook" in err.value.user_message


@pytest.mark.parametrize(("body", "expected"), [
    ({"knowledge_bases": {"good": {"index_name": "x y", "alias_name": "KB_X"}}}, "knowledge_bases.good: index_name"),
    ({"knowledge_bases": {"good": {"alias_name": "KB_X"}}}, "knowledge_bases.good: index_name: required"),
    ({"knowledge_bases": {"Bad Key": {"index_name": "KB_X_V1", "alias_name": "KB_X"}}}, "knowledge_bases.Bad Key"),
    ({"knowledge_bases": ["a"]}, "expected one top-level key"),
    ({"other": {}}, "expected one top-level key"),
])
def test_a_malformed_registry_names_the_file_and_key(tmp_path: Path, body: Any, expected: str) -> None:
    registry = tmp_path / "kb.yaml"
    registry.write_text(yaml.safe_dump(body))
    with pytest.raises(ConfigError) as err:
        load_settings(REPO / "config" / "rag.yaml", env={"RAG_KNOWLEDGE_BASES__REGISTRY_FILE": str(registry)})
    assert err.value.user_message.startswith(f"{registry}: ")
    assert expected in err.value.user_message


def test_a_domain_without_golden_set_never_gets_the_sample_set(tmp_path: Path) -> None:
    settings = make_settings(tmp_path, embeddings={"domains": {"bare": {"index_name": "KB_BARE_V1",
                                                                         "alias_name": "KB_BARE"}}})
    target = resolve_target(settings, domain_key="bare")
    assert target.golden == Path(settings.knowledge_bases.dir) / "bare" / "golden.generated.jsonl"
    assert target.starter_for == "bare"
    assert resolve_target(settings).golden == REPO / "data" / "golden" / "sample_golden.jsonl"


def test_folder_to_served_version_through_the_starter_gate(tmp_path: Path, embedder: Any) -> None:
    settings = make_settings(tmp_path)
    folder = write_kb_folder(tmp_path / "docs")
    register(settings, "campus", title="Campus", source_dir=folder)
    store = SqliteVectorStore(tmp_path / "rag.sqlite")
    try:
        result = ingest_into_candidate(kb_runtime(settings, store, embedder), "campus", folder, principal=None,
                                       promote=True)
        # the manifest the run used, kept in the workspace
        manifest = Path(result.manifest)
        assert manifest.parent == workspace(settings, "campus") / "manifests"
        lines = [json.loads(x) for x in manifest.read_text().splitlines()]
        assert [x["doc_id"] for x in lines] == ["bicycle-allowance.md", "beekeeping.pdf", "facilities/aquarium.html",
                                                "facilities/observatory.docx", "greenhouse.txt"]
        assert {r["file"] for r in result.refused} >= {"budget.xlsx", "facilities/~$observatory.docx", ".git/"}
        assert result.ingest["documents_written"] == 5 and not result.ingest["failures"]
        # gated on its own generated set, never on the sample golden set
        assert result.golden["generated"] is True
        assert result.golden["path"] == str(workspace(settings, "campus") / "golden.generated.jsonl")
        report = json.loads(Path(result.evaluation["report_path"]).read_text())
        assert report["golden_set"] == result.golden["path"]
        assert {s for q in report["queries"] for s in q["expected_sources"]} == set(x["doc_id"] for x in lines)
        assert result.evaluation["gates_passed"] and result.promoted
        assert result.served_version == "KB_CAMPUS_V1" == store.resolve_alias("KB_CAMPUS")

        # an upload's candidate: evaluated against the live version, both reports written, not served
        (folder / "canteen.txt").write_text(
            "Canteen\n\nThe canteen serves a vegetarian lasagne every Wednesday at lunch.\n"
            "The espresso machine is descaled by facilities every Monday morning.\n", encoding="utf-8")
        upload = ingest_into_candidate(kb_runtime(settings, store, embedder), "campus",
                                       [{"path": str(folder / "canteen.txt"), "doc_id": "canteen.txt"}],
                                       principal="alice", promote=False)
        assert upload.version == "KB_CAMPUS_V2" and not upload.promoted
        assert store.resolve_alias("KB_CAMPUS") == "KB_CAMPUS_V1" == upload.served_version
        assert upload.evaluation["baseline_version"] == "KB_CAMPUS_V1"
        candidate = json.loads(Path(upload.evaluation["report_path"]).read_text())
        baseline = json.loads(Path(candidate["baseline_report"]).read_text())
        assert baseline["version"] == "KB_CAMPUS_V1" and baseline["queries"] and candidate["queries"]
        # the new file is asked about: the generated set follows the documents
        asked = {s for q in candidate["queries"] for s in q["expected_sources"]}
        assert "canteen.txt" in asked
        assert store.get_version("KB_CAMPUS_V2").evaluation["gates_passed"] is True
    finally:
        store.close()


def test_a_refusing_gate_leaves_the_alias_alone(tmp_path: Path, embedder: Any) -> None:
    settings = make_settings(tmp_path)
    folder = write_kb_folder(tmp_path / "docs", extras=False)
    register(settings, "campus", title="Campus", source_dir=folder)
    golden = tmp_path / "real.jsonl"
    golden.write_text(json.dumps({"id": "r1", "query": "Who keeps the bees?", "expected_mode": "rag",
                                  "expected_sources": ["no-such-document.md"]}) + "\n")
    set_golden_set(settings, "campus", golden)
    store = SqliteVectorStore(tmp_path / "rag.sqlite")
    try:
        result = ingest_into_candidate(kb_runtime(settings, store, embedder), "campus", folder, principal=None,
                                       promote=True)
    finally:
        store.close()
    assert result.gate_refused and not result.promoted and result.served_version is None
    assert result.golden == {"path": str(golden.resolve()), "generated": False, "queries": 1}
    assert [g["name"] for g in result.evaluation["gates"] if not g["passed"]][0] == "min_recall_at_k"


def test_an_upload_into_the_default_knowledge_base_is_confined_to_its_uploads_folder(tmp_path: Path,
                                                                                     embedder: Any) -> None:
    settings = make_settings(tmp_path, ingest={"allowed_roots": [str(REPO / "data")]})
    uploads = uploads_dir(settings, "default")
    uploads.mkdir(parents=True)
    (uploads / "canteen.txt").write_text("Canteen\n\nThe canteen serves a vegetarian lasagne every Wednesday.\n",
                                         encoding="utf-8")
    elsewhere = tmp_path / "elsewhere.txt"
    elsewhere.write_text("A file nobody uploaded, outside every allowed root.\n", encoding="utf-8")
    store = SqliteVectorStore(tmp_path / "rag.sqlite")
    try:
        result = ingest_into_candidate(
            kb_runtime(settings, store, embedder), "default",
            [{"path": str(uploads / "canteen.txt"), "doc_id": "canteen.txt"},
             {"path": str(elsewhere), "doc_id": "elsewhere.txt"}], principal="alice", promote=False)
        assert result.version == "KB_SAMPLE_V1" and result.alias == "KB_ACTIVE"
        assert set(store.document_hashes("KB_SAMPLE_V1")) == {"canteen.txt"}
        assert "outside ingest.allowed_roots" in json.dumps(result.ingest["manifest_errors"])
        # the default knowledge base keeps its own golden set; nothing is served without a person promoting
        assert result.golden["path"] == str(REPO / "data" / "golden" / "sample_golden.jsonl")
        assert not result.promoted and store.resolve_alias("KB_ACTIVE") is None
    finally:
        store.close()
