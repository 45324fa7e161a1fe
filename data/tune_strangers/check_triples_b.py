"""Check triples-b.jsonl. Run: /work/main/.venv/bin/python data/tune_strangers/check_triples_b.py [path]

Checks: every line parses as a JSON object; exactly the expected keys; ids are
unique and look like tsb-0001; answer_sentence, when not null, occurs exactly
in passage; labels agree with kinds (1: paraphrase/short/typo/table, 0:
lookalike/offtopic); offtopic rows have answer_sentence null and every other
row has one. Prints counts per kind and corpus. Exit status 1 on any problem.
"""
import json
import re
import sys
from collections import Counter
from pathlib import Path

KEYS = {"id", "corpus", "doc", "passage", "question", "label", "kind", "answer_sentence"}
POSITIVE = {"paraphrase", "short", "typo", "table"}
NEGATIVE = {"lookalike", "offtopic"}


def main(path):
    errors, ids, rows = [], set(), []
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            def bad(msg):
                errors.append(f"line {n}: {msg}")
            try:
                r = json.loads(line)
            except json.JSONDecodeError as e:
                bad(f"does not parse: {e}")
                continue
            if not isinstance(r, dict):
                bad("not a JSON object")
                continue
            if set(r) != KEYS:
                bad(f"keys {sorted(r)}")
                continue
            if not re.fullmatch(r"tsb-\d{4}", str(r["id"])):
                bad(f"bad id {r['id']!r}")
            if r["id"] in ids:
                bad(f"duplicate id {r['id']}")
            ids.add(r["id"])
            for k in ("corpus", "doc", "passage", "question"):
                if not isinstance(r[k], str) or not r[k].strip():
                    bad(f"empty or non-string {k}")
            kind, label, ans = r["kind"], r["label"], r["answer_sentence"]
            if kind in POSITIVE:
                if label != 1 or isinstance(label, bool):
                    bad(f"kind {kind} needs label 1, got {label!r}")
            elif kind in NEGATIVE:
                if label != 0 or isinstance(label, bool):
                    bad(f"kind {kind} needs label 0, got {label!r}")
            else:
                bad(f"unknown kind {kind!r}")
            if kind == "offtopic":
                if ans is not None:
                    bad("offtopic row has an answer_sentence")
            elif not isinstance(ans, str) or not ans.strip():
                bad("answer_sentence missing")
            elif isinstance(r["passage"], str) and ans not in r["passage"]:
                bad("answer_sentence is not a substring of passage")
            rows.append(r)
    for e in errors[:50]:
        print(e)
    by = Counter((r["corpus"], r["kind"]) for r in rows)
    corpora = sorted({c for c, _ in by})
    kinds = ["paraphrase", "short", "typo", "table", "lookalike", "offtopic"]
    print("kind".ljust(12), *[c.ljust(22) for c in corpora], "total")
    for k in kinds:
        print(k.ljust(12), *[str(by[(c, k)]).ljust(22) for c in corpora], sum(by[(c, k)] for c in corpora))
    npass = len({(r["corpus"], r["passage"]) for r in rows})
    print(f"rows {len(rows)}, passages {npass}, label 1: {sum(r['label'] == 1 for r in rows)}, "
          f"label 0: {sum(r['label'] == 0 for r in rows)}, errors: {len(errors)}")
    return 1 if errors else 0


if __name__ == "__main__":
    default = Path(__file__).with_name("triples-b.jsonl")
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else default))
