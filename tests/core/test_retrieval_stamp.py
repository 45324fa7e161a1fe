"""The pure parts of per-version retrieval settings and of lexical query analysis."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from backend.common.config import LexicalSettings, ProfileSettings, RetrievalSettings
from backend.core.lexical_query import combine_feedback, expansion_terms, query_words
from backend.core.retrieval_stamp import describe_stamp, retrieval_stamp, stamp_changes, stamped_settings
from backend.core.versions import VersionNaming, plan_build
from backend.core.types import IndexVersion

PROFILE = ProfileSettings(index_name="KB_V1")


def _retrieval(**update: object) -> RetrievalSettings:
    return RetrievalSettings.model_validate({**RetrievalSettings().model_dump(mode="json"), **update})


def test_the_stamp_holds_what_ranks_chunks_and_the_profile_fusion_wins() -> None:
    live = _retrieval(strategy="fusion", fusion={"k": 20}, rerank={"provider": "http", "base_url": "http://x",
                                                                  "api_key": "secret", "top_n": 30})
    profile = PROFILE.model_copy(update={"fusion": live.fusion.model_copy(update={"k": 7}),
                                         "lexical": LexicalSettings(stop_words="english")})
    stamp = retrieval_stamp(live, profile)
    assert stamp["strategy"] == "fusion" and stamp["fusion"]["k"] == 7
    assert stamp["lexical"]["stop_words"] == "english"
    assert stamp["rerank"]["provider"] == "http" and stamp["rerank"]["top_n"] == 30
    assert "api_key" not in stamp["rerank"] and "base_url" not in stamp["rerank"]  # deployment, not ranking


def test_stamped_settings_override_the_live_ones_but_keep_endpoints_and_thresholds() -> None:
    stamp = retrieval_stamp(_retrieval(strategy="lexical", fusion={"k": 5}, rerank={"provider": "none"}), PROFILE)
    live = _retrieval(strategy="dense", threshold_high=0.6, rerank={"provider": "http", "base_url": "http://rr"})
    served = stamped_settings(live, PROFILE, stamp)
    assert (served.strategy, served.fusion.k, served.rerank.provider) == ("lexical", 5, "none")
    assert served.rerank.base_url == "http://rr" and served.threshold_high == 0.6
    unstamped = stamped_settings(live, PROFILE.model_copy(update={"fusion": live.fusion.model_copy(
        update={"k": 9})}), None)
    assert (unstamped.strategy, unstamped.fusion.k) == ("dense", 9)
    # a field a newer release added is ignored, not a failure to serve
    future = {**stamp, "fusion": {**stamp["fusion"], "new_knob": 1}}
    assert stamped_settings(live, PROFILE, future).fusion.k == 5


def test_stamp_changes_name_each_difference_and_an_unstamped_version_has_none() -> None:
    old = retrieval_stamp(_retrieval(), PROFILE)
    new = retrieval_stamp(_retrieval(fusion={"dense_weight": 2.0}, lexical={"feedback_docs": 5}), PROFILE)
    assert stamp_changes(old, new) == ["fusion.dense_weight: 1.0 -> 2.0", "lexical.feedback_docs: 0 -> 5"]
    assert stamp_changes(old, old) == [] and stamp_changes(None, new) == []
    assert "fusion rrf k=60 2.0:1.0" in describe_stamp(new) and describe_stamp(None).startswith("live config")


def _version(name: str) -> IndexVersion:
    return IndexVersion(name, "m", 3, "cosine", "2025-01-01")


def test_changed_settings_on_a_served_version_build_the_next_one_and_an_unserved_one_is_resumed() -> None:
    naming = VersionNaming()
    kw = {"model": "m", "dimension": 3, "distance": "cosine", "changed": False}
    served = plan_build(naming, "KB_V1", _version("KB_V1"), {"KB_V1": "KB_ACTIVE live"},
                        retrieval_changes=["fusion.k: 60 -> 20"], **kw)  # type: ignore[arg-type]
    assert (served.action, served.target, served.parent) == ("new_version", "KB_V2", "KB_V1")
    assert "fusion.k: 60 -> 20" in served.reason
    same = plan_build(naming, "KB_V1", _version("KB_V1"), {"KB_V1": "KB_ACTIVE live"}, **kw)  # type: ignore[arg-type]
    assert same.action == "up_to_date"
    candidate = plan_build(naming, "KB_V1", _version("KB_V1"), {}, retrieval_changes=["x"], **kw)  # type: ignore[arg-type]
    assert candidate.action == "resume"


def test_stop_words_leave_the_content_words_and_never_an_empty_query() -> None:
    english = LexicalSettings(stop_words="english", extra_stop_words=("Effects",))
    assert query_words("What are the effects of indexing on retrieval? Indexing!", english) == ["indexing", "retrieval"]
    assert query_words("what is it", english) == ["what", "is", "it"]
    assert query_words("What is it", LexicalSettings()) == ["what", "is", "it"]


def test_expansion_takes_frequent_distinctive_new_terms_from_the_feedback_texts() -> None:
    feedback = ["Citation indexing of scientific journals; citation counts.", "Journals and citation analysis."]
    pool = feedback + ["The library budget.", "Scientific staff in the library.", "Journals of the library."]
    terms = expansion_terms(["indexing"], feedback, pool, 3)
    assert terms[0] == "citation" and "indexing" not in terms and "the" not in terms
    assert expansion_terms(["x"], [], pool, 3) == []


def test_expansion_weights_each_term_by_its_idf_over_the_whole_pool() -> None:
    """The reference formula written out: relative frequency in each feedback text x log((|pool| + 1) / df)."""
    import math
    import random
    from collections import Counter

    from backend.core.lexical_query import ENGLISH_STOP_WORDS, words

    rng = random.Random(3)
    vocabulary = [f"term{i}" for i in range(60)] + ["the", "of", "42", "ab"]
    for _ in range(30):
        pool = [" ".join(rng.choices(vocabulary, k=rng.randint(3, 25))) for _ in range(40)]
        feedback = pool[:5]
        df = Counter(w for text in pool for w in set(words(text)))
        weight: dict[str, float] = {}
        for text in feedback:
            terms = [w for w in words(text) if w not in ENGLISH_STOP_WORDS and len(w) > 2 and not w.isdigit()]
            for term, count in Counter(terms).items():
                weight[term] = weight.get(term, 0.0) + count / len(terms) * math.log(41 / df[term]) / 5
        expected = [t for t in sorted(weight, key=lambda t: -weight[t]) if t != "term1"][:6]
        assert expansion_terms(["term1"], feedback, pool, 6) == expected


def test_feedback_combination_normalises_each_side_and_keeps_ids_of_both() -> None:
    first = [("a", 10.0), ("b", 5.0), ("c", 0.0)]
    expanded = [("c", 3.0), ("d", 2.0), ("a", 1.0)]
    combined = combine_feedback(first, expanded, 0.5)
    assert [c for c, _ in combined] == ["a", "c", "b", "d"]
    assert dict(combined)["a"] == 0.5 and dict(combined)["b"] == 0.25
    assert [c for c, _ in combine_feedback(first, expanded, 0.0)][:3] == ["a", "b", "c"]


# --- through SearchService on the real store and model -------------------------------------------
DOCS = {
    "citations": "Citation indexing of scientific journals: citation counts rank the journals.",
    "citation-analysis": "Citation analysis of journals and of the scientific literature.",
    "budget": "The library budget for the year and the cost of staff.",
    "catalogue": "The library catalogue lists the books of the library.",
}


def _store(tmp_path: Path, embedder: Any) -> Any:
    from backend.core.types import Chunk, DocumentWrite, VersionSpec
    from backend.providers.sqlite_vs.store import SqliteVectorStore

    store = SqliteVectorStore(tmp_path / "lexical.sqlite")
    store.create_version(VersionSpec("KB_LEX_V1", embedder.model_id, embedder.dimension, "cosine"))
    vectors = embedder.embed_documents(list(DOCS.values()))
    store.write_documents("KB_LEX_V1", [
        DocumentWrite(d, d, [Chunk(f"{d}::0", d, text, f"{d}.txt", 0)], vectors[i:i + 1])
        for i, (d, text) in enumerate(DOCS.items())])
    return store


def test_stop_words_and_feedback_shape_the_lexical_side_and_are_explained(tmp_path: Path, embedder: Any) -> None:
    from backend.core.services.search_service import SearchRequest, SearchService

    store = _store(tmp_path, embedder)
    try:
        question = "What is the use of indexing?"
        plain = SearchService(store, embedder, PROFILE, _retrieval()).search(
            SearchRequest(question, "KB_LEX_V1", 4, strategy="lexical"))
        # "the", "of", "is" match every document without a stop list
        assert len(plain.hits) == 4 and plain.details["lexical"] == {"stop_words": "none", "terms": 6}
        english = _retrieval(lexical={"stop_words": "english"})
        stopped = SearchService(store, embedder, PROFILE, english).search(
            SearchRequest(question, "KB_LEX_V1", 4, strategy="lexical"))
        assert [h.chunk.doc_id for h in stopped.hits] == ["citations"]
        feedback = _retrieval(lexical={"stop_words": "english", "feedback_docs": 1, "feedback_terms": 3})
        expanded = SearchService(store, embedder, PROFILE, feedback).search(
            SearchRequest(question, "KB_LEX_V1", 4, strategy="fusion"))
        explained = expanded.details["lexical"]["feedback"]
        assert explained["docs"] == 1 and "citation" in explained["terms"]
        assert expanded.details["candidates"]["lexical"] == 2  # the expansion found the citation-analysis abstract
        assert expanded.details["retrieval_settings"] == {"source": "live config", "version": None,
                                                          "stamped": False, "stamp": None}
    finally:
        store.close()


def test_query_term_frequency_and_dense_feedback_travel_in_the_stamp_and_are_off_for_older_stamps() -> None:
    live = _retrieval(fusion={"dense_feedback_docs": 5, "dense_feedback_weight": 0.7},
                      lexical={"query_term_frequency": True})
    stamp = retrieval_stamp(live, PROFILE)
    assert stamp["fusion"]["dense_feedback_docs"] == 5 and stamp["lexical"]["query_term_frequency"] is True
    served = stamped_settings(_retrieval(), PROFILE, stamp)
    assert (served.fusion.dense_feedback_docs, served.fusion.dense_feedback_weight) == (5, 0.7)
    assert served.lexical.query_term_frequency is True
    # a version stamped before these options existed keeps ranking as it did: both off
    older = {**stamp, "fusion": {k: v for k, v in stamp["fusion"].items() if not k.startswith("dense_feedback")},
             "lexical": {k: v for k, v in stamp["lexical"].items() if k != "query_term_frequency"}}
    old_served = stamped_settings(live, PROFILE, older)
    assert old_served.fusion.dense_feedback_docs == 0 and old_served.lexical.query_term_frequency is False
    assert stamp_changes(retrieval_stamp(_retrieval(), PROFILE), stamp) == [
        "fusion.dense_feedback_docs: 0 -> 5", "fusion.dense_feedback_weight: 0.5 -> 0.7",
        "lexical.query_term_frequency: False -> True"]
    assert "dense feedback 5@0.7" in describe_stamp(stamp) and "query_term_frequency" in describe_stamp(stamp)
    assert "dense feedback" not in describe_stamp(older) and "query_term_frequency" not in describe_stamp(older)
