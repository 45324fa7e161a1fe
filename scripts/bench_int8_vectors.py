"""INT8 against FLOAT32 chunk vectors on CISI (docs/BENCHMARKS.md, "INT8 vectors"), offline:
``.venv/bin/python scripts/bench_int8_vectors.py [CISI_DIR] [--runtime onnx --quantization int8]``.
Prints one JSON object (``backend.benchmarks.int8_vectors.measure``)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from backend.benchmarks.cisi import DEFAULT_DIR
from backend.benchmarks.int8_vectors import measure
from backend.common.config import DEFAULT_CONFIG, load_settings
from backend.providers.local.embedder import make_local_embedder


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("cisi", nargs="?", type=Path, default=DEFAULT_DIR)
    parser.add_argument("--runtime", choices=("torch", "onnx"), default=None, help="default: the config's")
    parser.add_argument("--quantization", choices=("none", "int8"), default=None, help="default: the config's")
    args = parser.parse_args()
    local = {k: v for k, v in (("runtime", args.runtime), ("quantization", args.quantization)) if v}
    settings = load_settings(DEFAULT_CONFIG, overrides={"embeddings": {"local": local}} if local else None, env={})
    print(json.dumps(measure(args.cisi, make_local_embedder(settings.embeddings)), indent=2))


if __name__ == "__main__":
    main()
