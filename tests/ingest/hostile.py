"""Builders of hostile and real-world-variant files for the ingest hardening tests.

Everything is written with the libraries that write these formats (python-docx,
pypdf, zipfile) into the test's ``tmp_path``; nothing large is committed.
"""

from __future__ import annotations

import re
import struct
import zipfile
import zlib
from pathlib import Path
from typing import Callable

import docx
from pypdf import PdfWriter
from pypdf.generic import DictionaryObject, NameObject, StreamObject

CT_DOCUMENT = "application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"
CT_TEMPLATE = "application/vnd.openxmlformats-officedocument.wordprocessingml.template.main+xml"
CT_DOCM = "application/vnd.ms-word.document.macroEnabled.main+xml"
CT_DOTM = "application/vnd.ms-word.template.macroEnabledTemplate.main+xml"
RT_VBA = "http://schemas.microsoft.com/office/2006/relationships/vbaProject"
OLE2_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"

Patch = Callable[[str, bytes], bytes]


def word_file(path: Path, paragraphs: list[str], picture: bytes | None = None) -> Path:
    document = docx.Document()
    for text in paragraphs:
        document.add_paragraph(text)
    if picture is not None:
        import io

        document.add_picture(io.BytesIO(picture))
    document.save(str(path))
    return path


def rezip(src: Path, dst: Path, patch: Patch | None = None, extra: dict[str, bytes] | None = None) -> Path:
    """Copy a zip member by member, passing each through ``patch``; add ``extra`` members."""
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w", zipfile.ZIP_DEFLATED) as zout:
        for info in zin.infolist():
            data = zin.read(info.filename)
            zout.writestr(info.filename, patch(info.filename, data) if patch else data)
        for name, data in (extra or {}).items():
            zout.writestr(name, data)
    return dst


def with_main_content_type(src: Path, dst: Path, content_type: str, macros: bool = False) -> Path:
    """The package with its main part declared as ``content_type`` (template, macro-enabled...)."""

    def patch(name: str, data: bytes) -> bytes:
        if name == "[Content_Types].xml":
            data = data.replace(CT_DOCUMENT.encode(), content_type.encode())
            if macros:
                data = data.replace(b"</Types>", b'<Default Extension="bin" '
                                    b'ContentType="application/vnd.ms-office.vbaProject"/></Types>')
        if macros and name == "word/_rels/document.xml.rels":
            data = data.replace(b"</Relationships>", f'<Relationship Id="rIdVba" Type="{RT_VBA}" '
                                f'Target="vbaProject.bin"/></Relationships>'.encode())
        return data

    extra = {"word/vbaProject.bin": OLE2_MAGIC + b"\x00" * 504} if macros else None
    return rezip(src, dst, patch, extra)


def style_without_type(src: Path, dst: Path) -> Path:
    """A ``w:style`` with no ``w:type`` (Word reads it as a paragraph style; python-docx's
    style lookup fails with ``KeyError: None``)."""
    return rezip(src, dst, lambda n, b: re.sub(rb'(<w:style )w:type="paragraph" ', rb"\1", b, count=1)
                 if n == "word/styles.xml" else b)


def padded_document_xml(src: Path, dst: Path, mebibytes: int) -> Path:
    """``word/document.xml`` followed by ``mebibytes`` MiB of whitespace (a zip bomb of a few hundred KB)."""
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as zout:
        for info in zin.infolist():
            data = zin.read(info.filename)
            if info.filename != "word/document.xml":
                zout.writestr(info.filename, data)
                continue
            head, tail = data.rsplit(b"</w:body>", 1)
            with zout.open("word/document.xml", "w", force_zip64=True) as fh:
                fh.write(head)
                block = b" " * (1 << 20)
                for _ in range(mebibytes):
                    fh.write(block)
                fh.write(b"</w:body>" + tail)
    return dst


def png(width: int = 4, height: int = 4) -> bytes:
    def chunk(kind: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))

    raw = b"".join(b"\x00" + b"\xff\x00\x00" * width for _ in range(height))
    return (PNG_MAGIC + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))


def lying_image_member(src: Path, dst: Path, inflated: int, declared: int = 1000) -> Path:
    """The package with its picture replaced by ``inflated`` bytes (a PNG header and zeros)
    whose zip directory entries declare only ``declared`` bytes."""
    with zipfile.ZipFile(src) as zin:
        [member] = [n for n in zin.namelist() if n.startswith("word/media/")]
    payload = PNG_MAGIC + b"\x00" * (inflated - len(PNG_MAGIC))
    rezip(src, dst, lambda n, b: payload if n == member else b)
    data = bytearray(dst.read_bytes())
    name = member.encode()
    for signature, offset in ((b"PK\x03\x04", 22), (b"PK\x01\x02", 24)):  # local header, central directory
        start = 0
        while (at := data.find(signature, start)) >= 0:
            name_at = at + (30 if signature == b"PK\x03\x04" else 46)
            if data[name_at:name_at + len(name)] == name:
                struct.pack_into("<I", data, at + offset, declared)
            start = at + 4
    dst.write_bytes(bytes(data))
    return dst


def legacy_doc(path: Path) -> Path:
    """The first bytes of a Word 97-2003 file (an OLE2 compound document)."""
    path.write_bytes(OLE2_MAGIC + b"\x00" * 24 + b"\x3e\x00\x03\x00\xfe\xff" + b"\x00" * 2000)
    return path


def shared_stream_pdf(path: Path, pages: int = 5, stream_bytes: int = 2 << 20) -> Path:
    """A few KB of PDF whose pages all draw one ``stream_bytes`` text content stream."""
    writer = PdfWriter()
    for _ in range(pages):
        writer.add_blank_page(612, 792)
    body = b"BT /F1 12 Tf 72 700 Td " + b"(abcdefgh) Tj " * (stream_bytes // 15) + b"ET"
    stream = StreamObject()
    stream._data = zlib.compress(body, 9)
    stream[NameObject("/Filter")] = NameObject("/FlateDecode")
    ref = writer._add_object(stream)
    font = writer._add_object(DictionaryObject({NameObject("/Type"): NameObject("/Font"),
                                                NameObject("/Subtype"): NameObject("/Type1"),
                                                NameObject("/BaseFont"): NameObject("/Helvetica")}))
    for page in writer.pages:
        page[NameObject("/Contents")] = ref
        page[NameObject("/Resources")] = DictionaryObject(
            {NameObject("/Font"): DictionaryObject({NameObject("/F1"): font})})
    writer.write(str(path))
    return path
