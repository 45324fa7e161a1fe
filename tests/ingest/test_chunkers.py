"""Chunkers: boundaries, overlap, the conditional threshold, ids, figure markers."""

from __future__ import annotations

import re
from typing import Any

import pytest

from backend.common.config import ChunkerSettings, ProfileSettings
from backend.core.types import content_hash
from backend.ingest.chunkers import FIGURE_MARKER, TextChunker, dedupe, hf_token_spans, split_spans
from backend.ingest.documents import Block, LoadedDocument

SENTENCES = " ".join(f"Sentence number {i} talks about topic {i}." for i in range(40))


def _profile(**chunker: Any) -> ProfileSettings:
    return ProfileSettings(index_name="KB_T", chunker=ChunkerSettings(**chunker), templates={"policy": "Policy:"},
                           document_prefix="passage: ")


def _doc(text: str, doc_id: str = "hr/policy.txt", **meta: Any) -> LoadedDocument:
    return LoadedDocument(doc_id=doc_id, source="data/hr/policy.txt", blocks=[Block(kind="text", text=text)],
                          metadata={"tags": ["hr"], "lang": "en", **meta})


def test_char_chunks_respect_size_and_end_at_sentence_boundaries() -> None:
    spans = split_spans(SENTENCES, 200, 40)
    pieces = [SENTENCES[s.start:s.end] for s in spans]
    assert len(pieces) == 10
    assert all(len(p) <= 200 for p in pieces)
    assert all(p.endswith(".") for p in pieces[:-1])
    assert pieces[-1] == SENTENCES[spans[-1].start:]


def test_consecutive_char_chunks_overlap_by_at_most_the_overlap() -> None:
    spans = split_spans(SENTENCES, 200, 40)
    for a, b in zip(spans, spans[1:]):
        assert b.start < a.end
        assert a.end - b.start <= 40
        assert SENTENCES[b.start - 1] == " "


def test_paragraph_break_is_preferred_over_sentence_break() -> None:
    text = "First paragraph sentence one. Sentence two.\n\nSecond paragraph here. " + "More words " * 10
    first = split_spans(text, 80, 0)[0]
    assert text[first.start:first.end] == "First paragraph sentence one. Sentence two."


def test_conditional_keeps_short_document_as_one_chunk() -> None:
    chunker = TextChunker(_profile(kind="conditional", size=100, overlap=10, min_chars_before_split=2000))
    chunks = chunker.chunk(_doc(SENTENCES[:1500]))
    assert [c.text for c in chunks] == [SENTENCES[:1500].strip()]


def test_conditional_splits_above_threshold_with_target_size() -> None:
    chunker = TextChunker(_profile(kind="conditional", size=200, overlap=40, min_chars_before_split=1000))
    chunks = chunker.chunk(_doc(SENTENCES))
    assert len(chunks) == 10
    assert max(len(c.text) for c in chunks) <= 200


def test_chunk_ids_are_deterministic_and_carry_metadata() -> None:
    chunker = TextChunker(_profile(kind="char", size=200, overlap=40))
    doc = _doc(SENTENCES, content_type="policy", updated_at="2025-01-02", owner="hr-team")
    first, second = chunker.chunk(doc), chunker.chunk(doc)
    assert [c.chunk_id for c in first] == [f"hr/policy.txt::{i}" for i in range(10)]
    assert [c.chunk_id for c in first] == [c.chunk_id for c in second]
    c = first[3]
    assert (c.chunk_index, c.chunk_type, c.doc_id, c.source) == (3, "text", "hr/policy.txt", "data/hr/policy.txt")
    assert c.content_hash == content_hash(c.text)
    assert c.metadata["tags"] == ["hr"] and c.metadata["owner"] == "hr-team"
    assert c.metadata["updated_at"] == "2025-01-02" and c.metadata["content_type"] == "policy"
    assert c.embed_text == f"passage: Policy:\n{c.text}"
    assert SENTENCES[c.metadata["char_start"]:].startswith(c.text)


def test_figure_marker_is_never_split() -> None:
    text = ("Intro words go here. " * 4) + "[FIGURE:img_0042_long_identifier] " + ("Tail words follow. " * 6)
    for size in range(60, 140, 3):
        for span in split_spans(text, size, 15):
            piece = text[span.start:span.end]
            assert piece.count("[FIGURE:") == len(FIGURE_MARKER.findall(piece)), (size, piece)
            assert not re.search(r"img_0042_long_identifier\]", piece) or "[FIGURE:img_0042" in piece


def test_tokens_chunker_counts_tokens_of_the_given_tokenizer() -> None:
    def words(text: str) -> list[tuple[int, int]]:
        return [(m.start(), m.end()) for m in re.finditer(r"\S+", text)]

    chunker = TextChunker(_profile(kind="tokens", size=30, overlap=5), token_spans=words)
    chunks = chunker.chunk(_doc(SENTENCES))
    assert all(len(c.text.split()) <= 30 for c in chunks)
    assert len(chunks) == 13
    assert chunks[1].text.split()[0] in chunks[0].text.split()[-5:]


def test_tokens_chunker_requires_a_tokenizer() -> None:
    with pytest.raises(ValueError, match="needs the embedding model's tokenizer"):
        TextChunker(_profile(kind="tokens", size=30, overlap=5))


def test_tokens_chunker_with_the_real_model_tokenizer_stays_under_size(embedder: Any) -> None:
    chunker = TextChunker(_profile(kind="tokens", size=64, overlap=8), token_spans=hf_token_spans(embedder.tokenizer))
    chunks = chunker.chunk(_doc(SENTENCES))
    counts = [len(embedder.tokenizer(c.text, add_special_tokens=False)["input_ids"]) for c in chunks]
    assert 48 < max(counts) <= 64
    assert len(chunks) == 7


def test_dedupe_drops_exact_duplicates_across_documents() -> None:
    chunker = TextChunker(_profile(kind="char", size=100, overlap=0))
    seen: set[str] = set()
    a, dropped_a = dedupe(chunker.chunk(_doc("Same paragraph text.", doc_id="a")), seen)
    b, dropped_b = dedupe(chunker.chunk(_doc("Same paragraph text.", doc_id="b")), seen)
    assert (len(a), dropped_a, len(b), dropped_b) == (1, 0, 0, 1)


def test_overlap_starts_at_a_sentence_start_inside_the_overlap() -> None:
    spans = split_spans(SENTENCES, 200, 60)
    starts = [SENTENCES[s.start:s.end].split(" ")[0] for s in spans]
    assert starts == ["Sentence"] * len(spans)
    assert SENTENCES[spans[1].start:spans[0].end] == "Sentence number 4 talks about topic 4."
