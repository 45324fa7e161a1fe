"""Ingest progress: rates and ETA from counts and a clock (pure), the tracker the jobs page reads,
and the CLI's tqdm bars with their ETA."""

from __future__ import annotations

import io
import re

import pytest

from backend.common.progress import (
    NO_PROGRESS,
    Progress,
    ProgressTracker,
    ReportingProgress,
    TqdmProgress,
    snapshot_of,
)


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_rates_and_eta_come_from_the_counts_and_the_clock() -> None:
    snap = snapshot_of(total=1000, documents=250, chunks=500, embedded=480, started=100.0, now=150.0)
    assert (snap.documents_per_s, snap.chunks_per_s) == (5.0, 10.0)
    assert snap.eta_s == pytest.approx(150.0)  # 750 left at 5 documents/s
    assert snap.to_dict()["eta_s"] == 150.0 and snap.to_dict()["elapsed_s"] == 50.0


def test_no_eta_before_the_first_document_and_zero_when_done() -> None:
    assert snapshot_of(total=10, documents=0, chunks=0, embedded=0, started=5.0, now=9.0).eta_s is None
    assert snapshot_of(total=10, documents=0, chunks=0, embedded=0, started=None, now=9.0).documents_per_s == 0.0
    done = snapshot_of(total=10, documents=10, chunks=12, embedded=12, started=5.0, now=7.0)
    assert (done.eta_s, done.documents_per_s) == (0.0, 5.0)


def test_tracker_adds_the_totals_of_every_series_and_counts_from_the_first_start() -> None:
    clock = Clock()
    tracker = ProgressTracker(clock=clock)
    assert isinstance(tracker, Progress) and isinstance(NO_PROGRESS, Progress)
    tracker.start(6, label="KB_A_V1")
    clock.now += 2
    tracker.documents(3)
    tracker.chunks(9)
    tracker.embedded(9)
    tracker.start(4, label="KB_B_V1")
    clock.now += 1
    snap = tracker.snapshot()
    assert (snap.total, snap.documents, snap.chunks, snap.embedded) == (10, 3, 9, 9)
    assert (snap.documents_per_s, snap.chunks_per_s, snap.eta_s) == (1.0, 3.0, 7.0)
    assert snap.note == "KB_B_V1"
    NO_PROGRESS.documents(5)
    assert NO_PROGRESS.snapshot().documents == 0


def test_reporting_progress_hands_a_snapshot_after_each_group() -> None:
    clock = Clock()
    seen: list[tuple[int, int, float | None]] = []
    progress = ReportingProgress(lambda s: seen.append((s.documents, s.total, s.eta_s)), clock=clock)
    progress.start(4)
    clock.now += 1
    progress.documents(2)
    clock.now += 1
    progress.documents(2)
    assert seen == [(2, 4, 1.0), (4, 4, 0.0)]


def test_cli_bars_show_files_rate_and_eta_on_the_stream() -> None:
    stream = io.StringIO()
    stream.isatty = lambda: True  # type: ignore[method-assign]
    progress = TqdmProgress(True, stream=stream)
    progress.start(4)
    for _ in range(4):
        progress.documents(1)
        progress.chunks(2)
        progress.embedded(2)
    progress.note("cancelling (Ctrl-C): 4 of 4 documents written")
    assert progress.snapshot().documents == 4
    progress.close()
    out = stream.getvalue()
    assert re.search(r"files:\s+\d+%\|.*\d/4 \[\d+:\d+<\d+:\d+", out), out
    assert "chunks" in out and "cancelling (Ctrl-C)" in out


def test_disabled_bars_draw_nothing_but_still_count() -> None:
    stream = io.StringIO()
    progress = TqdmProgress(False, stream=stream)
    progress.start(2)
    progress.documents(2)
    progress.note("cancelling")
    progress.close()
    assert stream.getvalue() == "" and progress.snapshot().documents == 2
