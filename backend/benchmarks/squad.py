"""A knowledge base and golden set from SQuAD 2.0 articles, in the product's own formats.

SQuAD 2.0 (Rajpurkar, Jia and Liang, ACL 2018; CC BY-SA 4.0) pairs answerable questions
with adversarial unanswerable ones written against the same paragraphs: the hardest test
of whether the answer-mode decision knows what it does not know. :func:`build` writes

* one Markdown document per article (the title as heading, each paragraph a block),
* ``manifest.jsonl`` listing them (doc_id ``squad-<n>``),
* ``golden.jsonl``: each answerable question expects ``rag`` and ``must_contain`` its first
  gold answer span; each ``is_impossible`` question expects ``fallback`` with no source.
  Every query carries ``group`` = its article, so folds never split an article.

Only the training split is used here; the dev split is kept out for an independent check.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

#: where the bench data sits relative to the project root (``../shared`` beside the checkout)
DEFAULT_SOURCE = Path("../shared/bench/squad2-train/train-v2.0-first10.json")
DOMAIN = "squad"


@dataclass(frozen=True)
class SquadSet:
    manifest: Path
    golden: Path
    articles: int
    answerable: int
    unanswerable: int


def _slug(title: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")[:60]


def build(source: Path, out_dir: Path, *, max_articles: int | None = None,
          max_questions_per_article: int | None = None) -> SquadSet:
    """Write the documents, manifest and golden set under ``out_dir`` (see the module docstring).
    ``max_questions_per_article`` keeps the first answerable and all unanswerable questions
    in proportion, for quick runs."""
    data: dict[str, Any] = json.loads(source.read_text(encoding="utf-8"))
    docs_dir = out_dir / "docs"
    docs_dir.mkdir(parents=True, exist_ok=True)
    manifest_lines, golden_lines = [], []
    answerable = unanswerable = 0
    articles = data["data"][:max_articles] if max_articles else data["data"]
    for n, article in enumerate(articles, start=1):
        title = article["title"].replace("_", " ")
        doc_id = f"squad-{n:02d}"
        path = docs_dir / f"{n:02d}-{_slug(title)}.md"
        body = "\n\n".join(" ".join(p["context"].split()) for p in article["paragraphs"])
        path.write_text(f"# {title}\n\n{body}\n", encoding="utf-8")
        manifest_lines.append({"path": f"docs/{path.name}", "doc_id": doc_id, "lang": "en",
                               "content_type": "encyclopedia"})
        qas = [q for p in article["paragraphs"] for q in p["qas"]]
        if max_questions_per_article:
            impossible = [q for q in qas if q["is_impossible"]]
            possible = [q for q in qas if not q["is_impossible"]]
            share = max_questions_per_article / max(1, len(qas))
            qas = possible[:max(1, round(len(possible) * share))] + impossible[:round(len(impossible) * share)]
        for q in qas:
            question = " ".join(q["question"].split())
            if not question:
                continue
            row: dict[str, Any] = {"id": q["id"], "query": question, "domain": DOMAIN, "group": doc_id}
            if q["is_impossible"]:
                row.update(expected_sources={}, expected_mode="fallback", must_contain=[])
                unanswerable += 1
            else:
                row.update(expected_sources={doc_id: 1}, expected_mode="rag",
                           must_contain=[q["answers"][0]["text"].strip()])
                answerable += 1
            golden_lines.append(row)
    manifest = out_dir / "manifest.jsonl"
    golden = out_dir / "golden.jsonl"
    manifest.write_text("".join(json.dumps(m) + "\n" for m in manifest_lines), encoding="utf-8")
    golden.write_text("".join(json.dumps(g, ensure_ascii=False) + "\n" for g in golden_lines), encoding="utf-8")
    return SquadSet(manifest, golden, len(articles), answerable, unanswerable)
