"""``rag bench --section ingest-scale`` at a small N: real ``rag ingest`` processes killed (SIGKILL),
resumed, cancelled with ``rag ingest cancel`` and resumed again end in the version a clean run
builds, with the served alias untouched and progress frames with an ETA drawn."""

from __future__ import annotations

from pathlib import Path

import pytest

from backend.benchmarks import ingest_scale
from backend.common.config import DEFAULT_CONFIG

pytestmark = pytest.mark.slow


def test_killed_and_cancelled_ingest_resumes_to_the_clean_runs_version(tmp_path: Path) -> None:
    # paced (one embedding call a second, four documents per group) so the kill and the cancel land mid-run
    section = ingest_scale.measure(DEFAULT_CONFIG, 60, tmp_path, pace_per_min=60, group=4, timeout=300, emit=print)
    print(section.render())
    figures = section.figures
    assert ingest_scale.SEED_DOCS < figures["written_when_killed"] < figures["written_when_cancelled"] < 60
    # resuming skips every document already written and embeds only the rest
    assert figures["resume_after_kill_skipped"] == figures["written_when_killed"]
    assert figures["resume_after_kill_embeddings_computed"] <= 60 - figures["written_when_killed"]
    assert figures["resume_after_cancel_skipped"] == figures["written_when_cancelled"]
    assert figures["resume_after_cancel_written"] == 60 - figures["written_when_cancelled"]
    assert [(name, ok) for name, _, _, _, ok in section.targets] == [(name, True) for name, *_ in section.targets]
    assert "MISSED" not in section.render()


def test_the_generated_corpus_is_the_same_for_the_same_n(tmp_path: Path) -> None:
    first = ingest_scale.generate_corpus(tmp_path / "a", 30)
    second = ingest_scale.generate_corpus(tmp_path / "b", 30)
    assert first.read_text() == second.read_text()
    assert all((tmp_path / "a" / f"d{i:06d}.txt").read_text() == (tmp_path / "b" / f"d{i:06d}.txt").read_text()
               for i in range(30))
    assert len({(tmp_path / "a" / f"d{i:06d}.txt").read_text() for i in range(30)}) == 30
