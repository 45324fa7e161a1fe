"""Build data/train_strangers/triples-e.jsonl (set E, near-off-topic negatives).

Usage: cd build_e && python3 build.py ../triples-e.jsonl
Needs the bare git mirrors named in lib.SOURCES at the commits given there.
Passages are cut by start/end anchors from the source files, so they are exact
copies. answer_sentence is expanded from a prefix (answerable and look-alike
rows) or, for offtopic_near rows, chosen as the sentence or list item of the
passage that shares the most content words with the question.
"""
import collections, glob, json, os, re, sys
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import lib
for m in ["p1", "p2", "p3", "p4"]:
    __import__(m)

def norm(q):
    return re.sub(r"[^a-z0-9]+", " ", q.lower()).strip()

# questions already used in the other sets
seen = set()
for path in glob.glob(os.path.join(HERE, "..", "triples*.jsonl")):
    if path.endswith("triples-e.jsonl"):
        continue
    with open(path, encoding="utf-8") as f:
        for line in f:
            seen.add(norm(json.loads(line)["question"]))

# at most POS_CAP answerable rows per passage: one typo and one short row first
# (if any), then paraphrases in the order listed; all label-0 rows are kept
POS_CAP = 3
by = collections.OrderedDict()
for r in lib.ROWS:
    by.setdefault(r["passage"], []).append(r)
rows = []
for passage, prs in by.items():
    pos = [r for r in prs if r["label"] == 1]
    keep = []
    for kind in ("typo", "short"):
        keep += [r for r in pos if r["kind"] == kind][:1]
    keep += [r for r in pos if r["kind"] == "paraphrase"][: max(0, POS_CAP - len(keep))]
    ids = {id(r) for r in keep}
    rows += [r for r in prs if r["label"] == 0 or id(r) in ids]
problems = []
mine = collections.Counter(norm(r["question"]) for r in rows)
for q, c in mine.items():
    if c > 1:
        problems.append(f"repeated within set E: {q}")
for r in rows:
    if norm(r["question"]) in seen:
        problems.append(f"repeats an earlier set: {r['question']}")
    if r["kind"] == "offtopic_near":
        shared = lib.words(r["question"]) & lib.words(r["passage"])
        if len(shared) < 2:
            problems.append(f"offtopic_near shares <2 content words with its passage: {r['question']} {sorted(shared)}")
    if r["answer_sentence"] is not None:
        assert r["answer_sentence"] in r["passage"], r
if problems:
    print("\n".join(problems))
    sys.exit(1)

with open(sys.argv[1], "w", encoding="utf-8") as f:
    for i, r in enumerate(rows, 1):
        f.write(json.dumps({"id": f"tse-{i:04d}", "corpus": r["corpus"], "doc": r["doc"],
                            "passage": r["passage"], "question": r["question"], "label": r["label"],
                            "kind": r["kind"], "answer_sentence": r["answer_sentence"]},
                           ensure_ascii=False) + "\n")
c = collections.Counter(r["kind"] for r in rows)
print(len(rows), "rows;", len({r["passage"] for r in rows}), "passages;",
      "label 1:", sum(r["label"] for r in rows), dict(sorted(c.items())))
