"""Race two ``rag ingest --update-alias`` runs of one series, many times, and count lost edits.

Issue 34 (point 2): two ingests of one series at once wrote one candidate, the last writer
winning per document; some runs exited 1 although their edit was served, some put the other
run's edit back to the old text. Each race here: editor A edits its own document and a
shared one and starts an ingest; after a random delay (0 to ``--jitter`` s, so the second
run lands anywhere in the first one's run: planning, writing, the gate, the rotation) editor
B edits its own document and the shared one and starts a second ingest. When both have
ended, every edited document's text on disk must be what the alias serves.

Counted per race: lost edits (a document on disk whose text the served version lacks),
unexpected exits (wait mode: anything but 0; refuse mode: anything but 0 or 4, and a
refused run is re-run, as its message says), false claims (a run whose closing line says
"served: V (includes this run's ...)" although the alias never served V), successful runs
without such a line, and runs that waited for the other. Target: 0 of each but the last::

    .venv/bin/python scripts/ingest_races.py --races 50            # wait mode
    .venv/bin/python scripts/ingest_races.py --races 20 --mode refuse
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
DOCS = 6
NO_GATES = {"min_recall_at_k": None, "min_ndcg_at_10": None, "min_mode_accuracy": None,
            "max_unanswerable_as_rag": None, "max_regression": None}
CLAIM = re.compile(r"^served: (\w+) by KB_ACTIVE \(includes this run's", re.MULTILINE)


def setup(work: Path, mode: str) -> tuple[Path, Path, Path]:
    kb = work / "kb"
    kb.mkdir(parents=True)
    for i in range(DOCS):
        (kb / f"doc_{i}.txt").write_text(f"Policy {i}\n\nRule of policy {i}: the original text.\n", encoding="utf-8")
    (kb / "manifest.jsonl").write_text(json.dumps({"dir": "."}) + "\n", encoding="utf-8")
    golden = work / "golden.jsonl"
    golden.write_text(json.dumps({"id": "g1", "query": "What is the rule of policy 0?",
                                  "expected_sources": ["doc_0.txt"], "expected_mode": "rag"}) + "\n", encoding="utf-8")
    config = yaml.safe_load((ROOT / "config" / "rag.yaml").read_text(encoding="utf-8"))
    config["store"]["sqlite"]["path"] = str(work / "races.sqlite")
    config["docx"]["assets_dir"] = str(work / "assets")
    config["ingest"] = {"allowed_roots": [str(kb)], "progress": False, "documents_per_transaction": 1}
    if mode != "wait":  # the default; left out, the script also runs on a release without the lock (baseline)
        config["ingest"]["concurrent_runs"] = mode
    config["evaluation"] = {**config.get("evaluation", {}), "golden_set": str(golden), "k": 3,
                            "reports_dir": str(work / "reports"), "gates": NO_GATES}
    path = work / "rag.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    return kb, path, work / "races.sqlite"


def rag(config: Path, manifest: Path) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "backend.cli.main", "--config", str(config), "ingest",
                             str(manifest), "--update-alias"], cwd=ROOT, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env={**os.environ, "HF_HUB_OFFLINE": "1"})


def finish(proc: subprocess.Popen[str], config: Path, manifest: Path, mode: str) -> tuple[int, str, str, int]:
    """Exit code, stdout and stderr of a run; a refused run (refuse mode) is run again, as told."""
    out, err = proc.communicate(timeout=600)
    reruns = 0
    while mode == "refuse" and proc.returncode == 4 and reruns < 50:
        reruns += 1
        time.sleep(0.2)
        proc = rag(config, manifest)
        out, err = proc.communicate(timeout=600)
    return proc.returncode, out, err, reruns


def served_texts(db: Path) -> dict[str, str]:
    con = sqlite3.connect(db, timeout=30)
    try:
        (version,) = con.execute("SELECT version FROM rag_aliases WHERE alias = 'KB_ACTIVE'").fetchone()
        rows = con.execute(f"SELECT doc_id, text FROM {version} ORDER BY doc_id, chunk_index").fetchall()
        history = {r[0] for r in con.execute("SELECT version FROM rag_alias_history")}
    finally:
        con.close()
    texts: dict[str, str] = {}
    for doc_id, text in rows:
        texts[doc_id] = (texts.get(doc_id, "") + " " + text).strip()
    texts["__history__"] = json.dumps(sorted(history))
    return texts


def edit(kb: Path, doc: str, text: str) -> str:
    (kb / doc).write_text(f"Edited\n\n{text}\n", encoding="utf-8")
    return text


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--races", type=int, default=50)
    parser.add_argument("--mode", choices=("wait", "refuse"), default="wait")
    parser.add_argument("--jitter", type=float, default=0.8, help="largest delay before the second run (s)")
    parser.add_argument("--seed", type=int, default=34)
    parser.add_argument("--json", action="store_true", help="print the totals as JSON")
    args = parser.parse_args(argv)
    rng = random.Random(args.seed)
    totals = {"races": 0, "edits": 0, "lost_edits": 0, "unexpected_exits": 0, "false_claims": 0,
              "no_served_line": 0, "waited": 0, "refused_then_rerun": 0, "seconds": 0.0}
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="ingest-races-") as tmp:
        kb, config, db = setup(Path(tmp), args.mode)
        manifest = kb / "manifest.jsonl"
        first = subprocess.run([sys.executable, "-m", "backend.cli.main", "--config", str(config), "ingest",
                                str(manifest), "--update-alias"], cwd=ROOT, capture_output=True, text=True)
        if first.returncode != 0:
            print(first.stderr[-3000:], file=sys.stderr)
            return 2
        for race in range(1, args.races + 1):
            own_a, own_b = rng.sample(range(1, DOCS), 2)
            edit(kb, f"doc_{own_a}.txt", f"Race {race}: editor A rewrote policy {own_a}.")
            edit(kb, "doc_0.txt", f"Race {race}: editor A rewrote the shared policy.")
            run_a = rag(config, manifest)
            time.sleep(rng.uniform(0, args.jitter))
            edit(kb, f"doc_{own_b}.txt", f"Race {race}: editor B rewrote policy {own_b}.")
            edit(kb, "doc_0.txt", f"Race {race}: editor B rewrote the shared policy.")
            run_b = rag(config, manifest)
            results = [finish(run_a, config, manifest, args.mode), finish(run_b, config, manifest, args.mode)]
            served = served_texts(db)
            history = set(json.loads(served.pop("__history__")))
            edited = [f"doc_{own_a}.txt", f"doc_{own_b}.txt", "doc_0.txt"]
            lost = [d for d in edited
                    if (kb / d).read_text(encoding="utf-8").split("\n\n", 1)[1].strip() not in served.get(d, "")]
            totals["races"] += 1
            totals["edits"] += len(edited)
            totals["lost_edits"] += len(lost)
            for code, out, err, reruns in results:
                totals["unexpected_exits"] += code != 0
                totals["false_claims"] += sum(v not in history for v in CLAIM.findall(out))
                totals["no_served_line"] += code == 0 and not CLAIM.search(out) and "this run changed nothing" not in out
                totals["waited"] += "waiting up to" in err
                totals["refused_then_rerun"] += reruns
                if code != 0:
                    print(f"race {race}: exit {code}: {err.strip().splitlines()[-1:]}", file=sys.stderr)
            if lost:
                print(f"race {race}: lost edits: {lost}", file=sys.stderr)
            print(f"race {race:>3}: lost {len(lost)}, exits {[r[0] for r in results]}, "
                  f"waited {sum('waiting up to' in r[2] for r in results)}", file=sys.stderr)
    totals["seconds"] = round(time.perf_counter() - started, 1)
    if args.json:
        print(json.dumps(totals, indent=2))
    else:
        print(f"{totals['races']} races ({args.mode} mode): {totals['edits']} edits, {totals['lost_edits']} lost, "
              f"{totals['unexpected_exits']} unexpected exits, {totals['false_claims']} false served-claims, "
              f"{totals['no_served_line']} successful runs without a served line, "
              f"{totals['waited']} runs waited, {totals['refused_then_rerun']} refused and re-run, "
              f"{totals['seconds']} s")
    clean = totals["lost_edits"] == totals["unexpected_exits"] == totals["false_claims"] == totals["no_served_line"]
    return 0 if clean and totals["lost_edits"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
