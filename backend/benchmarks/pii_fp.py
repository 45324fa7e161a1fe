"""False positives: PII-free texts with what the sanitizer has been seen to mistake for PII.

``generate(seed=..., per_kind=...)`` returns PII-free :class:`~backend.benchmarks.pii_set.Sample` s of
four kinds, each marking its tricky values as ``TRAP`` spans (never PII):

- ``order``: order, invoice, shipment and ticket numbers of 8-19 digits whose last digit is a
  Luhn check digit (as many order systems make them), plain or grouped in fours;
- ``decimal``: decimals in scientific and financial text (measurements, p-values, exchange rates,
  yields, coefficients, ranges and lists of decimals);
- ``mit_licence``: "MIT" as the software licence;
- ``mit_university``: "MIT" as the university; an organisation, which the default entities claim,
  so a finding there is by design: reported apart, not counted as a false positive.

:func:`measure` runs the product and bare Presidio on the set (as ``pii.measure`` does) and reports,
per kind, the share of trap values that any finding touches and the share of characters redacted.
"""

from __future__ import annotations

import random
from collections import defaultdict
from pathlib import Path
from typing import Callable

from backend.benchmarks.pii_set import Planted, Sample
from backend.benchmarks.stats import Section

KINDS = ("order", "decimal", "mit_licence", "mit_university")
#: kinds whose trap values are not PII under the default entities (the false-positive rate is over these)
FALSE_POSITIVE_KINDS = ("order", "decimal", "mit_licence")
TRAP = "TRAP"
MAX_FALSE_POSITIVE_RATE = 0.03


def luhn_check_digit(body: str) -> str:
    total = 0
    for i, ch in enumerate(reversed(body)):
        d = int(ch)
        if i % 2 == 0:  # these digits are doubled once the check digit is appended
            d = d * 2 - 9 if d * 2 > 9 else d * 2
        total += d
    return str((10 - total % 10) % 10)


def luhn_number(rng: random.Random, length: int) -> str:
    body = str(rng.randint(1, 9)) + "".join(str(rng.randint(0, 9)) for _ in range(length - 2))
    return body + luhn_check_digit(body)


def _order_value(rng: random.Random) -> str:
    digits = luhn_number(rng, rng.choice((8, 10, 12, 13, 14, 15, 16, 16, 16, 18, 19)))
    if len(digits) % 4 == 0 and rng.random() < 0.4:
        return " ".join(digits[i:i + 4] for i in range(0, len(digits), 4))
    return digits


_ORDER = (
    "Order {v} was shipped on the third working day and is due at the warehouse next week.",
    "Please quote invoice number {v} when you pay; payment terms are 30 days net.",
    "Your return for order no. {v} has been received and a credit note will follow.",
    "Shipment {v} left the distribution centre at 06:40 and is on schedule.",
    "The purchase order {v} covers 40 chairs and 12 desks for the new floor.",
    "Ticket {v}: the nightly export failed twice and was re-run by hand.",
    "Reference {v} must appear on every delivery note for this contract.",
    "Batch {v} passed the quality check with no defects in the sample of 200 units.",
    "Credit memo {v} reverses the duplicate charge from the previous billing run.",
    "Tracking number {v} shows the parcel at the sorting hub since Monday.",
)
_DECIMAL = (
    "The mean reaction time was {a} s (SD {b}), and the effect was significant at p = {c}.",
    "EUR/USD closed at {a} after opening at {b}; the spread widened to {c} pips.",
    "Absorbance readings were {a}, {b} and {c} at 450 nm, within the calibration range.",
    "The ten-year yield rose to {a} % while the two-year note ended at {b} % and the spread at {c}.",
    "The fitted coefficients were {a}, {b} and {c}, with an R-squared of 0.{d}.",
    "Sample pH ranged from {a} to {b}; conductivity averaged {c} mS/cm.",
    "Net margin improved from {a} % to {b} % and earnings per share reached {c}.",
    "The estimated thermal conductivity is {a} W/(m K), with an uncertainty of {b} and a bias of {c}.",
    "Measured wavelengths: {a} nm, {b} nm and {c} nm, each to within 0.{d} nm.",
    "The portfolio beta is {a}, its Sharpe ratio {b} and its tracking error {c} %.",
)
_MIT_LICENCE = (
    "The library is released under the MIT License, so it can be used in commercial products.",
    "All code in this repository is MIT licensed; see the LICENSE file for the full text.",
    "We chose the MIT licence because it is short and permissive.",
    "Dependencies under MIT, BSD or Apache 2.0 terms are approved without a legal review.",
    "The parser is MIT-licensed and maintained by a small group of volunteers.",
    "License: MIT. Contributions are welcome through pull requests.",
    "Unlike the GPL, the MIT license does not require derived works to be open source.",
    "The template ships under the MIT terms, and the fonts under the SIL Open Font License.",
)
_MIT_UNIVERSITY = (
    "Researchers at MIT published the benchmark and its evaluation scripts last year.",
    "The course follows the MIT OpenCourseWare lectures on linear algebra.",
    "A study from MIT found that shorter meetings improved decisions.",
    "The algorithm was first described by a group at MIT in the late 1990s.",
    "She presented the results at a workshop hosted by MIT and Stanford.",
    "The toolkit started as a student project at MIT's media lab.",
)


def _decimal(rng: random.Random) -> str:
    scale = rng.choice((1, 10, 100))
    places = rng.choice((2, 3, 4))
    return f"{rng.random() * scale:.{places}f}"


def _fill(template: str, values: dict[str, str]) -> tuple[str, list[Planted]]:
    """``template`` with ``{name}`` replaced by ``values``; each inserted value a TRAP span."""
    text, planted, rest = "", [], template
    while "{" in rest:
        head, _, tail = rest.partition("{")
        name, _, rest = tail.partition("}")
        text += head
        planted.append(Planted(TRAP, len(text), len(text) + len(values[name])))
        text += values[name]
    return text + rest, planted


def _mentions(text: str) -> list[Planted]:
    out, start = [], text.find("MIT")
    while start >= 0:
        out.append(Planted(TRAP, start, start + 3))
        start = text.find("MIT", start + 3)
    return out


def generate(seed: int = 5, per_kind: int = 100) -> list[Sample]:
    """``per_kind`` PII-free texts of each kind; the same seed always gives the same set."""
    rng = random.Random(seed)
    makers: dict[str, Callable[[], tuple[str, list[Planted]]]] = {
        "order": lambda: _fill(rng.choice(_ORDER), {"v": _order_value(rng)}),
        "decimal": lambda: _fill(rng.choice(_DECIMAL), {k: _decimal(rng) for k in "abc"}
                                 | {"d": str(rng.randint(10, 99))}),
        "mit_licence": lambda: (lambda t: (t, _mentions(t)))(rng.choice(_MIT_LICENCE)),
        "mit_university": lambda: (lambda t: (t, _mentions(t)))(rng.choice(_MIT_UNIVERSITY)),
    }
    samples = []
    for kind in KINDS:
        for _ in range(per_kind):
            text, planted = makers[kind]()
            samples.append(Sample("clean", kind, text, planted))
    return samples


def flag_rates(samples: list[Sample], spans: list[list[tuple[int, int]]]) -> dict[str, tuple[float, float]]:
    """Per kind: (share of trap values any finding touches, share of characters inside findings)."""
    traps: dict[str, int] = defaultdict(int)
    touched: dict[str, int] = defaultdict(int)
    chars: dict[str, int] = defaultdict(int)
    redacted: dict[str, int] = defaultdict(int)
    for sample, found in zip(samples, spans):
        mask = bytearray(len(sample.text))
        for s, e in found:
            mask[s:e] = b"\x01" * (e - s)
        chars[sample.template] += len(mask)
        redacted[sample.template] += sum(mask)
        for p in sample.planted:
            traps[sample.template] += 1
            touched[sample.template] += any(mask[p.start:p.end])
    return {k: (touched[k] / traps[k] if traps[k] else 0.0, redacted[k] / chars[k] if chars[k] else 0.0)
            for k in traps}


def false_positive_rate(samples: list[Sample], spans: list[list[tuple[int, int]]]) -> float:
    """Share of trap values touched by a finding, over the kinds that are never PII."""
    total = hit = 0
    for sample, found in zip(samples, spans):
        if sample.template not in FALSE_POSITIVE_KINDS:
            continue
        for p in sample.planted:
            total += 1
            hit += any(s < p.end and p.start < e for s, e in found)
    return hit / total if total else 0.0


def measure(config: Path | None = None, *, seed: int = 5, per_kind: int = 100) -> Section:
    from backend.benchmarks import pii

    samples = generate(seed=seed, per_kind=per_kind)
    settings = pii.product_settings(config) if config else pii.product_settings()
    product = pii.run_product(samples, settings)
    presidio = pii.run_presidio(samples, settings.batch_size)
    ours, theirs = flag_rates(samples, product.spans), flag_rates(samples, presidio.spans)
    section = Section(f"PII false positives (generated PII-free set, seed {seed}: {per_kind} texts per kind)")
    section.figures["kind: trap values flagged product / presidio [chars redacted]"] = ""
    for kind in KINDS:
        section.figures[f"  {kind}"] = (f"{ours[kind][0]:.3f} / {theirs[kind][0]:.3f}   "
                                        f"[{ours[kind][1]:.4f} / {theirs[kind][1]:.4f}]")
    fp_ours, fp_theirs = false_positive_rate(samples, product.spans), false_positive_rate(samples, presidio.spans)
    section.figures["false positives (order, decimal, MIT licence) product / presidio"] = (
        f"{fp_ours:.3f} / {fp_theirs:.3f}")
    section.target("false positives on order numbers, decimals, MIT licence", fp_ours, "<=", MAX_FALSE_POSITIVE_RATE)
    section.notes.append("mit_university: MIT the university is an organisation, which the default entities "
                         "claim; a finding there is by design and not counted as a false positive")
    section.notes.append("the set is generated here (pii_fp.py), so these are this repository's own texts")
    return section
