#!/usr/bin/env python3
"""Writes ../questions.jsonl and ../followups.jsonl from the lists in this folder."""
import json, os, sys
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from q_sample_handbook import SAMPLE, HANDBOOK
from q_moj_thoughtbot import MOJ, THOUGHTBOT
from followups import FOLLOWUPS
DOMAIN = {"sample": None, "handbook": "handbook", "moj": "blind3-moj", "thoughtbot": "blind3-thoughtbot"}
out = []
for corp, rows in (("sample", SAMPLE), ("handbook", HANDBOOK), ("moj", MOJ), ("thoughtbot", THOUGHTBOT)):
    for n, (kind, query, doc, phrase, note) in enumerate(rows, 1):
        ans = doc is not None
        out.append({"id": f"b3-{corp}-{n:02d}", "domain": DOMAIN[corp], "query": query, "kind": kind,
                    "expected_mode": "rag" if ans else "fallback",
                    "expected_sources": {doc: 1} if ans else {}, "must_contain": [phrase] if ans else [],
                    "note": note})
with open(os.path.join(HERE, "..", "questions.jsonl"), "w", encoding="utf-8") as fh:
    for r in out: fh.write(json.dumps(r, ensure_ascii=False) + "\n")
count = {}
with open(os.path.join(HERE, "..", "followups.jsonl"), "w", encoding="utf-8") as fh:
    for corp, first, fu, doc, phrase in FOLLOWUPS:
        count[corp] = count.get(corp, 0) + 1
        ans = doc is not None
        fh.write(json.dumps({"id": f"bf3-{corp}-{count[corp]:02d}", "domain": DOMAIN[corp], "first": first,
                             "follow_up": fu, "expected_mode": "rag" if ans else "fallback",
                             "expected_sources": {doc: 1} if ans else {},
                             "must_contain": [phrase] if ans else []}, ensure_ascii=False) + "\n")
print(len(out), "questions,", sum(count.values()), "followups")
