"""Shared helpers for build_e: cut passages by anchors, find answer sentences."""
import re, subprocess

SOURCES = {
    # corpus: (bare git dir, commit)
    "carpentries-handbook": ("/work/.mirror/carpentries+handbook/repo/.git",
                             "339744e6b0d5321e10ffadcc5161fa8fdfc8c094"),
    "reg-handbook": ("/work/.mirror/alan-turing-institute+REG-handbook/repo",
                     "ef82c2f3aee97b68f8cbbc1743b3aa7db8685a0c"),
}
_cache = {}


def src(corpus, doc):
    key = (corpus, doc)
    if key not in _cache:
        git_dir, commit = SOURCES[corpus]
        _cache[key] = subprocess.run(["git", "--git-dir", git_dir, "show", f"{commit}:{doc}"],
                                     capture_output=True, text=True, check=True).stdout
    return _cache[key]


def cut(corpus, doc, start, end):
    """The text from the first occurrence of start to the end of the next occurrence of end."""
    t = src(corpus, doc)
    assert t.count(start) >= 1, (doc, start)
    i = t.index(start)
    j = t.index(end, i)
    return t[i:j + len(end)]


ABBR = ("e.g", "i.e", "etc", "vs", "U.S")
MARK = re.compile(r"^\s*(?:[-*] |\d+\. )")


def sent(passage, prefix):
    """Expand prefix to the full sentence or list item (marker removed) in passage."""
    assert passage.count(prefix) >= 1, prefix
    p = passage.index(prefix)
    line_start = passage.rfind("\n", 0, p) + 1
    line_end = passage.find("\n", p)
    if line_end == -1:
        line_end = len(passage)
    line = passage[line_start:line_end]
    m = MARK.match(line)
    if m and line_start + m.end() == p:
        return passage[p:line_end].rstrip()
    k = p
    while True:
        m2 = re.search(r"[.!?](\)|\*\*)?(?=\s|$)", passage[k:line_end])
        if not m2:
            return passage[p:line_end].rstrip()
        e = k + m2.end()
        before = passage[max(p, e - 5):e - 1]
        if any(before.endswith(a) for a in ABBR) and not re.match(r"\s+[A-Z]", passage[e:e + 2] + " "):
            k = e
            continue
        return passage[p:e]


def units(passage):
    """Sentences and list items of a passage, as exact substrings (headings skipped)."""
    out = []
    pos = 0
    for line in passage.split("\n"):
        start = pos
        pos += len(line) + 1
        s = line.strip()
        if not s or s.startswith("#") or s.startswith("```") or s.startswith("!["):
            continue
        m = MARK.match(line)
        off = start + (m.end() if m else len(line) - len(line.lstrip()))
        body = passage[off:start + len(line)].rstrip()
        if m:
            out.append(body)
            continue
        # split prose line into sentences
        b = 0
        for mm in re.finditer(r"(?<=[.!?])(?:\)|\*\*)?\s+(?=[A-Z*\[(_`])", body):
            piece = body[b:mm.start()].rstrip()
            if any(piece.endswith(a + ".") for a in ("e.g", "i.e", "etc")):
                continue
            out.append(piece)
            b = mm.end()
        if body[b:].strip():
            out.append(body[b:].rstrip())
    out = [u for u in out if u.strip()]
    for u in out:
        assert u in passage, u
    return out


STOP = set("""a an the and or of to in on for with by at from as is are was were be been being do does did
can could should would will shall may might must have has had not no yes if then than that this these those
it its it's i i'm im we our us you your my me they them their there what which who whom whose when where why
how about into over under after before any all some more most other such only own same so too very just also
get got gets much many each per up out off via vs etc e.g i.e there's isn't don't doesn't can't""".split())


def words(text):
    ws = re.findall(r"[a-z0-9]+", text.lower())
    out = set()
    for w in ws:
        if w in STOP or len(w) < 3:
            continue
        if w.endswith("ies") and len(w) > 4:
            w = w[:-3] + "y"
        elif w.endswith("s") and not w.endswith("ss") and len(w) > 3:
            w = w[:-1]
        out.add(w)
    return out


def nearest(passage, question):
    """The unit of passage that shares the most content words with question."""
    q = words(question)
    best, score = None, -1
    for u in units(passage):
        s = len(q & words(u))
        if s > score:
            best, score = u, s
    return best, score


ROWS = []
KIND = dict(p="paraphrase", s="short", t="typo", T="table", L="lookalike", N="offtopic_near", O="offtopic")
POSITIVE = {"paraphrase", "short", "typo", "table"}


def P(corpus, doc, passage, qs):
    for item in qs:
        q, k = item[0], KIND[item[1]]
        a = item[2] if len(item) > 2 else None
        if k == "offtopic":
            ans = None
        elif k == "offtopic_near":
            ans = sent(passage, a) if a else nearest(passage, q)[0]
        else:
            ans = sent(passage, a)
        ROWS.append(dict(corpus=corpus, doc=doc, passage=passage, question=q,
                         label=1 if k in POSITIVE else 0, kind=k, answer_sentence=ans))
