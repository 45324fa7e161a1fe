import json, sys, os, re
sys.path.insert(0, os.path.dirname(__file__))
from q_sample_handbook import SAMPLE, HANDBOOK
from q_govuk_posthog import GOVUK, POSTHOG
from followups import FOLLOW
DOM = {"sample": None, "handbook": "handbook", "govuk": "blind2-govuk", "posthog": "blind2-posthog"}
root = os.path.join(os.path.dirname(__file__), "..")
qs = []
for corpus, items in [("sample", SAMPLE), ("handbook", HANDBOOK), ("govuk", GOVUK), ("posthog", POSTHOG)]:
    for i, (q, kind, doc, must, note) in enumerate(items, 1):
        ans = kind in ("paraphrase", "table", "typo", "short")
        qs.append({"id": f"b2-{corpus}-{i:02d}", "domain": DOM[corpus], "query": q, "kind": kind,
                   "expected_mode": "rag" if ans else "fallback",
                   "expected_sources": {doc: 1} if ans else {}, "must_contain": [must] if ans else [], "note": note})
with open(os.path.join(root, "questions.jsonl"), "w") as f:
    for o in qs: f.write(json.dumps(o, ensure_ascii=False) + "\n")
fs = []
for corpus in ["sample", "handbook", "govuk", "posthog"]:
    for i, (a, b, doc, must) in enumerate(FOLLOW[corpus], 1):
        fs.append({"id": f"bf2-{corpus}-{i:02d}", "domain": DOM[corpus], "first": a, "follow_up": b,
                   "expected_mode": "rag" if doc else "fallback", "expected_sources": {doc: 1} if doc else {},
                   "must_contain": [must] if doc else []})
with open(os.path.join(root, "followups.jsonl"), "w") as f:
    for o in fs: f.write(json.dumps(o, ensure_ascii=False) + "\n")
print(len(qs), len(fs))
