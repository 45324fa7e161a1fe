"""Issue 32: ``rag kb create NAME --from DIR`` in one command (registered, ingested, gated on its
own starter set, served), ``rag kb list/show/set-golden``, and ``rag ingest DIR``."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from backend.cli.main import cli
from tests.ingest.helpers import write_config
from tests.ingest.kb_files import write_kb_folder


def _config(tmp_path: Path) -> Path:
    return write_config(tmp_path, tmp_path / "unused-root", evaluation={"reports_dir": str(tmp_path / "reports")},
                        knowledge_bases={"registry_file": str(tmp_path / "kb.yaml"), "dir": str(tmp_path / "kb")},
                        connectors={"file": str(tmp_path / "connectors.yaml")})


def test_kb_create_serves_a_folder_and_tells_about_the_generated_golden_set(tmp_path: Path) -> None:
    config = _config(tmp_path)
    folder = write_kb_folder(tmp_path / "docs")
    run = CliRunner().invoke(cli, ["--config", str(config), "kb", "create", "campus", "--from", str(folder),
                                   "--title", "Campus life"])
    assert run.exit_code == 0, run.output
    out = run.stdout
    assert f"knowledge base 'campus' (Campus life) registered in {tmp_path / 'kb.yaml'}" in out
    assert "budget.xlsx: unsupported type .xlsx" in out and "facilities/~$observatory.docx: office lock" in out
    assert f"manifest used: {tmp_path / 'kb' / 'campus' / 'manifests'}" in out
    assert "golden set: GENERATED starter set, " in out and str(tmp_path / "kb" / "campus" / "golden.generated.jsonl") in out
    assert "rag kb set-golden campus FILE" in out and "rag feedback export --out FILE" in out
    assert "gate min_recall_at_k          PASS  recall_at_k = 1.0" in out
    assert "served: KB_CAMPUS -> KB_CAMPUS_V1 (ask with X-RAG-Domain: campus" in out
    assert "[info" not in run.output  # issue 48: no log line between the report's lines

    again = CliRunner().invoke(cli, ["--config", str(config), "kb", "create", "campus", "--from", str(folder)])
    assert again.exit_code == 2
    assert "already exists; add or change its files with `rag ingest DIR --domain-key campus --update-alias`" \
        in again.stderr

    listed = json.loads(CliRunner().invoke(cli, ["--config", str(config), "kb", "list", "--json"]).stdout)
    rows = {r["key"]: r for r in listed["knowledge_bases"]}
    assert rows["campus"]["live"] == "KB_CAMPUS_V1" and rows["campus"]["documents"] == 5
    assert rows["campus"]["managed"] and not rows["handbook"]["managed"] and "default" in rows
    shown = CliRunner().invoke(cli, ["--config", str(config), "kb", "show", "campus"])
    assert "documents: 5" in shown.stdout and "GENERATED" in shown.stdout

    # rag ingest DIR into the knowledge base: the folder walked the same way, the manifest kept
    (folder / "canteen.txt").write_text("Canteen\n\nThe canteen serves a vegetarian lasagne every Wednesday at "
                                        "lunch for the whole campus staff.\n", encoding="utf-8")
    ingest = CliRunner().invoke(cli, ["--config", str(config), "ingest", str(folder), "--domain-key", "campus",
                                      "--update-alias"])
    assert ingest.exit_code == 0, ingest.output
    assert "skipped budget.xlsx: unsupported type .xlsx" in ingest.stderr
    assert "manifest used: " in ingest.stderr
    assert "promoted: KB_CAMPUS -> KB_CAMPUS_V2" in ingest.stdout
    assert "[info" not in ingest.output
    assert "golden set: GENERATED starter set" in ingest.stdout  # told at every gate that uses it
    assert len(list((tmp_path / "kb" / "campus" / "manifests").glob("*.jsonl"))) == 2
    assert "canteen.txt" in (tmp_path / "kb" / "campus" / "golden.generated.jsonl").read_text()
    debug = CliRunner().invoke(cli, ["--config", str(config), "--debug", "ingest", str(folder), "--domain-key",
                                     "campus"])
    assert debug.exit_code == 0 and "[info" in debug.stderr and "ingest.version_planned" in debug.stderr


def test_kb_create_exits_3_with_the_figures_when_the_gate_refuses(tmp_path: Path) -> None:
    config = _config(tmp_path)
    folder = tmp_path / "lists"
    folder.mkdir()
    # a list of names: no sentence a question could be asked about, so nothing shows the files are found
    (folder / "names.txt").write_text("Alice\nBob\nCarol\nDave\n", encoding="utf-8")
    run = CliRunner().invoke(cli, ["--config", str(config), "kb", "create", "names", "--from", str(folder)])
    assert run.exit_code == 3, run.output
    assert "gate min_recall_at_k          FAIL  recall_at_k = n/a, minimum 0.85" in run.stdout
    assert "no golden question asks about a document" in run.stdout
    assert "NOT served: the gate refused KB_NAMES_V1; KB_NAMES serves nothing" in run.stdout
    assert "error: the gate refused KB_NAMES_V1" in run.stderr
    assert "`rag index promote --domain-key names --version KB_NAMES_V1 --force`" in run.stderr


def test_a_real_golden_set_replaces_the_starter_set_and_gates_rag_ingest_dir(tmp_path: Path) -> None:
    config = _config(tmp_path)
    folder = write_kb_folder(tmp_path / "docs", extras=False)
    assert CliRunner().invoke(cli, ["--config", str(config), "kb", "create", "campus", "--from",
                                    str(folder)]).exit_code == 0
    golden = tmp_path / "real.jsonl"
    golden.write_text(json.dumps({"id": "r1", "query": "Who keeps the bees?", "expected_mode": "rag",
                                  "expected_sources": ["elsewhere.md"]}) + "\n")
    set_golden = CliRunner().invoke(cli, ["--config", str(config), "kb", "set-golden", "campus", str(golden)])
    assert set_golden.exit_code == 0, set_golden.output
    assert f"campus: golden set -> {golden.resolve()}" in set_golden.stdout
    (folder / "canteen.txt").write_text("Canteen\n\nThe canteen serves a vegetarian lasagne every Wednesday at "
                                        "lunch for the whole campus staff.\n", encoding="utf-8")
    # the real set's floor is missed by the served version too, and the edit is no worse: promoted, with a warning
    warned = CliRunner().invoke(cli, ["--config", str(config), "ingest", str(folder), "--domain-key", "campus",
                                      "--update-alias"])
    assert warned.exit_code == 0, warned.output
    assert ("gate min_recall_at_k    WARN  recall_at_k = 0.0000, below the minimum 0.8500 as the served version is "
            "(0.0000); no worse than it, so it does not block") in warned.stdout
    assert "promoted: KB_CAMPUS -> KB_CAMPUS_V2 (previous: KB_CAMPUS_V1)  [with a warning" in warned.stdout


def test_kb_create_refuses_a_missing_folder_before_registering(tmp_path: Path) -> None:
    config = _config(tmp_path)
    run = CliRunner().invoke(cli, ["--config", str(config), "kb", "create", "x", "--from", str(tmp_path / "none")])
    assert run.exit_code != 0
    assert "no such folder" in run.stderr
    assert not (tmp_path / "kb.yaml").exists()
    (tmp_path / "sheets").mkdir()
    (tmp_path / "sheets" / "budget.xlsx").write_bytes(b"PK")
    empty = CliRunner().invoke(cli, ["--config", str(config), "kb", "create", "x", "--from", str(tmp_path / "sheets")])
    assert empty.exit_code == 1
    assert "no supported file to make a knowledge base of; skipped: budget.xlsx: unsupported type .xlsx" \
        in empty.stderr
    assert not (tmp_path / "kb.yaml").exists()


def test_rag_ingest_dir_walks_the_folder_into_the_default_knowledge_base(tmp_path: Path) -> None:
    config = _config(tmp_path)
    folder = write_kb_folder(tmp_path / "docs")
    run = CliRunner().invoke(cli, ["--config", str(config), "ingest", str(folder)])
    assert run.exit_code == 0, run.output
    assert "skipped .git/: hidden folder" in run.stderr
    assert f"5 file(s) from {folder.resolve()}; manifest used: {tmp_path / 'kb' / 'default' / 'manifests'}" \
        in run.stderr
    assert "KB_SAMPLE_V1" in run.stdout
    (manifest,) = (tmp_path / "kb" / "default" / "manifests").glob("*.jsonl")
    assert [json.loads(x)["doc_id"] for x in manifest.read_text().splitlines()][0] == "bicycle-allowance.md"
    assert not (tmp_path / "kb.yaml").exists()  # nothing registered
    missing = CliRunner().invoke(cli, ["--config", str(config), "ingest", str(tmp_path / "empty-dir-absent")])
    assert missing.exit_code != 0


def test_kb_remove_takes_it_out_of_the_registry_and_keeps_what_is_stored(tmp_path: Path) -> None:
    from backend.common.config import ConnectorSpec, load_settings
    from backend.connectors.declarations import add

    config = _config(tmp_path)
    folder = write_kb_folder(tmp_path / "docs")
    rag = ["--config", str(config)]
    assert CliRunner().invoke(cli, [*rag, "kb", "create", "campus", "--from", str(folder)]).exit_code == 0

    removed = CliRunner().invoke(cli, [*rag, "kb", "remove", "campus"])
    assert removed.exit_code == 0, removed.output
    assert "removed knowledge base 'campus' from the registry; kept: its versions (KB_CAMPUS_V1, _V2, ...) and the " \
        "alias KB_CAMPUS" in removed.stdout
    listed = json.loads(CliRunner().invoke(cli, [*rag, "kb", "list", "--json"]).stdout)
    assert "campus" not in {r["key"] for r in listed["knowledge_bases"]}
    versions = CliRunner().invoke(cli, [*rag, "index", "list"])
    assert "KB_CAMPUS_V1" in versions.stdout  # nothing stored was deleted

    again = CliRunner().invoke(cli, [*rag, "kb", "remove", "campus"])
    assert again.exit_code == 1 and "knowledge base 'campus' is not in the registry" in again.stderr
    configured = CliRunner().invoke(cli, [*rag, "kb", "remove", "handbook"])
    assert configured.exit_code == 1 and "defined in the configuration file" in configured.stderr

    back = CliRunner().invoke(cli, [*rag, "kb", "create", "campus", "--from", str(folder)])
    assert back.exit_code == 0 and "KB_CAMPUS_V1" in back.stdout, back.output  # served again, nothing re-made
    settings = load_settings(config, env={})
    add(settings, "campus-share", ConnectorSpec.model_validate({"kind": "folder", "knowledge_base": "campus",
                                                                "options": {"path": str(folder)},
                                                                "readers": ["public"]}))
    fed = CliRunner().invoke(cli, [*rag, "kb", "remove", "campus"])
    assert fed.exit_code == 2 and "synced by connector(s) campus-share; remove them first" in fed.stderr
