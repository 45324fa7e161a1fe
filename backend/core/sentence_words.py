"""Words of questions and sentences, for sentence-level evidence (pure).

Content words (stop words dropped, crudely stemmed: ``booking``/``booked`` -> ``book``), topic
words (without the frame words a question names its dimension with: "minimum", "length"), what a
question asks for (duration, list, number, date, name, location, option) and whether a sentence
carries that kind of answer. Used by ``core.services.evidence`` (the sentence scorer) and the
answerability judge.
"""

from __future__ import annotations

import re
from functools import lru_cache


WORD = re.compile(r"\w+")
_STOPWORDS = frozenset(
    "a an and are as at be been by can could do does did for from had has have how i if in into is it its may me "
    "might must my no not of on or our shall should so than that the their them then there these they this those "
    "to up was we were what when where which while who whom whose why will with would you your get gets got "
    "go goes going went gone come comes put puts "
    "allowed need needs much many long often far quickly large big happen happens after before between over "
    "until each every per used take taken mean means show shows contain contains apply applies held stay "
    "there any some also other rather during toward towards own about via within above below".split()
)
#: words that name the dimension a question asks about ("minimum length", "how far in advance"): the text
#: answers them with a value ("at least 14 characters"), so their absence says nothing about coverage
FRAME_WORDS = frozenset(
    "minimum maximum min max least most length longest shortest distance range share heavy duration amount "
    "size total advance".split()
)
_MONTHS = ("january february march april may june july august september october november december "
           "jan feb mar apr jun jul aug sep sept oct nov dec").split()
_DAYS = "monday tuesday wednesday thursday friday saturday sunday weekday weekdays weekend weekends".split()
_NUMBER_WORDS = ("one two three four five six seven eight nine ten eleven twelve fifteen twenty thirty forty fifty "
                 "hundred thousand once twice half quarter daily weekly monthly yearly annually first second third "
                 "fourth fifth immediately").split()
_ROLE_WORDS = ("manager team officer coordinator desk department head lead contact owner service board committee "
               "director engineer administrator commander hotline reception security helpdesk").split()
_PLACE_WORDS = "floor room office building street point desk entrance reception portal site garage".split()
_QUESTION_TYPES: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("duration", re.compile(r"\bhow (long|often|quickly|soon|fast|frequently)\b|\bhow much time\b|\bwithin how\b|"
                            r"\bhow far (in advance|ahead)\b")),
    ("list", re.compile(r"^(what|which) are the\b|^which \w+( \w+)? (does|do|did) .* (contain|include|have|list)\b|"
                        r"^what does .* (contain|include)\b")),
    ("number", re.compile(r"\bhow (many|much|far|large|big|high|old|heavy)\b|"
                          r"\bwhat (is|are) the (minimum|maximum|max|min|limit|number|amount|cost|price|percentage|"
                          r"rate|weight|size|length|value|distance|deadline|notice period|budget|allowance|per diem)\b|"
                          r"\bwhat (percentage|share|number|amount)\b|\bwithin how\b|\bhow much time\b")),
    ("date", re.compile(r"^(until |by |from |since )?when\b|\bwhat (date|time|day|month|year|hours?)\b|\bwhich "
                        r"(date|day|days|month|months|year|time|hours?)\b|\bwhen\b")),
    ("name", re.compile(r"\bwho(m|se)?\b|\bwhat is the (name|number|phone|e-?mail|address)\b")),
    ("location", re.compile(r"\bwhere\b")),
    ("option", re.compile(r"\bwhich\b|\bwhat (kind|type|types|sort|class|level|levels|tool|system|form)\b")),
)


#: irregular forms a suffix stemmer cannot join to their base
IRREGULAR = {"daily": "day", "fully": "full", "lost": "lose", "paid": "pay", "bought": "buy", "kept": "keep", "held": "hold", "given": "give",
              "sent": "send", "spent": "spend", "made": "make", "chosen": "choose", "written": "write", "won": "win",
              "left": "leave", "taught": "teach", "brought": "bring", "went": "go", "gone": "go", "met": "meet",
              "max": "maximum", "min": "minimum",
              # common irregular verbs and plurals a question and a policy may use in different forms
              "worn": "wear", "wore": "wear", "told": "tell", "said": "say", "knew": "know", "known": "know",
              "began": "begin", "begun": "begin", "broke": "break", "broken": "break", "chose": "choose",
              "wrote": "write", "spoke": "speak", "spoken": "speak", "forgot": "forget", "forgotten": "forget",
              "drove": "drive", "driven": "drive", "rode": "ride", "ridden": "ride", "eaten": "eat",
              "flew": "fly", "flown": "fly", "grew": "grow", "grown": "grow", "threw": "throw", "thrown": "throw",
              "drew": "draw", "drawn": "draw", "sold": "sell", "built": "build", "caught": "catch",
              "heard": "hear", "stood": "stand", "understood": "understand", "slept": "sleep", "sought": "seek",
              "thought": "think", "fought": "fight", "hidden": "hide", "froze": "freeze", "frozen": "freeze",
              "stole": "steal", "stolen": "steal", "shook": "shake", "shaken": "shake", "woke": "wake",
              "woken": "wake", "tore": "tear", "torn": "tear", "forgave": "forgive", "forgiven": "forgive",
              "sang": "sing", "sung": "sing", "drank": "drink", "drunk": "drink", "rang": "ring", "rung": "ring",
              "struck": "strike", "dealt": "deal", "bent": "bend", "swept": "sweep", "ran": "run",
              "children": "child", "women": "woman", "men": "man", "feet": "foot", "teeth": "tooth",
              # a table's column or a policy's noun that a question asks with its verb: "Weight" / "how much
              # does it weigh", "theft" / "is stolen"
              "weight": "weigh", "weights": "weigh", "theft": "steal", "thefts": "steal"}


def stem(word: str) -> str:
    """A crude, consistent stemmer: booking/booked/books -> book, badge/badges -> badg, lost -> los."""
    word = IRREGULAR.get(word, word)
    if len(word) <= 3 or word.isdigit():
        return word
    if word.endswith("ly") and len(word) > 5:  # yearly -> year, fully -> full, monthly -> month
        word = word[:-2]
    if word.endswith("ies") and len(word) > 4:
        word = word[:-3] + "y"
    elif word.endswith("ing") and len(word) > 5:
        word = word[:-3]
    elif word.endswith(("ed", "es")) and len(word) > 4:
        word = word[:-2]
    elif word.endswith("s") and not word.endswith("ss"):
        word = word[:-1]
    return word[:-1] if len(word) > 3 and word.endswith("e") else word


#: "May" the month (capitalised inside a sentence, or next to a day number), not the verb
_MAY_MONTH = re.compile(r"(?<=[\w,] )May\b|\bMay(?= \d)")


def content_words(text: str) -> list[str]:
    """Lower-cased, crudely stemmed words that carry meaning (stopwords dropped), in order."""
    return list(cached_content_words(text))


@lru_cache(maxsize=50_000)
def cached_content_words(text: str) -> tuple[str, ...]:
    """Cached: the same context sentences are scored for question after question."""
    text = _MAY_MONTH.sub("maymonth", text)
    words = (stem(w) for w in WORD.findall(text.lower()) if w not in _STOPWORDS and (len(w) > 1 or w.isdigit()))
    return tuple(dict.fromkeys(words))


_FRAME_STEMS = frozenset(stem(w) for w in FRAME_WORDS)


def topic_words(question: str) -> list[str]:
    """The question's content words without its frame words (see ``FRAME_WORDS``): what
    the context must mention for the question to be covered."""
    return [w for w in content_words(question) if w not in _FRAME_STEMS]


def question_type(question: str) -> str | None:
    """What the question asks for: duration, list, number, date, name, location, option (or None)."""
    q = " ".join(question.lower().split())
    for name, pattern in _QUESTION_TYPES:
        if pattern.search(q):
            return name
    return None


def _has_capitalised(words: list[str]) -> bool:
    return any(w[:1].isupper() for w in words[1:])


_DIGIT = re.compile(r"\d")
_NUMBER_SET, _DATE_SET = frozenset(_NUMBER_WORDS), frozenset(_MONTHS + _DAYS)
_ROLE_SET, _PLACE_SET = frozenset(_ROLE_WORDS), frozenset(_PLACE_WORDS)
#: a document or policy code ("SEC-310", "LEG-501", "ISO 27001"): digits that are no quantity
_CODE = re.compile(r"\b[A-Z][A-Za-z]*[- ]?\d+[A-Za-z0-9]*\b|\b[A-Z]+\d+\b")
_TIME_UNIT = r"(seconds?|minutes?|hours?|(working |calendar |business )?days?|weeks?|months?|years?|h|min)"
_DURATION = re.compile(r"\b(\d+([.,]\d+)?|" + "|".join(_NUMBER_WORDS[:16]) + r"|a|an)[\s-]+" + _TIME_UNIT + r"\b|"
                       r"\b(daily|weekly|monthly|yearly|annually|immediately|once|twice|every|at once|same day)\b|"
                       r"\b\d{1,2}[:.]\d{2}\b")
#: an enumeration in one sentence: "the kit: a power supply, two SFP+ modules and a console cable"
_ENUMERATION = re.compile(r":\s*[^,;]+([,;][^,;]+){2,}")


def carries_answer_type(sentence: str, qtype: str | None, kind: str = "para") -> bool:
    """Whether the sentence carries what a question of type ``qtype`` asks for. A
    document's fact line (kind ``meta``) never does: its dates and codes answer no
    question about the content."""
    if qtype is None or kind == "meta":
        return False
    low = sentence.lower()
    words = WORD.findall(sentence)
    lows = set(WORD.findall(low))
    has_digit = bool(_DIGIT.search(sentence))
    if qtype == "duration":
        return bool(_DURATION.search(_CODE.sub(" ", sentence).lower()))
    if qtype == "list":
        return kind in ("row", "item") or bool(_ENUMERATION.search(sentence))
    if qtype == "number":
        return bool(_DIGIT.search(_CODE.sub(" ", sentence))) or bool(lows & _NUMBER_SET)
    if qtype == "date":
        return bool(lows & _DATE_SET) or bool(re.search(r"\b\d{1,2}[:.]\d{2}\b|\b(19|20)\d{2}\b", low)) \
            or bool(re.search(r"\b\d+\s*(working\s+)?(days?|weeks?|months?|years?|hours?)\b", low))
    if qtype == "name":
        return _has_capitalised(words) or bool(lows & _ROLE_SET) or has_digit or "@" in sentence
    if qtype == "location":
        return _has_capitalised(words) or bool(lows & _PLACE_SET)
    return _has_capitalised(words) or has_digit  # option
