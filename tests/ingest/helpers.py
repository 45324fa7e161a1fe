"""Shared by the ingest tests: a small corpus on disk and a flaky wrapper around the real model."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Sequence

import yaml

from backend.core.types import Vector

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "tests" / "fixtures" / "ingest"

TOPICS = ["vacation", "expenses", "security", "onboarding", "parking", "benefits", "training", "remote work",
          "equipment", "travel", "payroll", "health", "overtime", "holidays", "relocation", "pension"]


def write_pdf(path: Path, pages: Sequence[str], size: int = 12, line_height: int = 8) -> Path:
    """A real PDF (fpdf2) with one page per text."""
    from fpdf import FPDF

    pdf = FPDF()
    pdf.set_font("Helvetica", size=size)
    for text in pages:
        pdf.add_page()
        pdf.multi_cell(0, line_height, text)
    pdf.output(str(path))
    return path


def write_manifest(path: Path, lines: Sequence[Any]) -> Path:
    path.write_text("\n".join(x if isinstance(x, str) else json.dumps(x) for x in lines) + "\n", encoding="utf-8")
    return path


def write_corpus(folder: Path, count: int, sentences: int = 3) -> list[Path]:
    """``count`` distinct small text documents, one topic each."""
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for i in range(count):
        topic = TOPICS[i % len(TOPICS)]
        body = " ".join(f"Rule {j} of the {topic} policy, document {i}: item {i * 7 + j} applies." for j in range(sentences))
        path = folder / f"doc_{i:03d}.txt"
        path.write_text(f"{topic.title()} policy {i}\n\n{body}\n", encoding="utf-8")
        paths.append(path)
    return paths


class FlakyEmbedder:
    """The real embedder, failing with the given errors on its first calls (a provider
    that throttles or breaks); ``fail_on`` makes any call containing that text fail."""

    def __init__(self, inner: Any, errors: Sequence[Exception] = (), fail_on: str | None = None,
                 fail_with: Exception | None = None) -> None:
        self.inner, self.errors, self.fail_on, self.fail_with = inner, list(errors), fail_on, fail_with
        self.model_id, self.dimension = inner.model_id, inner.dimension
        self.attempts = 0
        self.texts_embedded = 0

    @property
    def tokenizer(self) -> Any:
        return self.inner.tokenizer

    def embed_documents(self, texts: Sequence[str]) -> Vector:
        self.attempts += 1
        if self.errors:
            raise self.errors.pop(0)
        if self.fail_on is not None and self.fail_with is not None and any(self.fail_on in t for t in texts):
            raise self.fail_with
        self.texts_embedded += len(texts)
        return self.inner.embed_documents(texts)

    def embed_queries(self, texts: Sequence[str]) -> Vector:
        return self.inner.embed_queries(texts)


def write_config(tmp_path: Path, root: Path, name: str = "rag.yaml", db: str = "cli.sqlite", **sections: Any) -> Path:
    """The repo's config with store, assets and allowed roots under ``tmp_path``;
    ``sections`` are merged into top-level sections (e.g. ``ingest={...}``)."""
    config = yaml.safe_load((REPO / "config" / "rag.yaml").read_text(encoding="utf-8"))
    config["store"]["sqlite"]["path"] = str(tmp_path / db)
    config["docx"]["assets_dir"] = str(tmp_path / "assets")
    config["ingest"] = {"allowed_roots": [str(root)], "progress": False}
    # PII audit (on in the shipped profile) only where a test asks for it: see tests/conftest.make_settings
    config["sanitize"] = {**config["sanitize"], "enabled": False, "audit_path": str(tmp_path / "audit" / "pii.jsonl")}
    for key, value in sections.items():
        config[key] = {**config.get(key, {}), **value}
    path = tmp_path / name
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    return path
