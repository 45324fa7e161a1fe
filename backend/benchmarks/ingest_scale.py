"""``rag bench --section ingest-scale --docs N``: a long ingest that is killed, resumed, cancelled and
resumed again ends in the same version as one clean run (issue 33, point 3).

Everything runs as real ``rag ingest`` processes over a generated corpus of N small documents
(deterministic: the same N gives the same files, so chunk ids and hashes repeat):

1. a seed version (the first documents) is served by the alias, so the long run builds a new
   candidate version beside it (as an update of a served knowledge base does);
2. the long run draws progress bars with rates and ETA (``--progress``); it is SIGKILLed once about
   a third of the documents are written;
3. the same command resumes: documents already written are skipped, not embedded again (counts
   reported); once about half are written, ``rag ingest cancel --series S`` stops it after
   its group in flight (exit 130, "cancelled: N of M documents written; ...");
4. the same command again finishes the candidate;
5. a clean run into a fresh store gives the reference: every document hash and chunk id of the
   candidate must equal it, and the alias must still serve the seed version after each step.

The generated documents are one short paragraph each (about one chunk), so documents/s here is
the pipeline's per-document overhead plus one embedding; ``projected_100k_s`` scales the clean
run's rate linearly (the work per document does not grow with N: groups are bounded).
"""

from __future__ import annotations

import json
import os
import random
import re
import signal
import sqlite3
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import yaml

from backend.benchmarks.stats import Section
from backend.common.config import REPO_ROOT
from backend.common.identifiers import validate_identifier
from backend.ingest.cancel import CANCELLED_EXIT_CODE

SERIES = "KB_SCALE_V1"
ALIAS = "KB_SCALE"
#: documents in the served seed version
SEED_DOCS = 10
_WORDS = ("leave", "expense", "travel", "laptop", "badge", "payroll", "pension", "training", "parking", "remote",
          "overtime", "holiday", "benefit", "security", "onboarding", "relocation", "contract", "invoice", "audit",
          "policy", "manager", "approval", "receipt", "deadline", "request", "office", "schedule", "insurance")
#: a tqdm frame of the files bar with an ETA: ``files:  40%|####  | 40/100 [00:04<00:06, 9.8file/s]``
ETA_FRAME = re.compile(r"files:\s+\d+%\|[^\r\n]*\d+/\d+ \[\d+:\d+<\d+:\d+")


def generate_corpus(folder: Path, docs: int, *, seed: int = 7) -> Path:
    """``docs`` small text documents (one paragraph each) and the manifest listing them in order."""
    folder.mkdir(parents=True, exist_ok=True)
    rng = random.Random(seed)
    lines = []
    for i in range(docs):
        words = [rng.choice(_WORDS) for _ in range(40)]
        body = " ".join(words[:20]).capitalize() + ". " + " ".join(words[20:]).capitalize() + "."
        name = f"d{i:06d}.txt"
        (folder / name).write_text(f"Note {i} on {words[0]}\n\n{body}\n", encoding="utf-8")
        lines.append(json.dumps({"path": name, "doc_id": f"d{i:06d}"}))
    manifest = folder / "manifest.jsonl"
    manifest.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return manifest


def write_config(base: Path, work: Path, corpus: Path, db: str, *, pace_per_min: int = 0,
                 group: int = 16) -> Path:
    """``base`` with the store, assets and allowed root under ``work`` and one profile (series
    ``KB_SCALE_V1``); ``pace_per_min`` rate-limits embedding calls (a test's way to make a small
    run last long enough to be killed mid-way)."""
    config = yaml.safe_load(base.read_text(encoding="utf-8"))
    config["store"]["sqlite"]["path"] = str(work / db)
    config.setdefault("docx", {})["assets_dir"] = str(work / "assets")
    config["ingest"] = {"allowed_roots": [str(corpus)], "progress": True, "documents_per_transaction": group}
    embeddings = config.setdefault("embeddings", {})
    embeddings.update(default_profile="scale", domains={},
                      profiles={"scale": {"index_name": SERIES, "chunker": {"kind": "char", "size": 600, "overlap": 40}}},
                      batching={**embeddings.get("batching", {}), "rate_limit_per_min": pace_per_min})
    config.setdefault("sanitize", {})["enabled"] = False
    path = work / f"{Path(db).stem}.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    return path


def _rag(config: Path, *args: str, out: Path) -> subprocess.Popen[bytes]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (str(REPO_ROOT), os.environ.get("PYTHONPATH")) if p)}
    with open(out.with_suffix(".out"), "wb") as stdout, open(out.with_suffix(".err"), "wb") as stderr:
        return subprocess.Popen([sys.executable, "-m", "backend.cli.main", "--config", str(config), *args],
                                cwd=REPO_ROOT, stdout=stdout, stderr=stderr, env=env)


def stored_documents(db: Path, version: str) -> int:
    """Documents the version holds now, read while a run writes it (0 before it exists)."""
    try:
        con = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=2)
        try:
            row = con.execute(f"SELECT COUNT(DISTINCT doc_id) FROM {validate_identifier(version)}").fetchone()
            return int(row[0])
        finally:
            con.close()
    except sqlite3.Error:
        return 0


def version_rows(db: Path, version: str) -> tuple[dict[str, str], list[tuple[str, str]]]:
    """``doc_id -> doc_hash`` and the sorted ``(chunk_id, content_hash)`` pairs of a version."""
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        rows = con.execute(f"SELECT chunk_id, content_hash, doc_id, doc_hash FROM {validate_identifier(version)}"
                           ).fetchall()
    finally:
        con.close()
    return {doc: h for _, _, doc, h in rows}, sorted((c, t) for c, t, _, _ in rows)


def served(db: Path) -> str | None:
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        row = con.execute("SELECT version FROM rag_aliases WHERE alias = ?", (ALIAS,)).fetchone()
    except sqlite3.Error:
        row = None
    finally:
        con.close()
    return str(row[0]) if row else None


@dataclass
class Step:
    """One ``rag ingest`` process: exit code, its JSON summary, seconds, the progress frames seen."""

    code: int
    summary: dict[str, Any]
    seconds: float
    eta_frames: int
    stderr: str = field(repr=False)


def _finish(proc: subprocess.Popen[bytes], out: Path, started: float, timeout: float) -> Step:
    proc.wait(timeout=timeout)
    stdout = out.with_suffix(".out").read_text(encoding="utf-8", errors="replace")
    stderr = out.with_suffix(".err").read_text(encoding="utf-8", errors="replace")
    try:
        summary = json.loads(stdout) if stdout.strip() else {}
    except json.JSONDecodeError:
        summary = {}
    return Step(proc.returncode, summary, time.perf_counter() - started, len(ETA_FRAME.findall(stderr)), stderr)


def _run_until(config: Path, manifest: Path, db: Path, version: str, out: Path, *, stop_at: int,
               stop: Callable[[subprocess.Popen[bytes]], None] | None, timeout: float) -> tuple[Step, int]:
    """Run the ingest; once ``version`` holds ``stop_at`` documents call ``stop``; the documents
    written when it ended."""
    started = time.perf_counter()
    proc = _rag(config, "ingest", str(manifest), "--json", "--progress", out=out)
    deadline = time.monotonic() + timeout
    if stop is not None:
        while proc.poll() is None and time.monotonic() < deadline and stored_documents(db, version) < stop_at:
            time.sleep(0.05)
        if proc.poll() is None:
            stop(proc)
    step = _finish(proc, out, started, max(1.0, deadline - time.monotonic()))
    return step, stored_documents(db, version)


def _seed(base: Path, work: Path, corpus: Path, db: str, timeout: float) -> str:
    """The first ``SEED_DOCS`` documents ingested and served by the alias; returns that version."""
    manifest = corpus / "seed.jsonl"
    manifest.write_text("".join(line + "\n" for line in (corpus / "manifest.jsonl").read_text().splitlines()[:SEED_DOCS]),
                        encoding="utf-8")
    config = write_config(base, work, corpus, db)
    step = _finish(_rag(config, "ingest", str(manifest), "--json", out=work / "seed"), work / "seed",
                   time.perf_counter(), timeout)
    if step.code != 0:
        raise RuntimeError(f"seed ingest failed ({step.code}): {step.stderr[-2000:]}")
    from backend.providers.sqlite_vs.store import SqliteVectorStore

    store = SqliteVectorStore(work / db)
    try:
        store.point_alias(ALIAS, SERIES, reason="ingest-scale seed", forced=True)
    finally:
        store.close()
    return SERIES


def measure(base: Path, docs: int, work: Path, *, pace_per_min: int = 0, group: int = 16,
            timeout: float = 3600.0, reference: bool = True, emit: Callable[[str], None] = print) -> Section:
    """Kill, resume, cancel, resume, compare with a clean run (module docstring). Without
    ``reference`` the clean run is skipped (half the time): the rate is then the resumed run's."""
    section = Section(f"ingest scale: {docs} generated documents, killed, cancelled and resumed")
    corpus = work / "corpus"
    manifest = generate_corpus(corpus, docs)
    db = work / "scale.sqlite"
    seed_version = _seed(base, work, corpus, db.name, timeout)
    config = write_config(base, work, corpus, db.name, pace_per_min=pace_per_min, group=group)
    candidate = "KB_SCALE_V2"  # the seed version is served, so the long run builds the next one
    emit(f"   corpus ready; seed {seed_version} served by {ALIAS}; ingesting {docs} into {candidate}")

    killed, after_kill = _run_until(config, manifest, db, candidate, work / "run1", stop_at=max(SEED_DOCS + 1, docs // 3),
                                    stop=lambda p: os.kill(p.pid, signal.SIGKILL), timeout=timeout)
    alias_after_kill = served(db)
    emit(f"   killed after {after_kill} documents ({killed.seconds:.0f} s)")

    def cancel(_: subprocess.Popen[bytes]) -> None:
        _finish(_rag(config, "ingest", "cancel", "--series", SERIES, out=work / "cancel"), work / "cancel",
                time.perf_counter(), 120)

    cancelled, after_cancel = _run_until(config, manifest, db, candidate, work / "run2", stop_at=docs // 2,
                                         stop=cancel, timeout=timeout)
    alias_after_cancel = served(db)
    emit(f"   cancelled after {after_cancel} documents (exit {cancelled.code})")
    resumed, final = _run_until(config, manifest, db, candidate, work / "run3", stop_at=docs, stop=None,
                                timeout=timeout)
    emit(f"   resumed to {final} documents (exit {resumed.code}, {resumed.seconds:.0f} s)")

    hashes, chunks = version_rows(db, candidate)
    if reference:
        clean_config = write_config(base, work, corpus, "clean.sqlite", group=group)
        clean_step = _finish(_rag(clean_config, "ingest", str(manifest), "--json", out=work / "clean"),
                             work / "clean", time.perf_counter(), timeout)
        clean_hashes, clean_chunks = version_rows(work / "clean.sqlite", SERIES)
    else:
        clean_step, clean_hashes, clean_chunks = resumed, hashes, chunks
        section.notes.append("no clean reference run (reference=False): rates are the last resumed run's; the "
                             "version was not compared with a clean one")

    run2 = cancelled.summary
    timed = clean_step.summary.get("documents_written", docs)
    rate = timed / clean_step.summary["seconds"] if clean_step.summary.get("seconds") else 0.0
    section.figures.update({
        "documents": docs, "written_when_killed": after_kill, "written_when_cancelled": after_cancel,
        "resume_after_kill_skipped": run2.get("skipped_unchanged"),
        "resume_after_kill_written": run2.get("documents_written"),
        "resume_after_kill_embeddings_computed": run2.get("embeddings_computed"),
        "resume_after_kill_embeddings_reused": run2.get("embeddings_reused"),
        "resume_after_cancel_skipped": resumed.summary.get("skipped_unchanged"),
        "resume_after_cancel_written": resumed.summary.get("documents_written"),
        "resume_after_cancel_embeddings_computed": resumed.summary.get("embeddings_computed"),
        "progress_frames_with_eta": killed.eta_frames + cancelled.eta_frames + resumed.eta_frames,
        "clean_run_s": clean_step.summary.get("seconds"), "clean_documents_per_s": round(rate, 1),
        "clean_chunks_per_s": round(clean_step.summary.get("chunks_written", 0) / clean_step.summary["seconds"], 1)
        if clean_step.summary.get("seconds") else 0.0,
        "projected_100k_s": round(100_000 / rate) if rate else None,
    })
    cancel_line = "run the same command to resume" in cancelled.stderr and "cancelled:" in cancelled.stderr
    section.target("killed mid-run (0 < written < N)", float(SEED_DOCS < after_kill < docs), ">=", 1.0)
    section.target("resume skips every document written", float(run2.get("skipped_unchanged") == after_kill), ">=", 1.0)
    section.target("cancel exits 130 with the resume line",
                   float(cancelled.code == CANCELLED_EXIT_CODE and cancel_line and after_cancel < docs), ">=", 1.0)
    section.target("served alias untouched by kill and cancel",
                   float(alias_after_kill == alias_after_cancel == seed_version == served(db)), ">=", 1.0)
    section.target("resumed to every document", float(resumed.code == 0 and len(hashes) == docs), ">=", 1.0)
    if reference:
        section.target("final version = clean run (hashes, chunk ids)",
                       float(hashes == clean_hashes and chunks == clean_chunks), ">=", 1.0)
    section.target("live progress frames with ETA", float(section.figures["progress_frames_with_eta"]), ">=", 1.0)
    section.notes.append("each step is a real `rag ingest` process; the kill is SIGKILL; the cancel is `rag ingest "
                         "cancel --series KB_SCALE_V1` from another process")
    return section
