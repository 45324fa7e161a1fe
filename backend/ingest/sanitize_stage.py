"""Which texts of a group the sanitize step sees, and the sanitized documents made from its answers.

Each document's text, its figures' captions/titles/alt/near text and its string manifest
metadata values (they land in every chunk row) go in one call for the whole group. What comes
back is put into copies: the loaded documents handed in are not edited.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Sequence

from backend.ingest.documents import Block, LoadedDocument
from backend.ingest.targets import Planned

_FIGURE_ATTRS = ("caption", "title", "alt", "near_text")


@dataclass(frozen=True)
class Loaded:
    """A document loaded and rendered, before it is sanitized and chunked (inside the prepare step)."""

    planned: Planned
    doc: LoadedDocument
    #: the text to chunk (``figures.render_text`` for DOCX)
    text: str


#: where a sanitized text goes back: the document's position, then None (its text), -1 (a
#: metadata key) or a block index (a figure attribute), and the key
Slot = tuple[int, "int | None", "str | None"]


def sanitize_inputs(items: Sequence[Loaded]) -> tuple[list[str], list[str], list[Slot]]:
    """The texts, their doc ids and their slots, in one order."""
    texts: list[str] = []
    doc_ids: list[str] = []
    slots: list[Slot] = []
    for n, item in enumerate(items):
        doc_id = item.planned.entry.doc_id
        texts.append(item.text)
        doc_ids.append(doc_id)
        slots.append((n, None, None))
        for i, block in enumerate(item.doc.blocks):
            for key in _FIGURE_ATTRS:
                if block.kind == "image" and block.attrs.get(key):
                    texts.append(str(block.attrs[key]))
                    doc_ids.append(doc_id)
                    slots.append((n, i, key))
        for key, value in item.doc.metadata.items():
            if isinstance(value, str) and value:
                texts.append(value)
                doc_ids.append(doc_id)
                slots.append((n, -1, key))
    return texts, doc_ids, slots


def apply_sanitized(items: Sequence[Loaded], slots: Sequence[Slot], clean_texts: Sequence[str]) -> list[Loaded]:
    """New documents with each sanitized text where it came from."""
    docs = [replace(item.doc, blocks=list(item.doc.blocks), metadata=dict(item.doc.metadata)) for item in items]
    texts = [item.text for item in items]
    for (n, index, attr), clean in zip(slots, clean_texts):
        if index is None:
            texts[n] = clean
        elif index == -1:
            assert attr is not None
            docs[n].metadata[attr] = clean
        else:
            assert attr is not None
            old = docs[n].blocks[index]
            docs[n].blocks[index] = Block(kind=old.kind, text=old.text, role=old.role,
                                          attrs={**old.attrs, attr: clean})
    return [Loaded(item.planned, doc, text) for item, doc, text in zip(items, docs, texts)]
