"""A small folder of a new user's own files for the admin-console and first-hour browser tests:
Markdown, text, HTML, and (for the first hour) a DOCX with a figure made with python-docx and
Pillow and a PDF made with fpdf2, all real files read by the real loaders."""

from __future__ import annotations

import io
from pathlib import Path

REMOTE_WORK = (
    "# Remote work policy\n\n"
    "Employees may work from home up to three days per week after their probation period. "
    "Each remote day is agreed with the team lead in the shared planning calendar.\n\n"
    "Home office equipment such as a monitor and a chair is reimbursed up to 400 euros once every three years. "
    "Remote workers must be reachable by phone between 10:00 and 15:00.\n"
)
#: the changed file an admin uploads: the same sentences, and a new section
REMOTE_WORK_CHANGED = REMOTE_WORK + (
    "\n## Working abroad\n\n"
    "Working from another country is allowed for at most twenty days per calendar year. "
    "The payroll office must approve every stay abroad before the trip, because of tax rules.\n"
)
TRAVEL = (
    "Business travel rules.\n\n"
    "Train travel is preferred for journeys shorter than six hours. "
    "Flights need approval from the department director before booking. "
    "Hotel costs are reimbursed up to 150 euros per night in European capitals. "
    "Expense claims must be filed within thirty days of returning, with the receipts attached.\n"
)
SECURITY = (
    "<!doctype html><html><head><title>Badge and visitor security</title></head><body>"
    "<h1>Badge and visitor security</h1>"
    "<p>Every employee wears the access badge visibly inside the building. "
    "Visitors sign in at the reception desk and are escorted by their host at all times.</p>"
    "<p>A lost badge is reported to the security desk within one hour, which blocks it at once. "
    "The server room is opened only by the facilities manager and two named deputies.</p>"
    "</body></html>\n"
)
BICYCLE_PDF = (
    "Bicycle allowance",
    "Employees who cycle to work receive a bicycle allowance of 25 cents per kilometre, paid monthly with the "
    "salary. The allowance is claimed in the expense portal before the fifth working day of the next month. "
    "Electric bicycles count as bicycles for this allowance.",
)
GREENHOUSE_DOCX = (
    "Greenhouse lab floor plan",
    "The greenhouse lab on the fourth floor holds the seed vault and the climate chambers. "
    "The emergency eyewash station stands next to the north door of the greenhouse lab.",
    "Figure 1: Greenhouse lab floor plan with the seed vault, the climate chambers and the eyewash station",
)


def write_text_files(folder: Path) -> Path:
    """remote-work.md, travel.txt and security.html in ``folder`` (made if missing)."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "remote-work.md").write_text(REMOTE_WORK, encoding="utf-8")
    (folder / "travel.txt").write_text(TRAVEL, encoding="utf-8")
    (folder / "security.html").write_text(SECURITY, encoding="utf-8")
    return folder


def _floor_plan_png() -> bytes:
    from PIL import Image, ImageDraw

    image = Image.new("RGB", (480, 320), "white")
    draw = ImageDraw.Draw(image)
    draw.rectangle((10, 10, 470, 310), outline="black", width=4)
    draw.rectangle((30, 30, 200, 150), outline="darkgreen", width=3)
    draw.text((40, 80), "Seed vault", fill="black")
    draw.rectangle((240, 30, 450, 150), outline="navy", width=3)
    draw.text((250, 80), "Climate chambers", fill="black")
    draw.ellipse((400, 250, 440, 290), fill="red")
    draw.text((300, 260), "Eyewash", fill="black")
    out = io.BytesIO()
    image.save(out, format="PNG")
    return out.getvalue()


def write_docx(path: Path) -> Path:
    """A DOCX with a heading, a paragraph, a floor-plan picture and its caption."""
    from docx import Document
    from docx.shared import Inches

    title, body, caption = GREENHOUSE_DOCX
    doc = Document()
    doc.add_heading(title, level=1)
    doc.add_paragraph(body)
    doc.add_picture(io.BytesIO(_floor_plan_png()), width=Inches(4))
    doc.add_paragraph(caption, style="Caption")
    doc.save(str(path))
    return path


def write_pdf(path: Path) -> Path:
    """A one-page PDF with a heading and a paragraph of text."""
    from fpdf import FPDF

    title, body = BICYCLE_PDF
    pdf = FPDF()
    pdf.add_page()
    pdf.set_font("Helvetica", "B", 16)
    pdf.cell(0, 10, title, new_x="LMARGIN", new_y="NEXT")
    pdf.set_font("Helvetica", size=11)
    pdf.multi_cell(0, 6, body)
    pdf.output(str(path))
    return path


def write_mixed_folder(folder: Path) -> Path:
    """The first hour's folder: md, txt, html, a DOCX with a figure and a PDF."""
    write_text_files(folder)
    write_docx(folder / "greenhouse-lab.docx")
    write_pdf(folder / "bicycle-allowance.pdf")
    return folder
