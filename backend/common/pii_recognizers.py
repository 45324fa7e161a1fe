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
"""

from __future__ import annotations

import re
from typing import Any, Iterable

from presidio_analyzer import AnalysisExplanation, EntityRecognizer, LocalRecognizer, RecognizerResult

#: regions tried for national-format phone numbers, in order (international numbers need none)
DEFAULT_PHONE_REGIONS = (
    "US", "GB", "DE", "FR", "ES", "IT", "NL", "BE", "CH", "AT", "IE", "PT", "PL", "SE", "DK", "NO", "FI",
    "IN", "AU", "NZ", "CA", "BR", "MX", "IL", "ZA", "SG", "JP",
)
#: Presidio matches context words as substrings of the nearby words ("reach" in "reached")
PHONE_CONTEXT = ["phone", "telephone", "tel", "cell", "mobile", "call", "fax", "reach", "contact", "whatsapp", "line",
                 "office", "direct", "landline", "ph"]

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


class CardRecognizer(_RegexRecognizer):
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


# --- US states and ZIP codes (addresses and ZIP_CODE) ----------------------------------------
US_STATES = ("AL AK AZ AR CA CO CT DE DC FL GA HI ID IL IN IA KS KY LA ME MD MA MI MN MS MO MT NE NV NH NJ NM NY "
             "NC ND OH OK OR PA RI SC SD TN TX UT VT VA WA WV WI WY AS GU MP PR VI UM FM MH PW AA AE AP").split()
_STATE_NAMES = ("Alabama|Alaska|Arizona|Arkansas|California|Colorado|Connecticut|Delaware|Florida|Georgia|Hawaii|"
                "Idaho|Illinois|Indiana|Iowa|Kansas|Kentucky|Louisiana|Maine|Maryland|Massachusetts|Michigan|"
                "Minnesota|Mississippi|Missouri|Montana|Nebraska|Nevada|New Hampshire|New Jersey|New Mexico|"
                "New York|North Carolina|North Dakota|Ohio|Oklahoma|Oregon|Pennsylvania|Rhode Island|"
                "South Carolina|South Dakota|Tennessee|Texas|Utah|Vermont|Virginia|Washington|West Virginia|"
                "Wisconsin|Wyoming|Puerto Rico|District of Columbia")
_STATE = rf"(?:{'|'.join(US_STATES)}|{_STATE_NAMES})"
_ZIP = r"\d{5}(?:-\d{4})?"


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
             r"Promenade|Boardwalk|Broadway|Concourse|Cul-de-sac|Mall|Outlook|Ridgeway|Vale|Waters|Woods|"
             # the rest of the USPS (Publication 28) and Australia Post street-type lists
             r"Access|Alleyway|Amble|Anchorage|Approach|Arcade|Artery|Basin|Beach|Bend|Block|Brace|Brae|Break|Brow|"
             r"Byway|Centers|Centreway|Circles|Circlet|Circuit|Circus|Colonnade|Copse|Course|Courts|Courtyard|"
             r"Coves|Crest|Cross|Crossway|Cruiseway|Cutting|Dell|Deviation|Dip|Distributor|Drives|Driveway|Edge|"
             r"Elbow|End|Entrance|Extensions|Fairway|Fire Track|Firetrail|Follow|Footway|Fords|Foreshore|Forges|"
             r"Forks|Formation|Front|Frontage|Gap|Gates|Glade|Glens|Grange|Ground|Groves|Gully|Harbors|Highroad|"
             r"Inlet|Interchange|Intersection|Islands|Junctions|Keys|Knolls|Land|Laneway|Lees|Line|Link|Lookout|"
             r"Manors|Meander|Mews|Mountains|Nook|Parklands|Parks|Parkways|Pathway|Plateau|Pocket|Ports|"
             r"Quad|Quadrangle|Quadrant|Quays|Ramble|Range|Reach|Reserve|Ride|Right Of Way|Ring|Riverway|Riviera|"
             r"Roads|Roadside|Roadway|Ronde|Rosebowl|Rotary|Round|Run|Service Way|Siding|Slope|Sound|Spurs|"
             r"Squares|Stairs|State Highway|Station|Steps|Strand|Streets|Strip|Subway|Tarn|Thoroughfare|Tollway|"
             r"Tor|Towers|Trailer|Triangle|Trunkway|Turn|Villas|Walks|Walkway|Ways|Fall|"
             r"Marg|Nagar|Ganj|Chowk|Zila|Gali|Bazar|Colony")  # Indian street words
_UNIT = r"(?:H\.[ \t]?No\.?|(?:House|Flat|Door|Plot)[ \t]No\.?|Apt\.?|Apartment|Suite|Ste\.?|Unit|Flat|Studio|Floor|Fl\.?|Piso|Piano|Interno|Int\.|Appartamento|Puerta)"
_GERMANIC = (r"straße|strasse|str\.|weg|platz|allee|gasse|ring|damm|ufer|chaussee|steig|pfad|graben|markt|"
             r"straat|laan|boulevard|plantsoen|erf|plein|gracht|kade|singel|dreef|hof|park|pad|dijk|steeg|wal|baan|vej|gatan|vägen|gata|"
             r"väg|gränd")
_ROMANCE = (r"rue|avenue|av\.|boulevard|bd|chemin|allée|place|impasse|quai|route|cours|passage|square|"
            r"Calle|C\.|Avenida|Avda\.|Av\.|Plaza|Paseo|Camino|Carrer|Cañada|Rambla|Ronda|Travesía|Vial|Urbanización|"
            r"Glorieta|Callejón|Carretera|Via|Viale|Piazza|Piazzale|Corso|Largo|Vicolo|Strada|Contrada|Borgo|"
            r"Canale|Rotonda|Incrocio|Stretto|Rua|Praça|Travessa|Alameda|Estrada|Beco|Largo|"
            r"ul\.|ulica|al\.|aleja|pl\.|plac|os\.|osiedle|Rue|Avenue|Boulevard|Chemin|Allée|Place|Impasse|Quai|Route")
_LINK = r"(?:de|del|de la|de las|de los|di|da|della|delle|dei|do|dos|das|du|des|d'|l'|la|le|les|del|al)"
#: Spanish and Portuguese street words that also start place names: a street only with a house number
_NUMBERED = (r"Rua|Avenida|Travessa|Praça|Alameda|Rodovia|Estrada|Esplanada|Vale|Ladeira|Viela|Vereda|Largo|Quadra|"
             r"Conjunto|Setor|Trecho|Recanto|Favela|Passarela|Distrito|Fazenda|Sítio|Chácara|Residencial|Loteamento|"
             r"Condomínio|Núcleo|Vila|Jardim|Parque|Lagoa|Morro|Colônia|Campo|Viaduto|Trevo|Pasaje|Pasadizo|Cuesta|Vía|Senda|Ruta|Acceso|Bajada|Subida|Polígono")
_ROMANCE_CAP = (r"Calle|Avenida|Avda\.|Plaza|Paseo|Camino|Carrer|Cañada|Rambla|Ronda|Travesía|Vial|Urbanización|"
                r"Glorieta|Callejón|Carretera|Via|Viale|Piazza|Piazzale|Corso|Largo|Vicolo|Strada|Contrada|Borgo|"
                r"Canale|Rotonda|Incrocio|Stretto|Rua|Praça|Travessa|Alameda|Estrada|Beco|Rue|Boulevard|Chemin|"
                r"Allée|Impasse|Quai|C\.(?=\s+de\b)")
_STREET = re.compile(
    rf"(?:(?:{_UNIT})\s*\d+\w?,?\s*)?"
    rf"(?:\b\d{{1,5}}[A-Za-z]?(?:[/-]\d{{1,5}})?,?\s+(?:{_WORD}\s+){{0,3}}(?:{_SUFFIXES})\b\.?"  # 12 Main Street
    rf"|\b\d{{1,5}}(?:\s?(?:bis|ter))?,?\s+(?:{_ROMANCE})\s+(?:{_LINK}\s*)*{_WORD}(?:\s+(?:{_LINK}\s*)*{_WORD}){{0,3}}"  # 84, rue X
    rf"|\b{_WORD}(?i:{_GERMANIC})\.?[ \t]+\d{{1,5}}[ \t]?[a-zA-Z]?\b(?:[/-]\d{{1,4}})?"  # Hauptstraße 12
    rf"|\b(?:{_NUMBERED})[ \t]+(?:{_LINK}[ \t]*)*{_WORD}(?:[ \t]+(?:{_LINK}[ \t]*)*{_WORD}){{0,3}},?[ \t]+\d{{1,5}}\b"
    rf"|\b(?:{_ROMANCE_CAP})\s+(?:{_LINK}\s*)*{_WORD}(?:\s+(?:{_LINK}\s*)*{_WORD}){{0,3}}"  # Via Roma, 12
    rf"(?:,?\s+(?:n\.?\s?)?\d{{1,5}}[A-Za-z]?(?:/\d{{1,4}})?\b)?"
    rf"|(?<![\w.])(?:{_ROMANCE})\s+(?:{_LINK}\s*)*{_WORD}(?:\s+(?:{_LINK}\s*)*{_WORD}){{0,3}}"  # ul. Długa 5, rue X, 75001
    rf"(?:,?\s+\d{{1,5}}[A-Za-z]?(?:/\d{{1,4}})?\b|(?=,\s*\d{{2}}-?\d{{3}}\b))"
    rf"|\b(?:{_UNIT})\s*\d+\w?(?:,\s*|[ \t]*\n[ \t]*){_WORD}(?:\s+{_WORD}){{0,3}}\s+(?:{_SUFFIXES})\b"  # Flat 3, Pearson Court
    rf"|\b(?:P\.?[ \t]?O\.?[ \t]?Box|Post Office Box|PO Box)[ \t]+\d{{1,6}}\b"  # PO Box 123
    rf"|\b(?:(?:PSC|Unit)[ \t]+\d{{3,5}},?[ \t]*Box[ \t]+\d{{3,5}}|(?:USNS|USNV|USS|USCGC)[ \t]+{_WORD})"  # APO/FPO/DPO
    rf"\s*(?:APO|FPO|DPO)[ \t]+(?:AA|AE|AP)[ \t]+\d{{5}}(?:-\d{{4}})?)"
)
_POSTCODE = (r"(?:\d{5}(?:-\d{4}|-?\d{3})?|\d{6}|\d{3}-\d{4}|\d{2}-\d{3}|\d{4}\s?[A-Z]{2}|\d{3}\s\d{2}|\d{4}|[A-Z]{1,2}\d[A-Z\d]?\s?\d[A-Z]{2}|"
             r"[A-Z]\d[A-Z]\s?\d[A-Z]\d)")
_CITY = rf"[{_UPPER}][^\W\d_]*(?:['’-][^\W\d_]+)*"  # letters only: "NW1" is a postcode, not a city word
#: one more comma/space-separated part of the address: unit, postcode, city, state or province code
_TAIL = re.compile(
    rf"(?:,[ \t]*|[ \t]+/[ \t]+|\s+)(?:{_UNIT}[ \t]*\w+|{_POSTCODE}(?:[ \t]+{_WORD}(?:[ \t-](?:{_LINK}[ \t]+)?{_WORD}){{0,3}})?"
    rf"|[A-Z]{{2,3}}(?:[ \t]+{_POSTCODE})?"
    rf"|'?s?-?{_CITY}(?:[ \t-](?:{_LINK}[ \t]*)?{_CITY}){{0,3}}(?:[ \t]+\([A-Z]{{2}}\))?(?:,?[ \t]+{_POSTCODE}|-\d{{6}})?)"
    rf"(?=[,\s|.;)/]|$)"
)


_NEXT_LINE = re.compile(r"[ \t]*\r?\n")
_LINE_END = re.compile(r"[ \t]*(?:\r?\n|$)")
_FIELD_END = re.compile(r"[ \t]*[|;(]")
_UNIT_LINE = re.compile(rf"(?:{_UNIT}|Building|Bldg\.?|House|Room|c/o)[ \t]*[\w/-]{{1,6}}[ \t]*\r?\n[ \t]*$")
#: a US/Canadian/Australian city line on its own: "Wilsonberg, NY 19122", "Sydney NSW 2000", "Toronto, ON M5V 2T6"
_CITY_LINE = re.compile(
    rf"\b{_CITY}(?:[ \t-]{_CITY}){{0,3}},?[ \t]+(?:{_STATE},?[ \t]+{_ZIP}|(?:NSW|VIC|QLD|ACT|TAS|NT|SA|WA),?[ \t]+\d{{4}}"
    rf"|(?:AB|BC|MB|NB|NL|NS|NT|NU|ON|PE|QC|SK|YT)[ \t]+[A-Z]\d[A-Z][ \t]?\d[A-Z]\d)(?![\w-])")


class StreetAddressRecognizer(_RegexRecognizer):
    """A whole address (0.7): a street line, a PO box or military address, or a US, Canadian or
    Australian city line, with the unit line above it and the city, state, postcode and country
    parts after it, on the same line or on up to three following lines.

    The address is one span, line breaks included, so no line of it stays in clear.
    """

    ENTITY = "STREET_ADDRESS"

    def find(self, text: str) -> Iterable[tuple[int, int, float]]:
        for m in (*_STREET.finditer(text), *_CITY_LINE.finditer(text)):
            start, end = m.span()
            end = self._next_lines(text, self._same_line(text, end))
            unit = _UNIT_LINE.search(text, max(0, start - 24), start)
            yield (unit.start() if unit else start), end, 0.7

    @staticmethod
    def _same_line(text: str, end: int, parts: int = 6) -> int:
        for _ in range(parts):
            tail = _TAIL.match(text, end)
            if not tail or "\n" in tail.group():
                break
            end = tail.end()
        return end

    def _next_lines(self, text: str, end: int) -> int:
        """``end`` moved over the following lines that are address parts only (city, postcode, country)."""
        for _ in range(3):
            if not _NEXT_LINE.match(text, end):
                return end
            tail = _TAIL.match(text, end)
            if not tail or tail.group().count("\n") != 1:
                return end
            line_end = self._same_line(text, tail.end())
            whole = _LINE_END.match(text, line_end)
            field = _FIELD_END.match(text, line_end) and any(c.isdigit() for c in text[tail.start():line_end])
            if not (whole or field):
                return end
            end = line_end
        return end


# --- US ZIP codes and driver licences ------------------------------------------------------
_ZIP_NUMBER = re.compile(rf"(?<![\w-]){_ZIP}(?![\w-])")
#: what makes a 5-digit number a ZIP code: a state or a cue before it ("CA 94105", "ZIP: 10001"), or a word after it
_ZIP_BEFORE = re.compile(rf"(?:\b{_STATE},?[ \t]+|(?i:\b(?:zip|zip[ -]?code|zipcode|postal[ \t]code|postcode|post[ \t]code)"
                         rf"\b(?:[ \t]+(?:is|was|of))?[ \t]*[:#.-]?[ \t]*))$")
_ZIP_AFTER = re.compile(r"[ \t]+(?i:area|zip|postcode|postal)\b")


class UsZipCodeRecognizer(_RegexRecognizer):
    """ZIP+4 anywhere (0.6), a 5-digit ZIP only after a state or a ZIP/postcode cue (0.6).

    A bare 5-digit number is an amount, a count or an id far more often than a ZIP code.
    """

    ENTITY = "ZIP_CODE"

    def find(self, text: str) -> Iterable[tuple[int, int, float]]:
        for m in _ZIP_NUMBER.finditer(text):
            if "-" in m.group() or _ZIP_BEFORE.search(text, max(0, m.start() - 40), m.start()) \
                    or _ZIP_AFTER.match(text, m.end()):
                yield m.start(), m.end(), 0.6


#: state licence formats (letters and digits, some grouped with dashes or spaces), per AAMVA/state DMV layouts
_LICENCE = re.compile(
    r"(?<![\w-])(?:[A-Z]\d{3}[- ]\d{3}[- ]\d{2}[- ]\d{3}[- ]\d|[A-Z]\d{3}[- ]\d{4}[- ]\d{4}|[A-Z]\d{4}[- ]\d{5}[- ]\d{5}"
    r"|[A-Z]\d{3}[- ]\d{3}[- ]\d{3}(?:[- ]\d{3})?|[A-Z]{1,2}\d{2}[- ]\d{2}[- ]\d{4}|\d{3}[- ]\d{2}[- ]\d{4}|\d{2}[- ]\d{3}[- ]\d{4}"
    r"|[A-Z]{1,3}\d{3,14}[A-Z]?|\d{1,3}[A-Z]{1,3}\d{3,7}|\d{6,13}[A-Z]{0,2}|[A-Z]\d[A-Z]\d[A-Z]\d{0,9}"
    r"|[A-Z*]{5,7}[A-Z0-9*]{3,7})(?![\w-])")
#: "licence" alone is a software word ("renew the license (pack 2500123)"): it needs "no.", "number" or "#"
_LICENCE_CUE = re.compile(r"(?i:\bdriv(?:er|ing|ers)|\bDLN?\b|\bCDL\b|\b(?:licen[cs]e|lic\.?|permit)[ \t]*"
                          r"(?:no\b\.?|nr\b\.?|number|num\b|#|id\b))")


class UsDriverLicenceRecognizer(_RegexRecognizer):
    """US driver licence numbers in the states' formats, only with a cue (``driver``, ``licence no.``, ``DL``)
    within 48 characters before (0.65) or 24 after (0.55).

    Replaces Presidio's ``UsLicenseRecognizer``, whose digit pattern (0.01) and letter-digit
    pattern (0.3) only pass a threshold near 0, where they also take order numbers and codes.
    Needs at least two digits, so words in capitals are not licences.
    """

    ENTITY = "US_DRIVER_LICENSE"

    def find(self, text: str) -> Iterable[tuple[int, int, float]]:
        for m in _LICENCE.finditer(text):
            if sum(c.isdigit() for c in m.group()) < 2:
                continue
            before = text[max(0, m.start() - 48):m.start()]
            if _LICENCE_CUE.search(before):
                yield m.start(), m.end(), 0.65
            elif _LICENCE_CUE.search(text[m.end():m.end() + 24]):
                yield m.start(), m.end(), 0.55


# --- nationality, religious or political group -------------------------------------------------
_FAITHS = (r"Christians?|Catholics?|Roman Catholics?|Protestants?|Evangelicals?|Anglicans?|Methodists?|Baptists?|"
           r"Lutherans?|Presbyterians?|Pentecostals?|Orthodox|Mormons?|Muslims?|Moslems?|Islamic|Sunnis?|Shias?|Shiites?|"
           r"Jews|Jewish|Hindus?|Buddhists?|Sikhs?|Jains?|Atheists?|Agnostics?|Taoists?|Shinto|Zoroastrians?|Bahá'í|"
           r"Baha'i|Rastafarians?|Quakers?|Amish|Jehovah's Witness(?:es)?")
_PARTIES = r"Republicans?|Democrats?|Tories|Tory|Labour|Social Democrats?|Liberal Democrats?|Socialists?|Communists?"
#: a capitalised group after a cue: "Nationality: Moroccan", "identifies as Kurdish", "a Nigerian national"
_NRP_GROUP = rf"({_WORD}(?:[ \t]{_WORD})?)"
_NRP_CUED = (
    re.compile(rf"(?i:\b(?:nationality|citizenship|ethnicity|ethnic origin|religion|faith|political affiliation))"
               rf"[ \t]*(?::|is|was|-)?[ \t]*{_NRP_GROUP}"),
    re.compile(rf"(?i:\b(?:self-)?identif(?:y|ies|ied) as)[ \t]+(?:an?[ \t]+)?{_NRP_GROUP}"),
    re.compile(rf"\ban?[ \t]+{_NRP_GROUP}[ \t]+(?:national|citizen|voter|immigrant|expat|community|member|"
               rf"origin|descent|background|heritage)\b"),
)
_NRP_WORDS = re.compile(rf"\b(?:{_FAITHS}|{_PARTIES})\b")


class NrpRecognizer(_RegexRecognizer):
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


class MonthNameDateRecognizer(_RegexRecognizer):
    """``12 March 1988``, ``11 Dec 2011``, ``March 28, 2026``: Presidio's DateRecognizer covers numeric dates only."""

    ENTITY = "DATE_TIME"

    def find(self, text: str) -> Iterable[tuple[int, int, float]]:
        return ((m.start(), m.end(), 0.6) for m in _WORD_DATE.finditer(text))


def product_recognizers(language: str, phone_regions: Iterable[str]) -> list[EntityRecognizer]:
    return [RegionPhoneRecognizer(language, phone_regions), CardRecognizer(language), TitledNameRecognizer(language),
            OrganizationRecognizer(language), StreetAddressRecognizer(language), MonthNameDateRecognizer(language),
            UsZipCodeRecognizer(language), UsDriverLicenceRecognizer(language), NrpRecognizer(language)]
