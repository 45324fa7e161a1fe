"""Plain text (.txt) and Markdown (.md) loaders.

Markdown is rendered to plain text with markdown-it-py so markup characters
(``#``, ``**``, link targets) are neither embedded nor shown in citations;
headings, list items, table rows and code blocks become blocks of their own.
"""

from __future__ import annotations

import re
from pathlib import Path

from markdown_it import MarkdownIt
from markdown_it.token import Token

from backend.common.errors import LoaderError
from backend.ingest.documents import Block, LoadedDocument

_PARAGRAPHS = re.compile(r"\n[ \t]*\n")


def read_text(path: Path) -> str:
    """UTF-8 (with or without BOM); anything else is a per-file failure."""
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise LoaderError(f"{path}: unreadable: {exc.strerror}", path=str(path)) from exc
    if b"\x00" in raw[:4096]:
        raise LoaderError(f"{path}: binary content in a text file", path=str(path))
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise LoaderError(f"{path}: not UTF-8 text (byte {exc.start} is invalid)", path=str(path)) from exc


class TextLoader:
    """``.txt``: one block per paragraph (blank-line separated)."""

    suffixes = (".txt",)

    def load(self, path: Path, doc_id: str) -> LoadedDocument:
        text = read_text(path).replace("\r\n", "\n").replace("\r", "\n")
        blocks = [Block(kind="text", text=p.strip()) for p in _PARAGRAPHS.split(text) if p.strip()]
        return LoadedDocument(doc_id=doc_id, source=str(path), blocks=blocks)


def _inline_text(token: Token) -> str:
    parts: list[str] = []
    for child in token.children or []:
        if child.type in ("text", "code_inline", "html_inline"):
            parts.append(child.content)
        elif child.type in ("softbreak",):
            parts.append(" ")
        elif child.type == "hardbreak":
            parts.append("\n")
        elif child.type == "image":
            parts.append(child.content or str(child.attrs.get("alt", "")))
    return "".join(parts).strip()


def markdown_blocks(source: str) -> list[Block]:
    """Blocks in reading order: headings, paragraphs, list items, table rows
    (cells joined by `` | ``) and code blocks."""
    tokens = MarkdownIt("commonmark").enable("table").parse(source)
    blocks: list[Block] = []
    row: list[str] | None = None
    role = "paragraph"
    level = 0
    for token in tokens:
        if token.type == "heading_open":
            role, level = "heading", int(token.tag[1:])
        elif token.type == "tr_open":
            row = []
        elif token.type == "tr_close" and row is not None:
            blocks.append(Block(kind="text", text=" | ".join(row), role="table"))
            row = None
        elif token.type == "inline":
            text = _inline_text(token)
            if row is not None:
                row.append(text)
            elif text:
                blocks.append(Block(kind="text", text=text, role=role,
                                    attrs={"level": level} if role == "heading" else {}))
            role = "paragraph"
        elif token.type in ("fence", "code_block") and token.content.strip():
            blocks.append(Block(kind="text", text=token.content.rstrip(), role="code"))
    return blocks


class MarkdownLoader:
    """``.md`` / ``.markdown`` rendered to plain text."""

    suffixes = (".md", ".markdown")

    def load(self, path: Path, doc_id: str) -> LoadedDocument:
        return LoadedDocument(doc_id=doc_id, source=str(path), blocks=markdown_blocks(read_text(path)))
