import re, json, subprocess
REPO = "/work/.mirror/OWASP+CheatSheetSeries/repo"
COMMIT = "6b8819da79e0537d072e04296ffa3adfc94ba881"
_cache = {}
def src(doc):
    if doc not in _cache:
        _cache[doc] = subprocess.run(["git", "--git-dir", REPO, "show", f"{COMMIT}:cheatsheets/{doc}"],
                                     capture_output=True, text=True, check=True).stdout
    return _cache[doc]

def cut(doc, start, end):
    t = src(doc)
    assert t.count(start) >= 1, (doc, start)
    i = t.index(start)
    j = t.index(end, i)
    return t[i:j + len(end)]

def table(doc, header_line_start, row_keys):
    """Rewrite table rows (selected by first cell) as 'Col: value; Col: value'."""
    t = src(doc).split("\n")
    hi = next(k for k, l in enumerate(t) if l.startswith(header_line_start))
    cols = [re.sub(r"\s+", " ", c).strip() for c in t[hi].strip().strip("|").split("|")]
    out = []
    k = hi + 2
    while k < len(t) and t[k].startswith("|"):
        cells = [re.sub(r"\s+", " ", c).strip() for c in t[k].strip().strip("|").split("|")]
        if cells[0] in row_keys:
            out.append("; ".join(f"{c}: {v}" for c, v in zip(cols, cells)))
        k += 1
    assert len(out) == len(row_keys), (row_keys, out)
    return "\n".join(out)

ABBR = ("e.g", "i.e", "etc", "vs")
def sent(passage, prefix):
    """Expand prefix to the full sentence / list item / table row in passage."""
    assert passage.count(prefix) >= 1, prefix
    p = passage.index(prefix)
    line_start = passage.rfind("\n", 0, p) + 1
    line_end = passage.find("\n", p)
    if line_end == -1: line_end = len(passage)
    line = passage[line_start:line_end]
    m = re.match(r"^\s*(?:[-*] |\d+\. )", line)
    if m and line_start + m.end() == p:
        return passage[p:line_end]
    if ": " in line and "; " in line and line_start == p:  # table row
        return passage[p:line_end]
    # prose: to end of sentence
    k = p
    while True:
        m2 = re.search(r"[.!?](\)?)(?=\s|$)", passage[k:line_end])
        if not m2:
            return passage[p:line_end]
        e = k + m2.end()
        before = passage[max(p, e - 5):e - 1].lower()
        if any(before.endswith(a) for a in ABBR):
            k = e; continue
        return passage[p:e]

ROWS = []
def P(corpus, doc, passage, qs):
    for q, kind, a in qs:
        if kind == "offtopic":
            ans = None
        else:
            ans = sent(passage, a)
        ROWS.append(dict(corpus=corpus, doc=doc, passage=passage, question=q,
                         label=1 if kind in ("paraphrase", "short", "typo", "table") else 0,
                         kind=kind, answer_sentence=ans))
