"""Issue 32: a folder becomes manifest lines: supported types only, hidden/temporary files and
``.ragignore`` matches skipped, links confined to the folder, stable doc_ids, every skip reported."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from backend.common.errors import ManifestError
from backend.ingest.folder import doc_ids, slug, temp_reason, walk_folder
from tests.ingest.kb_files import write_kb_folder


def _hostile(tmp_path: Path) -> Path:
    folder = write_kb_folder(tmp_path / "docs")
    outside = tmp_path / "secret"
    outside.mkdir()
    (outside / "passwords.txt").write_text("root: hunter2\n", encoding="utf-8")
    os.symlink(outside / "passwords.txt", folder / "passwords.txt")  # a file link leading out
    os.symlink(outside, folder / "more")  # a folder link leading out
    os.symlink(folder / "greenhouse.txt", folder / "greenhouse-link.txt")  # inside: the same file twice
    os.symlink(folder / "nowhere.md", folder / "dangling.md")
    drafts = folder / "drafts"
    drafts.mkdir()
    (drafts / "plan.md").write_text("# Draft\n\nnot for the index\n", encoding="utf-8")
    (folder / "old-aquarium.html").write_text("<p>old</p>", encoding="utf-8")
    (folder / ".ragignore").write_text("# drafts stay out\ndrafts/\nold-*.html\n", encoding="utf-8")
    return folder


def test_hostile_folder_keeps_the_documents_and_reports_every_skip(tmp_path: Path) -> None:
    walk = walk_folder(_hostile(tmp_path))
    assert [f.relative for f in walk.files] == [
        "Bicycle Allowance.md", "beekeeping.pdf", "facilities/aquarium.html", "facilities/observatory.docx",
        "greenhouse.txt"]
    assert [f.doc_id for f in walk.files] == [
        "bicycle-allowance.md", "beekeeping.pdf", "facilities/aquarium.html", "facilities/observatory.docx",
        "greenhouse.txt"]
    reasons = {s.file: s.reason for s in walk.skipped}
    secret = (tmp_path / "secret").resolve()
    assert reasons == {
        ".git/": "hidden folder",
        ".~lock.greenhouse.txt#": "office lock/temporary file",
        "budget.xlsx": "unsupported type .xlsx",
        "dangling.md": "dangling link",
        "drafts/": "matches .ragignore",
        "facilities/~$observatory.docx": "office lock/temporary file",
        "greenhouse-link.txt": "same file as greenhouse.txt (a link to it)",
        "more/": f"link points outside the folder ({secret})",
        "notes.md~": "editor temporary file",
        "old-aquarium.html": "matches .ragignore",
        "passwords.txt": f"link points outside the folder ({secret / 'passwords.txt'})",
    }
    # nothing outside the folder is listed, and every listed path is the real file
    assert all(f.path.is_relative_to(walk.root) and not f.path.is_symlink() for f in walk.files)
    lines = walk.manifest_lines()
    assert lines[0] == {"path": str(walk.root / "Bicycle Allowance.md"), "doc_id": "bicycle-allowance.md"}


def test_doc_ids_do_not_depend_on_where_the_folder_lives(tmp_path: Path) -> None:
    first = walk_folder(write_kb_folder(tmp_path / "a", extras=False))
    shutil.copytree(tmp_path / "a", tmp_path / "elsewhere" / "b")
    second = walk_folder(tmp_path / "elsewhere" / "b")
    assert [f.doc_id for f in first.files] == [f.doc_id for f in second.files]
    assert walk_folder(tmp_path / "a") == first  # deterministic


def test_slugs_and_colliding_paths() -> None:
    assert slug("Policies/Annual Leave 2026.docx") == "policies/annual-leave-2026.docx"
    assert slug("Über/€uro!.md") == "ber/uro-.md"
    ids = doc_ids(["A b.md", "a-b.md", "c.md"])
    assert ids["c.md"] == "c.md"
    assert ids["A b.md"] != ids["a-b.md"] and all(i.startswith("a-b.md-") for i in (ids["A b.md"], ids["a-b.md"]))
    # an id does not change when the other file of the pair is listed in another order
    assert doc_ids(["a-b.md", "A b.md"]) == {k: ids[k] for k in ("a-b.md", "A b.md")}


@pytest.mark.parametrize(("name", "reason"), [
    ("~$report.docx", "office lock/temporary file"), (".~lock.report.docx#", "office lock/temporary file"),
    (".DS_Store", "hidden"), ("report.docx~", "editor temporary file"), ("#notes.md#", "editor temporary file"),
    ("upload.TMP", "editor temporary file"), ("report.docx", None)])
def test_temp_reason(name: str, reason: str | None) -> None:
    assert temp_reason(name) == reason


def test_a_missing_folder_or_a_file_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ManifestError, match="no such folder"):
        walk_folder(tmp_path / "absent")
    (tmp_path / "f.md").write_text("x", encoding="utf-8")
    with pytest.raises(ManifestError, match="not a folder"):
        walk_folder(tmp_path / "f.md")


def test_symlink_loop_is_reported_not_followed(tmp_path: Path) -> None:
    folder = tmp_path / "loop"
    folder.mkdir()
    (folder / "ok.txt").write_text("A sentence about gardens and their many flowers.", encoding="utf-8")
    os.symlink(folder / "b.md", folder / "a.md")
    os.symlink(folder / "a.md", folder / "b.md")
    walk = walk_folder(folder)
    assert [f.relative for f in walk.files] == ["ok.txt"]
    assert {s.file: s.reason for s in walk.skipped} == {"a.md": "symlink loop", "b.md": "symlink loop"}
