"""Small statistics and measurement helpers for the benchmark sections."""

from __future__ import annotations

import resource
import time
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np


def percentiles(samples_ms: list[float]) -> dict[str, float]:
    arr = np.asarray(samples_ms, dtype=np.float64)
    return {f"p{p}": round(float(np.percentile(arr, p)), 2) for p in (50, 95, 99)}


def peak_rss_mb() -> float:
    """Peak resident set size of this process so far (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def timed(fn: Callable[[], Any]) -> tuple[Any, float]:
    start = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - start


@dataclass
class Section:
    """One benchmark section: named figures, ratios against targets, notes."""

    title: str
    figures: dict[str, Any] = field(default_factory=dict)
    targets: list[tuple[str, float, str, float, bool]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def target(self, name: str, value: float, op: str, goal: float) -> None:
        ok = value >= goal if op == ">=" else value <= goal
        self.targets.append((name, round(value, 4), op, goal, ok))

    def render(self) -> str:
        lines = [f"== {self.title}"]
        for key, value in self.figures.items():
            lines.append(f"   {key:<48} {value}")
        for name, value, op, goal, ok in self.targets:
            verdict = "MET" if ok else f"MISSED by {abs(goal - value):.4f}"
            lines.append(f"   target {name:<41} {value} {op} {goal}  {verdict}")
        lines.extend(f"   note: {n}" for n in self.notes)
        return "\n".join(lines)

    def as_dict(self) -> dict[str, Any]:
        return {
            "title": self.title,
            "figures": self.figures,
            "targets": [
                {"name": n, "value": v, "op": o, "goal": g, "met": ok} for n, v, o, g, ok in self.targets
            ],
            "notes": self.notes,
        }
