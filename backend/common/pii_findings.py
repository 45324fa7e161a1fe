"""What the sanitizer records about PII, and the audit file it is written to.

A finding says *where* PII is and *what kind* it is, never what it is: no raw
value and no hash of it either, because a hash of a phone number or an SSN can be
reversed by hashing every candidate (the value space is small). ``text[start:end]``
of the analysed text reveals the value to whoever already holds that text, and
to no one else.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Sequence

from backend.common.errors import SanitizerError


@dataclass(frozen=True)
class PiiFinding:
    """One PII span; offsets are relative to the text passed to the sanitizer."""

    doc_id: str
    entity_type: str
    start: int
    end: int
    score: float


@dataclass(frozen=True)
class SanitizeOutcome:
    """Texts after sanitizing (redacted, or unchanged in audit mode) and the findings in them."""

    texts: list[str]
    findings: list[PiiFinding]


def finding_record(finding: PiiFinding, recorded_at: str) -> dict[str, object]:
    """The audit line for one finding: exactly these keys, nothing derived from the value."""
    record: dict[str, object] = asdict(finding)
    record["score"] = round(finding.score, 4)
    record["recorded_at"] = recorded_at
    return record


def write_findings(path: Path, findings: Sequence[PiiFinding]) -> None:
    """Append one JSON line per finding to ``path``, creating its folders.

    Appending (not rewriting) keeps the audit trail of earlier runs; every line
    of one call shares one UTC ``recorded_at``.
    """
    if not findings:
        return
    recorded_at = datetime.now(timezone.utc).isoformat(timespec="seconds")
    lines = "".join(json.dumps(finding_record(f, recorded_at), sort_keys=True) + "\n" for f in findings)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("a", encoding="utf-8") as fh:
            fh.write(lines)
    except OSError as exc:
        raise SanitizerError(f"{path}: cannot write PII audit findings: {exc.strerror}", path=str(path)) from exc
