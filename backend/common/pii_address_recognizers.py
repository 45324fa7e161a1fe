"""Address recognizers (see ``pii_recognizers``): street lines in the formats of a dozen countries,
PO boxes, military and city-state-ZIP lines, with the unit line above and the postcode, city and
state after them, across up to three lines (one span per address); US ZIP codes and US driver
licences, cue-driven (the licence one replaces Presidio's, which only scores above 0.3 with a
threshold near 0).
"""

from __future__ import annotations

import re
from typing import Iterable

from backend.common.pii_recognizer_base import CAPITALISED_WORD, RegexRecognizer, UPPER


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
_UNIT = r"(?:H\.[ \t]?No\.?|(?:House|Flat|Door|Plot)[ \t]No\.?|Apt\.?|Apartment|Suite|Ste\.?|Unit|Flat|Studio|Floor|Flr\.?|Fl\.?|Piso|Piano|Interno|Int\.|Appartamento|Puerta|#)"
#: a floor or unit written after the street: "15th Floor", "7th Flr", "Second Floor", "Lower Level", "#4B"
_UNIT_AFTER = (r"(?:\d{1,3}(?i:st|nd|rd|th)|First|Second|Third|Fourth|Fifth|Ground|Lower|Upper|Main)[ \t]+"
               r"(?i:floor|flr\.?|fl\.?|level)")
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
# US street lines as USPS Publication 28 writes them: a directional before or after the name ("1255 W.
# North Ave", "10 S. Dearborn", "4805 Southwest 229th"), an ordinal name ("2701 W 18TH ST", "461 5th
# Avenue"), a numbered highway or route ("88175 US Highway 278", "2300 Route 309", "31595 SR 20")
_DIRECTION = r"(?:N|S|E|W|NE|NW|SE|SW|North|South|East|West|Northeast|Northwest|Southeast|Southwest)"
_ORDINAL = r"\d{1,3}(?i:st|nd|rd|th)"
_US_NAME_WORD = rf"(?:{CAPITALISED_WORD}|{_ORDINAL})"
_HIGHWAY = (r"(?:(?:US|U\.S\.|State|County|[A-Z]{2}|Interstate)[ \t]+)?(?:Highway|Hwy\.?|Route|Rte\.?|Road)"
            r"(?:[ \t]+No\.?)?[ \t]+\d{1,4}[A-Z]?\b|(?:SR|CR|US|I|FM|RR)[ \t-]\d{1,4}\b")
#: what may follow a US street name written without a street type: the end of the field, or its unit
_US_STREET_END = rf"(?=[ \t]*(?:[,#\n;-]|$)|[ \t]+(?i:{_UNIT})(?![\w])|[ \t]+{_UNIT_AFTER})"
_US_STREET = (rf"\b\d{{1,5}}(?:-\d{{1,4}})?[A-Za-z]?[ \t]+(?:{_DIRECTION}\.?[ \t]+)?"
              rf"(?:{_HIGHWAY}"  # 2300 Route 309
              rf"|(?:{_US_NAME_WORD}[ \t]+){{1,3}}(?:(?i:{_SUFFIXES}))\b\.?(?:[ \t]+{_DIRECTION}\b\.?)?"  # 2701 W 18TH ST
              rf"|(?<=\d\d[ \t])(?:N|S|E|W)\.?[ \t]+{CAPITALISED_WORD}(?:[ \t]+{CAPITALISED_WORD})?{_US_STREET_END}"  # 10 S. Dearborn,
              rf"|{_DIRECTION}\.?[ \t]+{_ORDINAL}\b{_US_STREET_END}"  # 4805 Southwest 229th,
              rf"|(?<=\d[ \t]){_DIRECTION}\.?[ \t]+\d{{1,4}}[ \t]+{_DIRECTION}\b\.?)")  # 239 South 500 East (a grid)
_STREET = re.compile(
    rf"(?:(?:{_UNIT})\s*\d+\w?,?\s*)?"
    rf"(?:{_US_STREET}"
    rf"|\b\d{{1,5}}[A-Za-z]?(?:[/-]\d{{1,5}})?,?\s+(?:{CAPITALISED_WORD}\s+){{0,3}}(?:{_SUFFIXES})\b\.?"  # 12 Main Street
    rf"|\b\d{{1,5}}(?:\s?(?:bis|ter))?,?\s+(?:{_ROMANCE})\s+(?:{_LINK}\s*)*{CAPITALISED_WORD}(?:\s+(?:{_LINK}\s*)*{CAPITALISED_WORD}){{0,3}}"  # 84, rue X
    rf"|\b{CAPITALISED_WORD}(?i:{_GERMANIC})\.?[ \t]+\d{{1,5}}[ \t]?[a-zA-Z]?\b(?:[/-]\d{{1,4}})?"  # Hauptstraße 12
    rf"|\b(?:{_NUMBERED})[ \t]+(?:{_LINK}[ \t]*)*{CAPITALISED_WORD}(?:[ \t]+(?:{_LINK}[ \t]*)*{CAPITALISED_WORD}){{0,3}},?[ \t]+\d{{1,5}}\b"
    rf"|\b(?:{_ROMANCE_CAP})\s+(?:{_LINK}\s*)*{CAPITALISED_WORD}(?:\s+(?:{_LINK}\s*)*{CAPITALISED_WORD}){{0,3}}"  # Via Roma, 12
    rf"(?:,?\s+(?:n\.?\s?)?\d{{1,5}}[A-Za-z]?(?:/\d{{1,4}})?\b)?"
    rf"|(?<![\w.])(?:{_ROMANCE})\s+(?:{_LINK}\s*)*{CAPITALISED_WORD}(?:\s+(?:{_LINK}\s*)*{CAPITALISED_WORD}){{0,3}}"  # ul. Długa 5, rue X, 75001
    rf"(?:,?\s+\d{{1,5}}[A-Za-z]?(?:/\d{{1,4}})?\b|(?=,\s*\d{{2}}-?\d{{3}}\b))"
    rf"|\b(?:{_UNIT})\s*\d+\w?(?:,\s*|[ \t]*\n[ \t]*){CAPITALISED_WORD}(?:\s+{CAPITALISED_WORD}){{0,3}}\s+(?:{_SUFFIXES})\b"  # Flat 3, Pearson Court
    rf"|\b(?:P\.?[ \t]?O\.?[ \t]?Box|Post Office Box|PO Box)[ \t]+\d{{1,6}}\b"  # PO Box 123
    rf"|\b(?:(?:PSC|Unit)[ \t]+\d{{3,5}},?[ \t]*Box[ \t]+\d{{3,5}}|(?:USNS|USNV|USS|USCGC)[ \t]+{CAPITALISED_WORD})"  # APO/FPO/DPO
    rf"\s*(?:APO|FPO|DPO)[ \t]+(?:AA|AE|AP)[ \t]+\d{{5}}(?:-\d{{4}})?)"
)
_POSTCODE = (r"(?:\d{5}(?:-\d{4}|-?\d{3})?|\d{6}|\d{3}-\d{4}|\d{2}-\d{3}|\d{4}\s?[A-Z]{2}|\d{3}\s\d{2}|\d{4}|[A-Z]{1,2}\d[A-Z\d]?\s?\d[A-Z]{2}|"
             r"[A-Z]\d[A-Z]\s?\d[A-Z]\d)")
_CITY = rf"[{UPPER}][^\W\d_]*(?:['’-][^\W\d_]+)*"  # letters only: "NW1" is a postcode, not a city word
#: one more comma/space-separated part of the address: unit, postcode, city, state or province code
_TAIL = re.compile(
    rf"(?:,[ \t]*|[ \t]+/[ \t]+|[ \t]*-[ \t]*|\s+)(?:{_UNIT_AFTER}|(?i:{_UNIT})[ \t]*\w+|{_POSTCODE}(?:[ \t]+{CAPITALISED_WORD}(?:[ \t-](?:{_LINK}[ \t]+)?{CAPITALISED_WORD}){{0,3}})?"
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


class StreetAddressRecognizer(RegexRecognizer):
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


class UsZipCodeRecognizer(RegexRecognizer):
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


class UsDriverLicenceRecognizer(RegexRecognizer):
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
