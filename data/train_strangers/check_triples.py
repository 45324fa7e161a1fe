"""Check a train_strangers triples JSONL file.

Usage: /work/main/.venv/bin/python data/train_strangers/check_triples.py [PATH ...]
(default: data/train_strangers/triples-a.jsonl next to this script)

Checks: every line parses as a JSON object; exactly the expected keys; ids are
unique and well-formed; field types; label is consistent with kind; the
answer_sentence is null exactly for `offtopic` rows and otherwise occurs
verbatim in the passage (this includes set E's `offtopic_near` rows, label 0). Exits non-zero on the first file with errors.
"""
import json
import re
import sys
from collections import Counter
from pathlib import Path

KEYS = {"id", "corpus", "doc", "passage", "question", "label", "kind", "answer_sentence"}
POSITIVE = {"paraphrase", "typo", "short", "table"}
NEGATIVE = {"lookalike", "offtopic", "offtopic_near"}  # offtopic_near: set E, non-null answer_sentence
ID_RE = re.compile(r"^[a-z]+-\d{4}$")


def check(path):
    errors = []
    ids = set()
    kinds = Counter()
    corpora = Counter()
    passages = set()
    n = 0
    with open(path, encoding="utf-8") as f:
        for lineno, line in enumerate(f, 1):
            where = f"{path}:{lineno}"
            if not line.strip():
                errors.append(f"{where}: blank line")
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as e:
                errors.append(f"{where}: does not parse: {e}")
                continue
            if not isinstance(row, dict):
                errors.append(f"{where}: not a JSON object")
                continue
            n += 1
            if set(row) != KEYS:
                errors.append(f"{where}: keys {sorted(row)} != {sorted(KEYS)}")
                continue
            rid = row["id"]
            if not isinstance(rid, str) or not ID_RE.match(rid):
                errors.append(f"{where}: bad id {rid!r}")
            elif rid in ids:
                errors.append(f"{where}: duplicate id {rid}")
            ids.add(rid)
            for k in ("corpus", "doc", "passage", "question"):
                if not isinstance(row[k], str) or not row[k].strip():
                    errors.append(f"{where}: {k} must be a non-empty string")
            label, kind, ans = row["label"], row["kind"], row["answer_sentence"]
            if type(label) is not int or label not in (0, 1):
                errors.append(f"{where}: label must be 0 or 1, got {label!r}")
            if kind not in POSITIVE | NEGATIVE:
                errors.append(f"{where}: unknown kind {kind!r}")
            elif (label == 1) != (kind in POSITIVE):
                errors.append(f"{where}: label {label} inconsistent with kind {kind}")
            if kind == "offtopic":
                if ans is not None:
                    errors.append(f"{where}: offtopic row must have answer_sentence null")
            else:
                if not isinstance(ans, str) or not ans.strip():
                    errors.append(f"{where}: answer_sentence must be a non-empty string for kind {kind}")
                elif isinstance(row["passage"], str) and ans not in row["passage"]:
                    errors.append(f"{where}: answer_sentence is not a substring of passage")
            if kind == "table" and isinstance(row["passage"], str):
                for ln in row["passage"].split("\n"):
                    if not re.match(r"^[^:;\n]+: ", ln):
                        errors.append(f"{where}: table passage line not in 'Column: value; ...' form: {ln[:60]!r}")
            kinds[kind] += 1
            corpora[row.get("corpus")] += 1
            passages.add(row.get("passage"))
    return n, errors, kinds, corpora, len(passages)


def main(argv):
    paths = argv[1:] or [str(Path(__file__).with_name("triples-a.jsonl"))]
    status = 0
    for path in paths:
        n, errors, kinds, corpora, npass = check(path)
        for e in errors[:50]:
            print(e)
        if len(errors) > 50:
            print(f"... and {len(errors) - 50} more errors")
        pos = sum(v for k, v in kinds.items() if k in POSITIVE)
        print(f"{path}: {n} rows, {npass} passages, {len(errors)} errors; label 1: {pos}, label 0: {n - pos}")
        print("  kinds:", dict(sorted(kinds.items())))
        print("  corpora:", dict(sorted(corpora.items())))
        if errors:
            status = 1
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv))
