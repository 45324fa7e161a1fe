"""The non-generative enricher: central sentence, rule-based types and values, templated questions."""

from __future__ import annotations

from backend.common.config import EnrichmentSettings, MetadataFieldSettings
from backend.core.enrichment import EnrichmentInput, accept
from backend.core.ports import Enricher
from backend.providers.local.extractive_enricher import ExtractiveEnricher, best_values, central, sentences

TEXT = ("Annual leave\n"
        "Every full-time employee receives 25 days of paid annual leave per calendar year. "
        "Unused annual leave days may be carried over to the next year, up to five days. "
        "Carried-over annual leave days must be taken by 31 March. "
        "The canteen opens at noon.")
SCHEMA = {"department": MetadataFieldSettings(type="enum", values=("People", "Finance")),
          "audience": MetadataFieldSettings(type="enum", values=("employees", "managers", "contractors"), multi=True)}


def enricher(questions: int = 8) -> ExtractiveEnricher:
    return ExtractiveEnricher(EnrichmentSettings(provider="extractive", questions=questions), SCHEMA,
                              ("policy", "faq", "expense report"))


def test_sentences_skip_short_headings_and_repeats() -> None:
    assert sentences("Annual leave\nOne two three four.\nOne two three four.\nThis line holds eight words without any stop") == [
        "One two three four.", "This line holds eight words without any stop"]


def test_summary_is_the_most_central_sentence_and_off_topic_ones_lose() -> None:
    top = central([TEXT], 2)
    assert "canteen" not in " ".join(top)
    assert top == sorted(top, key=TEXT.index)  # reading order
    item = EnrichmentInput("c1", TEXT, "Annual Leave Policy", ("Annual leave",), None, {"department": "People"})
    (got,) = enricher().enrich([item])
    assert got.summary in top and "annual leave" in got.summary.lower()


def test_content_type_and_enum_values_come_from_allowed_values_found_in_the_passage() -> None:
    item = EnrichmentInput("c1", TEXT + " Managers approve requests.", "Annual Leave Policy", ("Annual leave",))
    (got,) = enricher().enrich([item])
    assert got.content_type == "policy"  # in the title; "faq" and "expense report" appear nowhere
    assert set(got.metadata["audience"]) == {"employees", "managers"}  # plural forms match too
    assert "department" not in got.metadata  # neither People nor Finance is mentioned
    assert best_values(("expense report",), "an expense without a rep0rt", many=False) == []
    assert accept(got, SCHEMA, ("policy", "faq", "expense report"), 8).dropped == 0


def test_questions_come_from_the_heading_path_then_central_sentences() -> None:
    item = EnrichmentInput("c1", TEXT, "Annual Leave Policy", ("Leave", "Annual leave"))
    (got,) = enricher(questions=4).enrich([item])
    assert len(got.questions) == 4
    assert got.questions[:2] == ("What is Annual leave?", "What does Annual Leave Policy say about Annual leave?")
    assert all(q.startswith("What about ") and q.endswith("?") for q in got.questions[2:])
    assert enricher().calls == 0 and isinstance(enricher(), Enricher)


def test_page_and_document_summaries_take_central_sentences_across_texts() -> None:
    text = enricher().summarize("Leave", [TEXT, "Annual leave requests go through the HR portal before the leave starts."])
    assert "annual leave" in text.lower() and "canteen" not in text


def test_manifest_metadata_counts_as_context_for_the_rules() -> None:
    item = EnrichmentInput("c1", "Claims over 25 EUR need a receipt.", "Claims", (),
                           metadata={"tags": ["finance", "expenses"], "source": "handbook/faq.md"})
    (got,) = enricher().enrich([item])
    assert got.metadata.get("department") == "Finance" and got.content_type == "faq"
    bare = EnrichmentInput("c1", "Claims over 25 EUR need a receipt.", "Claims", ())
    assert bare.content_key(8) != item.content_key(8)  # the cache sees what the rules saw
