"""Recognizers the product adds to (or puts in place of) Presidio's predefined ones.

Each one closes a gap measured on the Faker set (``rag bench --section pii``):

- ``RegionPhoneRecognizer`` replaces Presidio's ``PhoneRecognizer``. Presidio runs
  ``phonenumbers.PhoneNumberMatcher`` once per region over the whole text (eight
  regions); national numbers of any other country are never found. Here one
  regex finds phone-like digit runs, and only those are parsed, per region, until
  one calls the number valid: many more regions for less time.
  Phone-shaped numbers it calls invalid (North American 3-3-4, ``+CC`` in groups)
  count too, with their extension.
- ``CardRecognizer`` replaces Presidio's credit-card pattern, which has no
  Mastercard 2-series, no 15-digit JCB (1800, 2131) and no 12-digit Maestro: the
  IIN ranges and lengths of eleven schemes, Luhn checked.
- ``TitledNameRecognizer``: names after a title (``Dr. J. Smith``, ``Ms Müller``)
  or a cue (``Dear``, ``Hi``, ``attn.``, ``Reporter:``), which the small spaCy model
  misses or labels ORG.
- ``OrganizationRecognizer``: company names ending in a legal form (``GmbH``,
  ``S.A.``, ``LLC``, ``PLC``, ``& Co.``, ``AB``...).
- ``StreetAddressRecognizer``: street lines in the formats of a dozen countries, PO
  boxes, military and city-state-ZIP lines, with the unit line above and the postcode,
  city and state after them, across up to three lines: one span per address.
- ``UsZipCodeRecognizer``, ``UsDriverLicenceRecognizer`` (replaces Presidio's, which
  only scores above 0.3 with a threshold near 0) and ``NrpRecognizer``: cue-driven.

All are plain regex + validation, run on the text Presidio already has (no NLP).

The address recognizers are in ``pii_address_recognizers``, the regex
base they all share in ``pii_recognizer_base``.
"""

from __future__ import annotations

import re
from typing import Iterable

from presidio_analyzer import EntityRecognizer

from backend.common.pii_recognizer_base import CAPITALISED_WORD, RegexRecognizer, UPPER
from backend.common.pii_address_recognizers import (StreetAddressRecognizer, UsDriverLicenceRecognizer,
                                                    UsZipCodeRecognizer)


#: regions tried for national-format phone numbers, in order (international numbers need none)
DEFAULT_PHONE_REGIONS = (
    "US", "GB", "DE", "FR", "ES", "IT", "NL", "BE", "CH", "AT", "IE", "PT", "PL", "SE", "DK", "NO", "FI",
    "IN", "AU", "NZ", "CA", "BR", "MX", "IL", "ZA", "SG", "JP",
)
#: Presidio matches context words as substrings of the nearby words ("reach" in "reached")
PHONE_CONTEXT = ["phone", "telephone", "tel", "cell", "mobile", "call", "fax", "reach", "contact", "whatsapp", "line",
                 "office", "direct", "landline", "ph"]


# --- phone numbers ---------------------------------------------------------------------
_PHONE_CANDIDATE = re.compile(r"(?<![\w+/.-])(?:\+|00)?\(?\d[\d \t\u00a0().\-/]{5,22}\d"
                               r"(?:(?=[ \t]?(?:x|ext\.?|extension)[ \t]?\d)|(?![\w-]|\.\d))", re.IGNORECASE)
#: cue words for a bare digit run; Presidio's context enhancer skips spaCy stop words ("call") and
#: matches inside words, so this recognizer reads the 32 characters before the number itself
_PHONE_CUE = re.compile(r"(?i:\b(?:phone|tel|telephone|call|called|calling|mobile|cell|fax|contact|reach|whatsapp|"
                        r"office|direct|landline|dial|ring|sms|text me)\b)")
_EXTENSION = re.compile(r"[ \t]?(?:x|ext\.?|extension)[ \t]?\d{1,6}\b", re.IGNORECASE)
#: phone-shaped numbers phonenumbers calls invalid (unassigned area codes, fiction ranges): a North
#: American 3-3-4 grouping or an international number in groups; kept at the national score
_PHONE_SHAPE = re.compile(r"(?:(?:\+|00)?1[-. ]?)?(?:\(\d{3}\)[-. ]?|\d{3}[-. ])\d{3}[-. ]\d{4}"
                          r"|(?:\+|00)[1-9]\d{0,2}[-. ]?(?:\(0\)[-. ]?)?\(?\d{1,5}\)?(?:[-. ]\d{2,5}){1,4}")
_DATE_LIKE = re.compile(r"^\d{1,4}([./-])\d{1,2}\1\d{1,4}$|^\d{4}\s*-\s*\d{4}$|^\d{1,3}(\.\d{1,3}){3}$")


class RegionPhoneRecognizer(RegexRecognizer):
    """Valid phone numbers (``phonenumbers.is_valid_number``) in international or any listed national format.

    Scores: 0.6 for an international number, 0.45 for a national one with separators,
    0.3 for a bare digit run; Presidio's context enhancer adds 0.35 when a context word
    (``phone``, ``call``, ``tel``...) is near.
    """

    ENTITY = "PHONE_NUMBER"

    def __init__(self, language: str = "en", regions: Iterable[str] = DEFAULT_PHONE_REGIONS) -> None:
        super().__init__(language, context=PHONE_CONTEXT)
        self.regions = tuple(regions)

    def find(self, text: str) -> Iterable[tuple[int, int, float]]:
        for m in _PHONE_CANDIDATE.finditer(text):
            found = self._valid(m.group(), m.start()) or self._shaped(m.group(), m.start())
            if found:
                start, end, score = found
                if score < 0.4 and _PHONE_CUE.search(text, max(0, start - 32), start):
                    score = 0.65
                ext = _EXTENSION.match(text, end)
                yield start, ext.end() if ext else end, score

    @staticmethod
    def _shaped(raw: str, start: int) -> tuple[int, int, float] | None:
        if re.fullmatch(r"[2-9]\d{9}", raw):  # a North American number written bare: a phone only with context
            return start, start + 10, 0.3
        m = _PHONE_SHAPE.match(raw)
        if not m or m.end() != len(raw.rstrip()) or not 10 <= sum(c.isdigit() for c in raw) <= 15:
            return None
        return start, start + m.end(), 0.45

    def _valid(self, candidate: str, start: int) -> tuple[int, int, float] | None:
        """The candidate, or it with trailing digit groups dropped ("call 0296 293547 12 times"), if valid."""
        while True:
            found = self._check(candidate, start)
            if found or not re.search(r"[ \t\u00a0]\d+$", candidate):
                return found
            candidate = re.sub(r"[ \t\u00a0]+\d+$", "", candidate)

    def _check(self, raw: str, start: int) -> tuple[int, int, float] | None:
        import phonenumbers

        raw = raw.rstrip(" -/(.")
        if raw.count("(") != raw.count(")"):
            if raw.startswith("(") and ")" not in raw:
                raw, start = raw[1:], start + 1
            elif raw.endswith(")"):
                raw = raw[:-1]
        digits = sum(c.isdigit() for c in raw)
        if digits < 7 or digits > 15 or _DATE_LIKE.match(raw.strip()):
            return None
        international = raw.startswith(("+", "00"))
        for region in (None,) if raw.startswith("+") else ("DE",) if raw.startswith("00") else self.regions:
            try:
                number = phonenumbers.parse(raw, region)
            except phonenumbers.NumberParseException:
                continue
            if phonenumbers.is_valid_number(number):
                # a bare digit run ("order 4829301845") is a valid number somewhere: a phone only with
                # context, unless it starts with a national trunk prefix 0 ("0296293547")
                bare = raw.isdigit() and not raw.startswith("0")
                return start, start + len(raw), 0.6 if international else 0.3 if bare else 0.45
        return None


# --- payment cards ---------------------------------------------------------------------
#: (IIN prefix pattern, allowed lengths) per scheme, from the schemes' published IIN ranges
_CARD_SCHEMES: tuple[tuple[str, range | tuple[int, ...]], ...] = (
    (r"4", (13, 16, 19)),  # Visa
    (r"5[1-5]|2(?:22[1-9]|2[3-9]\d|[3-6]\d\d|7[01]\d|720)", (16,)),  # Mastercard
    (r"3[47]", (15,)),  # American Express
    (r"6011|64[4-9]|65|622(?:12[6-9]|1[3-9]\d|[2-8]\d\d|9[01]\d|92[0-5])", range(16, 20)),  # Discover
    (r"35", range(16, 20)),  # JCB 3528-3589; all of 35xx, as Faker and Presidio do
    (r"1800|2131", (15,)),  # JCB, 15 digits
    (r"30[0-5]|36|38|39", range(14, 20)),  # Diners Club
    (r"50|5[6-9]|6\d", range(12, 20)),  # Maestro (and UnionPay 62, RuPay 60/65, Verve, Troy)
    (r"220[0-4]", range(16, 20)),  # Mir
    (r"8[12]|508|353|356", (16,)),  # RuPay
)
_CARD_PREFIX = [(re.compile(prefix), lengths) for prefix, lengths in _CARD_SCHEMES]
#: 12-19 digits, whole or in groups of 2-6 split by one space or dash ("4111 1111 1111 1111", "3782-822463-10005")
_CARD_CANDIDATE = re.compile(r"(?<![\w#/.,-])[1-8]\d{1,5}(?:([ -]?)\d{2,6}(?:\1\d{1,6}){0,4})(?![\w-]|[.,/]\d)")


def luhn_valid(digits: str) -> bool:
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = int(ch) * (2 if i % 2 else 1)
        total += d - 9 if d > 9 else d
    return total % 10 == 0


def card_scheme_matches(digits: str) -> bool:
    """True when ``digits`` has the length of a scheme whose IIN range it starts with."""
    return any(rx.match(digits) and len(digits) in lengths for rx, lengths in _CARD_PREFIX)


class CardRecognizer(RegexRecognizer):
    """Payment card numbers of every scheme (Visa to Mir, 12-19 digits), Luhn checked (1.0).

    Presidio's pattern has no Mastercard 2-series, no 15-digit JCB (1800, 2131) and
    no Maestro shorter than 13 digits; Faker's own card set produces all three.
    """

    ENTITY = "CREDIT_CARD"

    def find(self, text: str) -> Iterable[tuple[int, int, float]]:
        for m in _CARD_CANDIDATE.finditer(text):
            raw = m.group()
            while raw:  # "4111 1111 1111 1111 12 times": drop trailing groups until valid
                digits = re.sub(r"[ -]", "", raw)
                if 12 <= len(digits) <= 19 and card_scheme_matches(digits) and luhn_valid(digits):
                    yield m.start(), m.start() + len(raw), 1.0
                    break
                raw = re.sub(r"[ -]?\d+$", "", raw) if re.search(r"[ -]", raw) else ""


# --- names after titles and cues ---------------------------------------------------------
_TITLES = r"Mr|Mrs|Ms|Miss|Mx|Dr|Prof|Sir|Herr|Frau|Mme|Mlle|Sra|Srta|Dott|Dott\.ssa|Dhr|Mevr"
_INITIALS = rf"(?:[{UPPER}]\.\s?){{1,3}}"
_PARTICLE = r"(?:van der|van den|van de|van|von der|von|de la|de los|del|de|da|di|dos|du|le|la|al|bin|ten|ter|O')"
_NAME = (rf"(?:{_INITIALS}\s?)?{CAPITALISED_WORD}(?:\s+{_INITIALS})?(?:\s+(?:{_PARTICLE}\s+)?{CAPITALISED_WORD}){{0,2}}")
_TITLED = re.compile(rf"\b(?:{_TITLES})\.?\s+({_NAME})")
#: cue words after which a capitalised name follows (greetings, sign-offs, form labels)
_CUES = (r"(?:Dear|Hi|Hello|Hey|attn\.?|Attn\.?|Attention|Signed by|Assigned to|Approved by|Submitted by|"
         r"Reported by|Raised by|Prepared by|Reviewed by)[ \t]*:?"
         r"|(?:Reporter|Requester|Requestor|Approver|Assignee|Employee|Candidate|Applicant|Owner|Contact|Patient|"
         r"Name|Full name|From|To|Cc|Present|Author|Signed)[ \t]*:"
         r"|(?:Thanks|Cheers|Best|Regards|Sincerely|Kind regards|Best regards|Best wishes),[ \t]*\n")
_CUED = re.compile(rf"(?:^|(?<=[\s(]))(?:{_CUES})[ \t]*({_NAME})", re.MULTILINE)
#: capitalised words that follow cues but are not names
_NOT_NAMES = frozenset("""
The A An All Team Teams Sir Madam Customer Customers Support Service Desk HR IT Finance Legal Sales Marketing
Operations Security Payroll People Everyone There Colleagues Management Board Committee Department Group Manager
Managers Staff Admin Administrator Hiring Recruiting We Our Your You Please Thanks Regards Best Kind Monday Tuesday
Wednesday Thursday Friday Saturday Sunday January February March April May June July August September October
November December Subject Date Sent Re Fwd Attachment Attachments Note Notes Agenda Action Actions Next
""".split())


class TitledNameRecognizer(RegexRecognizer):
    """Names after a title (0.85) or after a greeting, sign-off or form label (0.6)."""

    ENTITY = "PERSON"

    def find(self, text: str) -> Iterable[tuple[int, int, float]]:
        for rx, score in ((_TITLED, 0.85), (_CUED, 0.6)):
            for m in rx.finditer(text):
                start, end = m.span(1)
                words = text[start:end].split()
                while words and words[-1].strip(".,") in _NOT_NAMES:
                    end = start + text[start:end].rfind(words.pop())
                    end = start + len(text[start:end].rstrip())
                if not words or words[0].strip(".,") in _NOT_NAMES:
                    continue
                yield start, end, score


# --- organisations ---------------------------------------------------------------------
_LEGAL = (r"GmbH(?: & Co\. KG)?|AG|KG|KGaA|GbR|GesbR|OHG|OG|UG|e\.V\.|SE|AB|ASA|A/S|ApS|Oy|Oyj|N\.V\.|NV|"
          r"B\.V\.|BV|Sp\.\s?j\.|Sp\.\s?k\.|S\.A\.R\.L\.|SPA|e Filhos|& Filhos|S\.A\.S\.|SAS|S\.A\.|SA|SARL|S\.à r\.l\.|S\.L\.|S\.L\.U\.|SL|S\.p\.A\.|SpA|S\.r\.l\.|Srl|S\.n\.c\.|"
          r"s\.r\.o\.|sp\. z o\.o\.|Sp\. z o\.o\.|S\.C\.|Lda\.?|Ltda\.?|PLC|plc|Ltd\.?|Limited|LLC|LLP|L\.P\.|LP|"
          r"Inc\.?|Corp\.?|Corporation|Co\.|Company|Group|Groep|Gruppe|Grupa|Holding|Holdings|Partners|"
          r"& (?:Co|Cie|Sons|Söhne|Partner|Partners)\.?|and Sons|e figli|e Figli|y asociados|et Fils|e hijos|"
          r"und Partner|Familia|Stiftung|Verwaltung|Bank|Bancorp|Insurance|Consulting|Technologies|Systems|"
          r"Solutions|Industries|Logistics|Foundation|University|Institute")
_ORG_NAME = rf"{CAPITALISED_WORD}(?:(?:\s+|-)(?:{CAPITALISED_WORD}|&|and|und|et|e|y|van|von|de|der))*?"
_ORG = re.compile(
    rf"\b((?:Familia|Grupa|Grupo|Gruppo|Groupe|PPUH|FPUH|PHU|FHU|P\.P\.U\.H\.)\s+{CAPITALISED_WORD}(?:[\s-]{CAPITALISED_WORD})*"
    rf"|{_ORG_NAME}(?:,\s+{CAPITALISED_WORD}\s+(?:and|&|und|et|e|y)\s+{CAPITALISED_WORD})?\s*,?\s+(?:{_LEGAL})"
    rf"|{CAPITALISED_WORD},\s+{CAPITALISED_WORD}\s+(?:and|&)\s+{CAPITALISED_WORD}(?=[\s.,;:)]|$))(?!\w)"
)


class OrganizationRecognizer(RegexRecognizer):
    """Company names with a legal form or corporate word, and ``Smith, Jones and Brown`` firm names (0.7)."""

    ENTITY = "ORGANIZATION"

    def find(self, text: str) -> Iterable[tuple[int, int, float]]:
        for m in _ORG.finditer(text):
            start, end = m.span(1)
            if text[start:end].split()[0] in _NOT_NAMES and len(text[start:end].split()) <= 2:
                continue
            yield start, end, 0.7


# --- nationality, religious or political group -------------------------------------------------
_FAITHS = (r"Christians?|Catholics?|Roman Catholics?|Protestants?|Evangelicals?|Anglicans?|Methodists?|Baptists?|"
           r"Lutherans?|Presbyterians?|Pentecostals?|Orthodox|Mormons?|Muslims?|Moslems?|Islamic|Sunnis?|Shias?|Shiites?|"
           r"Jews|Jewish|Hindus?|Buddhists?|Sikhs?|Jains?|Atheists?|Agnostics?|Taoists?|Shinto|Zoroastrians?|Bahá'í|"
           r"Baha'i|Rastafarians?|Quakers?|Amish|Jehovah's Witness(?:es)?")
_PARTIES = r"Republicans?|Democrats?|Tories|Tory|Labour|Social Democrats?|Liberal Democrats?|Socialists?|Communists?"
#: a capitalised group after a cue: "Nationality: Moroccan", "identifies as Kurdish", "a Nigerian national"
_NRP_GROUP = rf"({CAPITALISED_WORD}(?:[ \t]{CAPITALISED_WORD})?)"
_NRP_CUED = (
    re.compile(rf"(?i:\b(?:nationality|citizenship|ethnicity|ethnic origin|religion|faith|political affiliation))"
               rf"[ \t]*(?::|is|was|-)?[ \t]*{_NRP_GROUP}"),
    re.compile(rf"(?i:\b(?:self-)?identif(?:y|ies|ied) as)[ \t]+(?:an?[ \t]+)?{_NRP_GROUP}"),
    re.compile(rf"\ban?[ \t]+{_NRP_GROUP}[ \t]+(?:national|citizen|voter|immigrant|expat|community|member|"
               rf"origin|descent|background|heritage)\b"),
)
_NRP_WORDS = re.compile(rf"\b(?:{_FAITHS}|{_PARTIES})\b")


class NrpRecognizer(RegexRecognizer):
    """Religions and political parties by name (0.6), and any capitalised group after a cue such as
    ``Nationality:``, ``identifies as`` or ``a ... national`` (0.6): spaCy's NORP misses about one in eight."""

    ENTITY = "NRP"

    def find(self, text: str) -> Iterable[tuple[int, int, float]]:
        for m in _NRP_WORDS.finditer(text):
            yield m.start(), m.end(), 0.6
        for rx in _NRP_CUED:
            for m in rx.finditer(text):
                if m.group(1).split()[0] not in _NOT_NAMES:
                    yield m.start(1), m.end(1), 0.6


# --- dates with a month name ---------------------------------------------------------------
_MONTH = (r"(?:Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|June?|July?|Aug(?:ust)?|Sept?(?:ember)?|"
          r"Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?)\.?")
_DAY = r"(?:0?[1-9]|[12]\d|3[01])(?:st|nd|rd|th)?"
_WORD_DATE = re.compile(rf"\b(?:{_DAY}\s+(?:of\s+)?{_MONTH},?\s+(?:19|20)\d{{2}}|{_MONTH}\s+{_DAY},?\s+(?:19|20)\d{{2}})\b")


class MonthNameDateRecognizer(RegexRecognizer):
    """``12 March 1988``, ``11 Dec 2011``, ``March 28, 2026``: Presidio's DateRecognizer covers numeric dates only."""

    ENTITY = "DATE_TIME"

    def find(self, text: str) -> Iterable[tuple[int, int, float]]:
        return ((m.start(), m.end(), 0.6) for m in _WORD_DATE.finditer(text))


def product_recognizers(language: str, phone_regions: Iterable[str]) -> list[EntityRecognizer]:
    return [RegionPhoneRecognizer(language, phone_regions), CardRecognizer(language), TitledNameRecognizer(language),
            OrganizationRecognizer(language), StreetAddressRecognizer(language), MonthNameDateRecognizer(language),
            UsZipCodeRecognizer(language), UsDriverLicenceRecognizer(language), NrpRecognizer(language)]
