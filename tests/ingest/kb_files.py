"""A folder of a new user's own documents, as real files: md, txt, html, a DOCX with a
picture (python-docx) and a PDF (fpdf2), plus what a real folder also holds (a hidden folder,
office lock files, an unsupported type). Used by the knowledge-base tests."""

from __future__ import annotations

import io
from pathlib import Path

import docx
from PIL import Image

from tests.ingest.helpers import write_pdf

MD = """# Bicycle allowance

Staff who cycle to the office receive a bicycle allowance of 19 cents per kilometre.
The allowance is paid monthly with the salary after the commute log is approved by the team lead.
Cyclists may use the secure bicycle cellar beneath the north entrance, which opens at 06:30.
"""
TXT = """Greenhouse watering rota

The tomato greenhouse is watered by the horticulture team every Tuesday and Friday morning.
Rainwater from the cistern is used first; mains water only when the cistern level drops below 40 percent.
Fertiliser with the Kelpomax label is added to the irrigation tank once a fortnight.
"""
HTML = """<html><head><title>Aquarium maintenance</title></head><body>
<h1>Aquarium maintenance</h1>
<p>The lobby aquarium holds 640 litres of brackish water and twelve archerfish.</p>
<p>A contractor from Coralwise replaces the carbon filter cartridge every six weeks.</p>
<p>Feeding is limited to freeze-dried krill pellets, given twice daily by the reception desk.</p>
</body></html>
"""
DOCX_LINES = [
    "Telescope observatory booking",
    "The rooftop observatory houses a Dobsonian telescope with a 305 millimetre mirror.",
    "Bookings for stargazing sessions are made through the astronomy club secretary, Ingrid Halvorsen.",
    "The dome stays closed when the wind speed exceeds 35 kilometres per hour.",
]
PDF_TEXT = ("Beekeeping on the campus roof. The campus keeps four beehives of Carniolan honeybees on the east roof. "
            "Honey is harvested each August and sold at the staff canteen for charity. Visitors must wear the "
            "white veil suits stored in locker 9 before approaching the hives.")


def png_bytes() -> bytes:
    buf = io.BytesIO()
    Image.new("RGB", (64, 48), (30, 120, 200)).save(buf, format="PNG")
    return buf.getvalue()


def write_docx(path: Path, lines: list[str], picture: bool = True) -> Path:
    document = docx.Document()
    document.add_heading(lines[0], level=1)
    for line in lines[1:2]:
        document.add_paragraph(line)
    if picture:
        document.add_picture(io.BytesIO(png_bytes()))
        document.add_paragraph("Figure 1: the observatory dome seen from the car park.")
    for line in lines[2:]:
        document.add_paragraph(line)
    document.save(str(path))
    return path


def write_kb_folder(folder: Path, *, extras: bool = True) -> Path:
    """Five real documents of five types; with ``extras``, what must be skipped too."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "Bicycle Allowance.md").write_text(MD, encoding="utf-8")
    (folder / "greenhouse.txt").write_text(TXT, encoding="utf-8")
    sub = folder / "facilities"
    sub.mkdir(exist_ok=True)
    (sub / "aquarium.html").write_text(HTML, encoding="utf-8")
    write_docx(sub / "observatory.docx", DOCX_LINES)
    write_pdf(folder / "beekeeping.pdf", [PDF_TEXT])
    if extras:
        (folder / ".git").mkdir(exist_ok=True)
        (folder / ".git" / "config").write_text("[core]\n", encoding="utf-8")
        (sub / "~$observatory.docx").write_bytes(b"lock")
        (folder / ".~lock.greenhouse.txt#").write_text("lock", encoding="utf-8")
        (folder / "budget.xlsx").write_bytes(b"PK\x03\x04 not really")
        (folder / "notes.md~").write_text("backup", encoding="utf-8")
    return folder
