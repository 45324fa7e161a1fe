"""Pure parts of a sync (issue 46): staged file names, document ids, loader suffixes, the report."""

from __future__ import annotations

import pytest

from backend.cli.connector import render_report
from backend.connectors.retry import retry_after_seconds
from backend.connectors.sync import doc_id_for, staged_name
from backend.core.connector import suffix_for


@pytest.mark.parametrize(("item_id", "suffix", "start"), [
    ("docs/leave.md", ".md", "leave-"),
    ("https://intranet.example.com/policies/leave?x=1", ".html", "leave_x_1-"),
    ("https://intranet.example.com/", ".html", "https_intranet.example.com-"),  # no last part: the whole id
    ("42", ".txt", "42-"),
    ("../../etc/passwd", ".txt", "passwd-"),
    ("...", ".txt", "item-"),
])
def test_staged_name_is_readable_unique_and_plain(item_id: str, suffix: str, start: str) -> None:
    name = staged_name(item_id, suffix)
    assert name.startswith(start) and name.endswith(suffix) and "/" not in name and not name.startswith(".")
    assert staged_name(item_id, suffix) == name and staged_name(item_id + "x", suffix) != name


def test_doc_id_keeps_the_item_id_unless_too_long() -> None:
    assert doc_id_for("docs/leave.md") == "docs/leave.md"
    long = "x" * 401
    assert doc_id_for(long).startswith("sha256:") and len(doc_id_for(long)) == 71


@pytest.mark.parametrize(("content_type", "name", "suffix"), [
    ("text/html; charset=utf-8", "/policies/leave", ".html"), ("", "a.MD", ".md"), ("", "b.markdown", ".markdown"),
    ("application/pdf", "report", ".pdf"), ("application/octet-stream", "notes.txt", ".txt"), ("", "x", ".txt"),
])
def test_suffix_for(content_type: str, name: str, suffix: str) -> None:
    assert suffix_for(content_type, name) == suffix


@pytest.mark.parametrize(("value", "seconds"), [("3", 3.0), ("0", 0.0), ("-2", 0.0), ("soon", None), (None, None),
                                               ("Wed, 21 Oct 2026 07:28:00 GMT", None)])
def test_retry_after(value: str | None, seconds: float | None) -> None:
    assert retry_after_seconds(value) == seconds


def test_the_report_says_what_changed_and_what_failed() -> None:
    lines = render_report({"connector": "s3", "knowledge_base": "hr", "status": "gate_refused", "message": "",
                           "counts": {"new": 1, "changed": 2}, "embeddings_computed": 3, "version": "KB_HR_V2",
                           "gate_passed": False, "served_version": "KB_HR_V1",
                           "errors": [{"item": "a.pdf", "reason": "corrupt PDF"}],
                           "unmapped_readers": {"group:x": 2}, "unknown_permissions": ["b.md"]})
    assert lines == ["s3 -> hr: gate_refused", "  new=1 changed=2  embedded=3",
                     "  version KB_HR_V2: gate REFUSED; serving KB_HR_V1", "  failed a.pdf: corrupt PDF",
                     "  unmapped readers (not given access): group:x (2)",
                     "  1 item(s) with unknown permissions, visible to admins only: b.md"]
