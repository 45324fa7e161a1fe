"""How a question word may be written when the knowledge base still uses it: a contraction,
a typo, an inflection. The answerability model's ``unknown_words`` (a word the knowledge base
never uses vetoes quoting) asks these before it counts a word as unknown, so that "don't",
"teh", "reqeusts" or "worn" for "wear" do not turn an answerable question into a fallback.
Pure functions over words; no store access."""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache

from backend.core.sentence_words import IRREGULAR as _IRREGULAR

#: "don't", "i'm", "they're", "we've", "you'll", "he'd"; with "'s" only after a pronoun or question
#: word ("what's", "it's"): "google's" is a possessive, and Google a topic
_APOSTROPHE_FORM = re.compile(r"^(?:\w+n['’]t|\w+['’](?:m|re|ve|ll|d)"
                              r"|(?:what|that|it|there|here|who|where|how|when|he|she|let)['’]s)$")
#: the same typed without the apostrophe: "dont", "isnt", "im", "whats"
_BARE_CONTRACTIONS = frozenset(
    "dont doesnt didnt isnt arent wasnt werent cant couldnt wouldnt shouldnt wont hasnt havent hadnt mustnt "
    "neednt aint im ive youre theyre whats thats wheres whos hows theres heres lets".split())
#: words with no topic of their own: a question using one the knowledge base never does asks
#: nothing beyond it ("what about everyone else")
FUNCTION_WORDS = frozenset(
    "what which who whom whose when where why how the and with about from that this there their they you your "
    "everyone everybody anyone anybody someone somebody anything something everything nothing else".split())
#: the function words a typo most often hits ("teh", "wat", "wehn"); see :func:`function_word_typo`
_TYPO_TARGETS = frozenset(
    "what which who whom whose when where why how the and with about from that this there their they you your "
    "everyone anyone someone".split())
_KEYBOARD = ("qwertyuiop", "asdfghjkl", "zxcvbnm")
_KEY_AT = {ch: (row, col) for row, keys in enumerate(_KEYBOARD) for col, ch in enumerate(keys)}
#: a typed word this long or longer may be a typo of a word of the passages; shorter ones
#: ("boat" for "boot") are too often another real word
MIN_TYPO_LENGTH = 5


def is_contraction(token: str) -> bool:
    """"don't", "isnt", "what's": a verb or pronoun glued to "not"/"is"/"am", never a topic."""
    token = token.lower()
    return bool(_APOSTROPHE_FORM.match(token)) or token in _BARE_CONTRACTIONS


def _neighbours(a: str, b: str) -> bool:
    """Adjacent keys on a QWERTY keyboard (a slip of the finger, not another word)."""
    pa, pb = _KEY_AT.get(a), _KEY_AT.get(b)
    if pa is None or pb is None:
        return False
    return abs(pa[0] - pb[0]) <= 1 and abs(pa[1] - pb[1]) <= 1 and pa != pb


def typo_of(typed: str, word: str, *, insertions: bool = True) -> bool:
    """Whether ``typed`` is ``word`` with one slip: two neighbouring letters swapped, a letter
    left out, one added (``insertions``) or one replaced by a key next to it. The first letter
    must match: typos rarely hit it, and real words differing there are common ("boat", "coat")."""
    if typed == word or not typed or not word or typed[0] != word[0]:
        return False
    lt, lw = len(typed), len(word)
    if lt == lw:
        diff = [i for i in range(lt) if typed[i] != word[i]]
        if len(diff) == 1:
            return _neighbours(typed[diff[0]], word[diff[0]])
        return (len(diff) == 2 and diff[1] == diff[0] + 1
                and typed[diff[0]] == word[diff[1]] and typed[diff[1]] == word[diff[0]])
    if lt == lw - 1:  # a letter left out
        return any(word[:i] + word[i + 1:] == typed for i in range(1, lw))
    if lt == lw + 1 and insertions:  # a letter added
        return any(typed[:i] + typed[i + 1:] == word for i in range(1, lt))
    return False


def function_word_typo(token: str) -> bool:
    """"teh", "wat", "wehn": a slip on a function word (no added letter: "witch" is not "with")."""
    return len(token) >= 3 and any(typo_of(token, w, insertions=False) for w in _TYPO_TARGETS)


def typo_in(token: str, vocabulary: Iterable[str]) -> bool:
    """Whether ``token`` (at least :data:`MIN_TYPO_LENGTH` letters) is one slip away from a word
    of ``vocabulary`` ("reqeusts" in passages saying "requests")."""
    if len(token) < MIN_TYPO_LENGTH:
        return False
    return any(abs(len(w) - len(token)) <= 1 and typo_of(token, w) for w in vocabulary)


#: base -> its irregular forms ("wear" -> "worn", "wore"), the inverse of ``sentence_words.IRREGULAR``
_FORMS_OF: dict[str, tuple[str, ...]] = {}
for _form, _base in _IRREGULAR.items():
    _FORMS_OF[_base] = (*_FORMS_OF.get(_base, ()), _form)


def _bases(word: str) -> set[str]:
    """What ``word`` may inflect: itself, its irregular base, and its regular suffixes removed."""
    out = {word, _IRREGULAR.get(word, word)}
    if word.endswith("ies") and len(word) > 4:
        out.add(word[:-3] + "y")
    elif word.endswith("ied") and len(word) > 4:
        out.add(word[:-3] + "y")
    elif word.endswith("ing") and len(word) > 5:
        out |= {word[:-3], word[:-3] + "e"}
        if word[-4] == word[-5]:  # stopping -> stop
            out.add(word[:-4])
    elif word.endswith("ed") and len(word) > 4:
        out |= {word[:-2], word[:-1]}
        if word[-3] == word[-4]:
            out.add(word[:-3])
    elif word.endswith("es") and len(word) > 4:
        out.add(word[:-1])
        if word[:-2].endswith(("s", "x", "z", "ch", "sh")):
            out.add(word[:-2])
    elif word.endswith("s") and not word.endswith("ss") and len(word) > 3:
        out.add(word[:-1])
    return out


@lru_cache(maxsize=5_000)
def inflections(word: str) -> tuple[str, ...]:
    """``word`` and the forms a text may use for it, to ask a full-text index about in one
    query: its base, the base's regular inflections and its irregular ones ("wear" -> "worn",
    "wore", "wears", "wearing"). A store whose index stems (SQLite FTS5 porter) needs only the
    irregular ones; one matching whole tokens (Oracle Text ``{word}``) needs them all."""
    word = word.lower()
    bases = _bases(word)
    if len(bases) > 1:
        bases.discard(word)  # "changes": inflect "change", not "changes"
    out = [word]
    for base in sorted(bases):
        out += [base, *_FORMS_OF.get(base, ())]
        if base.endswith("e"):
            out += [base + "s", base + "d", base[:-1] + "ing"]
        elif base.endswith("y"):
            out += [base + "s", base[:-1] + "ies", base[:-1] + "ied", base + "ing"]
        else:
            out += [base + ("es" if base.endswith(("s", "x", "z", "ch", "sh")) else "s"), base + "ed", base + "ing"]
    return tuple(dict.fromkeys(f for f in out if len(f) > 1))
