"""The terms of a question and of a sentence that the answerability features compare (pure).

Content words with accents folded, the question's entities and names, and the compound, coded,
numbered and counted terms, opposites and attribute values of a text; ``conflicts`` says whether
a sentence names a sibling of a question's term but not the term ("full-time" for a part-time
question, "Tier 1" for Tier 4). The answerability model (``answerability.py``) and the sentence
scorer (``evidence.py``) both read them, so they live below both.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache
from typing import Mapping

from backend.core.sentence_words import content_words
from backend.core.word_forms import FUNCTION_WORDS

_QUESTION_WORDS = frozenset("what which who whom whose when where why how is are was were do does did can could "
                            "will would should shall may might must has have had in on at for of the a an".split())
NUMBER_WORDS = {"two": "2", "three": "3", "four": "4", "five": "5", "six": "6", "seven": "7", "eight": "8",
                 "nine": "9", "ten": "10", "eleven": "11", "twelve": "12", "twenty": "20", "thirty": "30",
                 "forty": "40", "fifty": "50", "hundred": "100"}
TOKEN = re.compile(r"[\w'’-]+")
_DIGITS = re.compile(r"^\d+(?:[.,]\d+)?$")


def fold_accents(text: str) -> str:
    """"Beyoncé" and "Beyonce" are one name to a question typed without accents."""
    return "".join(c for c in unicodedata.normalize("NFKD", text) if not unicodedata.combining(c))


@lru_cache(maxsize=20_000)
def folded_words(text: str) -> frozenset[str]:
    return frozenset(content_words(fold_accents(text)))


@lru_cache(maxsize=20_000)
def plain_tokens(text: str) -> frozenset[str]:
    """Lower-cased tokens with number words written as digits ("three" -> "3")."""
    out = set()
    for tok in TOKEN.findall(fold_accents(text).lower()):
        tok = tok.strip("'’-")
        out.add(NUMBER_WORDS.get(tok, tok))
        out.update(p for p in tok.split("-") if p)
    return frozenset(out)


def question_entities(question: str) -> tuple[str, ...]:
    """The names and numbers a question is about: capitalised words past the first (not
    question words), digits and number words from two up, lower-cased, accents folded."""
    tokens = TOKEN.findall(fold_accents(question))
    out: list[str] = []
    for i, tok in enumerate(tokens):
        tok = tok.strip("'’-")
        low = tok.lower()
        if not tok or low in _QUESTION_WORDS:
            continue
        if _DIGITS.match(tok) or low in NUMBER_WORDS:
            out.append(NUMBER_WORDS.get(low, low))
        elif i > 0 and tok[0].isupper() and len(tok) > 1:
            name = low.split("'")[0].split("’")[0]
            if name != "i":  # "I'm", "I'd", "I've" are the asker, not a name
                out.append(name)
    return tuple(dict.fromkeys(out))


_NAME = re.compile(r"\b[A-Z][\w'’-]*(?:\s+(?:of|the|de|von|van|and|&)?\s*[A-Z][\w'’-]*)+")


def question_names(question: str) -> tuple[str, ...]:
    """Multi-word names of the question ("Legend of Zelda", "Ernst Stavro Blofeld"), lower-cased:
    a look-alike question often keeps each word of a name but not the name ("Ocarina Princess")."""
    folded = fold_accents(question)
    names = []
    for m in _NAME.finditer(folded):
        words = m.group().split()
        while words and words[0].lower() in _QUESTION_WORDS:
            words = words[1:]
        if len(words) >= 2:
            names.append(" ".join(words).lower())
    return tuple(dict.fromkeys(names))


_COMPOUND = re.compile(r"\b[\w]+(?:-[\w]+)+\b|\b[A-Za-z]+\d+[A-Za-z\d]*\b")
_TOKEN_OR_NUMBER = re.compile(r"\w+(?:[.,:]\d+)*")
#: words a number follows or precedes without naming what is numbered or counted ("after 5", "get 20")
_LINK_WORDS = FUNCTION_WORDS | _QUESTION_WORDS | frozenset(
    "after than within every over under before until at by get gets got in of for to or per each least about from "
    "and the with up last first next only more less most all some any receive receives have has than since "
    "between around nearly almost approximately".split())
_COUNTED = re.compile(r"^(\d+) ([a-z]+)$")
_NUMBERED_TERM = re.compile(r"^([a-z]+) (\d+)$")


def _numbered(text: str) -> set[str]:
    """"tier 4", "3 particle": numbered things (a word, then its number: "Tier 4", "floor 3 of") and
    counted ones (a number, then what it counts: "three particles", "20 days"), number words as
    digits, the counted noun without its plural "s"; a number after or before a link word ("after 5",
    "in 2026") or inside a figure ("4.5") is neither."""
    tokens = list(_TOKEN_OR_NUMBER.finditer(text))
    out = set()
    for i, m in enumerate(tokens):
        low = m.group().lower()
        number = low if low.isdigit() else NUMBER_WORDS.get(low)
        if number is None:
            continue
        prev = tokens[i - 1] if i > 0 and not text[tokens[i - 1].end():m.start()].strip() else None
        nxt = tokens[i + 1] if i + 1 < len(tokens) and not text[m.end():tokens[i + 1].start()].strip() else None
        head = prev.group() if prev is not None and prev.group().isalpha() and len(prev.group()) >= 3 \
            and prev.group().lower() not in _LINK_WORDS else None
        noun = nxt.group().lower() if nxt is not None and nxt.group().isalpha() and len(nxt.group()) >= 3 \
            and nxt.group().lower() not in _LINK_WORDS else None
        if head is not None and low.isdigit() and (noun is None or head[0].isupper()):
            out.add(f"{head.lower()} {number}")
        elif noun is not None:
            out.add(f"{number} {noun[:-1] if noun.endswith('s') and not noun.endswith('ss') else noun}")
    return out


def _sibling_key(term: str) -> tuple[str, str] | None:
    """What a compound term shares with its siblings: "part-time" and "full-time" share the
    head "time"; "C200" and "C800" (or "NWA-C200" and "C800") share the letters "c";
    "tier 4" and "tier 1" the word, "3 particle" and "2 particle" the thing counted."""
    low = term.lower()
    if low.startswith("~"):  # an opposite: "~3:a" and "~3:b" are the two sides of pair 3
        return ("opposite", low.split(":")[0])
    if low.startswith("="):  # a value: "=colour:amber" and "=colour:red"
        return ("value", low.split(":")[0])
    if m := _NUMBERED_TERM.match(low):
        return ("numbered", m.group(1))
    if m := _COUNTED.match(low):
        return ("counted", m.group(2))
    if re.search(r"\d", low):  # "NWA-C200" is a C200: its siblings are the other C-numbers, prefixed or not
        letters = re.sub(r"\d+.*$", "", low.split("-")[-1])
        return ("code", letters) if letters else None
    if "-" in low:
        return ("head", low.rsplit("-", 1)[1])
    return None


#: opposites: a question asking for one side is not answered by a sentence naming only the other
_OPPOSITES: tuple[tuple[frozenset[str], frozenset[str]], ...] = tuple(
    (frozenset(a.split("/")), frozenset(b.split("/"))) for a, b in (
        ("first", "last"), ("earliest", "latest"), ("largest/biggest", "smallest"), ("highest", "lowest"),
        ("maximum/max", "minimum/min"), ("longest", "shortest"), ("oldest", "youngest/newest"), ("best", "worst"),
        ("increase/increased/increases/increasing", "decrease/decreased/decreases/decreasing"),
        ("north/northern", "south/southern"), ("east/eastern", "west/western"), ("won/win/wins", "lost/lose/loses"),
        ("positive", "negative"), ("larger/bigger", "smaller"), ("higher", "lower"), ("older", "younger"),
        ("longer", "shorter"), ("major", "minor"), ("import/imports/imported", "export/exports/exported"),
        ("most", "least"), ("internal", "external"), ("upper", "lower"), ("inner", "outer")))
#: values of one attribute, each excluding the others: a question about the blinking amber LED is not
#: answered by the row for the steady amber or the blinking red one (synonyms share the value's name)
_VALUES: Mapping[str, Mapping[str, str]] = {
    "colour": {w: w for w in "red amber orange yellow green blue purple violet white black grey pink brown".split()}
    | {"gray": "grey"},
    "signal": {"blinking": "blinking", "flashing": "blinking", "blinks": "blinking", "flashes": "blinking",
               "steady": "steady"},
}
_AT_LEAST = re.compile(r"\bat\s+(?:least|most)\b|\bmost\s+of\b", re.IGNORECASE)


def _bare_words(text: str) -> set[str]:
    return {t.strip("'’-") for t in TOKEN.findall(text.lower())}


def _opposites(text: str) -> set[str]:
    """``~i:a`` / ``~i:b``: the side of each pair of :data:`_OPPOSITES` the text names ("at least" and
    "at most" are amounts, not sides)."""
    words = _bare_words(_AT_LEAST.sub(" ", text))
    out = set()
    for i, (a, b) in enumerate(_OPPOSITES):
        if words & a:
            out.add(f"~{i}:a")
        if words & b:
            out.add(f"~{i}:b")
    return out


def attribute_values(text: str) -> set[str]:
    """``=attribute:value`` for each value of :data:`_VALUES` the text names ("=colour:amber")."""
    words = _bare_words(text)
    return {f"={attribute}:{values[w]}" for attribute, values in _VALUES.items() for w in words & values.keys()}


@lru_cache(maxsize=20_000)
def compounds(text: str) -> frozenset[str]:
    folded = fold_accents(text)
    return frozenset({m.group().lower() for m in _COMPOUND.finditer(folded)} | _numbered(folded) | _opposites(folded)
                     | attribute_values(folded))


def compound_terms(text: str) -> frozenset[str]:
    """The compound, coded, numbered and counted terms of ``text`` that :func:`conflicts` compares."""
    return compounds(text)


def conflicts(question_terms: frozenset[str], sentence: str) -> bool:
    """Whether the sentence names a sibling of a compound term of the question but not the
    term itself: "full-time employee" for a part-time question, "the NWA-C200" for the C800,
    "Tier 1" for Tier 4, "two particles" for three."""
    if not question_terms:
        return False
    found = compounds(sentence)
    for term in question_terms:
        key = _sibling_key(term)
        if key is None or term in found or any(f.endswith("-" + term) for f in found):  # "NWA-C400" is the C400
            continue
        if any(other != term and _sibling_key(other) == key for other in found):
            return True
    return False
