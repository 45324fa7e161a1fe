"""Text shown to a person as a name: characters that make it read as another name (issue 49).

A file name with a right-to-left override (U+202E) shows ``invoice‮fdp.exe`` as
"invoiceexe.pdf"; a division slash (U+2215) or a fullwidth solidus (U+FF0F) looks like a path
separator that is not one; a zero-width space makes two names that look equal differ. Names
(an upload's file name, a knowledge base's title) are refused with such characters, and a name
echoed in a refusal shows each one as its code point. Pure.
"""

from __future__ import annotations

import re

#: bidirectional controls and invisible characters
_HIDDEN = "\u061c\u200b\u200c\u200d\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2060\u2066\u2067\u2068\u2069\ufeff"
#: characters that look like "/" or "\\"
_SEPARATORS = "\u2044\u2215\u2216\u29f5\u29f8\u29f9\ufe68\uff0f\uff3c"
_SPOOF = re.compile(f"[{_HIDDEN}{_SEPARATORS}]")


def spoofing_problem(text: str) -> str | None:
    """Why ``text`` would display as something it is not, or None."""
    found = _SPOOF.search(text)
    if found is None:
        return None
    char = found.group(0)
    kind = "a look-alike of a path separator" if char in _SEPARATORS else "a bidirectional control or invisible character"
    return f"has {kind} (U+{ord(char):04X}), which makes it display as another name"


def shown(text: str) -> str:
    """``text`` with each such character written as ``<U+XXXX>``, safe to echo back."""
    return _SPOOF.sub(lambda m: f"<U+{ord(m.group(0)):04X}>", text)
