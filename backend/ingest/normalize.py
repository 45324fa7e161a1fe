"""Text normalisation applied to every loaded block before anything else sees it.

Invisible characters change a chunk's hash (and so its embedding-cache key)
without changing what a reader sees, and bidi controls can hide text from
reviewers ("trojan source"). They are removed, line endings become ``\\n`` and
the text is put in Unicode NFC so the same words always hash the same.
"""

from __future__ import annotations

import re
import unicodedata

from backend.ingest.documents import Block, LoadedDocument

#: zero-width space/joiners, word joiner, BOM / zero-width no-break space, soft hyphen,
#: Mongolian vowel separator, invisible math operators
INVISIBLE = "\u200b\u200c\u200d\u2060\ufeff\u00ad\u180e\u2061\u2062\u2063\u2064"
#: LRM, RLM, ALM, embeddings/overrides (LRE..RLO, PDF) and isolates (LRI..PDI)
BIDI_CONTROLS = "\u200e\u200f\u061c\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
_DROP = str.maketrans("", "", INVISIBLE + BIDI_CONTROLS)
_LINE_ENDINGS = re.compile(r"\r\n|\r|\u2028|\u2029|\u0085")
_TRAILING_SPACE = re.compile(r"[ \t]+\n")
_BLANK_RUNS = re.compile(r"\n{3,}")


def normalize_text(text: str) -> str:
    """Drop invisible and bidi characters, use ``\\n`` line endings, NFC, trim
    trailing spaces and collapse runs of blank lines to one."""
    text = _LINE_ENDINGS.sub("\n", text).translate(_DROP)
    text = unicodedata.normalize("NFC", text).replace("\u00a0", " ")
    text = _TRAILING_SPACE.sub("\n", text)
    return _BLANK_RUNS.sub("\n\n", text).strip()


def normalize_document(doc: LoadedDocument) -> LoadedDocument:
    """The same document with every text block normalised and empty text blocks
    dropped; image blocks are kept as they are (their position matters)."""
    blocks: list[Block] = []
    for block in doc.blocks:
        if block.kind != "text":
            blocks.append(block)
            continue
        text = normalize_text(block.text)
        if text:
            blocks.append(Block(kind="text", text=text, role=block.role, attrs=block.attrs))
    doc.blocks = blocks
    return doc
