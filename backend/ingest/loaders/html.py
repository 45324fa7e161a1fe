"""HTML loader (BeautifulSoup): visible text only, in reading order.

Scripts, styles, templates, navigation and other non-content elements are
removed before the text is taken, and so is text a browser does not show (the
``hidden`` attribute, ``aria-hidden="true"``, an inline ``display: none`` or
``visibility: hidden``): invisible text is how instructions no reader sees get
into an index; block elements become paragraph breaks so sentences are not
glued together, and table cells are joined by `` | ``. ``<h1>``..``<h6>`` become heading
blocks with their level, so chunks record their heading path.
"""

from __future__ import annotations

import re
from pathlib import Path

from bs4 import BeautifulSoup, Tag

from backend.common.errors import LoaderError
from backend.ingest.documents import Block, LoadedDocument

DROPPED_TAGS = ("script", "style", "nav", "noscript", "template", "iframe", "svg", "head")
_BLOCK_TAGS = ("p", "div", "section", "article", "main", "aside", "header", "footer", "h1", "h2", "h3", "h4",
               "h5", "h6", "li", "tr", "table", "ul", "ol", "pre", "blockquote", "dl", "dt", "dd", "figure",
               "figcaption", "form", "address", "title", "caption")
_HEADING_TAGS = ("h1", "h2", "h3", "h4", "h5", "h6")
_PARAGRAPHS = re.compile(r"\n\s*\n")
_SPACES = re.compile(r"[ \t\f\v]+")
_HIDDEN_STYLE = re.compile(r"(?:^|;)\s*(?:display\s*:\s*none|visibility\s*:\s*hidden)\b", re.IGNORECASE)


def is_hidden(tag: Tag) -> bool:
    """True for an element a browser does not render (judged from its own attributes)."""
    return (tag.has_attr("hidden") or str(tag.get("aria-hidden", "")).strip().lower() == "true"
            or bool(_HIDDEN_STYLE.search(str(tag.get("style", "")))))


def html_blocks(raw: bytes) -> list[Block]:
    soup = BeautifulSoup(raw, "html.parser")
    title = soup.title.get_text(" ", strip=True) if soup.title else ""
    for tag in soup.find_all(DROPPED_TAGS):
        tag.decompose()
    for tag in soup.find_all(is_hidden):
        if not tag.decomposed:
            tag.decompose()
    for tag in soup.find_all(["td", "th"]):
        tag.append(" | ")
    for tag in soup.find_all("br"):
        tag.replace_with("\n")
    for tag in soup.find_all(_BLOCK_TAGS):
        tag.insert_before("\n\n")
        tag.append("\n\n")
    headings = [(" ".join(h.get_text(" ").split()), int(h.name[1])) for h in soup.find_all(_HEADING_TAGS)]
    text = soup.get_text("")
    blocks = [Block(kind="text", text=title, role="heading")] if title else []
    for para in _PARAGRAPHS.split(text):
        lines = [_SPACES.sub(" ", line).strip().removesuffix("|").strip() for line in para.splitlines()]
        joined = "\n".join(line for line in lines if line)
        if not joined:
            continue
        flat = " ".join(joined.split())
        match = next((i for i, (h, _) in enumerate(headings) if h == flat), None)
        if match is not None:  # an <hN>: a heading block with its level (an <hN> never seen alone is passed)
            level = headings[match][1]
            del headings[:match + 1]
            blocks.append(Block(kind="text", text=joined, role="heading", attrs={"level": level}))
        else:
            blocks.append(Block(kind="text", text=joined))
    return blocks


class HtmlLoader:
    suffixes = (".html", ".htm")

    def load(self, path: Path, doc_id: str) -> LoadedDocument:
        try:
            raw = path.read_bytes()
        except OSError as exc:
            raise LoaderError(f"{path}: unreadable: {exc.strerror}", path=str(path)) from exc
        return LoadedDocument(doc_id=doc_id, source=str(path), blocks=html_blocks(raw))
