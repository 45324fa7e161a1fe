"""The Faker values the PII set plants (see ``pii_set``), and the ones Faker alone does not give.

Faker in many locales: names with titles and initials, street addresses in ten countries, phone
numbers in national and international formats (kept only when ``phonenumbers`` calls them valid for
their region), card numbers with spaces and dashes, IBANs, e-mails, IPv4/IPv6, US SSNs, companies,
dates in several formats and web domains. Made here: card numbers in the IIN ranges and lengths of
eleven schemes (Luhn digit added), numbers of 27 national phone plans with extensions, multi-line
addresses, ZIP+4, US licence layouts and nationality/religion/party mentions (``NRP``). Seeded: the
same seed and Faker version give the same values.
"""

from __future__ import annotations

import random
import re
from typing import Any


#: locale -> phone region
LOCALES: dict[str, str] = {
    "en_US": "US", "en_GB": "GB", "en_IE": "IE", "en_IN": "IN", "en_AU": "AU", "en_CA": "CA",
    "de_DE": "DE", "de_AT": "AT", "de_CH": "CH", "fr_FR": "FR", "es_ES": "ES", "it_IT": "IT",
    "nl_NL": "NL", "pl_PL": "PL", "pt_PT": "PT", "sv_SE": "SE",
}
ADDRESS_LOCALES = ("en_US", "en_GB", "de_DE", "fr_FR", "es_ES", "it_IT", "nl_NL", "en_AU", "en_CA", "pl_PL", "en_IN",
                   "pt_PT")
#: regions whose national numbering plans the phone maker also writes (phonenumbers' metadata, no Faker locale)
PHONE_REGIONS = ("US", "GB", "DE", "FR", "ES", "IT", "NL", "BE", "CH", "AT", "IE", "PT", "PL", "SE", "DK", "NO", "FI",
                 "IN", "AU", "NZ", "CA", "BR", "MX", "IL", "ZA", "SG", "JP")
#: (IIN prefixes, lengths, grouping) per card scheme; a prefix "a-b" is a numeric range
CARD_SCHEMES: dict[str, tuple[tuple[str, ...], tuple[int, ...]]] = {
    "visa": (("4",), (13, 16, 16, 16, 19)),
    "mastercard": (("51-55", "2221-2720"), (16,)),
    "amex": (("34", "37"), (15,)),
    "discover": (("6011", "644-649", "65", "622126-622925"), (16, 19)),
    "jcb": (("3528-3589",), (16, 19)),
    "jcb15": (("1800", "2131"), (15,)),
    "diners": (("300-305", "36", "38", "39"), (14, 16)),
    "maestro": (("50", "56-69"), (12, 13, 15, 16, 19)),
    "unionpay": (("62",), (16, 17, 18, 19)),
    "rupay": (("60", "65", "81", "82", "508"), (16,)),
    "mir": (("2200-2204",), (16,)),
}
#: US driver licence layouts (AAMVA state formats): A letter, 9 a digit
LICENCE_FORMATS = ("A9999999", "999999999", "A999-999-99-999-9", "A999999999999", "A99999999", "99999999",
                   "A9999 99999 99999", "AA999999", "9999999", "A999999", "99AAA99999", "999AA9999",
                   "A99-99-9999", "A999 999 999 999", "999999999999", "AAAAAAA999AA")
LICENCE_STATES = ("CA", "NY", "FL", "MI", "TX", "WA", "NJ", "IL", "OH", "PA", "MA", "GA", "AZ", "CO", "IA", "MN")
#: nationalities, religions and political groups (NRP) written in text
NRP_TERMS = ("American", "British", "German", "French", "Spanish", "Italian", "Polish", "Dutch", "Swedish", "Irish",
             "Indian", "Pakistani", "Nigerian", "Brazilian", "Mexican", "Chinese", "Japanese", "Korean", "Turkish",
             "Ukrainian", "Russian", "Canadian", "Australian", "Filipino", "Vietnamese", "Egyptian", "Moroccan",
             "Christian", "Catholic", "Protestant", "Muslim", "Jewish", "Hindu", "Buddhist", "Sikh", "Orthodox",
             "Mormon", "Republican", "Democrat", "Conservative", "Labour", "Liberal Democrat", "Socialist",
             "Communist", "Green Party", "Hispanic", "Latino", "Asian", "African American", "Arab", "Kurdish")

TITLES = ("Mr.", "Mrs.", "Ms.", "Dr.", "Prof.", "Mr", "Ms", "Dr")


class ValueMaker:
    """Faker-backed value makers; every call uses the seeded ``rng`` and Faker instance."""

    def __init__(self, seed: int) -> None:
        from faker import Faker

        self.rng = random.Random(seed)
        self.fake = Faker(list(LOCALES))
        for i, loc in enumerate(LOCALES):  # one seed per locale, or their digits repeat each other
            self.fake[loc].seed_instance(seed * 1009 + i)

    def locale(self, choices: tuple[str, ...] = tuple(LOCALES)) -> Any:
        return self.fake[self.rng.choice(choices)]

    def person(self) -> dict[str, str]:
        g = self.locale()
        first, last = g.first_name(), g.last_name()
        middle = g.first_name()
        title = self.rng.choice(TITLES)
        forms = {
            "full": f"{first} {last}",
            "initial": f"{first[0]}. {last}",
            "middle_initial": f"{first} {middle[0]}. {last}",
            "initials": f"{first[0]}.{middle[0]}. {last}",
            "reversed": f"{last}, {first}",
            "last": last,
        }
        return {"first": first, "last": last, "title": title, **forms}

    def name_form(self, person: dict[str, str]) -> tuple[str, str]:
        """(prefix, name): a realistic way to write a person's name the first time."""
        roll = self.rng.random()
        if roll < 0.45:
            return "", person["full"]
        if roll < 0.6:
            return person["title"] + " ", person["full"]
        if roll < 0.72:
            return person["title"] + " ", person["initial"]
        if roll < 0.84:
            return "", person["middle_initial"]
        if roll < 0.92:
            return person["title"] + " ", person["initials"]
        return person["title"] + " ", person["last"]

    def address(self) -> str:
        g = self.locale(ADDRESS_LOCALES)
        return ", ".join(part.strip() for part in g.address().splitlines() if part.strip())

    def phone(self) -> str:
        import phonenumbers

        for _ in range(200):
            loc = self.rng.choice(tuple(LOCALES))
            region = LOCALES[loc]
            raw = self.fake[loc].phone_number()
            raw = re.split(r"\s*(?:x|ext\.?)\s*\d+$", raw)[0]
            try:
                num = phonenumbers.parse(raw, region)
            except phonenumbers.NumberParseException:
                continue
            if not phonenumbers.is_valid_number(num):
                continue
            style = self.rng.random()
            if style < 0.4:
                return str(raw)
            if style < 0.7:
                return str(phonenumbers.format_number(num, phonenumbers.PhoneNumberFormat.INTERNATIONAL))
            if style < 0.85:
                return str(phonenumbers.format_number(num, phonenumbers.PhoneNumberFormat.NATIONAL))
            return str(phonenumbers.format_number(num, phonenumbers.PhoneNumberFormat.E164))
        raise RuntimeError("no valid phone number generated")  # pragma: no cover

    def card(self) -> str:
        kind = self.rng.choice(("visa16", "mastercard", "amex", "discover", "visa16"))
        digits = str(self.fake["en_US"].credit_card_number(card_type=kind))
        style = self.rng.random()
        if len(digits) == 15:
            groups = [digits[:4], digits[4:10], digits[10:]]
        else:
            groups = [digits[i:i + 4] for i in range(0, len(digits), 4)]
        if style < 0.4:
            return " ".join(groups)
        if style < 0.75:
            return "-".join(groups)
        return digits

    def scheme_card(self) -> str:
        """A Luhn-valid number in a random IIN range of a random scheme, grouped as the scheme prints it."""
        prefixes, lengths = CARD_SCHEMES[self.rng.choice(tuple(CARD_SCHEMES))]
        low, _, high = self.rng.choice(prefixes).partition("-")
        prefix = str(self.rng.randint(int(low), int(high or low))).zfill(len(low))
        size = self.rng.choice(lengths)
        body = prefix + "".join(str(self.rng.randint(0, 9)) for _ in range(size - len(prefix) - 1))
        digits = body + luhn_digit(body)
        sizes = {15: (4, 6, 5), 14: (4, 6, 4)}.get(size, (4,) * (size // 4) + ((size % 4,) if size % 4 else ()))
        style = self.rng.random()
        if style < 0.5:
            return digits
        groups, pos = [], 0
        for n in sizes:
            groups.append(digits[pos:pos + n])
            pos += n
        return (" " if style < 0.8 else "-").join(groups)

    def world_phone(self) -> str:
        """A valid number of a national plan (``PHONE_REGIONS``), written as people do: national, international,
        with dots, with an extension; or a US number in Faker's raw formats (extensions, ``001-``), valid or not."""
        import phonenumbers

        if self.rng.random() < 0.3:
            return str(self.fake["en_US"].phone_number())
        region = self.rng.choice(PHONE_REGIONS)
        kind = self.rng.choice((phonenumbers.PhoneNumberType.FIXED_LINE, phonenumbers.PhoneNumberType.MOBILE))
        example = phonenumbers.example_number_for_type(region, kind)
        if example is None:  # pragma: no cover - every listed region has fixed-line and mobile examples
            raise RuntimeError(f"phonenumbers has no example number for {region}")
        num = example
        national = str(example.national_number)
        for _ in range(50):
            keep = max(2, len(national) - 5)
            cand = national[:keep] + "".join(str(self.rng.randint(0, 9)) for _ in range(len(national) - keep))
            num = phonenumbers.parse("+" + str(example.country_code) + cand)
            if phonenumbers.is_valid_number(num):
                break
        else:
            num = example
        fmt = phonenumbers.PhoneNumberFormat
        style = self.rng.random()
        if style < 0.35:
            text = phonenumbers.format_number(num, fmt.NATIONAL)
        elif style < 0.65:
            text = phonenumbers.format_number(num, fmt.INTERNATIONAL)
        elif style < 0.75:
            text = phonenumbers.format_number(num, fmt.E164)
        elif style < 0.85:
            text = phonenumbers.format_number(num, fmt.INTERNATIONAL).replace(" ", ".").replace("-", ".")
        else:
            text = "00" + phonenumbers.format_number(num, fmt.INTERNATIONAL)[1:]
        if self.rng.random() < 0.15:
            text += self.rng.choice((" ext. ", " x", " ext ", "x")) + str(self.rng.randint(1, 9999))
        return str(text)

    def block_address(self) -> str:
        """An address as its locale writes it, on several lines (street, city and postcode, ...)."""
        g = self.locale(ADDRESS_LOCALES)
        return "\n".join(part.strip() for part in g.address().splitlines() if part.strip())

    def zip_code(self) -> str:
        g = self.fake["en_US"]
        return str(g.zipcode_plus4() if self.rng.random() < 0.5 else g.zipcode())

    def licence(self) -> str:
        fmt = self.rng.choice(LICENCE_FORMATS)
        return "".join(chr(65 + self.rng.randint(0, 25)) if c == "A" else str(self.rng.randint(0, 9)) if c == "9"
                       else c for c in fmt)

    def nrp(self) -> str:
        return self.rng.choice(NRP_TERMS)

    def iban(self) -> str:
        value = str(self.locale(("de_DE", "fr_FR", "es_ES", "it_IT", "nl_NL", "en_GB", "pl_PL", "pt_PT")).iban())
        if self.rng.random() < 0.6:
            return " ".join(value[i:i + 4] for i in range(0, len(value), 4))
        return value

    def email(self, person: dict[str, str] | None = None) -> str:
        g = self.locale()
        if person and self.rng.random() < 0.6:
            local = re.sub(r"[^a-z.]", "", f"{person['first']}.{person['last']}".lower()) or "contact"
            return f"{local}@{g.domain_name()}"
        return str(self.rng.choice((g.email, g.company_email, g.free_email))())

    def ip(self) -> str:
        g = self.fake["en_US"]
        return str(self.rng.choice((g.ipv4_private, g.ipv4_public, g.ipv4_public, g.ipv6))())

    def ssn(self) -> str:
        bad = {"078-05-1120", "123-45-6789", "987-65-4320"}
        while True:
            value = str(self.fake["en_US"].ssn())
            if value not in bad:
                return value

    def org(self) -> str:
        return str(self.locale().company())

    def date(self) -> str:
        d = self.fake["en_US"].date_between(start_date="-60y", end_date="+2y")
        fmt = self.rng.choice(("%d %B %Y", "%B %d, %Y", "%Y-%m-%d", "%d/%m/%Y", "%d.%m.%Y", "%d %b %Y"))
        return str(d.strftime(fmt))

    def domain(self) -> str:
        return str(self.locale().domain_name())

    def job(self) -> str:
        return str(self.fake["en_US"].job())


def luhn_digit(body: str) -> str:
    total = 0
    for i, ch in enumerate(reversed(body)):
        d = int(ch) * (1 if i % 2 else 2)
        total += d - 9 if d > 9 else d
    return str((10 - total % 10) % 10)
