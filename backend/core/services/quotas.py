"""Per-principal quotas: requests per minute and per day for each principal (or API key), counted in
the store so that every gunicorn worker counts against one budget (``QuotaCounter``).

The budget of a subject is its principal's own (``quotas.principals``), else the most generous of its
roles' (``quotas.roles``), else ``quotas.default``. Windows are calendar minutes and days in UTC; a
request past a budget raises ``QuotaExceeded`` (429) with the seconds until the window ends (the
``Retry-After`` of the HTTP answer). The HTTP app checks before each API request
(``backend/api/ratelimit.py``), the MCP server before each tool call. A refused request is counted
too: a client that keeps hammering stays refused until the window turns.
"""

from __future__ import annotations

import hashlib
import threading
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Callable, Sequence

from backend.common.config import QuotaLimit, QuotaSettings
from backend.common.errors import QuotaExceeded
from backend.core.ports import QuotaCounter

WINDOWS = ("minute", "day")


@dataclass(frozen=True)
class QuotaSubject:
    """Who is counted: ``key`` is what the counter rows are named by (never a credential)."""

    key: str
    label: str
    principal: str | None = None
    roles: tuple[str, ...] = ()


def subject_for(principal: str | None, roles: Sequence[str] = (), api_key: str | None = None) -> QuotaSubject | None:
    """The principal, else the API key (by its SHA-256, as the rate limit names it), else nobody (pure)."""
    if principal is not None:
        return QuotaSubject(f"principal:{principal}", f"principal {principal!r}", principal, tuple(roles))
    if api_key:
        digest = hashlib.sha256(api_key.encode()).hexdigest()[:16]
        return QuotaSubject(f"key:{digest}", f"API key sha256:{digest}")
    return None


def budget(settings: QuotaSettings, subject: QuotaSubject) -> tuple[QuotaLimit, str]:
    """The subject's budget and the config path it comes from (pure)."""
    if subject.principal is not None and subject.principal in settings.principals:
        return settings.principals[subject.principal], f"quotas.principals.{subject.principal}"
    mine = [(role, settings.roles[role]) for role in subject.roles if role in settings.roles]
    if mine:
        def generous(values: list[int | None]) -> int | None:
            return None if any(v is None for v in values) else max(v for v in values if v is not None)

        merged = QuotaLimit(per_minute=generous([q.per_minute for _, q in mine]),
                            per_day=generous([q.per_day for _, q in mine]))
        return merged, "quotas.roles." + ",".join(role for role, _ in mine)
    return settings.default, "quotas.default"


def window(kind: str, now: float) -> tuple[str, int]:
    """The window ``kind`` at ``now``: its start as stored (``2026-11-28T10:05`` / ``2026-11-28``) and the
    whole seconds until it ends (at least 1) (pure)."""
    at = datetime.fromtimestamp(now, timezone.utc)
    if kind == "minute":
        return at.strftime("%Y-%m-%dT%H:%M"), max(1, 60 - at.second)
    left = 86_400 - (at.hour * 3600 + at.minute * 60 + at.second)
    return at.strftime("%Y-%m-%d"), max(1, left)


class QuotaService:
    """Counts one request of a subject and refuses it past its budget; a no-op when off."""

    def __init__(self, counter: QuotaCounter | None, settings: QuotaSettings,
                 clock: Callable[[], float] = time.time) -> None:
        self.counter = counter if settings.enabled else None
        self.settings = settings
        self.clock = clock
        self._pruned: str | None = None
        self._lock = threading.Lock()

    @property
    def enabled(self) -> bool:
        return self.counter is not None

    def check(self, subject: QuotaSubject | None) -> None:
        """Count the request; ``QuotaExceeded`` (429, ``retry_after`` in its context) past a budget."""
        if self.counter is None or subject is None:
            return
        limits, source = budget(self.settings, subject)
        now = self.clock()
        self._prune(now)
        for kind in WINDOWS:
            limit = limits.per_minute if kind == "minute" else limits.per_day
            if limit is None:
                continue
            start, retry_after = window(kind, now)
            count = self.counter.count_request(subject.key, kind, start)
            if count > limit:
                raise QuotaExceeded(f"quota exceeded: {subject.label} made {count} requests this {kind}; its budget "
                                    f"is {limit} per {kind} ({source}.per_{kind}); retry after {retry_after} s",
                                    field="quota", limit=limit, retry_after=retry_after)

    def _prune(self, now: float) -> None:
        """Once a day per process: counters of earlier days go (today's minutes and day stay)."""
        today, _ = window("day", now)
        with self._lock:
            if self._pruned == today:
                return
            self._pruned = today
        assert self.counter is not None
        self.counter.prune_quota_counters(today)
