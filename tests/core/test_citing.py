"""Citations as pure functions: markers renumbered in answer order, the section and page of the
cited sentence, sources that never show a server path (``backend.core.citing``), and
the breaks ingest records so a sentence's section and page can be found."""

from __future__ import annotations

from pathlib import Path

import pytest

from backend.common.config import REPO_ROOT
from backend.core.citing import cite, locate, quoted_sentences, sentence_offset, shown_source
from backend.ingest.chunkers import page_breaks, section_breaks
from backend.ingest.manifest import source_name

USED = ["p1", "p2", "p3", "p4", "p5", "p6"]


@pytest.mark.parametrize(("text", "renumbered", "passages"), [
    # the answer: [2][6][3][1] -> [1][2][3][4], the passages in that order
    ("A [2]. B [6]. C [3]. D [1].", "A [1]. B [2]. C [3]. D [4].", ["p2", "p6", "p3", "p1"]),
    # a repeated marker keeps the number of its first appearance
    ("A [3]. B [5]. C [3]. D [5] [3].", "A [1]. B [2]. C [1]. D [2] [1].", ["p3", "p5"]),
    # already in order: unchanged
    ("A [1]. B [2].", "A [1]. B [2].", ["p1", "p2"]),
    # a list of markers: every number renumbered, a duplicate inside the list once
    ("A [4, 2]. B [2,4,4].", "A [1, 2]. B [2, 1].", ["p4", "p2"]),
    # a marker for a passage that does not exist is dropped with the space before it
    ("A [9]. B [2]. C [0].", "A. B [1]. C.", ["p2"]),
    ("A [7, 3].", "A [1].", ["p3"]),
    # a bracketed year (four digits) is no marker and stays
    ("Since [2026] the rule [2] applies.", "Since [2026] the rule [1] applies.", ["p2"]),
    # adjacent markers, marker at the very start, across lines (the newline stays)
    ("[5][2] A.\n[9] B [5].", "[1][2] A.\n B [1].", ["p5", "p2"]),
])
def test_markers_are_renumbered_in_order_of_first_appearance(text: str, renumbered: str,
                                                             passages: list[str]) -> None:
    cited = cite(text, USED)
    assert (cited.text, list(cited.passages), cited.marked) == (renumbered, passages, True)
    assert list(cited.order) == [USED.index(p) + 1 for p in passages]


@pytest.mark.parametrize("text", ["An LLM answer with no marker at all.", "", "Only [0] and [7] point nowhere."])
def test_an_answer_that_cites_no_existing_passage_lists_every_used_one(text: str) -> None:
    """Documented choice: as before renumbering, the used passages in context order."""
    cited = cite(text, USED)
    assert list(cited.passages) == USED and cited.order == (1, 2, 3, 4, 5, 6) and cited.marked is False
    assert "[" not in cited.text or cited.text == text


def test_no_used_passages_drops_every_marker() -> None:
    cited = cite("A [1].", [])
    assert (cited.text, cited.passages, cited.marked) == ("A.", (), False)


@pytest.mark.parametrize(("source", "shown"), [
    ("/srv/kb/private/hr/leave.pdf", "leave.pdf"),  # stored by an older ingest: the file name only
    ("C:\\KB\\hr\\leave.docx", "leave.docx"),
    ("\\\\fileserver\\kb\\leave.md", "leave.md"),
    ("data/sample/annual-leave.md", "data/sample/annual-leave.md"),  # relative: unchanged
    ("Annual leave policy", "Annual leave policy"),  # a title
    ("", ""),
])
def test_an_absolute_source_is_shown_as_its_file_name(source: str, shown: str) -> None:
    assert shown_source(source) == shown


ROW_CHUNK = (
    "Appliance guide\n\nFirmware\n\nUpdates take about 20 minutes. Never install a beta firmware.\n\n"
    "Blinking red LED\n\n| Status LED | Meaning |\n|---|---|\n| Blinking red | Overheating |\n"
)


def test_a_sentence_is_found_by_its_words_and_a_table_row_by_its_values() -> None:
    assert sentence_offset(ROW_CHUNK, "Updates take about 20 minutes.") == ROW_CHUNK.index("Updates")
    row = "Status LED: Blinking red; Meaning: Overheating."  # as the answerer renders the row
    assert sentence_offset(ROW_CHUNK, row) == ROW_CHUNK.index("Blinking red |")
    wrapped = "The generator is\ntested every\nmonth."  # a PDF's line breaks
    assert sentence_offset(wrapped, "The generator is tested every month.") == 0
    assert sentence_offset(ROW_CHUNK, "Nothing like this is in the chunk.") is None


def test_the_section_and_page_are_those_in_force_where_the_sentence_stands() -> None:
    row_at = ROW_CHUNK.index("| Blinking red |")
    meta = {"heading_path": ["Appliance guide", "Firmware"], "page": 1,
            "section_breaks": [[ROW_CHUNK.index("Blinking red LED"), ["Appliance guide", "Blinking red LED"]]],
            "page_breaks": [[row_at - 5, 3]]}
    row = [("Status LED: Blinking red; Meaning: Overheating.", "Blinking red LED")]
    assert locate(ROW_CHUNK, meta, row) == ("Appliance guide > Blinking red LED", 3)
    firmware = [("Updates take about 20 minutes.", "Firmware")]
    assert locate(ROW_CHUNK, meta, firmware) == ("Appliance guide > Firmware", 1)
    # no quoted sentence (an LLM cites the passage as a whole): where the chunk starts
    assert locate(ROW_CHUNK, meta) == ("Appliance guide > Firmware", 1)
    # a heading the loader did not mark (PDF, plain text) is added under the recorded path
    pdf_meta = {"heading_path": [], "page": 2, "section_breaks": [], "page_breaks": [[row_at - 5, 3]]}
    assert locate(ROW_CHUNK, pdf_meta, row) == ("Blinking red LED", 3)


def test_a_chunk_stored_before_breaks_were_recorded_takes_the_sentences_heading() -> None:
    old = {"heading_path": ["Appliance guide", "Firmware"], "page": 1}
    row = [("Status LED: Blinking red; Meaning: Overheating.", "Blinking red LED")]
    assert locate(ROW_CHUNK, old, row) == ("Blinking red LED", 1)  # not "Firmware", where the chunk starts
    assert locate(ROW_CHUNK, old, [("Updates take about 20 minutes.", "Firmware")]) == \
        ("Appliance guide > Firmware", 1)
    assert locate("text", {}) == (None, None)


def test_quoted_sentences_come_from_the_extractive_explanation() -> None:
    explain = {"sentences": [
        {"role": "lead", "marker": "[2]", "chunk_id": "b#0", "sentence": "S1.", "heading": "H"},
        {"role": "support", "marker": "[1]", "chunk_id": "a#0", "sentence": "S2.", "heading": None},
        {"role": "support", "marker": "[2]", "chunk_id": "b#0", "sentence": "S3.", "heading": "H"},
    ]}
    assert quoted_sentences(explain) == {"b#0": [("S1.", "H"), ("S3.", "H")], "a#0": [("S2.", None)]}
    assert quoted_sentences(None) == {} and quoted_sentences({"method": "llm"}) == {}


def test_ingest_records_where_sections_and_pages_begin_inside_a_chunk() -> None:
    headings = [(0, 1, "Guide"), (40, 2, "Firmware"), (120, 2, "Blinking red LED"), (300, 1, "Annex")]
    assert section_breaks(headings, 30, 250) == [[10, ["Guide", "Firmware"]], [90, ["Guide", "Blinking red LED"]]]
    assert section_breaks(headings, 40, 100) == []  # a heading at the chunk's start is its heading_path
    assert page_breaks([(0, 1), (200, 2), (400, 3)], 150, 450) == [[50, 2], [250, 3]]
    assert page_breaks([(0, 1), (200, 2)], 200, 300) == []


def test_a_stored_source_is_relative_to_the_repository_manifest_or_allowed_root(tmp_path: Path) -> None:
    in_repo = REPO_ROOT / "data" / "sample" / "annual-leave.md"
    assert source_name(in_repo, REPO_ROOT / "manifests", []) == "data/sample/annual-leave.md"  # as before
    kb = tmp_path / "kb"
    (kb / "hr").mkdir(parents=True)
    (kb / "manifests").mkdir()
    doc = kb / "hr" / "leave.md"
    doc.write_text("x", encoding="utf-8")
    assert source_name(doc, kb, [tmp_path]) == "hr/leave.md"  # the manifest's folder
    assert source_name(kb / "manifests" / ".." / "hr" / "leave.md", kb / "manifests", [tmp_path, kb]) == "hr/leave.md"
    assert source_name(doc, kb / "manifests", [tmp_path]) == "kb/hr/leave.md"  # the allowed root
    assert source_name(doc, kb / "manifests", [], {"title": "Leave policy"}) == "Leave policy"
    assert source_name(doc, kb / "manifests", []) == "leave.md"
