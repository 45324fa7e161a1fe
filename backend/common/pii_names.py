"""What a named-entity finding really is, where the small NER model guesses wrong (issue 48).

``en_core_web_sm`` calls the currency code of an amount an organisation ("NOK 1,400" ->
``<ORGANIZATION> 1,400``) and many city names organisations too ("Travellers to Bergen or Oslo",
"| Bergen | NOK 1,400 |"). Two corrections, both decided here from the finding's text and what
follows it:

- an ISO 4217 currency code right before an amount is no entity at all (``is_currency_amount``);
- an ``ORGANIZATION`` whose whole text is a place name is a ``LOCATION`` (``relabel``). The
  place names come from the offline geocoding data of ``phonenumbers`` (already a dependency of
  the phone recognizer; Apache-2.0): the English names of the places its area codes cover, about
  37,000 cities and regions, read once per process.
"""

from __future__ import annotations

import re
from functools import lru_cache

#: active ISO 4217 codes (the ones a business document quotes amounts in)
CURRENCY_CODES = frozenset("""
AED AFN ALL AMD ANG AOA ARS AUD AWG AZN BAM BBD BDT BGN BHD BIF BMD BND BOB BRL BSD BTN BWP BYN BZD CAD CDF CHF
CLP CNY COP CRC CUP CVE CZK DJF DKK DOP DZD EGP ERN ETB EUR FJD FKP GBP GEL GHS GIP GMD GNF GTQ GYD HKD HNL HTG
HUF IDR ILS INR IQD IRR ISK JMD JOD JPY KES KGS KHR KMF KPW KRW KWD KYD KZT LAK LBP LKR LRD LSL LYD MAD MDL MGA
MKD MMK MNT MOP MRU MUR MVR MWK MXN MYR MZN NAD NGN NIO NOK NPR NZD OMR PAB PEN PGK PHP PKR PLN PYG QAR RON RSD
RUB RWF SAR SBD SCR SDG SEK SGD SHP SLE SOS SRD SSP STN SVC SYP SZL THB TJS TMT TND TOP TRY TTD TWD TZS UAH UGX
USD UYU UZS VES VND VUV WST XAF XCD XOF XPF YER ZAR ZMW ZWL
""".split())
#: what follows a currency code in an amount: a number, possibly after a space or a sign
_AMOUNT_AFTER = re.compile(r"^[ \u00a0]?[-+]?\d")


def trim_currency(text: str, after: str) -> str:
    """Pure: ``text`` without a currency code ending it when an amount follows ("Stockholm SEK"
    before " 1,250" -> "Stockholm"); the whole text when it is only the code; else as it is."""
    head, _, last = text.rstrip().rpartition(" ")
    if last in CURRENCY_CODES and _AMOUNT_AFTER.match(after):
        return head.rstrip()
    return text


def is_currency_amount(text: str, after: str) -> bool:
    """Pure: ``text`` is a currency code and ``after`` (the text following it) starts an amount."""
    return text.strip() in CURRENCY_CODES and bool(_AMOUNT_AFTER.match(after))


@lru_cache(maxsize=1)
def place_names() -> frozenset[str]:
    """English place names of ``phonenumbers``' geocoding data (read once; offline)."""
    from phonenumbers.geodata import GEOCODE_DATA

    names: set[str] = set()
    for languages in GEOCODE_DATA.values():
        described = languages.get("en")
        if described:
            names.update(part.strip() for part in described.replace("/", ",").split(",") if part.strip())
    return frozenset(names)


def relabel(text: str, entity: str) -> str:
    """The entity type a finding should carry: an ``ORGANIZATION`` that is a place name is a
    ``LOCATION``; anything else keeps its type."""
    if entity == "ORGANIZATION" and text.strip() in place_names():
        return "LOCATION"
    return entity
