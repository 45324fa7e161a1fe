"""Regenerate the binary files of the sample corpus (PDF, DOCX, PNG).

The Northwind Analytics sample corpus (data/sample, CC0) is mostly plain
Markdown, text and HTML written by hand. The PDF and DOCX documents cannot be
edited as text, so their text lives here and this script rebuilds them. It is
deterministic: fixed creation dates, fixed drawings, no randomness, so running it
twice gives documents with the same content.

Run: ``.venv/bin/python scripts/build_sample_corpus.py [--out data/sample]``
"""

from __future__ import annotations

import argparse
import datetime as dt
from pathlib import Path

from docx import Document
from docx.enum.text import WD_ALIGN_PARAGRAPH
from docx.shared import Cm
from fpdf import FPDF
from PIL import Image, ImageDraw, ImageFont

REPO_ROOT = Path(__file__).resolve().parents[1]
FIXED_DATE = dt.datetime(2026, 1, 15, 9, 0, 0, tzinfo=dt.timezone.utc)

# --- PDF sources ---------------------------------------------------------------
# Each document: title, header line, then (heading, [paragraphs]) sections.
# Paragraphs starting with "- " are bullets. Latin-1 only (core PDF fonts).

COMPENSATION_BANDS = {
    "title": "Compensation Bands and Salary Review",
    "meta": "Policy owner: People Team - Policy number: HR-130 - Last reviewed: 2026-01-20",
    "sections": [
        ("Purpose", [
            "Northwind Analytics pays fairly and transparently. Every role is placed in one of six salary "
            "bands, L1 to L6. The bands are published to all employees so that everyone can see the range "
            "for their own role and for a promotion. This document sets out the bands for 2026, how "
            "salaries move within a band and how the yearly salary review works.",
        ]),
        ("Salary bands 2026 (gross annual base salary, full-time, Amsterdam)", [
            "- L1 Associate: 38,000 to 48,000 EUR",
            "- L2 Professional: 46,000 to 60,000 EUR",
            "- L3 Senior Professional: 58,000 to 76,000 EUR",
            "- L4 Lead / Staff: 72,000 to 95,000 EUR",
            "- L5 Principal / Manager: 90,000 to 118,000 EUR",
            "- L6 Director: 112,000 to 150,000 EUR",
            "Lisbon salaries use the same bands multiplied by a location factor of 0.72. The location factor "
            "is reviewed every two years against market data from two independent salary surveys.",
        ]),
        ("Position in the band", [
            "New hires are normally placed between the minimum and the midpoint of the band. Placement above "
            "the midpoint requires approval from the department head and the People Team. No employee is paid "
            "below the minimum of their band; if a review shows this, the salary is raised within one month.",
        ]),
        ("Yearly salary review (merit matrix)", [
            "Salary increases are decided in the year-end performance review (see Performance Reviews, "
            "HR-120) and take effect on 1 April. The merit matrix for 2026 gives the increase as a percentage "
            "of base salary, depending on the rating and the position in the band:",
            "- Exceptional: 6% in the lower half of the band, 4% in the upper half.",
            "- Strong: 4% in the lower half, 3% in the upper half.",
            "- Developing: 1.5% in the lower half, 0% in the upper half.",
            "- Below expectations: no increase.",
            "In addition, the collective cost-of-living adjustment for 2026 is 2.0% for all employees, "
            "effective 1 January.",
        ]),
        ("Promotions", [
            "A promotion to the next band comes with an increase of at least 8% or up to the new band's "
            "minimum, whichever is higher. Promotions take effect on 1 April or 1 October.",
        ]),
        ("Bonus", [
            "Employees in bands L1 to L4 are eligible for a yearly bonus target of 5% of base salary; L5 and "
            "L6 have a target of 10%. The bonus is paid in March, based on company results (50%) and the "
            "individual rating (50%). Employees rated Below expectations receive no individual part.",
        ]),
        ("Pay equity", [
            "The People Team runs a gender pay gap analysis every year in February. Any unexplained difference "
            "above 3% within a band is corrected in the April salary review. Individual salary data is "
            "classified as Restricted under the Data Classification Policy (SEC-302).",
        ]),
        ("Benefits that are not part of base salary", [
            "- Holiday allowance of 8% of base salary, paid in May (Netherlands).",
            "- Pension: the company pays 60% of the pension premium, the employee 40%.",
            "- Learning budget of 1,500 EUR per year (see HR-140).",
            "- Home office and internet allowances (see Remote Work Policy, HR-104).",
        ]),
        ("Questions", [
            "Questions about your band or salary go to your manager or to compensation@northwind-analytics.example.",
        ]),
    ],
}

BACKUP_POLICY = {
    "title": "Backup and Restore Policy",
    "meta": "Policy owner: IT Infrastructure - Policy number: IT-320 - Last reviewed: 2026-02-10",
    "sections": [
        ("Purpose and scope", [
            "This policy makes sure that Northwind Analytics can recover its data and services after hardware "
            "failure, human error, ransomware or the loss of a data centre. It covers production databases, "
            "the customer analytics platform, file storage, source code and the SaaS applications that hold "
            "company records.",
        ]),
        ("Backup schedule", [
            "- Production databases: continuous point-in-time recovery (write-ahead log shipping every 5 "
            "minutes) plus a full snapshot every night at 01:00 UTC.",
            "- Customer analytics platform object storage: daily incremental backups and a weekly full backup "
            "on Sunday at 02:00 UTC.",
            "- Source code (GitHub Enterprise): daily export of all repositories at 03:00 UTC.",
            "- Microsoft 365 (mail, OneDrive, SharePoint): daily backup by the third-party backup service.",
            "- Laptops are not backed up; employees store work in OneDrive or in repositories.",
        ]),
        ("Retention", [
            "Daily backups are kept for 35 days. Weekly full backups are kept for 12 weeks. A monthly backup "
            "of financial systems is kept for 7 years to meet the retention duties of the Data Retention "
            "Policy (SEC-304). Backups of raw customer analytics datasets follow the 90-day dataset retention "
            "and are never kept longer than 35 days after the dataset was deleted.",
        ]),
        ("Recovery objectives", [
            "- Tier 1 services (customer analytics platform, production databases): recovery point objective "
            "(RPO) 15 minutes, recovery time objective (RTO) 4 hours.",
            "- Tier 2 services (internal tools such as PeopleHub integrations, BuyRight): RPO 24 hours, RTO 1 "
            "working day.",
            "- Tier 3 services (everything else): RPO 24 hours, RTO 5 working days.",
        ]),
        ("Storage and protection", [
            "Backups are stored in a separate cloud account in a second EU region (Frankfurt for Amsterdam "
            "workloads, Paris for Lisbon workloads). They are encrypted with AES-256 and keys held in the key "
            "management service; backup storage uses object lock (immutability) for 35 days so that "
            "ransomware or an administrator cannot delete them. Access to the backup account requires a "
            "hardware security key and is limited to four named members of the infrastructure team.",
        ]),
        ("Restore tests", [
            "A restore test of every Tier 1 service is performed every quarter, and of Tier 2 services twice a "
            "year. The test restores a backup into an isolated environment, checks data integrity with row "
            "counts and checksums, and records the time taken. Results are stored in the restore test log and "
            "reviewed by the Head of IT Infrastructure. A failed restore test is treated as a P2 incident.",
        ]),
        ("Monitoring", [
            "Backup jobs report to the monitoring system. A failed backup job pages the infrastructure on-call "
            "engineer (see On-call Rotation and Pay, ENG-204) if it is not successfully repeated within 6 "
            "hours.",
        ]),
        ("Restore requests", [
            "Employees can request a restore of deleted files or mail through the Service Desk portal. "
            "Restores of OneDrive and mail are done within 1 working day if the data is less than 35 days old.",
        ]),
    ],
}

# --- DOCX sources ---------------------------------------------------------------

CHANGE_MANAGEMENT = {
    "title": "Change Management Policy",
    "meta": "Policy owner: Engineering - Policy number: ENG-210 - Last reviewed: 2026-02-24",
    "sections": [
        ("Purpose", [
            "Changes to production systems are the most common cause of outages. This policy makes changes "
            "to the customer analytics platform and internal production systems safe, reviewed and traceable, "
            "without slowing teams down more than necessary.",
        ]),
        ("Change types", [
            "Standard change: a pre-approved, low-risk change that follows a documented runbook, for example "
            "scaling a cluster or rotating a certificate. No separate approval is needed; record it in the "
            "change log.",
            "Normal change: every other planned change. It needs a pull request reviewed and approved by at "
            "least one other engineer, passing automated tests, and a rollback plan. Changes that touch "
            "databases, networking or authentication need approval from the Change Advisory Board (CAB).",
            "Emergency change: a change needed to restore service during a P1 or P2 incident. It may be "
            "deployed with the approval of the incident commander only, and must be reviewed by the CAB "
            "within 2 working days afterwards.",
        ]),
        ("Change Advisory Board", [
            "The CAB meets every Tuesday and Thursday at 11:00. Requests must be submitted in the change tool "
            "by 16:00 the working day before. The CAB consists of the Head of Platform, a Security engineer "
            "and the on-call primary.",
        ]),
        ("Deployment windows", [
            "Normal changes are deployed Monday to Thursday between 09:00 and 16:00 Amsterdam time. No "
            "deployments on Fridays, at weekends or on company holidays, except standard and emergency "
            "changes.",
            "A change freeze applies from 15 December to 5 January each year. During the freeze only "
            "emergency changes and changes approved by the CTO are allowed.",
        ]),
        ("Rollback", [
            "Every normal change states how to roll back and how long the rollback takes. If monitoring shows "
            "an increase in error rates of more than 1% within 30 minutes of a deployment, the change is "
            "rolled back first and investigated afterwards.",
        ]),
        ("Records", [
            "The change log keeps the pull request, approvals, deployment time and outcome of every change for "
            "1 year, as audit evidence for ISO 27001 and SOC 2.",
        ]),
    ],
    "table": [
        ("Change type", "Approval", "Lead time"),
        ("Standard", "None (runbook)", "None"),
        ("Normal", "1 peer review; CAB for database, network, authentication", "Next CAB meeting"),
        ("Emergency", "Incident commander; CAB review within 2 working days", "Immediate"),
    ],
}

FLOOR_PLAN_INTRO = [
    "This document shows the floor plans of the Amsterdam office with the evacuation routes, the "
    "emergency exits and the assembly points for both offices. Every employee walks the evacuation route "
    "of their floor during the health and safety walk in the first week (see Onboarding, HR-111). "
    "General rules for emergencies are in the Health and Safety Policy (FAC-410).",
]
FLOOR_PLAN_SECTIONS = [
    ("Amsterdam office, floor 2", [
        "Floor 2 has two emergency exits: Exit A next to the main staircase on the north side and Exit B "
        "at the east end of the open-plan area, which leads to the external fire escape. The lifts are "
        "in the centre of the floor and must not be used during an evacuation. The first-aid kit and the "
        "AED hang next to the kitchen, and the fire extinguishers are next to each exit.",
    ]),
    ("Evacuation procedure", [
        "When the fire alarm sounds (a continuous tone), stop work, leave your belongings and walk to the "
        "nearest exit as shown by the green arrows in Figure 1. Do not run and do not use the lifts. The "
        "floor wardens in yellow vests check the meeting rooms, toilets and the wellbeing room and are "
        "the last to leave the floor. People who need help on the stairs wait in the refuge area next to "
        "Exit A, where the floor warden reports them to the fire brigade.",
    ]),
    ("Assembly points", [
        "The assembly point for the Amsterdam office is Assembly Point 1 on the square in front of the "
        "Westerkerk (fictional), 150 metres from the main entrance. The assembly point for the Lisbon "
        "office is Assembly Point 2 in the Jardim do Torel park entrance (fictional). At the assembly "
        "point, report to your floor warden so that everyone is accounted for. Nobody goes back into the "
        "building until the fire brigade or the head floor warden gives the all-clear.",
    ]),
    ("Exit signs", [
        "All emergency exits are marked with the green running-man sign shown in Figure 3. The same sign is "
        "repeated above every door on the route. Exit signs are lit by an emergency battery for at least "
        "60 minutes during a power cut.",
    ]),
]

# --- drawing --------------------------------------------------------------------


def _font(size: int) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    """Pillow's bundled font, so the drawings do not depend on system fonts."""
    return ImageFont.load_default(size=size)


def _arrow(draw: ImageDraw.ImageDraw, pts: list[tuple[int, int]], colour: str) -> None:
    draw.line(pts, fill=colour, width=6)
    (x0, y0), (x1, y1) = pts[-2], pts[-1]
    if x1 != x0:
        d = 1 if x1 > x0 else -1
        head = [(x1 + 14 * d, y1), (x1, y1 - 10), (x1, y1 + 10)]
    else:
        d = 1 if y1 > y0 else -1
        head = [(x1, y1 + 14 * d), (x1 - 10, y1), (x1 + 10, y1)]
    draw.polygon(head, fill=colour)


def draw_floor_plan(path: Path) -> None:
    """Amsterdam floor 2: rooms, exits A and B, and green evacuation routes."""
    img = Image.new("RGB", (900, 560), "white")
    d = ImageDraw.Draw(img)
    d.text((20, 12), "Amsterdam office - floor 2 - evacuation routes", fill="black", font=_font(22))
    d.rectangle((40, 60, 860, 520), outline="black", width=4)
    rooms = {
        "Meeting room Tulip": (60, 80, 260, 220),
        "Meeting room Canal": (60, 360, 260, 500),
        "Kitchen + first aid + AED": (600, 80, 840, 200),
        "Wellbeing room": (600, 400, 840, 500),
        "Lifts (do not use)": (400, 250, 520, 330),
    }
    for label, box in rooms.items():
        d.rectangle(box, outline="black", width=2, fill="#eeeeee")
        d.text((box[0] + 8, box[1] + 8), label, fill="black", font=_font(15))
    d.text((300, 420), "Open-plan desks", fill="gray", font=_font(18))
    d.rectangle((250, 40, 350, 66), fill="#2e9b3a")
    d.text((262, 44), "EXIT A", fill="white", font=_font(16))
    d.rectangle((846, 260, 880, 360), fill="#2e9b3a")
    d.text((850, 270), "EXIT\nB", fill="white", font=_font(12))
    _arrow(d, [(380, 290), (300, 290), (300, 86)], "#2e9b3a")
    _arrow(d, [(560, 300), (830, 300)], "#2e9b3a")
    d.rectangle((320, 90, 430, 140), outline="red", width=3)
    d.text((326, 96), "Refuge\narea", fill="red", font=_font(14))
    d.text((40, 530), "Green arrows: evacuation routes. Red box: refuge area next to Exit A.", fill="black", font=_font(15))
    img.save(path, format="PNG", optimize=False)


def draw_assembly_map(path: Path) -> None:
    """Both offices with the walking route to their assembly point."""
    img = Image.new("RGB", (900, 420), "white")
    d = ImageDraw.Draw(img)
    d.text((20, 12), "Assembly points", fill="black", font=_font(22))
    for x0, office, point, dist in ((40, "Amsterdam office", "Assembly Point 1", "150 m"),
                                    (470, "Lisbon office", "Assembly Point 2", "200 m")):
        d.rectangle((x0, 80, x0 + 160, 200), outline="black", width=3, fill="#dde6f5")
        d.text((x0 + 10, 130), office, fill="black", font=_font(16))
        d.ellipse((x0 + 250, 250, x0 + 390, 390), outline="#2e9b3a", width=5, fill="#e4f5e6")
        d.text((x0 + 262, 308), point, fill="black", font=_font(15))
        _arrow(d, [(x0 + 160, 180), (x0 + 230, 180), (x0 + 230, 300), (x0 + 236, 300)], "#2e9b3a")
        d.text((x0 + 240, 200), dist, fill="black", font=_font(16))
    img.save(path, format="PNG", optimize=False)


def draw_exit_sign(path: Path) -> None:
    """The green emergency-exit sign (pictogram plus arrow)."""
    img = Image.new("RGB", (320, 160), "#2e9b3a")
    d = ImageDraw.Draw(img)
    d.ellipse((40, 20, 70, 50), fill="white")
    d.line([(55, 50), (60, 95)], fill="white", width=10)
    d.line([(60, 95), (35, 135)], fill="white", width=9)
    d.line([(60, 95), (90, 130)], fill="white", width=9)
    d.line([(30, 70), (90, 65)], fill="white", width=8)
    d.rectangle((110, 30, 140, 130), outline="white", width=5)
    _arrow(d, [(170, 80), (270, 80)], "white")
    d.text((165, 110), "EMERGENCY EXIT", fill="white", font=_font(16))
    img.save(path, format="PNG", optimize=False)


# --- writers --------------------------------------------------------------------


def write_pdf(doc: dict, path: Path) -> None:
    pdf = FPDF(format="A4")
    pdf.set_creation_date(FIXED_DATE)
    pdf.set_title(doc["title"])
    pdf.set_author("Northwind Analytics (fictional)")
    pdf.set_auto_page_break(auto=True, margin=18)
    pdf.add_page()
    pdf.set_font("Helvetica", "B", 18)
    pdf.multi_cell(0, 10, doc["title"], new_x="LMARGIN", new_y="NEXT")
    pdf.set_font("Helvetica", "I", 10)
    pdf.multi_cell(0, 6, doc["meta"], new_x="LMARGIN", new_y="NEXT")
    for n, (heading, paras) in enumerate(doc["sections"]):
        if n == len(doc["sections"]) // 2:
            pdf.add_page()  # a real multi-page document, not one long page
        pdf.ln(3)
        pdf.set_font("Helvetica", "B", 13)
        pdf.multi_cell(0, 8, heading, new_x="LMARGIN", new_y="NEXT")
        pdf.set_font("Helvetica", "", 11)
        for para in paras:
            text = ("  - " + para[2:]) if para.startswith("- ") else para
            pdf.multi_cell(0, 6, text, new_x="LMARGIN", new_y="NEXT")
            pdf.ln(1)
    pdf.output(str(path))


def _fixed_core_properties(document: Document, title: str) -> None:
    props = document.core_properties
    props.title = title
    props.author = "Northwind Analytics (fictional)"
    props.created = FIXED_DATE.replace(tzinfo=None)
    props.modified = FIXED_DATE.replace(tzinfo=None)
    props.revision = 1


def _set_alt_text(inline_shape, descr: str, title: str) -> None:
    """python-docx has no API for alt text; it lives on the inline's wp:docPr."""
    doc_pr = inline_shape._inline.docPr
    doc_pr.set("descr", descr)
    doc_pr.set("title", title)


def _caption(document: Document, text: str) -> None:
    para = document.add_paragraph(text, style="Caption")
    para.alignment = WD_ALIGN_PARAGRAPH.CENTER


def write_change_management(path: Path) -> None:
    doc = CHANGE_MANAGEMENT
    document = Document()
    _fixed_core_properties(document, doc["title"])
    document.add_heading(doc["title"], level=1)
    document.add_paragraph(doc["meta"]).runs[0].italic = True
    for heading, paras in doc["sections"]:
        document.add_heading(heading, level=2)
        for para in paras:
            document.add_paragraph(para)
        if heading == "Change types":
            table = document.add_table(rows=0, cols=3)
            table.style = "Table Grid"
            for row in doc["table"]:
                cells = table.add_row().cells
                for cell, value in zip(cells, row):
                    cell.text = value
    document.save(str(path))


def write_floor_plan(path: Path, images: dict[str, Path]) -> None:
    document = Document()
    title = "Office Floor Plan and Evacuation Routes"
    _fixed_core_properties(document, title)
    document.add_heading(title, level=1)
    meta = document.add_paragraph("Policy owner: Facilities - Policy number: FAC-403 - Last reviewed: 2026-02-02")
    meta.runs[0].italic = True
    for para in FLOOR_PLAN_INTRO:
        document.add_paragraph(para)
    figures = {
        "floor": ("Floor plan of Amsterdam office floor 2 with green evacuation routes to Exit A (north "
                  "staircase) and Exit B (east fire escape), the refuge area next to Exit A, the kitchen with "
                  "first-aid kit and AED, and the lifts that must not be used.", "Amsterdam floor 2 evacuation plan"),
        "assembly": ("Map showing the walking routes from the Amsterdam office to Assembly Point 1 (150 m) "
                     "and from the Lisbon office to Assembly Point 2 (200 m).", "Assembly points map"),
        "exit": ("Green emergency exit sign with a running figure, a door and an arrow, labelled "
                 "EMERGENCY EXIT.", "Emergency exit sign"),
    }
    for heading, paras in FLOOR_PLAN_SECTIONS:
        document.add_heading(heading, level=2)
        for para in paras:
            document.add_paragraph(para)
        if heading == "Amsterdam office, floor 2":
            pic = document.add_picture(str(images["floor"]), width=Cm(15))
            _set_alt_text(pic, *figures["floor"])
            _caption(document, "Figure 1: Amsterdam office floor 2 with evacuation routes to Exit A and Exit B.")
        if heading == "Assembly points":
            table = document.add_table(rows=2, cols=2)
            table.style = "Table Grid"
            table.cell(0, 0).text = "Assembly point map"
            table.cell(0, 1).text = "Office - assembly point - walking distance"
            run = table.cell(1, 0).paragraphs[0].add_run()
            pic = run.add_picture(str(images["assembly"]), width=Cm(8))
            _set_alt_text(pic, *figures["assembly"])
            table.cell(1, 1).text = ("Amsterdam - Assembly Point 1 (square in front of the Westerkerk) - 150 m\n"
                                     "Lisbon - Assembly Point 2 (Jardim do Torel entrance) - 200 m")
            _caption(document, "Figure 2: Walking routes from both offices to their assembly points.")
        if heading == "Exit signs":
            for n in range(2):  # the same image used twice: one media part, two references
                pic = document.add_picture(str(images["exit"]), width=Cm(5 if n == 0 else 3))
                _set_alt_text(pic, *figures["exit"])
            _caption(document, "Figure 3: The emergency exit sign, shown large and at the size used on door labels.")
    document.add_paragraph(
        "Questions about evacuation go to the Facilities desk or to reception (Amsterdam internal number "
        "2000, Lisbon internal number 3000). In a life-threatening emergency always call 112 first."
    )
    document.save(str(path))


def build(out: Path) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    img_dir = out / "images"
    img_dir.mkdir(exist_ok=True)
    images = {"floor": img_dir / "amsterdam-floor2-evacuation.png",
              "assembly": img_dir / "assembly-points.png",
              "exit": img_dir / "emergency-exit-sign.png"}
    draw_floor_plan(images["floor"])
    draw_assembly_map(images["assembly"])
    draw_exit_sign(images["exit"])
    written = list(images.values())
    for name, doc in (("compensation-bands.pdf", COMPENSATION_BANDS), ("backup-policy.pdf", BACKUP_POLICY)):
        write_pdf(doc, out / name)
        written.append(out / name)
    write_change_management(out / "change-management.docx")
    write_floor_plan(out / "office-floor-plan-evacuation.docx", images)
    written += [out / "change-management.docx", out / "office-floor-plan-evacuation.docx"]
    return written


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=REPO_ROOT / "data" / "sample")
    args = parser.parse_args()
    for path in build(args.out):
        print(path.relative_to(REPO_ROOT) if path.is_relative_to(REPO_ROOT) else path)


if __name__ == "__main__":
    main()
