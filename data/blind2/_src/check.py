"""Stand-alone check of the blind v2 set (imports nothing from the project)."""
import json, os, collections
here = os.path.dirname(os.path.abspath(__file__)); root = os.path.abspath(os.path.join(here, "..", "..", ".."))
man = {"sample.jsonl": None, "handbook.jsonl": "handbook", "blind2-govuk.jsonl": "blind2-govuk", "blind2-posthog.jsonl": "blind2-posthog"}
docs = {}
for m, dom in man.items():
    for line in open(os.path.join(root, "manifests", m)):
        o = json.loads(line); p = os.path.normpath(os.path.join(root, "manifests", o["path"]))
        docs[o["doc_id"]] = (dom, p)
errs = []
QK = ["id", "domain", "query", "kind", "expected_mode", "expected_sources", "must_contain", "note"]
FK = ["id", "domain", "first", "follow_up", "expected_mode", "expected_sources", "must_contain"]
def chk(o, keys, qtext):
    if list(o) != keys: errs.append((o["id"], "keys"))
    ans = o["expected_mode"] == "rag"
    if "kind" in o:
        if (o["kind"] in ("paraphrase", "table", "typo", "short")) != ans: errs.append((o["id"], "mode/kind"))
        if o["kind"] not in ("paraphrase", "table", "typo", "short", "lookalike", "offtopic"): errs.append((o["id"], "kind"))
    if not ans:
        if o["expected_sources"] or o["must_contain"]: errs.append((o["id"], "fallback with sources"))
        if o["expected_mode"] != "fallback": errs.append((o["id"], "mode"))
        return
    (d, n), = o["expected_sources"].items()
    if n != 1 or d not in docs: errs.append((o["id"], "doc", d)); return
    dom, path = docs[d]
    if dom != o["domain"]: errs.append((o["id"], "domain mismatch"))
    if path.endswith((".pdf", ".docx")): errs.append((o["id"], "pdf/docx"))
    text = open(path, encoding="utf-8").read()
    (m,) = o["must_contain"]
    if m not in text: errs.append((o["id"], "must not verbatim", m))
    if m.lower() in qtext.lower(): errs.append((o["id"], "must in question", m))
ids = set(); cnt = collections.Counter()
for line in open(os.path.join(root, "data/blind2/questions.jsonl")):
    o = json.loads(line); assert o["id"] not in ids; ids.add(o["id"])
    chk(o, QK, o["query"]); cnt[(o["id"].split("-")[1], o["kind"])] += 1
for line in open(os.path.join(root, "data/blind2/followups.jsonl")):
    o = json.loads(line); assert o["id"] not in ids; ids.add(o["id"])
    chk(o, FK, o["follow_up"] + " " + o["first"]); cnt[(o["id"].split("-")[1], "followup-" + o["expected_mode"])] += 1
for c in ["govuk", "posthog"]:
    for f in os.listdir(os.path.join(root, "data/blind2", c)):
        if os.path.getsize(os.path.join(root, "data/blind2", c, f)) >= 25 * 1024: errs.append((f, "size"))
for e in errs: print("ERR", e)
for k in sorted(cnt): print(k, cnt[k])
print("errors:", len(errs))
