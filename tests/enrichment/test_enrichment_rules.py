"""The pure decisions of enrichment: what is accepted, where it goes, what the prompt allows."""

from __future__ import annotations

import json
from typing import Any

import pytest

from backend.common.config import EnrichmentSettings, MetadataFieldSettings, ProfileSettings
from backend.core.enrichment import (
    ChunkEnrichment,
    EnrichmentInput,
    accept,
    allowed_content_types,
    enriched_metadata,
    enrichment_fingerprint,
    page_key,
    pages_of,
    parse_reply,
    question_rows,
    reply_schema,
    summary_rows,
)
from backend.core.types import Chunk

SCHEMA = {
    "department": MetadataFieldSettings(type="enum", values=("People", "Finance", "IT")),
    "audience": MetadataFieldSettings(type="enum", values=("staff", "managers"), multi=True),
    "topics": MetadataFieldSettings(type="string_list"),
    "updated_at": MetadataFieldSettings(type="date"),
}


def test_accept_keeps_schema_values_and_counts_every_dropped_one() -> None:
    proposed = ChunkEnrichment(
        summary="  Annual   leave\nrules. ", content_type="memo",
        metadata={"department": "HR", "audience": ["staff", "interns", "staff"], "topics": ["leave", 3, "carry-over"],
                  "updated_at": "2026-01-01", "colour": "blue"},
        questions=("How many days?", "how many days?", " ", "When do days expire?", "Who approves?"))
    got = accept(proposed, SCHEMA, ("policy", "faq"), questions=2)
    # memo (not an allowed type), HR (not in the enum), interns + the repeated staff, 3 (not a string),
    # updated_at (a date: never from an enricher), colour (undeclared) = 7
    assert got.dropped == 7
    assert got.enrichment == ChunkEnrichment("Annual leave rules.", None, {"audience": ["staff"],
                                             "topics": ["leave", "carry-over"]},
                                             ("How many days?", "When do days expire?"))


def test_single_enum_keeps_one_value_and_counts_the_rest() -> None:
    got = accept(ChunkEnrichment(metadata={"department": ["IT", "Finance"]}), SCHEMA, (), questions=8)
    assert got.enrichment.metadata == {"department": "IT"} and got.dropped == 1


def test_manifest_values_win_over_enrichment() -> None:
    meta = enriched_metadata({"department": "Finance", "content_type": "faq", "heading_path": []},
                             ChunkEnrichment("s", "policy", {"department": "IT", "topics": ["x"]}, ("q?",)))
    assert meta == {"department": "Finance", "content_type": "faq", "heading_path": [], "topics": ["x"], "summary": "s"}


def test_allowed_content_types_prefer_the_schema_enum_then_the_templates() -> None:
    profile = ProfileSettings(index_name="KB_X_V1", templates={"policy": "Policy:", "faq": "FAQ:"})
    assert allowed_content_types({}, profile.templates) == ("policy", "faq")
    declared = {"content_type": MetadataFieldSettings(type="enum", values=("manual",))}
    assert allowed_content_types(declared, profile.templates) == ("manual",)
    assert allowed_content_types({}, {}) == ()


def test_pages_group_by_pdf_page_else_top_heading_and_ids_are_deterministic() -> None:
    metas: list[dict[str, Any]] = [{"page": 1, "heading_path": []}, {"page": 1}, {"page": 2},
                                   {"heading_path": ["Leave", "Carry-over"]}, {}]
    chunks = [Chunk(f"d::{i}", "d", f"text {i}", "d.pdf", i, metadata=m) for i, m in enumerate(metas)]
    assert [page_key(c.metadata) for c in chunks] == ["1", "1", "2", "Leave", None]
    groups = pages_of(chunks)
    assert [(k, [c.chunk_id for c in cs]) for k, cs in groups] == [("1", ["d::0", "d::1"]), ("2", ["d::2"]),
                                                                   ("Leave", ["d::3"])]
    rows = summary_rows("d", [(k, cs, f"summary {k}") for k, cs in groups] + [("x", [], " ")], "the doc", chunks)
    assert [(r.summary_id, r.kind, r.page) for r in rows] == [
        ("d::page::1", "page_summary", "1"), ("d::page::2", "page_summary", "2"),
        ("d::page::Leave", "page_summary", "Leave"), ("d::doc", "artifact_summary", None)]
    assert rows[-1].chunk_ids == tuple(c.chunk_id for c in chunks)
    assert [q.question_id for q in question_rows(chunks[0], ["a?", "b?"])] == ["d::0::q0", "d::0::q1"]


def test_reply_schema_constrains_enums_and_question_count() -> None:
    schema = reply_schema(("policy",), {k: v for k, v in SCHEMA.items() if v.type != "date"}, 3)
    props = schema["properties"]
    assert props["content_type"] == {"type": "string", "enum": ["policy"]}
    assert props["metadata"]["properties"]["department"] == {"type": "string", "enum": ["People", "Finance", "IT"]}
    assert props["metadata"]["properties"]["audience"]["type"] == "array"
    assert props["questions"]["minItems"] == props["questions"]["maxItems"] == 3


def test_parse_reply_reads_wrapped_json_and_names_what_is_wrong() -> None:
    text = 'Sure:\n```json\n{"summary": "s", "content_type": null, "metadata": {}, "questions": ["q?"]}\n```'
    assert parse_reply(text) == ChunkEnrichment("s", None, {}, ("q?",))
    with pytest.raises(ValueError, match="questions"):
        parse_reply(json.dumps({"summary": "s", "questions": "not a list"}))


def test_content_key_changes_with_what_shapes_the_answer() -> None:
    a = EnrichmentInput("c", "text", "Title", ("H",), None)
    assert a.content_key(8) == EnrichmentInput("other-id", "text", "Title", ("H",), None).content_key(8)
    assert len({a.content_key(8), a.content_key(9), EnrichmentInput("c", "text2", "Title", ("H",)).content_key(8),
                EnrichmentInput("c", "text", "Title", ("G",)).content_key(8)}) == 4


def test_fingerprint_is_absent_while_off_and_names_what_forces_a_new_version() -> None:
    assert enrichment_fingerprint(EnrichmentSettings(), None) is None
    fp = enrichment_fingerprint(EnrichmentSettings(provider="extractive", questions=9, prompt_version="2"), None)
    assert fp == {"provider": "extractive", "model": None, "prompt_version": "2", "questions": 9, "summaries": True}


def test_config_refuses_openai_compat_without_endpoint() -> None:
    with pytest.raises(ValueError, match="base_url and model"):
        EnrichmentSettings(provider="openai_compat")
    with pytest.raises(ValueError):
        EnrichmentSettings(questions=11)
