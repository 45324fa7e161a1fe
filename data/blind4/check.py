#!/usr/bin/env python3
"""Stand-alone checker for data/blind4/questions.jsonl and followups.jsonl (stdlib only)."""
import json, os, sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
MANIFESTS = {None: "sample.jsonl", "handbook": "handbook.jsonl",
             "blind4-gdsway": "blind4-gdsway.jsonl", "blind4-google": "blind4-google.jsonl"}
PREFIX = {None: "sample", "handbook": "handbook", "blind4-gdsway": "gdsway", "blind4-google": "google"}
QKEYS = ["id", "domain", "query", "kind", "expected_mode", "expected_sources", "must_contain", "note"]
FKEYS = ["id", "domain", "first", "follow_up", "expected_mode", "expected_sources", "must_contain"]
ANSWERABLE = {"paraphrase", "table", "typo", "short"}
UNANSWERABLE = {"lookalike", "offtopic"}
errors = []

docs = {}  # doc_id -> (domain, abs path)
for dom, man in MANIFESTS.items():
    with open(os.path.join(ROOT, "manifests", man), encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                r = json.loads(line)
                docs[r["doc_id"]] = (dom, os.path.normpath(os.path.join(ROOT, "manifests", r["path"])))

def text_of(doc_id):
    with open(docs[doc_id][1], encoding="utf-8", errors="replace") as fh:
        return fh.read().lower()

def check_common(where, r, texts):
    dom = r["domain"]
    if dom not in MANIFESTS:
        errors.append(f"{where}: bad domain {dom!r}"); return
    if not r["id"].split("-")[1] == PREFIX[dom]:
        errors.append(f"{where}: id prefix does not match domain")
    src, mc = r["expected_sources"], r["must_contain"]
    if r["expected_mode"] == "rag":
        if len(src) != 1 or len(mc) != 1:
            errors.append(f"{where}: rag needs one source and one phrase"); return
        (d, v), = src.items()
        if v != 1: errors.append(f"{where}: source weight {v}")
        if d not in docs: errors.append(f"{where}: unknown doc_id {d}"); return
        if docs[d][0] != dom: errors.append(f"{where}: doc {d} not in domain {dom}")
        if docs[d][1].endswith((".pdf", ".docx")): errors.append(f"{where}: points at pdf/docx")
        p = mc[0].lower()
        if not p.strip() or p not in text_of(d): errors.append(f"{where}: phrase {mc[0]!r} not in {d}")
        for t in texts:
            if p in t.lower(): errors.append(f"{where}: phrase {mc[0]!r} occurs in the question")
    elif r["expected_mode"] == "fallback":
        if src != {} or mc != []: errors.append(f"{where}: fallback must have {{}} and []")
    else:
        errors.append(f"{where}: bad expected_mode")

def load(name, keys):
    seen, rows = set(), []
    with open(os.path.join(HERE, name), encoding="utf-8") as fh:
        for n, line in enumerate(fh, 1):
            where = f"{name}:{n}"
            try:
                r = json.loads(line)
            except Exception as e:
                errors.append(f"{where}: does not parse ({e})"); continue
            if list(r) != keys:
                errors.append(f"{where}: keys {list(r)}"); continue
            if r["id"] in seen: errors.append(f"{where}: duplicate id {r['id']}")
            seen.add(r["id"]); rows.append((where, r))
    return rows

qs = load("questions.jsonl", QKEYS)
for where, r in qs:
    if not r["id"].startswith("b4-"): errors.append(f"{where}: id prefix")
    if r["kind"] in ANSWERABLE and r["expected_mode"] != "rag": errors.append(f"{where}: kind/mode")
    if r["kind"] in UNANSWERABLE and r["expected_mode"] != "fallback": errors.append(f"{where}: kind/mode")
    if r["kind"] not in ANSWERABLE | UNANSWERABLE: errors.append(f"{where}: bad kind")
    if not r["note"]: errors.append(f"{where}: empty note")
    check_common(where, r, [r["query"]])
fs = load("followups.jsonl", FKEYS)
for where, r in fs:
    if not r["id"].startswith("bf4-"): errors.append(f"{where}: id prefix")
    check_common(where, r, [r["first"], r["follow_up"]])
for corp in ("gdsway", "google"):
    d = os.path.join(HERE, corp)
    for f in os.listdir(d):
        if os.path.getsize(os.path.join(d, f)) >= 25 * 1024: errors.append(f"{corp}/{f} is 25 KB or more")

from collections import Counter
c = Counter((PREFIX[r["domain"]], r["kind"]) for _, r in qs)
for k in sorted(c): print(k, c[k])
print(len(qs), "questions,", len(fs), "followups,", len(errors), "errors")
for e in errors: print("ERROR", e)
sys.exit(1 if errors else 0)
