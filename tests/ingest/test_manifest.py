"""Manifests: line validation, path confinement, expansion and default doc ids."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from backend.common.errors import ManifestError
from backend.ingest.manifest import read_manifest
from tests.conftest import make_settings


def write_manifest(path: Path, lines: list[Any]) -> Path:
    path.write_text("\n".join(line if isinstance(line, str) else json.dumps(line) for line in lines) + "\n",
                    encoding="utf-8")
    return path


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    root = tmp_path / "kb"
    (root / "hr" / "sub").mkdir(parents=True)
    (root / "hr" / "leave.txt").write_text("Leave policy.", encoding="utf-8")
    (root / "hr" / "pay.md").write_text("# Pay\n\nPaid monthly.", encoding="utf-8")
    (root / "hr" / "notes.bin").write_bytes(b"\x00\x01")
    (root / "hr" / "sub" / "travel.html").write_text("<p>Travel.</p>", encoding="utf-8")
    return root


def test_good_line_resolves_path_and_carries_metadata(tmp_path: Path, corpus: Path) -> None:
    settings = make_settings(tmp_path)
    manifest = write_manifest(corpus / "m.jsonl", [
        {"path": "hr/leave.txt", "tags": ["hr", "leave"], "lang": "en", "content_type": "policy",
         "updated_at": "2025-03-01", "metadata": {"owner": "people-ops"}},
    ])
    parsed = read_manifest(manifest, settings)
    assert parsed.errors == []
    [entry] = parsed.entries
    assert entry.path == (corpus / "hr" / "leave.txt").resolve()
    assert entry.doc_id == "hr/leave.txt"
    assert entry.where == "m.jsonl:1"
    assert dict(entry.metadata) == {"owner": "people-ops", "tags": ["hr", "leave"], "lang": "en",
                                    "content_type": "policy", "updated_at": "2025-03-01"}


def test_dir_and_glob_expand_to_supported_files_with_stable_doc_ids(tmp_path: Path, corpus: Path) -> None:
    settings = make_settings(tmp_path)
    manifest = write_manifest(corpus / "m.jsonl", [
        {"dir": "hr"},
        {"dir": "hr", "recursive": True, "profiles": ["sample"]},
        {"glob": "hr/**/*.html"},
    ])
    parsed = read_manifest(manifest, settings)
    assert [e.doc_id for e in parsed.entries] == ["hr/leave.txt", "hr/pay.md", "hr/sub/travel.html"]
    assert parsed.errors == [("m.jsonl:2", "doc_id 'hr/leave.txt' is already listed at m.jsonl:1")]
    assert [e.where for e in parsed.entries] == ["m.jsonl:1", "m.jsonl:1", "m.jsonl:3"]


def test_bad_lines_are_reported_with_line_numbers_and_field_names(tmp_path: Path, corpus: Path) -> None:
    settings = make_settings(tmp_path)
    manifest = write_manifest(corpus / "m.jsonl", [
        {"path": "hr/leave.txt"},
        "{not json",
        {"path": "hr/pay.md", "colour": "blue"},
        {"tags": ["x"]},
        {"path": "hr/pay.md", "tags": "hr"},
        "",
        "# a comment",
        {"dir": "hr", "doc_id": "x"},
        {"path": "hr/pay.md", "profiles": ["nope"]},
        [1, 2],
        {"path": "hr/missing.txt"},
    ])
    parsed = read_manifest(manifest, settings)
    assert [e.doc_id for e in parsed.entries] == ["hr/leave.txt"]
    errors = dict(parsed.errors)
    assert errors["m.jsonl:2"].startswith("invalid JSON: Expecting property name")
    assert errors["m.jsonl:3"] == "colour: unknown key"
    assert errors["m.jsonl:4"] == "exactly one of 'path', 'dir' or 'glob' is required (got none)"
    assert errors["m.jsonl:5"] == "tags: Input should be a valid list"
    assert errors["m.jsonl:8"] == "'doc_id' is only allowed with 'path' (a dir or glob yields several documents)"
    assert errors["m.jsonl:9"] == "profiles: unknown profile(s) ['nope']; configured: ['sample']"
    assert errors["m.jsonl:10"] == "expected a JSON object, got list"
    assert errors["m.jsonl:11"].startswith("path 'hr/missing.txt': no such file")
    assert sorted(errors) == ["m.jsonl:10", "m.jsonl:11", "m.jsonl:2", "m.jsonl:3", "m.jsonl:4", "m.jsonl:5",
                              "m.jsonl:8", "m.jsonl:9"]


def test_strict_mode_raises_at_the_first_bad_line(tmp_path: Path, corpus: Path) -> None:
    settings = make_settings(tmp_path)
    manifest = write_manifest(corpus / "m.jsonl", [{"path": "hr/leave.txt"}, {"path": "hr/pay.md", "x": 1}, "{"])
    with pytest.raises(ManifestError, match=r"^m\.jsonl:2: x: unknown key$"):
        read_manifest(manifest, settings, strict=True)


def test_dotdot_escape_outside_allowed_roots_is_refused(tmp_path: Path, corpus: Path) -> None:
    settings = make_settings(tmp_path, ingest={"allowed_roots": [str(corpus)]})
    (tmp_path / "secret.txt").write_text("top secret", encoding="utf-8")
    manifest = write_manifest(corpus / "m.jsonl", [{"path": "../secret.txt"}, {"path": "hr/leave.txt"}])
    parsed = read_manifest(manifest, settings)
    assert [e.doc_id for e in parsed.entries] == ["hr/leave.txt"]
    [(where, reason)] = parsed.errors
    assert where == "m.jsonl:1"
    assert reason.startswith("'../secret.txt' resolves to ") and "outside ingest.allowed_roots" in reason


def test_symlink_pointing_outside_the_roots_is_refused(tmp_path: Path, corpus: Path) -> None:
    settings = make_settings(tmp_path, ingest={"allowed_roots": [str(corpus)]})
    outside = tmp_path / "outside.txt"
    outside.write_text("not for the index", encoding="utf-8")
    os.symlink(outside, corpus / "hr" / "link.txt")
    manifest = write_manifest(corpus / "m.jsonl", [{"path": "hr/link.txt"}, {"dir": "hr"}])
    parsed = read_manifest(manifest, settings)
    assert parsed.errors[0][0] == "m.jsonl:1"
    assert "outside ingest.allowed_roots" in parsed.errors[0][1]
    assert parsed.errors[1][0] == "m.jsonl:2"
    assert parsed.entries == []


def test_relative_allowed_roots_resolve_against_the_repo_root(tmp_path: Path) -> None:
    settings = make_settings(tmp_path, ingest={"allowed_roots": ["tests/fixtures/ingest"]})
    manifest = write_manifest(tmp_path / "m.jsonl", [{"path": str(Path(__file__).resolve())}])
    parsed = read_manifest(manifest, settings)
    assert parsed.entries == []
    assert "outside ingest.allowed_roots" in parsed.errors[0][1]
    assert str(settings.resolve_path("tests/fixtures/ingest")) in parsed.errors[0][1]


def test_metadata_is_validated_against_the_configured_schema(tmp_path: Path, corpus: Path) -> None:
    settings = make_settings(tmp_path, retrieval={"metadata_schema": {
        "department": {"type": "enum", "values": ["People", "IT"], "required": True}}})
    manifest = write_manifest(corpus / "m.jsonl", [
        {"path": "hr/leave.txt", "metadata": {"department": "People"}},
        {"path": "hr/pay.md", "metadata": {"department": "Finance"}},
        {"path": "hr/sub/travel.html"},
    ])
    parsed = read_manifest(manifest, settings)
    assert [e.doc_id for e in parsed.entries] == ["hr/leave.txt"]
    assert parsed.entries[0].metadata["department"] == "People"
    errors = dict(parsed.errors)
    assert errors["m.jsonl:2"].startswith("metadata department:") and "Finance" in errors["m.jsonl:2"]
    assert errors["m.jsonl:3"] == "metadata department: required field is missing"
