"""Which texts of a group the sanitize stage sees, and where its answers go back.

Each document's text, its figures' captions/titles/alt/near text and its string manifest
metadata values (they land in every chunk row) go in one call for the whole group.
"""

from __future__ import annotations

from typing import Sequence

from backend.ingest.documents import Block
from backend.ingest.targets import Pending

_FIGURE_ATTRS = ("caption", "title", "alt", "near_text")

#: where a sanitized text goes back: the document, then None (its text), -1 (a metadata key)
#: or a block index (a figure attribute), and the key
Slot = tuple[Pending, "int | None", "str | None"]


def sanitize_inputs(items: Sequence[Pending]) -> tuple[list[str], list[str], list[Slot]]:
    """The texts, their doc ids and their slots, in one order."""
    texts: list[str] = []
    doc_ids: list[str] = []
    slots: list[Slot] = []
    for item in items:
        texts.append(item.text)
        doc_ids.append(item.entry.doc_id)
        slots.append((item, None, None))
        for i, block in enumerate(item.doc.blocks if item.doc else []):
            for key in _FIGURE_ATTRS:
                if block.kind == "image" and block.attrs.get(key):
                    texts.append(str(block.attrs[key]))
                    doc_ids.append(item.entry.doc_id)
                    slots.append((item, i, key))
        for key, value in (item.doc.metadata.items() if item.doc else ()):
            if isinstance(value, str) and value:
                texts.append(value)
                doc_ids.append(item.entry.doc_id)
                slots.append((item, -1, key))
    return texts, doc_ids, slots


def apply_sanitized(slots: Sequence[Slot], clean_texts: Sequence[str]) -> None:
    """Put each sanitized text back where it came from."""
    for (item, index, attr), clean in zip(slots, clean_texts):
        if index is None:
            item.text = clean
        elif index == -1:
            assert item.doc is not None and attr is not None
            item.doc.metadata[attr] = clean
        else:
            assert item.doc is not None and attr is not None
            old = item.doc.blocks[index]
            item.doc.blocks[index] = Block(kind=old.kind, text=old.text, role=old.role,
                                           attrs={**old.attrs, attr: clean})
