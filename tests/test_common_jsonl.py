"""``read_json_lines``: the one JSON Lines reader of the training triples and the blind answer sets."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from backend.benchmarks.answer_decision import blind_rows
from backend.common.jsonl import read_json_lines


def test_each_non_blank_line_is_parsed_in_order(tmp_path: Path) -> None:
    path = tmp_path / "rows.jsonl"
    path.write_text('{"n": 1}\n\n   \n{"n": 2}\n', encoding="utf-8")
    assert read_json_lines(path, lambda row: row["n"] * 10) == [10, 20]


@pytest.mark.parametrize(("line", "reason"), [("{not json", r"rows\.jsonl:2: Expecting property name"),
                                              ('{"m": 1}', r"rows\.jsonl:2: 'n'"),
                                              ('{"n": -1}', r"rows\.jsonl:2: negative")])
def test_a_bad_line_is_named_by_file_and_line(tmp_path: Path, line: str, reason: str) -> None:
    def parse(row: dict[str, int]) -> int:
        if row["n"] < 0:
            raise ValueError("negative")
        return row["n"]

    path = tmp_path / "rows.jsonl"
    path.write_text('{"n": 1}\n' + line + "\n", encoding="utf-8")
    with pytest.raises(ValueError, match=reason):
        read_json_lines(path, parse)


def test_blind_rows_reads_the_blind_set_format(tmp_path: Path) -> None:
    path = tmp_path / "blind.jsonl"
    row = {"id": "b1", "kind": "answerable", "query": "how many days", "domain": None, "expected_mode": "rag",
           "must_contain": ["25"]}
    path.write_text(json.dumps(row) + "\n\n" + json.dumps({"id": "b2"}) + "\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"blind\.jsonl:3: 'kind'"):
        blind_rows(path)
    path.write_text(json.dumps(row) + "\n", encoding="utf-8")
    assert blind_rows(path) == [("b1", "blind:answerable", "how many days", None, "rag", ("25",))]
