"""The DOCX loader: text in reading order, image extraction, limits, diagnostics."""

from __future__ import annotations

import hashlib
import io
import re
import zipfile
from pathlib import Path
from typing import Any

import docx
import pytest
from structlog.testing import capture_logs

from backend.common.config import DocxSettings
from backend.common.errors import LoaderError
from backend.ingest.documents import LoadedDocument
from backend.ingest.loaders.docx import DocxLoader
from backend.ingest.loaders.docx_images import asset_folder, sniff_kind
from tests.fixtures.docx import make_fixtures as mk

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "docx"
ALL_ON = {"extract_images": True, "inline_figure_placeholders": True, "figure_chunks": True}
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def settings_for(tmp_path: Path, **overrides: Any) -> DocxSettings:
    return DocxSettings(**{**ALL_ON, "assets_dir": str(tmp_path / "assets"), **overrides})


def load(source: Any, tmp_path: Path, doc_id: str = "doc1", **overrides: Any) -> LoadedDocument:
    """Load a committed fixture path or a python-docx Document saved to tmp_path."""
    if not isinstance(source, Path):
        path = tmp_path / f"{doc_id.replace('/', '_')}.docx"
        source.save(str(path))
        source = path
    return DocxLoader().load(source, settings_for(tmp_path, **overrides), doc_id, tmp_path / "assets")


def plain(ref: str) -> str:
    """An image reference without its content hash: ``doc1/img_001_<16 hex>.png`` -> ``doc1/img_001.png``."""
    return re.sub(r"_[0-9a-f]{16}(\.\w+)$", r"\1", ref)


def asset(tmp_path: Path, folder: str, name: str) -> Path:
    """The written file behind ``<folder>/<name>`` (``name`` without its content hash)."""
    stem, ext = name.rsplit(".", 1)
    [path] = (tmp_path / "assets" / folder).glob(f"{stem}_*.{ext}")
    return path


def summary(doc: LoadedDocument) -> dict[str, Any]:
    return doc.diagnostics["DOCX_IMAGES_SUMMARY"]


def counts(doc: LoadedDocument) -> dict[str, int]:
    keys = ("blips", "relationships", "rels_mapped", "zip_member_miss", "linked", "figures", "writes",
            "skipped_limits", "skipped_invalid")
    return {k: summary(doc)[k] for k in keys}


def images(doc: LoadedDocument) -> list[dict[str, Any]]:
    return [b.attrs for b in doc.blocks if b.kind == "image"]


def expected(**nonzero: int) -> dict[str, int]:
    base = dict.fromkeys(("blips", "relationships", "rels_mapped", "zip_member_miss", "linked", "figures",
                          "writes", "skipped_limits", "skipped_invalid"), 0)
    return {**base, **nonzero}


# --- committed fixtures ------------------------------------------------------------
def test_table_fixture_extracts_the_picture_inside_a_cell(tmp_path: Path) -> None:
    doc = load(FIXTURES / "table_image.docx", tmp_path)
    assert counts(doc) == expected(blips=1, relationships=1, rels_mapped=1, figures=1, writes=1)
    assert doc.text == ("Quarterly results are shown in the table below.\n\nRegion | Chart\nNorth | "
                        "\n\nRevenue grew in every region.")
    [image] = images(doc)
    assert (image["figure_id"], plain(image["image_ref"]), image["alt"]) == ("doc1-fig-001", "doc1/img_001.png",
                                                                      "North revenue chart")
    assert image["near_text"] == "North |"
    assert [b.role for b in doc.blocks] == ["paragraph", "table", "table", "paragraph"]
    assert asset(tmp_path, "doc1", "img_001.png").read_bytes().startswith(PNG_MAGIC)


def test_header_fixture_reads_header_first_footer_last_and_its_logo_once(tmp_path: Path) -> None:
    doc = load(FIXTURES / "header_image.docx", tmp_path)
    assert counts(doc) == expected(blips=1, relationships=1, rels_mapped=1, figures=1, writes=1)
    assert doc.text == ("ACME Corp internal\n\nThe travel policy applies to all employees.\n\n"
                        "Second section text.\n\nConfidential")
    [image] = images(doc)
    assert (plain(image["image_ref"]), image["content_type"], image["alt"]) == ("doc1/img_001.jpg", "image/jpeg", "ACME logo")
    assert [b.role for b in doc.blocks][:2] == ["header", "header"]
    assert asset(tmp_path, "doc1", "img_001.jpg").read_bytes()[:3] == b"\xff\xd8\xff"


def test_same_picture_twice_is_one_file_and_one_figure_with_two_placeholders(tmp_path: Path) -> None:
    doc = load(FIXTURES / "same_image_twice.docx", tmp_path)
    assert counts(doc) == expected(blips=2, relationships=1, rels_mapped=2, figures=1, writes=1)
    assert [i["figure_id"] for i in images(doc)] == ["doc1-fig-001", "doc1-fig-001"]
    assert images(doc)[0]["caption"] == "Figure 1: Warning icon"
    assert sorted(plain(p.name) for p in (tmp_path / "assets" / "doc1").iterdir()) == ["img_001.png"]


def test_linked_picture_is_counted_and_never_fetched(tmp_path: Path) -> None:
    doc = load(FIXTURES / "linked_image.docx", tmp_path)
    assert counts(doc) == expected(blips=2, relationships=2, rels_mapped=2, linked=1, figures=1, writes=1)
    assert [plain(i["image_ref"]) for i in images(doc)] == ["doc1/img_001.gif"]
    assert sorted(plain(p.name) for p in (tmp_path / "assets" / "doc1").iterdir()) == ["img_001.gif"]


def test_corrupt_image_part_is_skipped_with_its_reason_and_the_text_still_loads(tmp_path: Path) -> None:
    doc = load(FIXTURES / "corrupt_image.docx", tmp_path)
    assert counts(doc) == expected(blips=2, relationships=2, rels_mapped=2, figures=2, writes=1, skipped_invalid=1)
    assert summary(doc)["skipped"] == [{"member": "word/media/image2.png", "reason": "not_an_image"}]
    assert [i["figure_id"] for i in images(doc)] == ["doc1-fig-001"]
    assert doc.text.endswith("Text after the pictures still loads.")


def test_emf_picture_is_written_with_the_emf_extension(tmp_path: Path) -> None:
    doc = load(FIXTURES / "emf_image.docx", tmp_path)
    assert counts(doc) == expected(blips=1, relationships=1, rels_mapped=1, figures=1, writes=1)
    [image] = images(doc)
    assert (plain(image["image_ref"]), image["content_type"], image["caption"]) == (
        "doc1/img_001.emf", "image/x-emf", "Figure 2: Process flow")
    assert asset(tmp_path, "doc1", "img_001.emf").read_bytes() == mk.emf_bytes()


# --- documents built here, with lxml edits for what python-docx has no API for ---------
def test_vml_imagedata_is_resolved_through_the_part_relationships(tmp_path: Path) -> None:
    d = docx.Document()
    d.add_paragraph("Legacy VML picture below.")
    rid = mk.add_raw_image_part(d.part, mk.image_bytes(mk.BLUE, "BMP"), "legacy.bmp", "image/bmp")
    mk.vml_picture(d.add_paragraph(), rid, alt="Old chart", title="Chart title")
    doc = load(d, tmp_path)
    assert counts(doc) == expected(blips=1, relationships=1, rels_mapped=1, figures=1, writes=1)
    [image] = images(doc)
    assert (plain(image["image_ref"]), image["alt"], image["title"]) == ("doc1/img_001.bmp", "Old chart", "Chart title")


def test_alternate_content_picture_counts_once_although_choice_and_fallback_name_it(tmp_path: Path) -> None:
    d = docx.Document()
    d.add_paragraph("Shape with a fallback.")
    mk.alternate_content_picture(d.add_paragraph(), mk.image_bytes(mk.GREEN), alt="Choice picture")
    doc = load(d, tmp_path)
    assert counts(doc) == expected(blips=1, relationships=1, rels_mapped=1, figures=1, writes=1)
    assert [i["alt"] for i in images(doc)] == ["Choice picture"]


def test_text_box_text_and_picture_appear_once(tmp_path: Path) -> None:
    d = docx.Document()
    d.add_paragraph("Anchor paragraph.")
    mk.text_box(d.paragraphs[0], "Boxed note", mk.image_bytes(mk.RED), alt="Boxed picture")
    doc = load(d, tmp_path)
    assert doc.text == "Anchor paragraph.\n\nBoxed note"
    assert counts(doc) == expected(blips=1, relationships=1, rels_mapped=1, figures=1, writes=1)
    assert [i["alt"] for i in images(doc)] == ["Boxed picture"]


def test_paragraphs_and_tables_interleave_in_body_order_with_headings_marked(tmp_path: Path) -> None:
    d = docx.Document()
    d.add_heading("Leave policy", level=1)
    d.add_paragraph("Before the table.")
    table = d.add_table(rows=2, cols=3)
    for r, row in enumerate((("Type", "Days", "Paid"), ("Annual", "25", "yes"))):
        for c, value in enumerate(row):
            table.cell(r, c).text = value
    table.cell(0, 1).merge(table.cell(0, 2))
    d.add_paragraph("After the table.")
    doc = load(d, tmp_path)
    assert doc.text == ("Leave policy\n\nBefore the table.\n\nType | Days Paid\nAnnual | 25 | yes"
                        "\n\nAfter the table.")
    assert [b.role for b in doc.blocks] == ["heading", "paragraph", "table", "paragraph"]


def test_identical_headers_of_two_sections_are_read_once(tmp_path: Path) -> None:
    d = docx.Document()
    d.sections[0].header.paragraphs[0].text = "Company handbook"
    d.add_paragraph("Section one.")
    second = d.add_section()
    second.header.is_linked_to_previous = False
    second.header.paragraphs[0].text = "Company handbook"
    d.add_paragraph("Section two.")
    doc = load(d, tmp_path)
    assert doc.text == "Company handbook\n\nSection one.\n\nSection two."


def test_header_picture_is_resolved_through_the_header_part_relationships(tmp_path: Path) -> None:
    d = docx.Document()
    mk.picture(d.sections[0].header.paragraphs[0], mk.image_bytes(mk.GREY), alt="Header logo")
    d.add_paragraph("Body.")
    mk.picture(d.add_paragraph(), mk.image_bytes(mk.BLUE), alt="Body picture")
    doc = load(d, tmp_path)
    assert counts(doc) == expected(blips=2, relationships=2, rels_mapped=2, figures=2, writes=2)
    assert [(b.attrs["figure_id"], b.attrs["alt"], b.role) for b in doc.blocks if b.kind == "image"] == [
        ("doc1-fig-001", "Header logo", "header"), ("doc1-fig-002", "Body picture", "paragraph")]


def test_missing_zip_member_is_counted_and_the_text_still_loads(tmp_path: Path) -> None:
    d = docx.Document()
    d.add_paragraph("Picture lost in transit.")
    mk.picture(d.add_paragraph(), mk.image_bytes(mk.RED))
    buf = io.BytesIO()
    d.save(buf)
    path = tmp_path / "broken.docx"
    with zipfile.ZipFile(buf) as src, zipfile.ZipFile(path, "w") as dst:
        for info in src.infolist():
            if not info.filename.startswith("word/media/"):
                dst.writestr(info, src.read(info.filename))
    doc = DocxLoader().load(path, settings_for(tmp_path), "doc1", tmp_path / "assets")
    assert counts(doc) == expected(blips=1, relationships=1, rels_mapped=1, zip_member_miss=1)
    assert doc.text == "Picture lost in transit."


@pytest.mark.parametrize(("limits", "reason", "written"), [
    ({"max_image_bytes": 60}, "max_image_bytes", ["img_001.gif"]),
    ({"max_images_per_doc": 1}, "max_images_per_doc", ["img_001.gif"]),
    ({"max_total_image_bytes": 100}, "max_total_image_bytes", ["img_001.gif"]),
])
def test_image_limits_skip_pictures_and_report_the_reason(tmp_path: Path, limits: dict[str, int], reason: str,
                                                          written: list[str]) -> None:
    d = docx.Document()
    d.add_paragraph("Two pictures.")
    mk.picture(d.add_paragraph(), mk.image_bytes(mk.GREY, "GIF"))  # 54 bytes
    mk.picture(d.add_paragraph(), mk.image_bytes(mk.RED))  # 77 bytes
    doc = load(d, tmp_path, **limits)
    assert counts(doc) == expected(blips=2, relationships=2, rels_mapped=2, figures=2, writes=1, skipped_limits=1)
    assert summary(doc)["skipped"] == [{"member": "word/media/image2.png", "reason": reason}]
    assert sorted(plain(p.name) for p in (tmp_path / "assets" / "doc1").iterdir()) == written


def test_image_names_are_content_addressed_and_a_rerun_rewrites_and_removes_nothing(tmp_path: Path) -> None:
    first = load(FIXTURES / "same_image_twice.docx", tmp_path)
    [path] = (tmp_path / "assets" / "doc1").iterdir()
    data = path.read_bytes()
    assert path.name == f"img_001_{hashlib.sha256(data).hexdigest()[:16]}.png"
    other = path.parent / "img_007_0123456789abcdef.png"  # cited by some other version: not this run's to remove
    other.write_bytes(data)
    second = load(FIXTURES / "same_image_twice.docx", tmp_path)
    assert (summary(first)["unchanged"], summary(second)["unchanged"]) == (0, 1)
    assert "stale_removed" not in summary(second)
    assert sorted(p.name for p in path.parent.iterdir()) == sorted([path.name, other.name])
    assert path.read_bytes() == data
    assert images(first) == images(second)


def test_an_edited_picture_gets_a_new_file_and_the_old_one_stays(tmp_path: Path) -> None:
    d = docx.Document()
    mk.picture(d.add_paragraph(), mk.image_bytes(mk.RED))
    [old] = images(load(d, tmp_path))
    d = docx.Document()
    mk.picture(d.add_paragraph(), mk.image_bytes(mk.BLUE))
    [new] = images(load(d, tmp_path))
    assert old["image_ref"] != new["image_ref"] and plain(old["image_ref"]) == plain(new["image_ref"])
    assert (tmp_path / "assets" / old["image_ref"]).is_file() and (tmp_path / "assets" / new["image_ref"]).is_file()


def test_doc_id_with_slashes_gets_a_deterministic_safe_folder_and_relative_ref(tmp_path: Path) -> None:
    doc = load(FIXTURES / "table_image.docx", tmp_path, doc_id="hr/policies/leave plan")
    folder = asset_folder("hr/policies/leave plan")
    assert folder == asset_folder("hr/policies/leave plan") != asset_folder("hr_policies/leave plan")
    assert "/" not in folder and folder.startswith("hr_policies_leave_plan-")
    [image] = images(doc)
    assert plain(image["image_ref"]) == f"{folder}/img_001.png"
    assert image["figure_id"] == f"{folder}-fig-001"
    assert asset(tmp_path, folder, "img_001.png").is_file()


def test_flags_off_writes_nothing_emits_no_image_blocks_and_says_why(tmp_path: Path) -> None:
    doc = load(FIXTURES / "same_image_twice.docx", tmp_path, extract_images=False,
               inline_figure_placeholders=False, figure_chunks=False)
    assert counts(doc) == expected(blips=2, relationships=1, rels_mapped=2, figures=1)
    assert summary(doc)["image_emit_skip_reason"] == "flags_disabled"
    assert images(doc) == []
    assert not (tmp_path / "assets").exists()


def test_placeholders_without_extraction_report_extract_images_disabled(tmp_path: Path) -> None:
    doc = load(FIXTURES / "table_image.docx", tmp_path, extract_images=False)
    assert summary(doc)["image_emit_skip_reason"] == "extract_images_disabled"
    assert images(doc) == []


def test_loader_logs_summary_and_one_debug_event_per_image(tmp_path: Path) -> None:
    with capture_logs() as logs:
        load(FIXTURES / "corrupt_image.docx", tmp_path, image_debug=True)
    per_image = [e for e in logs if e["event"] == "DOCX_IMAGE"]
    assert [(e["part"], e["written"] and plain(e["written"]), e["skip_reason"]) for e in per_image] == [
        ("word/media/image1.png", "doc1/img_001.png", None), ("word/media/image2.png", None, "not_an_image")]
    [summary_event] = [e for e in logs if e["event"] == "DOCX_IMAGES_SUMMARY"]
    assert (summary_event["blips"], summary_event["writes"], summary_event["skipped_invalid"]) == (2, 1, 1)


def test_not_a_zip_raises_loader_error_naming_the_file(tmp_path: Path) -> None:
    path = tmp_path / "fake.docx"
    path.write_bytes(b"%PDF-1.4 definitely not a zip")
    with pytest.raises(LoaderError, match=r"fake\.docx: corrupt DOCX: not a zip archive"):
        DocxLoader().load(path, settings_for(tmp_path), "doc1", tmp_path / "assets")


def test_zip_without_document_xml_raises_loader_error(tmp_path: Path) -> None:
    path = tmp_path / "hollow.docx"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("[Content_Types].xml", "<Types xmlns='http://schemas.openxmlformats.org/package/2006/content-types'/>")
    with pytest.raises(LoaderError, match=r"hollow\.docx: corrupt DOCX: missing word/document\.xml"):
        DocxLoader().load(path, settings_for(tmp_path), "doc1", tmp_path / "assets")


def test_malformed_document_xml_raises_loader_error(tmp_path: Path) -> None:
    buf = io.BytesIO()
    docx.Document().save(buf)
    path = tmp_path / "garbled.docx"
    with zipfile.ZipFile(buf) as src, zipfile.ZipFile(path, "w") as dst:
        for info in src.infolist():
            data = b"<w:document><unclosed>" if info.filename == "word/document.xml" else src.read(info.filename)
            dst.writestr(info, data)
    with pytest.raises(LoaderError, match=r"garbled\.docx: corrupt DOCX: "):
        DocxLoader().load(path, settings_for(tmp_path), "doc1", tmp_path / "assets")


@pytest.mark.parametrize(("data", "kind"), [
    (mk.image_bytes(mk.RED, "PNG"), "png"),
    (mk.image_bytes(mk.RED, "JPEG"), "jpeg"),
    (mk.image_bytes(mk.RED, "GIF"), "gif"),
    (mk.image_bytes(mk.RED, "BMP"), "bmp"),
    (mk.image_bytes(mk.RED, "TIFF"), "tiff"),
    (mk.emf_bytes(), "emf"),
    (b"\xd7\xcd\xc6\x9a" + bytes(18), "wmf"),
    (b'<?xml version="1.0"?>\n<svg xmlns="http://www.w3.org/2000/svg"/>', "svg"),
    (b"this is not an image, just text bytes", None),
])
def test_image_format_is_sniffed_from_magic_bytes(data: bytes, kind: str | None) -> None:
    assert sniff_kind(data) == kind


def _flip_stored_bytes(source: Any, path: Path, member_prefix: str, needle: bytes) -> None:
    """Save uncompressed, then change one byte inside ``needle`` so its CRC no longer matches."""
    buf = io.BytesIO()
    source.save(buf)
    stored = io.BytesIO()
    with zipfile.ZipFile(buf) as src, zipfile.ZipFile(stored, "w", zipfile.ZIP_STORED) as dst:
        for info in src.infolist():
            dst.writestr(info.filename, src.read(info.filename))
    data = stored.getvalue()
    at = data.index(needle)
    path.write_bytes(data[:at] + bytes([needle[0] ^ 0x01]) + data[at + 1:])


def test_damaged_picture_member_is_skipped_and_the_text_still_loads(tmp_path: Path) -> None:
    d = docx.Document()
    d.add_paragraph("Damaged picture follows.")
    png = mk.image_bytes(mk.RED)
    mk.picture(d.add_paragraph(), png)
    path = tmp_path / "crc.docx"
    _flip_stored_bytes(d, path, "word/media/", png[30:50])
    doc = DocxLoader().load(path, settings_for(tmp_path), "doc1", tmp_path / "assets")
    assert doc.text == "Damaged picture follows."
    assert summary(doc)["skipped"] == [{"member": "word/media/image1.png", "reason": "unreadable_member"}]
    assert counts(doc) == expected(blips=1, relationships=1, rels_mapped=1, figures=1, skipped_invalid=1)


def test_damaged_document_xml_raises_loader_error(tmp_path: Path) -> None:
    d = docx.Document()
    d.add_paragraph("Checksum canary text")
    path = tmp_path / "crc-body.docx"
    _flip_stored_bytes(d, path, "word/document.xml", b"Checksum canary text")
    with pytest.raises(LoaderError, match=r"crc-body\.docx: corrupt DOCX: word/document\.xml cannot be read "
                                          r"\(Bad CRC-32 for file 'word/document\.xml'\)"):
        DocxLoader().load(path, settings_for(tmp_path), "doc1", tmp_path / "assets")


def test_unwritable_assets_dir_raises_loader_error_naming_the_target(tmp_path: Path) -> None:
    (tmp_path / "assets").write_text("a file where the assets folder should be")
    with pytest.raises(LoaderError, match=r"assets/doc1/img_001_[0-9a-f]{16}\.png: cannot write figure image \(docx\.assets_dir\)"):
        load(FIXTURES / "table_image.docx", tmp_path)


@pytest.mark.parametrize("name", sorted(mk.FIXTURES))
def test_committed_fixture_matches_its_builder(name: str) -> None:
    """The files on disk are what make_fixtures.py writes (zip timestamps aside)."""
    fresh = io.BytesIO()
    mk.FIXTURES[name]().save(fresh)
    with zipfile.ZipFile(FIXTURES / name) as committed, zipfile.ZipFile(fresh) as built:
        assert sorted(committed.namelist()) == sorted(built.namelist())
        for member in ("word/document.xml", "word/_rels/document.xml.rels"):
            assert committed.read(member) == built.read(member), member


def test_a_picture_s_context_is_the_text_it_stands_under_not_the_next_heading(tmp_path: Path) -> None:
    """Issue 48: a figure's "Context" names the heading (or the sentence) the picture stands under:
    a picture right after a heading gets that heading; a picture that ends a section gets that
    section's last sentence, never the heading of the section after it."""
    document = docx.Document()
    document.add_heading("Equipment", level=2)
    document.add_paragraph("Every engineer carries a torque wrench. The wrench is calibrated yearly.")
    mk.picture(document.add_paragraph(), mk.image_bytes((200, 10, 10)))
    document.add_heading("Your desk", level=2)
    mk.picture(document.add_paragraph(), mk.image_bytes((10, 200, 10)))
    document.add_paragraph("Desks are assigned by the office manager.")
    images = [b.attrs for b in load(document, tmp_path).blocks if b.kind == "image"]
    assert [i["near_text"] for i in images] == ["The wrench is calibrated yearly.", "Your desk"]
