"""The DOCX zip package as data: members, content types and relationships.

python-docx reads every part into memory when it opens a file and refuses a
package whose relationship points at a missing member. Reading the zip
ourselves first lets the loader (a) turn corrupt files into a ``LoaderError``
that names the reason, (b) check image sizes from the zip directory *before*
anything is decompressed (zip-bomb guard), and (c) hand python-docx an in-memory
copy without the binary parts and without relationships to missing members, so a
missing, huge or damaged picture never costs the document's text.
"""

from __future__ import annotations

import io
import posixpath
import zipfile
import zlib
from dataclasses import dataclass, field
from pathlib import Path

from lxml import etree

from backend.common.errors import LoaderError

PKG_RELS_NS = "http://schemas.openxmlformats.org/package/2006/relationships"
CT_NS = "http://schemas.openxmlformats.org/package/2006/content-types"
RT_IMAGE = "http://schemas.openxmlformats.org/officeDocument/2006/relationships/image"
RT_OFFICE_DOCUMENT = "http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument"
_PARSER = etree.XMLParser(resolve_entities=False, no_network=True, huge_tree=False)


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


def _parse(zf: zipfile.ZipFile, member: str, path: Path) -> etree._Element:
    try:
        return etree.fromstring(zf.read(member), _PARSER)
    except etree.XMLSyntaxError as exc:
        raise LoaderError(f"{path}: corrupt DOCX: {member} is not well-formed XML ({exc.msg})",
                          path=str(path), member=member) from exc
    except (zipfile.BadZipFile, zlib.error, EOFError, NotImplementedError) as exc:
        raise LoaderError(f"{path}: corrupt DOCX: {member} cannot be read ({exc})", path=str(path),
                          member=member) from exc


def _relationships(zf: zipfile.ZipFile, rels_member: str, path: Path) -> dict[str, Relationship]:
    source_dir = posixpath.dirname(_source_of(rels_member))
    out: dict[str, Relationship] = {}
    for rel in _parse(zf, rels_member, path).iter(f"{{{PKG_RELS_NS}}}Relationship"):
        target = rel.get("Target", "")
        external = rel.get("TargetMode") == "External"
        if not external:
            joined = target.lstrip("/") if target.startswith("/") else posixpath.join(source_dir, target)
            target = posixpath.normpath(joined)
        out[rel.get("Id", "")] = Relationship(rel.get("Id", ""), rel.get("Type", ""), target, external)
    return out


def read_package(path: Path) -> DocxPackage:
    """Index the zip. Raises ``LoaderError`` for a file that is not a DOCX package."""
    try:
        zf = zipfile.ZipFile(path)
    except zipfile.BadZipFile as exc:
        raise LoaderError(f"{path}: corrupt DOCX: not a zip archive (encrypted, truncated or not a .docx)",
                          path=str(path)) from exc
    except OSError as exc:
        raise LoaderError(f"{path}: cannot read file: {exc.strerror}", path=str(path)) from exc
    with zf:
        sizes = {info.filename: info.file_size for info in zf.infolist() if not info.is_dir()}
        rels = {_source_of(m): _relationships(zf, m, path) for m in sizes if m.endswith(".rels")}
        main = next((r.target for r in rels.get("", {}).values() if r.reltype == RT_OFFICE_DOCUMENT),
                    "word/document.xml")
        if main not in sizes:
            raise LoaderError(f"{path}: corrupt DOCX: missing {main}", path=str(path))
        if "[Content_Types].xml" not in sizes:
            raise LoaderError(f"{path}: corrupt DOCX: missing [Content_Types].xml", path=str(path))
        types = _parse(zf, "[Content_Types].xml", path)
    overrides = {e.get("PartName", ""): e.get("ContentType", "") for e in types.iter(f"{{{CT_NS}}}Override")}
    defaults = {e.get("Extension", "").lower(): e.get("ContentType", "") for e in types.iter(f"{{{CT_NS}}}Default")}
    return DocxPackage(path, main, sizes, rels, overrides, defaults)


def withhold_binaries(package: DocxPackage) -> set[str]:
    """Members python-docx gets as empty bytes: everything but XML (images, embedded
    objects, fonts). The loader reads images itself, one at a time and only within its
    limits, so python-docx never decompresses them and a damaged or oversized picture
    cannot stop the text from loading."""
    package.withheld = {m for m in package.sizes if not m.endswith((".xml", ".rels"))}
    return package.withheld


def needs_repair(package: DocxPackage) -> bool:
    """True when python-docx must open :func:`repaired_copy` instead of the file."""
    missing = any(not r.external and r.target not in package.sizes
                  for rels in package.rels.values() for r in rels.values())
    return bool(package.withheld) or missing


def repaired_copy(package: DocxPackage) -> io.BytesIO:
    """The package with withheld members emptied and relationships to missing members
    removed (python-docx refuses those), for python-docx to open. Only text is read
    from this copy; it is stored uncompressed since it lives in memory anyway."""
    out = io.BytesIO()
    with zipfile.ZipFile(package.path) as src, zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as dst:
        for info in src.infolist():
            name = info.filename
            if name in package.withheld:
                dst.writestr(name, b"")
            elif name.endswith(".rels"):
                dst.writestr(name, _without_missing_targets(src.read(name), name, package))
            else:
                dst.writestr(name, src.read(name))
    out.seek(0)
    return out


def _without_missing_targets(xml: bytes, rels_member: str, package: DocxPackage) -> bytes:
    root = etree.fromstring(xml, _PARSER)
    rels = package.part_rels(_source_of(rels_member))
    for element in list(root):
        rel = rels.get(element.get("Id", ""))
        if rel is not None and not rel.external and rel.target not in package.sizes:
            root.remove(element)
    return bytes(etree.tostring(root, xml_declaration=True, encoding="UTF-8", standalone=True))

