"""Builders of real files for the content tests (mojibake PDFs, PDFs without a
trailer, password variants, DOCX altChunks), written into the test's ``tmp_path``.

PDFs come from fpdf2/pypdf except the custom-encoding one, which is written by
hand: no PDF library writes a font without a Unicode map on purpose.
"""

from __future__ import annotations

from pathlib import Path

import docx
from docx.opc.constants import RELATIONSHIP_TYPE as RT
from docx.opc.packuri import PackURI
from docx.opc.part import Part
from docx.oxml.ns import qn
from lxml import etree
from pypdf import PdfWriter
from pypdf.generic import ByteStringObject, NameObject

CT_HTML = "text/html"
CT_TEXT = "text/plain"
CT_MHT = "message/rfc822"
CT_DOCX = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"


def custom_encoding_pdf(path: Path, lines: list[str], glyph_prefix: str = "g") -> Path:
    """A one-page PDF whose text is drawn with a Type3 font whose ``/Differences``
    encoding names its glyphs ``/g0``, ``/g1``... (codes from 33 on, in order of
    first use, as a subsetting writer does) and which has no ``/ToUnicode``: every
    viewer shows the text, every extractor gets garbage."""
    chars: list[str] = []
    for ch in "".join(lines):
        if ch not in chars:
            chars.append(ch)
    code = {ch: 33 + i for i, ch in enumerate(chars)}
    names = " ".join(f"/{glyph_prefix}{i}" for i in range(len(chars)))
    procs = " ".join(f"/{glyph_prefix}{i} 9 0 R" for i in range(len(chars)))
    ops = ["BT", "/F1 10 Tf", "72 720 Td", "12 TL"]
    ops += ["(" + "".join(f"\\{code[c]:03o}" for c in line) + ") Tj T*" for line in lines]
    content = "\n".join([*ops, "ET"]).encode()
    glyph = b"600 0 0 0 500 700 d1 0 0 500 700 re f"
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 5 0 R >> >> "
        b"/Contents 4 0 R >>",
        b"<< /Length %d >>\nstream\n%s\nendstream" % (len(content), content),
        (f"<< /Type /Font /Subtype /Type3 /FontBBox [0 0 600 700] /FontMatrix [0.001 0 0 0.001 0 0] "
         f"/CharProcs 6 0 R /Encoding 7 0 R /FirstChar 33 /LastChar {32 + len(chars)} /Widths 8 0 R "
         f"/Resources << >> >>").encode(),
        f"<< {procs} >>".encode(),
        f"<< /Type /Encoding /Differences [33 {names}] >>".encode(),
        ("[" + " ".join("600" for _ in chars) + "]").encode(),
        b"<< /Length %d >>\nstream\n%s\nendstream" % (len(glyph), glyph),
    ]
    out = bytearray(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n%s\nendobj\n" % (number, body)
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    path.write_bytes(bytes(out))
    return path


def without_trailer(src: Path, dst: Path, keep: str = "objects") -> Path:
    """``src`` cut short: ``keep="objects"`` drops the xref table, trailer, ``startxref``
    and ``%%EOF`` (a truncated download); ``"trailer"`` keeps the xref table and the
    trailer dictionary but drops ``startxref`` (a writer that never finished)."""
    data = src.read_bytes()
    cut = data.rfind(b"\nxref") + 1 if keep == "objects" else data.rfind(b"startxref")
    assert cut > 0
    dst.write_bytes(data[:cut])
    return dst


def encrypted_pdf(src: Path, dst: Path, user: str, owner: str, algorithm: str = "AES-128") -> Path:
    """``src`` encrypted with these passwords. pypdf's writer replaces an empty owner
    password with the user password, so for ``owner=""`` the ``/O`` and ``/U`` entries
    are recomputed here with pypdf's own algorithms for an empty owner password (what
    other writers produce when asked for one)."""
    writer = PdfWriter(clone_from=str(src))
    writer.encrypt(user_password=user, owner_password=owner or None, algorithm=algorithm)
    if owner == "" and user:
        enc = writer._encryption
        assert enc is not None
        keys = ["O", "U"]
        if enc.V <= 4:
            enc.compute_values_v4(user.encode(), b"")
        else:
            from pypdf._encryption import AlgV5

            values = AlgV5.generate_values(enc.R, user.encode(), b"", enc._key, enc.P, enc.EncryptMetadata)
            keys += ["OE", "UE", "Perms"]
            for key in keys:
                setattr(enc.values, key, values[f"/{key}"])
        entry = writer._encrypt_entry
        assert entry is not None
        for key in keys:
            entry[NameObject(f"/{key}")] = ByteStringObject(getattr(enc.values, key))
    writer.write(str(dst))
    return dst


def alt_chunk_docx(path: Path, chunks: list[tuple[str, str, bytes]], before: str | None = None,
                   after: str | None = None) -> Path:
    """A python-docx document with one ``w:altChunk`` per ``(part name, content type,
    bytes)``, each pointing at its part through an ``aFChunk`` relationship, as Open XML
    SDK and docx4j write them; ``before``/``after`` are ordinary paragraphs around them."""
    document = docx.Document()
    if before:
        document.add_paragraph(before)
    body = document.element.body
    for name, content_type, data in chunks:
        part = Part(PackURI(name), content_type, data, document.part.package)
        chunk = etree.Element(qn("w:altChunk"))
        chunk.set(qn("r:id"), document.part.relate_to(part, RT.A_F_CHUNK))
        body.insert(len(body) - 1, chunk)  # before the final w:sectPr
    if after:
        document.add_paragraph(after)
    document.save(str(path))
    return path


def mht(html: str) -> bytes:
    """A one-page MIME web archive (what Word's "Single File Web Page" writes)."""
    import quopri

    body = quopri.encodestring(html.encode("utf-8")).decode("ascii")
    return ("MIME-Version: 1.0\r\nContent-Type: multipart/related; boundary=\"part\"\r\n\r\n--part\r\n"
            "Content-Type: text/html; charset=\"utf-8\"\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\n"
            f"{body}\r\n--part--\r\n").encode("ascii")
