#!/usr/bin/env python3
"""Write data/blind4/questions.jsonl and followups.jsonl from the lists in this folder."""
import json, os, sys

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
from q_sample_handbook import SAMPLE, HANDBOOK  # noqa: E402
from q_gdsway_google import GDSWAY, GOOGLE  # noqa: E402
from followups import FOLLOWUPS  # noqa: E402

ANSWERABLE = {"paraphrase", "table", "typo", "short"}
CORPORA = [("sample", None, SAMPLE), ("handbook", "handbook", HANDBOOK),
           ("gdsway", "blind4-gdsway", GDSWAY), ("google", "blind4-google", GOOGLE)]

with open(os.path.join(OUT, "questions.jsonl"), "w", encoding="utf-8") as fh:
    for prefix, domain, items in CORPORA:
        for n, (kind, query, doc, phrase, note) in enumerate(items, 1):
            rag = kind in ANSWERABLE
            row = {"id": f"b4-{prefix}-{n:02d}", "domain": domain, "query": query, "kind": kind,
                   "expected_mode": "rag" if rag else "fallback",
                   "expected_sources": {doc: 1} if rag else {},
                   "must_contain": [phrase] if rag else [], "note": note}
            fh.write(json.dumps(row, ensure_ascii=False) + "\n")

counts = {}
with open(os.path.join(OUT, "followups.jsonl"), "w", encoding="utf-8") as fh:
    for prefix, domain, first, follow, doc, phrase in FOLLOWUPS:
        counts[prefix] = counts.get(prefix, 0) + 1
        row = {"id": f"bf4-{prefix}-{counts[prefix]:02d}", "domain": domain, "first": first,
               "follow_up": follow, "expected_mode": "rag" if doc else "fallback",
               "expected_sources": {doc: 1} if doc else {}, "must_contain": [phrase] if doc else []}
        fh.write(json.dumps(row, ensure_ascii=False) + "\n")
print("written")
