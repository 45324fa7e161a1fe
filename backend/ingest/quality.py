"""Text-quality score of a loaded document: is this text, or mojibake?

A PDF whose font maps its glyphs through a custom encoding with no ``ToUnicode``
map extracts as garbage (pypdf writes unmapped glyphs by name, ``/g12/g7``, or as
control characters), and text decoded with the wrong charset reads ``FranÃ§ais``.
Neither raises anywhere, and the garbage would be chunked, embedded and cited.

The score is dictionary-free so it holds for any language and script: the share
of the document's non-space characters that sit in *plausible tokens*. A token
(a whitespace-separated run) is plausible when it holds no control, private-use,
unassigned or replacement character, no run of unmapped glyph names, no
mis-decoding pattern (ftfy's badness heuristic, which knows the UTF-8/Windows
code page mix-ups), and is at least half letters, marks or digits. Chinese or
Japanese lines with no spaces are single long tokens made of ideographs, so
they pass; prose in any script scores above 0.9, and the shipped corpora and
CISI above 0.92 (docs/INGESTION_AND_MANIFESTS.md has the figures). Letter soup
from a wrong but letter-to-letter mapping is not detected (that needs a
dictionary or language model).
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from ftfy.badness import BADNESS_RE

#: pypdf's fallback for a glyph with no Unicode mapping is its name: "/g12/g13", "/C0042", "/cid7"
_GLYPH_NAMES = re.compile(r"(?:/[A-Za-z_.]+\d+){2,}|(?:/(?:g|G|cid|CID|C|glyph|T3_)\d+)")
#: control (except tab/newline), private use, unassigned, surrogates, and U+FFFD
_BAD_CATEGORIES = frozenset({"Cc", "Co", "Cn", "Cs"})
#: tokens split at spaces and line breaks only: control characters that Python counts as
#: whitespace (\x1c-\x1f, \x0b, \x0c) stay inside tokens and are counted as bad
_TOKENS = re.compile(r"[^ \t\n\r\u00a0\u1680\u2000-\u200a\u202f\u205f\u3000]+")


@dataclass(frozen=True)
class TextQuality:
    """How much of a text reads as text (``score``) and why not (the shares)."""

    #: share of non-space characters in plausible tokens, 0..1 (1.0 for an empty text)
    score: float
    #: non-space characters measured
    chars: int
    #: shares of non-space characters: control/private-use/replacement, glyph names, mis-decoding
    bad_chars: float
    glyph_names: float
    mis_decoded: float

    def describe(self) -> str:
        reasons = [f"{share:.0%} {what}" for share, what in (
            (self.bad_chars, "control, private-use or replacement characters"),
            (self.glyph_names, "unmapped glyph names such as /g12"),
            (self.mis_decoded, "mis-decoded sequences such as 'Ã©'"),
        ) if share >= 0.005]
        return f"text quality {self.score:.2f}" + (f" ({', '.join(reasons)})" if reasons else "")


def _bad(ch: str) -> bool:
    return ch == "\ufffd" or (ch not in "\t\n" and unicodedata.category(ch) in _BAD_CATEGORIES)


def _lettered(ch: str) -> bool:
    return unicodedata.category(ch)[0] in "LMN"


def text_quality(text: str) -> TextQuality:
    """Score ``text`` (see the module docstring). Linear in the text's length: about
    1 s for the 5,000,000 characters of ``ingest.limits.max_chars``."""
    flagged = bytearray(len(text))  # 1 glyph name, 2 mis-decoded
    patterns = ((_GLYPH_NAMES, 1),) if text.isascii() else ((_GLYPH_NAMES, 1), (BADNESS_RE, 2))  # 1 s per 5M chars
    for pattern, mark in patterns:
        for match in pattern.finditer(text):
            flagged[match.start():match.end()] = bytes([mark]) * (match.end() - match.start())
    total = good = bad = glyph = mis = 0
    for match in _TOKENS.finditer(text):
        start, end = match.span()
        token = match.group()
        total += len(token)
        marks = flagged[start:end]
        glyph += marks.count(1)
        mis += marks.count(2)
        if token.isalnum() and not any(marks):  # the common case, without a per-character loop
            good += len(token)
            continue
        bad_here = sum(1 for ch in token if _bad(ch))
        bad += bad_here
        if bad_here or any(marks):
            continue
        if 2 * sum(1 for ch in token if _lettered(ch)) >= len(token):
            good += len(token)
    if total == 0:
        return TextQuality(1.0, 0, 0.0, 0.0, 0.0)
    return TextQuality(good / total, total, bad / total, glyph / total, mis / total)
