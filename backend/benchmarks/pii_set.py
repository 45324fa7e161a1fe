"""A labelled, seeded PII set: Faker values inside realistic enterprise texts.

``generate(seed=..., pii_texts=..., clean_texts=...)`` returns :class:`Sample` s. A
PII sample is an HR letter, support ticket, CV, invoice, e-mail or meeting note
with planted values, each recorded as ``(label, start, end)``; a clean sample is
enterprise text with no personal data at all (policies, runbooks, release notes,
with amounts, versions, ticket ids, durations and product names), used to measure
over-redaction. The same seed and Faker version always give the same set.

Values come from Faker in many locales: names with titles and initials, street
addresses in ten countries, phone numbers in national and international formats
(kept only when ``phonenumbers`` calls them valid for their region, so every
planted phone number is a real-format number), card numbers with spaces and
dashes, IBANs with and without spaces, e-mails, IPv4/IPv6, US SSNs, companies,
dates in several formats and web domains. Formats real text has that Faker alone
does not give are made here: card numbers in the IIN ranges and lengths of eleven
schemes, numbers of 27 national phone plans with extensions, multi-line addresses,
ZIP+4, US licence layouts and nationality/religion/party mentions (``NRP``).

Faker is a test dependency (extra ``test``: ``make setup-test``); nothing here runs in the
product.

The values are made in ``pii_values`` and the texts are in ``pii_templates``; this module
plants the values into the texts and records their spans.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Callable

from backend.benchmarks.pii_values import LICENCE_STATES, ValueMaker
from backend.benchmarks.pii_templates import CLEAN_TEMPLATES, PII_TEMPLATES


#: evaluation labels (the product's entity for each is in ``PRODUCT_ENTITY``)
LABELS = ("PERSON", "STREET_ADDRESS", "PHONE_NUMBER", "CREDIT_CARD", "IBAN_CODE", "EMAIL_ADDRESS", "IP_ADDRESS",
          "US_SSN", "ORGANIZATION", "DATE_TIME", "URL", "ZIP_CODE", "US_DRIVER_LICENSE", "NRP")
STRUCTURED = ("EMAIL_ADDRESS", "PHONE_NUMBER", "CREDIT_CARD", "IBAN_CODE", "US_SSN", "IP_ADDRESS")


@dataclass(frozen=True)
class Planted:
    label: str
    start: int
    end: int


@dataclass
class Sample:
    kind: str  # "pii" or "clean"
    template: str
    text: str
    planted: list[Planted] = field(default_factory=list)

    def values(self) -> list[tuple[str, str]]:
        return [(p.label, self.text[p.start:p.end]) for p in self.planted]


class _Builder:
    """Builds text from pieces, recording each planted value's offsets."""

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.size = 0
        self.planted: list[Planted] = []

    def add(self, text: str, label: str | None = None) -> None:
        if label is not None and text:
            self.planted.append(Planted(label, self.size, self.size + len(text)))
        self.parts.append(text)
        self.size += len(text)


_SLOT = re.compile(r"\{([a-z]+[0-9]?)(?:\.(first|last))?\}")


def _pii_sample(v: ValueMaker, name: str, template: str, n: int) -> Sample:
    people: dict[str, dict[str, str]] = {}
    cache: dict[str, str] = {}
    person0: dict[str, str] | None = None

    def person(key: str) -> dict[str, str]:
        if key not in people:
            people[key] = v.person()
        return people[key]

    makers: dict[str, tuple[str | None, Callable[[], str]]] = {
        "addr": ("STREET_ADDRESS", v.address), "phone": ("PHONE_NUMBER", v.phone), "card": ("CREDIT_CARD", v.card),
        "iban": ("IBAN_CODE", v.iban), "ip": ("IP_ADDRESS", v.ip), "ssn": ("US_SSN", v.ssn),
        "org": ("ORGANIZATION", v.org), "date": ("DATE_TIME", v.date), "domain": ("URL", v.domain),
        "job": (None, v.job), "cardx": ("CREDIT_CARD", v.scheme_card), "wphone": ("PHONE_NUMBER", v.world_phone),
        "addrblock": ("STREET_ADDRESS", v.block_address), "zip": ("ZIP_CODE", v.zip_code),
        "dl": ("US_DRIVER_LICENSE", v.licence), "nrp": ("NRP", v.nrp),
        "st": (None, lambda: v.rng.choice(LICENCE_STATES)),
    }
    b = _Builder()
    pos = 0
    for m in _SLOT.finditer(template):
        b.add(template[pos:m.start()])
        pos = m.end()
        slot, form = m.group(1), m.group(2)
        base = slot.rstrip("0123456789")
        if base == "p":
            p = person(slot)
            person0 = person0 or p
            if form:
                b.add(p[form], "PERSON")
            else:
                prefix, value = v.name_form(p)
                b.add(prefix)
                b.add(value, "PERSON")
        elif base == "email":
            owner = person("p1" if slot == "email" else "p2")
            cache.setdefault(slot, v.email(owner))
            b.add(cache[slot], "EMAIL_ADDRESS")
        elif base == "n":
            cache.setdefault(slot, str(100000 + n * 37 % 900000))
            b.add(cache[slot])
        else:
            label, make = makers[base]
            cache.setdefault(slot, make())
            b.add(cache[slot], label)
    b.add(template[pos:])
    return Sample("pii", name, "".join(b.parts), b.planted)


def _clean_sample(v: ValueMaker, template: str, index: int) -> Sample:
    r = v.rng
    g = v.fake["en_US"]
    fill = {
        "amount": f"{r.randint(1, 99)},{r.randint(0, 999):03d}", "amount2": f"{r.randint(20, 90)}.00",
        "v1": r.randint(1, 19), "v2": r.randint(0, 30), "v3": r.randint(0, 9), "pct": r.randint(2, 40),
        "pct2": r.randint(2, 30), "n": r.randint(10000, 99999), "n2": r.randint(1000, 50000),
        "n3": r.randint(3600, 864000), "n4": r.randint(1000, 9999), "workers": r.randint(4, 32),
        "lat": r.randint(300, 4000), "months": r.randint(4, 18), "job": g.job(), "bs": g.bs(),
        "catch": g.catch_phrase(), "isbn": g.isbn13(), "order": r.randint(10**11, 10**13 - 1),
        "track": r.randint(10**9, 10**14 - 1), "batch": f"{r.randint(10, 99)}-{r.randint(1000, 9999)}",
        "part": r.randint(10**5, 10**8), "part2": r.randint(10**4, 10**7),
    }
    return Sample("clean", f"clean_{index}", template.format(**fill))


def generate(seed: int = 17, pii_texts: int = 1500, clean_texts: int = 400) -> list[Sample]:
    """``pii_texts`` labelled texts (templates in rotation) then ``clean_texts`` PII-free ones."""
    v = ValueMaker(seed)
    names = list(PII_TEMPLATES)
    out = [_pii_sample(v, names[i % len(names)], PII_TEMPLATES[names[i % len(names)]], i) for i in range(pii_texts)]
    out += [_clean_sample(v, CLEAN_TEMPLATES[i % len(CLEAN_TEMPLATES)], i) for i in range(clean_texts)]
    return out
