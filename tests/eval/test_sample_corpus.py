"""The sample corpus and its generator: formats, sizes, figures with alt text."""

from __future__ import annotations

import importlib.util
import json
from collections import Counter
from pathlib import Path

import docx
import pypdf
from PIL import Image

from tests.conftest import REPO

SAMPLE = REPO / "data" / "sample"


def _build_module():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("build_sample_corpus", REPO / "scripts" / "build_sample_corpus.py")
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


def test_manifest_lists_every_sample_document_in_the_promised_formats() -> None:
    lines = [json.loads(raw) for raw in (REPO / "manifests" / "sample.jsonl").read_text().splitlines()]
    files = sorted(p.name for p in SAMPLE.iterdir() if p.is_file() and p.name != "LICENSE.md")
    assert sorted(Path(line["path"]).name for line in lines) == files
    assert len(files) == 34
    assert Counter(Path(f).suffix for f in files) == {".md": 16, ".txt": 9, ".html": 5, ".pdf": 2, ".docx": 2}
    assert all(line["metadata"]["department"] and line["updated_at"] for line in lines)


def test_text_documents_hold_250_to_700_words() -> None:
    for path in SAMPLE.iterdir():
        if path.suffix in {".md", ".txt", ".html"} and path.name != "LICENSE.md":
            words = len(path.read_text(encoding="utf-8").split())
            assert 250 <= words <= 700, (path.name, words)


def test_generator_rebuilds_multi_page_pdfs_and_a_docx_with_captioned_figures(tmp_path: Path) -> None:
    written = _build_module().build(tmp_path)
    assert sorted(p.name for p in written) == sorted([
        "amsterdam-floor2-evacuation.png", "assembly-points.png", "emergency-exit-sign.png",
        "compensation-bands.pdf", "backup-policy.pdf", "change-management.docx", "office-floor-plan-evacuation.docx",
    ])
    for name in ("compensation-bands.pdf", "backup-policy.pdf"):
        reader = pypdf.PdfReader(tmp_path / name)
        text = " ".join(page.extract_text() for page in reader.pages)
        assert len(reader.pages) == 2 and 400 <= len(text.split()) <= 700
    assert "L3 Senior Professional: 58,000 to 76,000 EUR" in pypdf.PdfReader(tmp_path / "compensation-bands.pdf").pages[0].extract_text()
    assert Image.open(tmp_path / "images" / "amsterdam-floor2-evacuation.png").size == (900, 560)

    document = docx.Document(str(tmp_path / "office-floor-plan-evacuation.docx"))
    captions = [p.text for p in document.paragraphs if p.text.startswith("Figure ")]
    assert [c.split(":")[0] for c in captions] == ["Figure 1", "Figure 2", "Figure 3"]
    doc_prs = document.element.body.xpath(".//wp:docPr")
    assert len(doc_prs) == 4 and all(d.get("descr") and d.get("title") for d in doc_prs)
    assert [d.get("title") for d in doc_prs].count("Emergency exit sign") == 2
    blips = [b.get("{http://schemas.openxmlformats.org/officeDocument/2006/relationships}embed")
             for b in document.element.body.xpath(".//a:blip")]
    assert len(blips) == 4 and len(set(blips)) == 3  # one image part used twice
    assert document.tables[0].cell(1, 0)._tc.xpath(".//wp:docPr")[0].get("title") == "Assembly points map"
