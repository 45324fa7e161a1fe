"""Throughput of PII sanitizing: texts per second on ~400-character chunks.

Builds the analyzer once (reported separately: it is a one-off per process), then
sanitizes ``--count`` realistic HR/support texts in one batched call, the way
ingestion does. Usage: ``.venv/bin/python scripts/bench_sanitizer.py [--count 200]``.
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from backend.common.config import SanitizeSettings  # noqa: E402
from backend.common.logging import configure_logging  # noqa: E402
from backend.common.sanitizer import sanitize_if_enabled  # noqa: E402

NAMES = ["Maria Gonzalez", "John Smith", "Priya Raman", "Wei Zhang", "Anna Kowalski", "David Miller"]
CITIES = ["Chicago", "London", "Berlin", "Austin", "Toronto", "Madrid"]
TEMPLATES = [
    "Ticket update: {name} from {city} reported that the VPN client drops after ten minutes. She can be "
    "reached at {email} or on (212) 555-01{n:02d}. The laptop was last seen at IP 10.20.{n}.7. Please "
    "reinstall the client, check the certificate store and confirm the fix with the user before closing. "
    "If the problem persists, escalate to the network team with the client logs attached to the ticket.",
    "Payroll note: the salary of {name} is paid to IBAN DE89 3704 0044 0532 0130 00 every month. For the "
    "expense refund use card 4111 1111 1111 1111. The employee moved to {city} in March and asked that "
    "HR update the home address and the emergency contact listed in the personnel file. The manager "
    "approved the change on Tuesday and the new tax forms were signed the same day.",
    "Policy reminder: travel must be booked through the portal at least fourteen days in advance. Hotel "
    "costs above the city limit need approval from a director. Receipts are uploaded within thirty days; "
    "late claims are paid in the next cycle. Questions go to the travel desk, not to line managers. "
    "Rail is preferred over air for trips under four hours, and economy class applies to all flights.",
    "Benefits enrolment for {name}: social security number 536-22-{n:04d}, dependants two, plan gold. "
    "Confirmation was sent to {email}. The open enrolment window closes on Friday, and changes after that "
    "date require a qualifying life event such as a move to {city}, a marriage or the birth of a child. "
    "Forms are available on the intranet benefits page.",
]


def make_texts(count: int, seed: int = 7) -> list[str]:
    rng = random.Random(seed)
    texts = []
    for n in range(count):
        name = rng.choice(NAMES)
        email = name.lower().replace(" ", ".") + "@example.com"
        text = rng.choice(TEMPLATES).format(name=name, city=rng.choice(CITIES), email=email, n=n % 100)
        texts.append(text[:400])
    return texts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--count", type=int, default=200)
    parser.add_argument("--batch-size", type=int, default=SanitizeSettings().batch_size)
    args = parser.parse_args()
    configure_logging(level="WARNING")
    settings = SanitizeSettings(enabled=True, mode="redact", batch_size=args.batch_size)
    texts = make_texts(args.count)

    started = time.perf_counter()
    sanitize_if_enabled(texts[:1], settings, doc_ids=["warmup"])
    build_s = time.perf_counter() - started

    started = time.perf_counter()
    outcome = sanitize_if_enabled(texts, settings, doc_ids=[f"doc-{i}" for i in range(len(texts))])
    elapsed = time.perf_counter() - started
    avg_chars = sum(map(len, texts)) / len(texts)
    print(f"machine: {platform.machine()} {os.cpu_count()} cores, python {platform.python_version()}")
    print(f"analyzer build + first text: {build_s:.1f} s")
    print(f"{len(texts)} texts (avg {avg_chars:.0f} chars), batch_size {args.batch_size}: "
          f"{elapsed:.2f} s, {len(texts) / elapsed:.1f} texts/s, {len(outcome.findings)} findings")


if __name__ == "__main__":
    main()
