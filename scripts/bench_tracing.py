"""What OpenTelemetry tracing costs ``/chat``: p50 with tracing off, on with the OTLP batch
exporter to a receiver on loopback, and on with the in-memory exporter, interleaved; prints the
ratio and MET/MISSED against the 5 % target (backend/benchmarks/tracing.py says how).

Usage: ``.venv/bin/python scripts/bench_tracing.py [--rounds 12] [--per-round 2] [--json-out F]``
(about two minutes on 2 cores after the sample corpus is ingested). Figures: docs/BENCHMARKS.md,
"Tracing overhead".
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from backend.benchmarks import tracing  # noqa: E402
from backend.benchmarks.runner import machine  # noqa: E402
from backend.common.config import DEFAULT_CONFIG, load_settings  # noqa: E402
from backend.common.logging import configure_logging  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--config", type=Path, default=DEFAULT_CONFIG)
    parser.add_argument("--rounds", type=int, default=12, help="interleaved rounds (each runs every mode)")
    parser.add_argument("--per-round", type=int, default=2, help="times each question is asked per mode per round")
    parser.add_argument("--json-out", type=Path, help="also write the figures as JSON")
    args = parser.parse_args()
    if args.rounds < 1 or args.per_round < 1:
        parser.error("--rounds and --per-round must be at least 1")
    configure_logging(level="WARNING")
    from backend.providers.local.embedder import make_local_embedder

    embedder = make_local_embedder(load_settings(args.config, env={}).embeddings)
    with tempfile.TemporaryDirectory(prefix="rag-bench-tracing-") as work:
        section = tracing.measure(args.config, embedder, Path(work), rounds=args.rounds, per_round=args.per_round,
                                  emit=print)
    print(section.render())
    if args.json_out:
        args.json_out.write_text(json.dumps({"machine": machine(), "sections": [section.as_dict()]}, indent=2,
                                            default=str))
        print(f"figures written to {args.json_out}")
    return 0 if all(ok for *_, ok in section.targets) else 1


if __name__ == "__main__":
    sys.exit(main())
