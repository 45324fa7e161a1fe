"""``w:altChunk``: content a generator embedded in a DOCX as another format.

Document generators (Open XML SDK, docx4j, mail-merge tools) often write a
``<w:altChunk r:id="..."/>`` that points at a whole HTML page, a plain-text file,
an MHT archive or another DOCX, which Word converts when the file is opened.
python-docx does not model it, so a document whose text lives there used to be
refused as empty. Its text is read here, in place, through the loaders this
project already has: HTML through the HTML loader's ``html_blocks`` (hidden text
and scripts dropped as in a ``.html`` file), MHT through the standard library's
``email`` parser and then the same, plain text as it is, and an embedded DOCX
recursively (text only, at most ``MAX_DEPTH`` levels, each level under its own
zip-bomb checks). The part is read from the zip like the XML parts: within
``ingest.limits.max_unzipped_bytes`` and the compression-ratio guard
(``docx_package.check_zip_limits`` counts these parts too). RTF and other
formats are skipped and reported in ``diagnostics["DOCX_ALT_CHUNKS"]``.
"""

from __future__ import annotations

import email
import email.policy
import posixpath
import tempfile
import zipfile
from dataclasses import dataclass, field
from email.message import EmailMessage
from pathlib import Path
from typing import Any, Callable

import structlog

from backend.common.config import IngestLimits
from backend.common.errors import LoaderError
from backend.ingest.documents import Block
from backend.ingest.loaders.docx_package import DocxPackage, MemberError, read_member

log = structlog.get_logger(__name__)

#: an embedded DOCX may embed another one; deeper chunks are skipped (a file that embeds itself)
MAX_DEPTH = 3
RT_ALT_CHUNK = "http://schemas.openxmlformats.org/officeDocument/2006/relationships/aFChunk"
_HTML = ("text/html", "application/xhtml+xml")
_MHT = ("message/rfc822", "multipart/related", "application/x-mimearchive")
_DOCX = ("application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml",
         "application/vnd.openxmlformats-officedocument.wordprocessingml.document")
_BY_SUFFIX = {".htm": "html", ".html": "html", ".xhtml": "html", ".txt": "text", ".mht": "mht", ".mhtml": "mht",
              ".docx": "docx"}

#: ``(path, limits, depth) -> blocks`` of an embedded DOCX (the DOCX loader's text walk)
NestedLoader = Callable[[Path, IngestLimits, int], list[Block]]


def _kind(content_type: str, member: str) -> str | None:
    ct = content_type.split(";")[0].strip().lower()
    if ct in _HTML:
        return "html"
    if ct in _MHT:
        return "mht"
    if ct in _DOCX:
        return "docx"
    if ct == "text/plain":
        return "text"
    return _BY_SUFFIX.get(posixpath.splitext(member)[1].lower())


def _decode(raw: bytes) -> str:
    """UTF-8 (or UTF-16 with a BOM); anything else through charset-normalizer's guess."""
    if raw.startswith((b"\xff\xfe", b"\xfe\xff")):
        return raw.decode("utf-16")
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        from charset_normalizer import from_bytes

        best = from_bytes(raw).best()
        return str(best) if best is not None else raw.decode("utf-8", errors="replace")


def text_blocks(raw: bytes) -> list[Block]:
    text = _decode(raw).replace("\r\n", "\n").replace("\r", "\n")
    return [Block(kind="text", text=p.strip()) for p in text.split("\n\n") if p.strip()]


def mht_blocks(raw: bytes) -> list[Block]:
    """The first HTML (else plain-text) part of a MIME web archive."""
    from backend.ingest.loaders.html import html_blocks

    message = email.message_from_bytes(raw, policy=email.policy.default)
    assert isinstance(message, EmailMessage)
    body = message.get_body(preferencelist=("html", "plain"))
    if body is None:
        return []
    content = body.get_content()
    data = content.encode("utf-8") if isinstance(content, str) else bytes(content)
    return html_blocks(data) if body.get_content_subtype() == "html" else text_blocks(data)


@dataclass
class AltChunkReader:
    """Reads the altChunks of one package; counts what it read and skipped."""

    package: DocxPackage
    limits: IngestLimits
    nested: NestedLoader
    depth: int = 0
    read: int = 0
    chars: int = 0
    skipped: list[dict[str, str]] = field(default_factory=list)

    def blocks(self, part: str, rid: str) -> list[Block]:
        """The blocks of the altChunk ``rid`` of ``part`` (empty, and counted as skipped,
        when it cannot be read as text). Raises ``LoaderError`` when a limit trips."""
        rel = self.package.part_rels(part).get(rid)
        if rel is None or rel.external or rel.target not in self.package.sizes:
            return self._skip(rel.target if rel else rid, "missing_part")
        member = rel.target
        kind = _kind(self.package.content_type(member), member)
        if kind is None:
            return self._skip(member, f"unsupported_type:{self.package.content_type(member) or 'unknown'}")
        if kind == "docx" and self.depth >= MAX_DEPTH:
            return self._skip(member, f"nested_deeper_than_{MAX_DEPTH}")
        raw = self._read(member)
        if kind == "html":
            from backend.ingest.loaders.html import html_blocks

            blocks = html_blocks(raw)
        elif kind == "mht":
            blocks = mht_blocks(raw)
        elif kind == "text":
            blocks = text_blocks(raw)
        else:
            blocks = self._docx(member, raw)
        self.read += 1
        self.chars += sum(len(b.text) for b in blocks)
        if self.chars > self.limits.max_chars:  # one part referenced many times must not multiply unchecked
            raise LoaderError(f"{self.package.path}: embedded content (altChunk) yields over {self.limits.max_chars} "
                              f"characters of text, over ingest.limits.max_chars ({self.limits.max_chars})",
                              path=str(self.package.path), reason="max_chars")
        return [Block(kind="text", text=b.text, role=b.role, attrs={**b.attrs, "alt_chunk": member})
                for b in blocks if b.kind == "text"]

    def _read(self, member: str) -> bytes:
        path = self.package.path
        try:
            with zipfile.ZipFile(path) as zf:
                return read_member(zf, member, self.limits.max_unzipped_bytes)
        except MemberError as exc:
            raise LoaderError(f"{path}: corrupt DOCX: embedded content (altChunk) {exc}", path=str(path),
                              member=member) from exc

    def _docx(self, member: str, raw: bytes) -> list[Block]:
        """An embedded DOCX, through a temporary file so every check of a DOCX on disk applies."""
        with tempfile.TemporaryDirectory(prefix="rag-altchunk-") as folder:
            inner = Path(folder) / posixpath.basename(member)
            inner.write_bytes(raw)
            try:
                return self.nested(inner, self.limits, self.depth + 1)
            except LoaderError as exc:
                reason = exc.user_message.removeprefix(f"{inner}: ")
                raise LoaderError(f"{self.package.path}: embedded document {member} (altChunk): {reason}",
                                  path=str(self.package.path), member=member) from exc

    def _skip(self, member: str, reason: str) -> list[Block]:
        self.skipped.append({"member": member, "reason": reason})
        log.warning("ingest.docx_alt_chunk_skipped", source=str(self.package.path), member=member, reason=reason)
        return []

    def summary(self) -> dict[str, Any]:
        return {"read": self.read, "skipped": list(self.skipped)}
