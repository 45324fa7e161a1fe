"""Build data/train_strangers/triples-d.jsonl from the OWASP Cheat Sheet Series.

Usage: python3 build.py OUT.jsonl   (needs the bare git mirror named in lib.REPO)
Passages are cut by start/end anchors from the files at lib.COMMIT, so they are
exact copies; table passages are rewritten as 'Column: value; ...' rows.
"""
import json, os, sys, collections
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import lib
for m in ["p1", "p2", "p3", "p4", "p5", "p6"]:
    __import__(m)

POS_CAP, LOOK_CAP = 4, 3
EXTRA_OFFTOPIC = [
 "How do I connect to the office printer from my laptop?",
 "What is the maternity leave policy?",
 "Where do I submit a purchase request for new software licences?",
 "How many days can I work from home each week?",
 "What's the budget for team lunches?",
 "My salary payment was short this month - who fixes that?",
 "Can I get reimbursed for my home internet bill?",
 "How do I book travel through the corporate portal?",
 "What is the process for requesting a salary review?",
 "Where can I find last quarter's sales figures?",
 "How do I set my out-of-office reply?",
 "What are the core working hours?",
 "Is there a company policy on flexible start times?",
 "how do i get a replacement laptop charger",
 "Who is responsible for ordering office supplies?",
 "What's the procedure for onboarding a new contractor?",
 "Do we get a day off for volunteering?",
 "How do I find my payslip online?",
 "Where can I see the company holiday schedule?",
 "What is the mileage reimbursement rate?",
 "Can I get an ergonomic keyboard from facilities?",
 "who approves conference attendance",
 "What's the maximum I can spend on a client dinner?",
 "How do I update my bank details for expenses?",
 "Is there free parking for employees?",
 "What training courses are available for new managers?",
 "How long does it take to get reimbursed for expenses?",
 "Is compassionate leave paid?",
 "Where do I send invoices from suppliers?",
 "How do I join the mentoring programme?",
 "What happens to my unused sick days at year end?",
 "how do i book the large conference room",
 "Is the office open on Saturdays?",
 "Who handles lost or stolen company phones?",
 "What is the policy on alcohol at company events?",
 "How do I register a new starter for a building pass?",
 "When are the quarterly all-hands meetings?",
 "What's the procedure for booking a company car?",
]

by = collections.OrderedDict()
for r in lib.ROWS:
    by.setdefault(r["passage"], []).append(r)

extra = iter(EXTRA_OFFTOPIC)
out = []
for passage, rows in by.items():
    pos = [r for r in rows if r["label"] == 1]
    keep = []
    # at most one typo and one short per passage, then tables/paraphrases in order
    for kind in ("typo", "short"):
        k = [r for r in pos if r["kind"] == kind][:1]
        keep += k
    rest = [r for r in pos if r["kind"] in ("paraphrase", "table")]
    keep = rest[: max(0, POS_CAP - len(keep))] + keep
    keep_ids = {id(r) for r in keep}
    look = [r for r in rows if r["kind"] == "lookalike"][:LOOK_CAP]
    keep_ids |= {id(r) for r in look}
    off = [r for r in rows if r["kind"] == "offtopic"]
    keep_ids |= {id(r) for r in off}
    sel = [r for r in rows if id(r) in keep_ids]
    r0 = rows[0]
    while sum(1 for r in sel if r["kind"] == "offtopic") < 2:
        q = next(extra, None)
        if q is None:
            break
        sel.append(dict(corpus=r0["corpus"], doc=r0["doc"], passage=passage, question=q,
                        label=0, kind="offtopic", answer_sentence=None))
    out += sel

qs = [r["question"] for r in out]
assert len(qs) == len(set(qs)), [q for q, c in collections.Counter(qs).items() if c > 1]
with open(sys.argv[1], "w", encoding="utf-8") as f:
    for i, r in enumerate(out, 1):
        f.write(json.dumps({"id": f"tsd-{i:04d}", **r}, ensure_ascii=False) + "\n")
print(len(out))
