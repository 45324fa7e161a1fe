"""Where the statistical NER runs (``sanitize.ner_scope``), with the real spaCy model and Presidio.

``capitalised`` (the default for documents) runs the NER only around capitalised
words; these tests pin that it finds what a whole-text run finds on realistic text,
that short texts and questions are still read whole, and what it gives up: a name
written in lower case inside a long document.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import spacy

from backend.common.config import SanitizeSettings
from backend.common.sanitizer import (
    _load_spacy,
    _ner_windows,
    _windowed_ner,
    ner_token_share,
    sanitize_if_enabled,
    sanitize_interaction,
)

FIXTURES = Path(__file__).parent / "fixtures" / "pii"
MAPPED = {"PERSON", "PER", "GPE", "LOC", "FAC", "NORP", "ORG"}
FILLER = "the quarterly review of the archive was completed by the records team without any open points and "
#: a long lower-case passage with a lower-case name in the middle: the NER finds it only when it reads every token
LOWER_CASE_DOCUMENT = FILLER * 2 + "please forward the signed contract to john smith before friday. " + FILLER * 2


@pytest.fixture(scope="module")
def nlp() -> spacy.language.Language:
    return _load_spacy(SanitizeSettings().spacy_model)


@pytest.fixture(scope="module")
def redact() -> SanitizeSettings:
    settings = SanitizeSettings(enabled=True, mode="redact")
    sanitize_if_enabled(["warm-up"], settings, doc_ids=["w"])
    return settings


def test_windows_surround_capitalised_words_skip_capitalised_stop_words_and_keep_acronyms() -> None:
    doc = spacy.blank("en")(FILLER + "The archive grew slowly over the years and then moved to Anna " + FILLER
                            + "since the US office " + FILLER)
    words = [t.text for t in doc]
    ranges = _ner_windows(doc, 4)
    covered = {i for start, end in ranges for i in range(start, end)}
    anna, us, the = words.index("Anna"), words.index("US"), words.index("The")
    assert ranges == [(anna - 4, anna + 5), (us - 4, us + 5)]
    assert the not in covered  # "The" is a stop word: no window of its own
    assert len(covered) < len(doc) / 3


def test_close_windows_are_joined_and_a_short_text_is_one_window() -> None:
    tokenizer = spacy.blank("en")
    doc = tokenizer(FILLER + "Anna met Bruno at the depot " + FILLER)
    words = [t.text for t in doc]
    assert _ner_windows(doc, 4) == [(words.index("Anna") - 4, words.index("Bruno") + 5)]
    short = tokenizer("please forward the contract to john smith before friday.")
    assert _ner_windows(short, 4) == [(0, len(short))]
    assert _ner_windows(tokenizer(""), 4) == []


def test_windowed_ner_finds_every_capitalised_entity_a_whole_text_run_finds(nlp: spacy.language.Language) -> None:
    pytest.importorskip("faker")
    from backend.benchmarks.pii_set import generate

    texts = [(FIXTURES / "pii_laden.txt").read_text(encoding="utf-8")]
    texts += [s.text for s in generate(seed=5, pii_texts=80, clean_texts=20)]
    width = SanitizeSettings().ner_window_tokens

    def entities(docs: object) -> list[set[tuple[int, int, str]]]:
        return [{(e.start_char, e.end_char, e.label_) for e in d.ents if e.label_ in MAPPED} for d in docs]  # type: ignore[attr-defined]

    whole = entities(nlp.pipe(texts, batch_size=32))
    windowed = entities(_windowed_ner(nlp, texts, width, 32))
    capitalised = [{e for e in found if any(c.isupper() for c in texts[i][e[0]:e[1]])} for i, found in enumerate(whole)]
    missed = [(texts[i][s:e], label) for i, found in enumerate(capitalised) for s, e, label in found - windowed[i]]
    assert sum(map(len, capitalised)) > 300
    assert missed == []


def test_a_lower_case_name_in_a_long_document_needs_ner_scope_full(redact: SanitizeSettings) -> None:
    capitalised = sanitize_if_enabled([LOWER_CASE_DOCUMENT], redact, doc_ids=["d"]).texts[0]
    full = sanitize_if_enabled([LOWER_CASE_DOCUMENT], redact.model_copy(update={"ner_scope": "full"}),
                               doc_ids=["d"]).texts[0]
    assert "john smith" in capitalised  # the documented limit of the default
    assert "john smith" not in full and "<PERSON>" in full


def test_short_texts_and_questions_are_read_whole_whatever_the_scope(redact: SanitizeSettings) -> None:
    assert redact.ner_scope == "capitalised"
    metadata_value = sanitize_if_enabled(["owner: john smith"], redact, doc_ids=["d"]).texts[0]
    assert "john smith" not in metadata_value
    question, _, explain = sanitize_interaction(LOWER_CASE_DOCUMENT, None, {"q": "john smith"}, redact)
    assert "john smith" not in question and "john smith" not in json.dumps(explain)


def test_the_share_of_tokens_the_ner_reads_is_what_the_windows_cover(redact: SanitizeSettings) -> None:
    text = FILLER * 3 + "The budget moved to Anna Meyer in Leeds. " + FILLER * 3
    doc = spacy.blank("en")(text)
    (start, end), = _ner_windows(doc, redact.ner_window_tokens)
    assert ner_token_share([text], redact) == pytest.approx((end - start) / len(doc))
    assert ner_token_share([text], redact.model_copy(update={"ner_scope": "full"})) == 1.0
