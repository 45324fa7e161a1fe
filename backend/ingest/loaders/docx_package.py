"""The DOCX zip package as data: members, content types and relationships.

python-docx reads every part into memory when it opens a file and refuses a
package whose relationship points at a missing member. Reading the zip
ourselves first lets the loader (a) turn corrupt files into a ``LoaderError``
that names the reason, (b) check sizes and compression ratios from the zip
directory *before* anything is decompressed (zip-bomb guard,
``ingest.limits``), then read each member with a hard limit so a member that
inflates past what its directory entry declares is stopped there, and (c) hand
python-docx an in-memory copy built from those bounded reads, without the binary
parts, without relationships to missing members and with a template or
macro-enabled main part declared as a plain document, so python-docx never
touches the original file.
"""

from __future__ import annotations

import io
import posixpath
import zipfile
import zlib
from dataclasses import dataclass, field
from pathlib import Path

from lxml import etree

from backend.common.config import IngestLimits
from backend.common.errors import LoaderError

PKG_RELS_NS = "http://schemas.openxmlformats.org/package/2006/relationships"
CT_NS = "http://schemas.openxmlformats.org/package/2006/content-types"
RT_IMAGE = "http://schemas.openxmlformats.org/officeDocument/2006/relationships/image"
RT_OFFICE_DOCUMENT = "http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument"
_PARSER = etree.XMLParser(resolve_entities=False, no_network=True, huge_tree=False)
CT_DOCUMENT_MAIN = "application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"
#: Main-part types of the other WordprocessingML variants (.dotx, .docm, .dotm): the same
#: document model, which python-docx reads once the type says "document".
CT_VARIANTS = frozenset({
    "application/vnd.openxmlformats-officedocument.wordprocessingml.template.main+xml",
    "application/vnd.ms-word.document.macroEnabled.main+xml",
    "application/vnd.ms-word.template.macroEnabledTemplate.main+xml",
})
OLE2_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
_ENCRYPTED_PACKAGE = "EncryptedPackage".encode("utf-16-le")
#: the compression-ratio check ignores smaller parts (tiny parts compress oddly)
RATIO_FLOOR_BYTES = 1 << 20
_CHUNK = 1 << 16


class MemberError(ValueError):
    """A zip member that cannot be read within its limit or is damaged."""


@dataclass(frozen=True)
class Relationship:
    rid: str
    reltype: str
    #: member name inside the zip (internal) or the raw target (external)
    target: str
    external: bool

    @property
    def is_image(self) -> bool:
        return self.reltype == RT_IMAGE


@dataclass
class DocxPackage:
    """What the loader needs to know about the zip before python-docx opens it."""

    path: Path
    main_part: str
    sizes: dict[str, int]
    rels: dict[str, dict[str, Relationship]]
    overrides: dict[str, str]
    defaults: dict[str, str]
    #: members python-docx gets as empty bytes (see :func:`withhold_binaries`)
    withheld: set[str] = field(default_factory=set)

    def content_type(self, member: str) -> str:
        ext = posixpath.splitext(member)[1].lstrip(".").lower()
        return self.overrides.get("/" + member, self.defaults.get(ext, ""))

    def part_rels(self, member: str) -> dict[str, Relationship]:
        return self.rels.get(member, {})


def _source_of(rels_member: str) -> str:
    folder, name = posixpath.split(rels_member)
    return posixpath.join(posixpath.dirname(folder), name[: -len(".rels")])


def read_member(zf: zipfile.ZipFile, name: str, limit: int) -> bytes:
    """The member's bytes, inflating at most ``min(declared size, limit)`` bytes.

    ``zipfile`` stops at the size the directory declares, but inflates a whole
    compressed block first; reading in small chunks keeps a member that lies about
    its size (a 1,000-byte picture inflating to 50 MiB) from costing more than the
    limit, and its CRC then fails. Raises ``MemberError``."""
    info = zf.getinfo(name)
    if info.file_size > limit:
        raise MemberError(f"{name} declares {info.file_size} bytes, over the limit of {limit}")
    out = bytearray()
    try:
        with zf.open(info) as fh:
            while chunk := fh.read(_CHUNK):
                out += chunk
                if len(out) > info.file_size:
                    raise MemberError(f"{name} inflates past the {info.file_size} bytes it declares")
    except (zipfile.BadZipFile, zlib.error, EOFError, NotImplementedError, RuntimeError) as exc:
        raise MemberError(f"{name} cannot be read ({exc})") from exc
    if len(out) != info.file_size:
        raise MemberError(f"{name} inflates to {len(out)} bytes, not the {info.file_size} it declares")
    return bytes(out)


def _parse(zf: zipfile.ZipFile, member: str, path: Path, limit: int) -> etree._Element:
    try:
        return etree.fromstring(read_member(zf, member, limit), _PARSER)
    except etree.XMLSyntaxError as exc:
        raise LoaderError(f"{path}: corrupt DOCX: {member} is not well-formed XML ({exc.msg})",
                          path=str(path), member=member) from exc
    except MemberError as exc:
        raise LoaderError(f"{path}: corrupt DOCX: {exc}", path=str(path), member=member) from exc


def _relationships(zf: zipfile.ZipFile, rels_member: str, path: Path, limit: int) -> dict[str, Relationship]:
    source_dir = posixpath.dirname(_source_of(rels_member))
    out: dict[str, Relationship] = {}
    for rel in _parse(zf, rels_member, path, limit).iter(f"{{{PKG_RELS_NS}}}Relationship"):
        target = rel.get("Target", "")
        external = rel.get("TargetMode") == "External"
        if not external:
            joined = target.lstrip("/") if target.startswith("/") else posixpath.join(source_dir, target)
            target = posixpath.normpath(joined)
        out[rel.get("Id", "")] = Relationship(rel.get("Id", ""), rel.get("Type", ""), target, external)
    return out


def is_text_part(member: str) -> bool:
    """Parts python-docx parses (XML); everything else is withheld (:func:`withhold_binaries`)."""
    return member.endswith((".xml", ".rels"))


#: parts the altChunk reader may read (``docx_altchunk``): under the same size checks as XML
ALT_CHUNK_SUFFIXES = (".htm", ".html", ".xhtml", ".txt", ".mht", ".mhtml", ".docx")


def check_zip_limits(path: Path, infos: list[zipfile.ZipInfo], limits: IngestLimits) -> None:
    """Refuse, from the zip directory alone, a package whose XML parts would inflate
    past ``max_unzipped_bytes`` in total or by more than ``max_compression_ratio``
    (altChunk text parts count as XML parts)."""
    parts = [i for i in infos if is_text_part(i.filename) or i.filename.lower().endswith(ALT_CHUNK_SUFFIXES)]
    total = sum(i.file_size for i in parts)
    if total > limits.max_unzipped_bytes:
        raise LoaderError(f"{path}: DOCX parts declare {total} bytes uncompressed, over "
                          f"ingest.limits.max_unzipped_bytes ({limits.max_unzipped_bytes})",
                          path=str(path), reason="max_unzipped_bytes")
    for info in parts:
        ratio = info.file_size / max(info.compress_size, 1)
        if info.file_size > RATIO_FLOOR_BYTES and ratio > limits.max_compression_ratio:
            raise LoaderError(
                f"{path}: DOCX part {info.filename} inflates {ratio:.0f}:1 ({info.file_size} bytes from "
                f"{info.compress_size}), over ingest.limits.max_compression_ratio "
                f"({limits.max_compression_ratio:g}); refused as a possible zip bomb",
                path=str(path), member=info.filename, reason="max_compression_ratio")


def not_a_zip_reason(path: Path) -> str:
    """Why a ``.docx``/``.doc`` that is not a zip cannot be read, from its first bytes."""
    try:
        with path.open("rb") as fh:
            head = fh.read(8 << 20)  # the OLE2 directory naming "EncryptedPackage" can sit anywhere
    except OSError:
        head = b""
    if head.startswith(OLE2_MAGIC):
        if _ENCRYPTED_PACKAGE in head:
            return "encrypted (password-protected) Word file; remove the password and save it again"
        return "unsupported: legacy Word 97-2003 .doc; save as .docx"
    return "corrupt DOCX: not a zip archive (truncated or not a Word file)"


def read_package(path: Path, limits: IngestLimits | None = None) -> DocxPackage:
    """Index the zip. Raises ``LoaderError`` for a file that is not a Word package or
    breaks ``limits``."""
    limits = limits or IngestLimits()
    try:
        zf = zipfile.ZipFile(path)
    except zipfile.BadZipFile as exc:
        raise LoaderError(f"{path}: {not_a_zip_reason(path)}", path=str(path)) from exc
    except OSError as exc:
        raise LoaderError(f"{path}: cannot read file: {exc.strerror}", path=str(path)) from exc
    with zf:
        infos = [info for info in zf.infolist() if not info.is_dir()]
        check_zip_limits(path, infos, limits)
        sizes = {info.filename: info.file_size for info in infos}
        budget = limits.max_unzipped_bytes
        rels = {_source_of(m): _relationships(zf, m, path, budget) for m in sizes if m.endswith(".rels")}
        main = next((r.target for r in rels.get("", {}).values() if r.reltype == RT_OFFICE_DOCUMENT),
                    "word/document.xml")
        if main not in sizes:
            raise LoaderError(f"{path}: corrupt DOCX: missing {main}", path=str(path))
        if "[Content_Types].xml" not in sizes:
            raise LoaderError(f"{path}: corrupt DOCX: missing [Content_Types].xml", path=str(path))
        types = _parse(zf, "[Content_Types].xml", path, budget)
    overrides = {e.get("PartName", ""): e.get("ContentType", "") for e in types.iter(f"{{{CT_NS}}}Override")}
    defaults = {e.get("Extension", "").lower(): e.get("ContentType", "") for e in types.iter(f"{{{CT_NS}}}Default")}
    package = DocxPackage(path, main, sizes, rels, overrides, defaults)
    main_type = package.content_type(main)
    if main_type != CT_DOCUMENT_MAIN and main_type not in CT_VARIANTS:
        raise LoaderError(f"{path}: not a Word document: its main part {main} is {main_type or 'untyped'!r} "
                          "(expected a WordprocessingML document, template or macro-enabled file)", path=str(path))
    return package


def withhold_binaries(package: DocxPackage) -> set[str]:
    """Members python-docx gets as empty bytes: everything but XML (images, embedded
    objects, fonts, macros). The loader reads images itself, one at a time and only within its
    limits, so python-docx never decompresses them and a damaged or oversized picture
    cannot stop the text from loading."""
    package.withheld = {m for m in package.sizes if not is_text_part(m)}
    return package.withheld


def python_docx_copy(package: DocxPackage, limits: IngestLimits | None = None) -> io.BytesIO:
    """The package for python-docx to open: XML parts read within ``limits``, withheld
    members emptied, relationships to missing members removed (python-docx refuses
    those) and a template/macro-enabled main part declared as a document. Stored
    uncompressed since it lives in memory anyway."""
    limits = limits or IngestLimits()
    budget = limits.max_unzipped_bytes
    out = io.BytesIO()
    path = package.path
    with zipfile.ZipFile(path) as src, zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as dst:
        for info in src.infolist():
            name = info.filename
            if info.is_dir():
                continue
            if name in package.withheld:
                dst.writestr(name, b"")
                continue
            try:
                data = read_member(src, name, budget)
            except MemberError as exc:
                raise LoaderError(f"{path}: corrupt DOCX: {exc}", path=str(path), member=name) from exc
            budget -= len(data)
            if name.endswith(".rels"):
                data = _without_missing_targets(data, name, package)
            elif name == "[Content_Types].xml":
                data = _as_document(data, package)
            dst.writestr(name, data)
    out.seek(0)
    return out


def _as_document(xml: bytes, package: DocxPackage) -> bytes:
    if package.content_type(package.main_part) not in CT_VARIANTS:
        return xml
    root = etree.fromstring(xml, _PARSER)
    part_name = "/" + package.main_part
    for element in root.iter(f"{{{CT_NS}}}Override"):
        if element.get("PartName") == part_name:
            root.remove(element)
    etree.SubElement(root, f"{{{CT_NS}}}Override", PartName=part_name, ContentType=CT_DOCUMENT_MAIN)
    return bytes(etree.tostring(root, xml_declaration=True, encoding="UTF-8", standalone=True))
def _without_missing_targets(xml: bytes, rels_member: str, package: DocxPackage) -> bytes:
    root = etree.fromstring(xml, _PARSER)
    rels = package.part_rels(_source_of(rels_member))
    for element in list(root):
        rel = rels.get(element.get("Id", ""))
        if rel is not None and not rel.external and rel.target not in package.sizes:
            root.remove(element)
    return bytes(etree.tostring(root, xml_declaration=True, encoding="UTF-8", standalone=True))

