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
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, field
from typing import Any, Callable

#: evaluation labels (the product's entity for each is in ``PRODUCT_ENTITY``)
LABELS = ("PERSON", "STREET_ADDRESS", "PHONE_NUMBER", "CREDIT_CARD", "IBAN_CODE", "EMAIL_ADDRESS", "IP_ADDRESS",
          "US_SSN", "ORGANIZATION", "DATE_TIME", "URL", "ZIP_CODE", "US_DRIVER_LICENSE", "NRP")
STRUCTURED = ("EMAIL_ADDRESS", "PHONE_NUMBER", "CREDIT_CARD", "IBAN_CODE", "US_SSN", "IP_ADDRESS")

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


# --- values ----------------------------------------------------------------------
class _Values:
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
        digits = body + _luhn_digit(body)
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


def _luhn_digit(body: str) -> str:
    total = 0
    for i, ch in enumerate(reversed(body)):
        d = int(ch) * (1 if i % 2 else 2)
        total += d - 9 if d > 9 else d
    return str((10 - total % 10) % 10)


# --- templates ---------------------------------------------------------------------
# Slots: {p1} {p2} (a person's name as first written, prefix kept outside the value),
# {p1.first} {p1.last} (later mentions of the same person), {addr}, {phone}, {phone2}, {card},
# {iban}, {email}, {email2}, {ip}, {ssn}, {org}, {org2}, {date}, {date2}, {domain}, {job}, {n}.
PII_TEMPLATES: dict[str, str] = {
    "hr_offer": (
        "{p1}\n{addr}\n\nDear {p1.first},\n\nWe are pleased to offer you the position of {job} at {org}, starting on "
        "{date}. Your manager will be {p2}. Please sign and return this letter to HR by e-mail ({email}) or call "
        "us on {phone} if anything is unclear. Salary is paid monthly to the account you provided (IBAN {iban}).\n\n"
        "Kind regards,\nPeople Team"
    ),
    "hr_leave": (
        "Subject: Leave request approved\n\nHi {p1.first}, your parental leave from {date} to {date2} has been "
        "approved by {p2}. Payroll will continue to pay into IBAN {iban}. If your home address changes from {addr}, "
        "update it in the HR portal. Questions: {email} or {phone}."
    ),
    "ticket": (
        "INC-{n}: VPN drops every ten minutes\nReporter: {p1} ({email})\nCallback: {phone}\nAffected host: {ip}\n"
        "Description: Since the update on {date} the client disconnects. {p1.first} tried reinstalling. "
        "Assigned to {p2}, network team. Customer account: {org}."
    ),
    "ticket_access": (
        "Access request #{n}. {p1} from {org} asks for read access to the finance share. Approver: {p2}. "
        "Request raised from {ip} at {date}. Contact the requester on {phone} or {email} before granting."
    ),
    "cv": (
        "CURRICULUM VITAE\n{p1}\n{addr} | {phone} | {email}\nBorn {date}\n\nExperience\n{job}, {org} "
        "(2016-2021): led a team of six, migrated billing to the cloud.\n{job2}, {org2} (2012-2016).\n"
        "References available from {p2} on request."
    ),
    "invoice": (
        "INVOICE {n}\nBill to: {org}, attn. {p1}, {addr}\nDate: {date}\nAmount due: EUR 4,250.00 (net 30 days)\n"
        "Pay by transfer to IBAN {iban} or by card {card}.\nQueries: {email}, tel. {phone}."
    ),
    "payment": (
        "Payment note: {p1} paid the conference fee with card {card} on {date}. The receipt was sent to {email}. "
        "Refunds, if any, go to IBAN {iban}. Our contact at {org} is {p2}."
    ),
    "benefits": (
        "Benefits enrolment for {p1}: social security number {ssn}, two dependants, plan gold. Confirmation was "
        "sent to {email}. The employee lives at {addr} and can be reached on {phone}. Date of birth: {date}."
    ),
    "email_thread": (
        "From: {p1} <{email}>\nTo: {p2} <{email2}>\nSent: {date}\n\nHi {p2.first},\nthanks for the call. As agreed, "
        "{org} will send the signed contract by Friday. My direct line is {phone}. Details are on {domain}.\n"
        "Best, {p1.first}"
    ),
    "meeting": (
        "Minutes of the steering meeting held on {date}. Present: {p1}, {p2}, {p3}. {p1.last} reported that "
        "{org} accepted the offer. {p3.first} will follow up with {org2} and share the slides on {domain}. "
        "Next meeting: {date2}."
    ),
    "security": (
        "Security incident SEC-{n}: failed logins for {email} from {ip} and {ip2}. The account owner, {p1}, "
        "confirmed the attempts were not hers. Card {card} linked to the account was blocked. "
        "Escalated to {p2} on {phone}."
    ),
    "shipping": (
        "Delivery instructions: ship the replacement laptop to {p1}, {addr}. Phone on arrival: {phone}. "
        "Cost centre owner {p2} approved it on {date}. Carrier account belongs to {org}."
    ),
    "reference": (
        "To whom it may concern,\n{p1} worked for {org} as a {job} from {date} until {date2}. {p1.first} was "
        "reliable and well liked. I am happy to give more detail: {p2}, {phone}, {email}."
    ),
    "expense": (
        "Expense claim {n} by {p1}: hotel in the city centre, 3 nights, EUR 612.40, paid with {card}. Reimburse "
        "to IBAN {iban}. Approved by {p2} on {date}."
    ),
    "it_asset": (
        "Asset handover: laptop SN-{n} with static IP {ip} goes to {p1} ({email}) at {org}. The previous user, "
        "{p2}, returned the charger. Registered on {domain} under SSN {ssn} for the payroll link."
    ),
    "payroll": (
        "Payroll change for {p1} (SSN {ssn}): new salary effective {date}, paid to IBAN {iban}. Tax forms were "
        "posted to {addr}. HR contact: {p2}, {phone}."
    ),
    "dmv_check": (
        "Pre-employment check for {p1}: driver's license {dl} ({st}), clean record. Commercial vehicles only "
        "with a CDL. Home ZIP code {zip}. Verified by {p2} on {date}; questions to {wphone}."
    ),
    "kyc_form": (
        "KYC record\nName: {p1}\nNationality: {nrp}\nResidential address:\n{addrblock}\nPhone: {wphone}\n"
        "DL number: {dl}\nCard on file: {cardx}\nChecked by {p2}."
    ),
    "card_dispute": (
        "Chargeback {n}: the holder {p1} disputes two payments on card {cardx}, both made on {date}. A second "
        "card, {cardx2}, was issued as a replacement. Call back on {wphone} or {wphone2}."
    ),
    "mailing_label": (
        "Return to sender if undeliverable.\n\n{p1}\n{addrblock}\n\nTracking {n}, parcel 2 of 3."
    ),
    "diversity_survey": (
        "Voluntary survey from {p1}: identifies as {nrp}, religion {nrp2}. Prefers to be contacted at {email}. "
        "Postal code: {zip}."
    ),
    "contact_card": (
        "{p1}\n{job}, {org}\nMobile {wphone} | Office {wphone2}\n{addrblock}"
    ),
    "community_note": (
        "{p1} told the panel that as a {nrp} voter she supported the proposal; {p2}, a {nrp2} member of the "
        "committee, asked for the minutes. Both live in the {zip} area."
    ),
    "relocation": (
        "Relocation approved: {p1} moves from {addr} to the new office. Until then use the old number {wphone} "
        "and the payment card {cardx}. Driving licence no. {dl} is needed for the pool car."
    ),
    "customer_note": (
        "Customer call log: {p1} of {org} called from {phone} about invoice {n}. Asked us to use the new billing "
        "address {addr} and to e-mail {email}. Follow-up by {p2} before {date}."
    ),
}

CLEAN_TEMPLATES: tuple[str, ...] = (
    "Travel policy: book travel through the portal at least fourteen days in advance. Hotel costs above the city "
    "limit of EUR {amount} need approval from a director. Receipts are uploaded within 30 days; late claims are "
    "paid in the next cycle. Rail is preferred for trips under four hours.",
    "Release notes v{v1}.{v2}.{v3}: the export job now streams rows instead of loading the whole table, cutting "
    "memory use by {pct}%. The retry limit was raised from 3 to 5. Ticket INC-{n} is fixed. Upgrade the agent "
    "before the next maintenance window.",
    "Runbook: when the queue depth exceeds {n2} messages for more than 10 minutes, scale the worker pool to "
    "{workers} replicas, check the dead-letter queue and restart the consumer if it is stuck. Record the action "
    "in the change log with the change number CHG-{n}.",
    "Quarterly review: revenue grew {pct}% year over year to {amount} thousand, operating margin was {pct2}%. "
    "The {job} role remains open. Priorities for the next quarter are {bs}, cost control and customer retention.",
    "Onboarding checklist: collect the laptop from the service desk, enrol in multi-factor authentication, "
    "complete the security training within two weeks and read the code of conduct. Your manager schedules a "
    "check-in after 30 days and again after 90 days.",
    "Procurement guideline: purchases above {amount} need three quotes. Framework agreements cover office "
    "supplies and cloud capacity. Purchase order PO-{n} was approved; delivery takes 5 to 7 working days.",
    "Incident postmortem: the cache cluster ran out of memory after a configuration change raised the key "
    "TTL to {n3} seconds. Latency p99 rose to {lat} ms for 42 minutes. Action items: add an alert on eviction "
    "rate, document the TTL limits and review config changes in pairs.",
    "Data retention: application logs are kept for 90 days, audit logs for 7 years and backups for 35 days. "
    "Personal data is deleted when the purpose ends. Exceptions need approval from the data protection office.",
    "Product brief: {catch}. The new dashboard shows {bs} in real time and exports to CSV and PDF. Pricing "
    "starts at {amount} per seat per month, with a 15% discount on annual plans.",
    "Maintenance notice: the database will be upgraded to version {v1}.{v2} on the first Saturday of the month "
    "between 02:00 and 04:00 UTC. Read-only mode applies during the window; jobs scheduled then will run "
    "afterwards.",
    "Expense policy: meals are reimbursed up to {amount2} per day, taxis only after 22:00 or with luggage. "
    "Mileage is paid at 0.30 per kilometre. Claims go through the finance system with the cost centre CC-{n4}.",
    "Capacity plan: storage grows by {pct} TB a month; at the current rate the array is full in {months} "
    "months. We propose adding two shelves in the next budget cycle and archiving cold data to object storage.",
    # look-alikes: long digit runs, ids, ISBNs, versions, licences of software, language names
    "Book order: ISBN {isbn}, {n4} copies. Catalogue number {order}, shipped in {n2} boxes; invoice total "
    "USD {amount}. Tracking reference {track}.",
    "Inventory: {n} units in stock across 14 sites. Batch {batch} expires after 18 months; part numbers "
    "A{part} and BX{part2} are discontinued. Reorder point is {n2} units.",
    "Licensing: the SDK ships under the Apache License 2.0 and the client under the MIT license. Renew the "
    "enterprise license before the end of the quarter; {workers} seats are in use, build {v1}.{v2}.{n4}.",
    "Order {order} was dispatched from warehouse {n4}. Build {n} passed 1,284 tests in {n3} ms; coverage is "
    "{pct}.{v3}% and the artefact is {n2} KB.",
    "Localisation: the handbook is available in English, German and French; the Spanish edition follows in "
    "Q{v3}. Translation memory holds {n} segments and {n2} terms.",
)


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


def _pii_sample(v: _Values, name: str, template: str, n: int) -> Sample:
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


def _clean_sample(v: _Values, template: str, index: int) -> Sample:
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
    v = _Values(seed)
    names = list(PII_TEMPLATES)
    out = [_pii_sample(v, names[i % len(names)], PII_TEMPLATES[names[i % len(names)]], i) for i in range(pii_texts)]
    out += [_clean_sample(v, CLEAN_TEMPLATES[i % len(CLEAN_TEMPLATES)], i) for i in range(clean_texts)]
    return out
