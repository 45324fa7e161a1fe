"""What loaders produce and chunkers consume.

A loader turns a file into an ordered list of blocks in reading order. Text
blocks carry normalised text; image blocks mark where a figure stood (the DOCX
loader emits them when figure extraction is on) so the chunker can place
``[FIGURE:<id>]`` placeholders and build figure chunks.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal


@dataclass(frozen=True)
class Block:
    kind: Literal["text", "image"]
    text: str = ""
    #: "paragraph", "heading", "table", "header", "footer", "page"...
    role: str = "paragraph"
    #: image blocks: figure_id, image_ref, alt, title, caption, content_type...
    attrs: dict[str, Any] = field(default_factory=dict)


@dataclass
class LoadedDocument:
    """One source document. ``doc_id`` and ``metadata`` come from the manifest."""

    doc_id: str
    source: str
    blocks: list[Block]
    metadata: dict[str, Any] = field(default_factory=dict)
    #: hash of the source bytes plus everything that changes the chunks (profile, flags)
    doc_hash: str = ""
    #: diagnostics a loader wants in the run summary (e.g. DOCX image counts)
    diagnostics: dict[str, Any] = field(default_factory=dict)

    @property
    def text(self) -> str:
        return "\n\n".join(b.text for b in self.blocks if b.kind == "text" and b.text)
