"""Recognizers the product adds to (or puts in place of) Presidio's predefined ones.

Each one closes a gap measured on the Faker set (``rag bench --section pii``):

- ``RegionPhoneRecognizer`` replaces Presidio's ``PhoneRecognizer``. Presidio runs
  ``phonenumbers.PhoneNumberMatcher`` once per region over the whole text (eight
  regions); national numbers of any other country are never found. Here one
  regex finds phone-like digit runs, and only those are parsed, per region, until
  one calls the number valid: many more regions for less time.
- ``CardRecognizer`` replaces Presidio's credit-card pattern, which has no
  Mastercard 2-series (2221-2720) and so misses about one Mastercard in four.
  The Luhn check is Presidio's.
- ``TitledNameRecognizer``: names after a title (``Dr. J. Smith``, ``Ms Müller``)
  or a cue (``Dear``, ``Hi``, ``attn.``, ``Reporter:``), which the small spaCy model
  misses or labels ORG.
- ``OrganizationRecognizer``: company names ending in a legal form (``GmbH``,
  ``S.A.``, ``LLC``, ``PLC``, ``& Co.``, ``AB``...).
- ``StreetAddressRecognizer``: street lines in the formats of ten countries, then
  the rest of the address (postcode, city, state) that follows on the same line.

All are plain regex + validation, run on the text Presidio already has (no NLP).
"""

from __future__ import annotations

import re
from typing import Any, Iterable

from presidio_analyzer import AnalysisExplanation, EntityRecognizer, LocalRecognizer, Pattern, RecognizerResult
from presidio_analyzer.predefined_recognizers import CreditCardRecognizer

#: regions tried for national-format phone numbers, in order (international numbers need none)
DEFAULT_PHONE_REGIONS = (
    "US", "GB", "DE", "FR", "ES", "IT", "NL", "BE", "CH", "AT", "IE", "PT", "PL", "SE", "DK", "NO", "FI",
    "IN", "AU", "NZ", "CA", "BR", "MX", "IL", "ZA", "SG", "JP",
)
#: Presidio matches context words as substrings of the nearby words ("reach" in "reached")
PHONE_CONTEXT = ["phone", "number", "telephone", "tel", "cell", "mobile", "call", "fax", "reach", "contact",
                 "whatsapp", "line"]

_UPPER = "A-ZÀ-ÖØ-ÞĀ-ſ"  # Latin-1 and Latin Extended-A capitals (and their lower cases, harmless)
_WORD = rf"[{_UPPER}][\w'’-]*"


def _result(entity: str, start: int, end: int, score: float, name: str) -> RecognizerResult:
    # the engine adds this recognizer's name and id; the context enhancer needs an explanation
    return RecognizerResult(entity, start, end, score,
                            analysis_explanation=AnalysisExplanation(recognizer=name, original_score=score))


class _RegexRecognizer(LocalRecognizer):
    """A recognizer whose ``find`` yields ``(start, end, score)``; no NLP artefacts needed."""

    ENTITY = ""

    def __init__(self, language: str = "en", context: list[str] | None = None) -> None:
        super().__init__(supported_entities=[self.ENTITY], supported_language=language, name=type(self).__name__,
                         context=context)

    def load(self) -> None:
        return None

    def find(self, text: str) -> Iterable[tuple[int, int, float]]:
        raise NotImplementedError

    def analyze(self, text: str, entities: list[str], nlp_artifacts: Any = None) -> list[RecognizerResult]:
        if self.ENTITY not in entities:
            return []
        name = str(type(self).__name__)
        return [_result(self.ENTITY, s, e, score, name) for s, e, score in self.find(text)]


# --- phone numbers ---------------------------------------------------------------------
_PHONE_CANDIDATE = re.compile(r"(?<![\w+/.-])(?:\+|00)?\(?\d[\d \t\u00a0().\-/]{5,22}\d(?![\w-]|\.\d)")
_DATE_LIKE = re.compile(r"^\d{1,4}([./-])\d{1,2}\1\d{1,4}$|^\d{4}\s*-\s*\d{4}$|^\d{1,3}(\.\d{1,3}){3}$")


class RegionPhoneRecognizer(_RegexRecognizer):
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
            found = self._valid(m.group(), m.start())
            if found:
                yield found

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
_CARD = (r"\b(?:4\d{3}|5[1-5]\d{2}|2(?:2[2-9]\d|[3-6]\d{2}|7[01]\d|720)|6(?:011|5\d{2}|4[4-9]\d|2\d{2})|"
         r"3[47]\d{2}|3(?:0[0-5]|[689]\d)\d|35\d{2})[- ]?\d{4,6}[- ]?\d{4,5}(?:[- ]?\d{1,4})?\b")


class CardRecognizer(CreditCardRecognizer):
    """Presidio's card recognizer (Luhn check, context) with every current IIN range, 13-19 digits."""

    def __init__(self, language: str = "en") -> None:
        super().__init__(patterns=[Pattern("Card (all IIN ranges)", _CARD, 0.3)], supported_language=language,
                         name="CardRecognizer")

    def validate_result(self, pattern_text: str) -> bool:
        digits = re.sub(r"[ -]", "", pattern_text)
        if not 13 <= len(digits) <= 19:
            return False
        return bool(super().validate_result(pattern_text))


# --- names after titles and cues ---------------------------------------------------------
_TITLES = r"Mr|Mrs|Ms|Miss|Mx|Dr|Prof|Sir|Herr|Frau|Mme|Mlle|Sra|Srta|Dott|Dott\.ssa|Dhr|Mevr"
_INITIALS = rf"(?:[{_UPPER}]\.\s?){{1,3}}"
_PARTICLE = r"(?:van der|van den|van de|van|von der|von|de la|de los|del|de|da|di|dos|du|le|la|al|bin|ten|ter|O')"
_NAME = (rf"(?:{_INITIALS}\s?)?{_WORD}(?:\s+{_INITIALS})?(?:\s+(?:{_PARTICLE}\s+)?{_WORD}){{0,2}}")
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


class TitledNameRecognizer(_RegexRecognizer):
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
_ORG_NAME = rf"{_WORD}(?:(?:\s+|-)(?:{_WORD}|&|and|und|et|e|y|van|von|de|der))*?"
_ORG = re.compile(
    rf"\b((?:Familia|Grupa|Grupo|Gruppo|Groupe|PPUH|FPUH|PHU|FHU|P\.P\.U\.H\.)\s+{_WORD}(?:[\s-]{_WORD})*"
    rf"|{_ORG_NAME}(?:,\s+{_WORD}\s+(?:and|&|und|et|e|y)\s+{_WORD})?\s*,?\s+(?:{_LEGAL})"
    rf"|{_WORD},\s+{_WORD}\s+(?:and|&)\s+{_WORD}(?=[\s.,;:)]|$))(?!\w)"
)


class OrganizationRecognizer(_RegexRecognizer):
    """Company names with a legal form or corporate word, and ``Smith, Jones and Brown`` firm names (0.7)."""

    ENTITY = "ORGANIZATION"

    def find(self, text: str) -> Iterable[tuple[int, int, float]]:
        for m in _ORG.finditer(text):
            start, end = m.span(1)
            if text[start:end].split()[0] in _NOT_NAMES and len(text[start:end].split()) <= 2:
                continue
            yield start, end, 0.7


# --- street addresses -------------------------------------------------------------------
_SUFFIXES = (r"Street|St|Avenue|Ave|Road|Rd|Lane|Ln|Drive|Dr|Boulevard|Blvd|Way|Court|Ct|Place|Pl|Square|Sq|"
             r"Terrace|Terr|Close|Crescent|Cres|Parkway|Pkwy|Highway|Hwy|Circle|Cir|Trail|Trl|Row|Walk|Gardens|"
             r"Hill|Hills|Park|Mews|Grove|View|Views|Loop|Junction|Turnpike|Pike|Expressway|Freeway|Plaza|Alley|"
             r"Bypass|Causeway|Centre|Center|Common|Commons|Corner|Corners|Cove|Creek|Crossing|Crossroad|Dale|Dam|"
             r"Divide|Estate|Estates|Extension|Falls|Ferry|Field|Fields|Flat|Flats|Ford|Forest|Forge|Fork|Fort|"
             r"Freeway|Garden|Gateway|Glen|Green|Greens|Harbor|Harbour|Haven|Heights|Hollow|Island|Isle|Key|Knoll|"
             r"Lake|Lakes|Landing|Light|Lights|Loaf|Lock|Locks|Lodge|Manor|Meadow|Meadows|Mill|Mills|Mission|"
             r"Motorway|Mount|Mountain|Neck|Orchard|Oval|Overpass|Pass|Passage|Path|Pine|Pines|Plain|Plains|Point|"
             r"Points|Port|Prairie|Radial|Ramp|Ranch|Rapid|Rapids|Rest|Ridge|Ridges|River|Route|Shoal|Shoals|"
             r"Shore|Shores|Skyway|Spring|Springs|Spur|Stravenue|Stream|Summit|Throughway|Trace|Track|"
             r"Trafficway|Tunnel|Underpass|Union|Unions|Valley|Valleys|Viaduct|Village|Villages|Ville|Vista|"
             r"Wall|Well|Wells|Wharf|Brook|Brooks|Burg|Burgs|Bluff|Bluffs|Bottom|Branch|Bridge|Camp|Canyon|Cape|"
             r"Cliff|Cliffs|Club|Curve|Rue|Parade|Esplanade|Quay|Wynd|Chase|Rise|Drove|Gate|Side|Wade|Retreat|"
             r"Promenade|Boardwalk|Broadway|Concourse|Cul-de-sac|Mall|Outlook|Ridgeway|Vale|Waters|Woods")
_UNIT = r"(?:Apt\.?|Apartment|Suite|Ste\.?|Unit|Flat|Studio|Floor|Fl\.?|Piso|Piano|Interno|Int\.|Appartamento|Puerta)"
_GERMANIC = (r"straße|strasse|str\.|weg|platz|allee|gasse|ring|damm|ufer|chaussee|steig|pfad|graben|markt|"
             r"straat|laan|plein|gracht|kade|singel|dreef|hof|park|pad|dijk|steeg|wal|baan|vej|gatan|vägen|gata|"
             r"väg|gränd")
_ROMANCE = (r"rue|avenue|av\.|boulevard|bd|chemin|allée|place|impasse|quai|route|cours|passage|square|"
            r"Calle|C\.|Avenida|Avda\.|Av\.|Plaza|Paseo|Camino|Carrer|Cañada|Rambla|Ronda|Travesía|Vial|Urbanización|"
            r"Glorieta|Callejón|Carretera|Via|Viale|Piazza|Piazzale|Corso|Largo|Vicolo|Strada|Contrada|Borgo|"
            r"Canale|Rotonda|Incrocio|Stretto|Rua|Praça|Travessa|Alameda|Estrada|Beco|Largo|"
            r"ul\.|ulica|al\.|aleja|pl\.|plac|os\.|osiedle|Rue|Avenue|Boulevard|Chemin|Allée|Place|Impasse|Quai|Route")
_LINK = r"(?:de|del|de la|de las|de los|di|da|della|delle|dei|do|dos|das|du|des|d'|l'|la|le|les|del|al)"
_ROMANCE_CAP = (r"Calle|Avenida|Avda\.|Plaza|Paseo|Camino|Carrer|Cañada|Rambla|Ronda|Travesía|Vial|Urbanización|"
                r"Glorieta|Callejón|Carretera|Via|Viale|Piazza|Piazzale|Corso|Largo|Vicolo|Strada|Contrada|Borgo|"
                r"Canale|Rotonda|Incrocio|Stretto|Rua|Praça|Travessa|Alameda|Estrada|Beco|Rue|Boulevard|Chemin|"
                r"Allée|Impasse|Quai|C\.(?=\s+de\b)")
_STREET = re.compile(
    rf"(?:(?:{_UNIT})\s*\d+\w?,?\s*)?"
    rf"(?:\b\d{{1,5}}[A-Za-z]?(?:[/-]\d{{1,5}})?,?\s+(?:{_WORD}\s+){{0,3}}(?:{_SUFFIXES})\b\.?"  # 12 Main Street
    rf"|\b\d{{1,5}}(?:\s?(?:bis|ter))?,?\s+(?:{_ROMANCE})\s+(?:{_LINK}\s*)*{_WORD}(?:\s+(?:{_LINK}\s*)*{_WORD}){{0,3}}"  # 84, rue X
    rf"|\b{_WORD}(?:{_GERMANIC})\.?\s+\d{{1,5}}\s?[a-zA-Z]?\b(?:[/-]\d{{1,4}})?"  # Hauptstraße 12
    rf"|\b(?:{_ROMANCE_CAP})\s+(?:{_LINK}\s*)*{_WORD}(?:\s+(?:{_LINK}\s*)*{_WORD}){{0,3}}"  # Via Roma, 12
    rf"(?:,?\s+(?:n\.?\s?)?\d{{1,5}}[A-Za-z]?(?:/\d{{1,4}})?\b)?"
    rf"|(?<![\w.])(?:{_ROMANCE})\s+(?:{_LINK}\s*)*{_WORD}(?:\s+(?:{_LINK}\s*)*{_WORD}){{0,3}}"  # ul. Długa 5, rue X, 75001
    rf"(?:,?\s+\d{{1,5}}[A-Za-z]?(?:/\d{{1,4}})?\b|(?=,\s*\d{{2}}-?\d{{3}}\b))"
    rf"|\b(?:{_UNIT})\s*\d+\w?,\s*{_WORD}(?:\s+{_WORD}){{0,3}}\s+(?:{_SUFFIXES})\b)"  # Flat 3, Pearson Court
)
_POSTCODE = (r"(?:\d{5}(?:-\d{4})?|\d{2}-\d{3}|\d{4}\s?[A-Z]{2}|\d{3}\s\d{2}|\d{4}|[A-Z]{1,2}\d[A-Z\d]?\s?\d[A-Z]{2}|"
             r"[A-Z]\d[A-Z]\s?\d[A-Z]\d)")
_CITY = rf"[{_UPPER}][^\W\d_]*(?:['’-][^\W\d_]+)*"  # letters only: "NW1" is a postcode, not a city word
#: one more comma/space-separated part of the address: unit, postcode, city, state or province code
_TAIL = re.compile(
    rf"(?:,\s*|\s+)(?:{_UNIT}\s*\w+|{_POSTCODE}(?:\s+{_WORD}(?:[\s-]{_WORD}){{0,3}})?|[A-Z]{{2,3}}(?:\s+{_POSTCODE})?"
    rf"|'?s?-?{_CITY}(?:[\s-](?:{_LINK}\s*)?{_CITY}){{0,3}}(?:\s+\([A-Z]{{2}}\))?(?:,?\s+{_POSTCODE})?)(?=[,\s|.;)]|$)"
)


class StreetAddressRecognizer(_RegexRecognizer):
    """A street line (0.7) and the postcode, city and state that follow it on the same line."""

    ENTITY = "STREET_ADDRESS"

    def find(self, text: str) -> Iterable[tuple[int, int, float]]:
        for m in _STREET.finditer(text):
            start, end = m.span()
            parts = 0
            while parts < 4:
                tail = _TAIL.match(text, end)
                if not tail or "\n" in tail.group():
                    break
                end = tail.end()
                parts += 1
            yield start, end, 0.7


# --- dates with a month name ---------------------------------------------------------------
_MONTH = (r"(?:Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|June?|July?|Aug(?:ust)?|Sept?(?:ember)?|"
          r"Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?)\.?")
_DAY = r"(?:0?[1-9]|[12]\d|3[01])(?:st|nd|rd|th)?"
_WORD_DATE = re.compile(rf"\b(?:{_DAY}\s+(?:of\s+)?{_MONTH},?\s+(?:19|20)\d{{2}}|{_MONTH}\s+{_DAY},?\s+(?:19|20)\d{{2}})\b")


class MonthNameDateRecognizer(_RegexRecognizer):
    """``12 March 1988``, ``11 Dec 2011``, ``March 28, 2026``: Presidio's DateRecognizer covers numeric dates only."""

    ENTITY = "DATE_TIME"

    def find(self, text: str) -> Iterable[tuple[int, int, float]]:
        return ((m.start(), m.end(), 0.6) for m in _WORD_DATE.finditer(text))


def product_recognizers(language: str, phone_regions: Iterable[str]) -> list[EntityRecognizer]:
    return [RegionPhoneRecognizer(language, phone_regions), CardRecognizer(language), TitledNameRecognizer(language),
            OrganizationRecognizer(language), StreetAddressRecognizer(language), MonthNameDateRecognizer(language)]
