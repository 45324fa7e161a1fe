"""The text-quality (mojibake) check: a custom-encoding PDF is refused or flagged,
real text in any script and the shipped corpora are not."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from backend.benchmarks.cisi import DEFAULT_DIR as CISI_DIR
from backend.benchmarks.cisi import load_documents as cisi_documents
from backend.common.errors import LoaderError
from backend.ingest.loaders import load_document
from backend.ingest.normalize import normalize_text
from backend.ingest.pipeline import IngestPipeline
from backend.ingest.quality import text_quality
from tests.conftest import REPO, make_settings
from tests.ingest.content_files import custom_encoding_pdf
from tests.ingest.helpers import write_manifest, write_pdf

LINES = ["Badge access is granted by security.", "Visitors sign in at reception and wear a badge at all times."]
#: the default ingest.min_text_quality, and the margin every real text keeps above it
MINIMUM = 0.5
REAL_TEXT_FLOOR = 0.85

MULTILINGUAL = {
    "de": "Die Mitarbeiterinnen und Mitarbeiter erhalten 30 Tage Urlaub pro Jahr. Übertragene Urlaubstage "
          "verfallen am 31. März des Folgejahres; Ausnahmen regelt die Geschäftsführung.",
    "fr": "Les salariés bénéficient de vingt-cinq jours de congés payés par an. Les congés non pris ne sont pas "
          "reportés, sauf accord écrit du responsable hiérarchique.",
    "es": "Los empleados disfrutan de veintidós días laborables de vacaciones al año. ¿Quién aprueba las "
          "solicitudes? El responsable del área, con dos semanas de antelación.",
    "pl": "Pracownikom przysługuje dwadzieścia sześć dni urlopu wypoczynkowego. Zażółć gęślą jaźń: wniosek "
          "należy złożyć z dwutygodniowym wyprzedzeniem.",
    "el": "Οι εργαζόμενοι δικαιούνται είκοσι ημέρες άδειας μετ' αποδοχών ετησίως. Η αίτηση υποβάλλεται δύο "
          "εβδομάδες νωρίτερα.",
    "ru": "Сотрудники имеют право на двадцать восемь календарных дней ежегодного оплачиваемого отпуска. "
          "Заявление подаётся за две недели.",
    "zh": "员工每年享有十五天带薪年假。未使用的假期可以结转至次年三月底。请至少提前两周通过人力资源系统提交申请。",
    "ja": "従業員は年間二十日間の有給休暇を取得できます。未消化の休暇は翌年三月末まで繰り越すことができます。"
          "申請は二週間前までに人事システムで行ってください。",
    "cs": "Zaměstnanci mají nárok na dvacet dní dovolené. Vlk, krk a prst jsou česká slova bez samohlásek.",
    "ar": "يحق للموظفين الحصول على عشرين يومًا من الإجازة السنوية المدفوعة الأجر. يجب تقديم الطلب قبل أسبوعين.",
    "ko": "직원은 연간 15일의 유급 휴가를 받습니다. 신청은 2주 전에 인사 시스템을 통해 제출해야 합니다.",
    "hi": "कर्मचारियों को प्रति वर्ष बीस दिनों का सवेतन अवकाश मिलता है। आवेदन दो सप्ताह पहले जमा करना होगा।",
    "table": "Item | Limit\nHotel | 180 EUR\nMeals | 45 EUR\n2024-01-01 | 12.5% | €1,234.00",
    "code": "def load(path):\n    return {k: v for k, v in json.loads(path.read_text()).items() if v}",
}


def test_custom_encoding_pdf_is_refused_naming_the_file_and_the_score(tmp_path: Path) -> None:
    path = custom_encoding_pdf(tmp_path / "badges.pdf", LINES)
    with pytest.raises(LoaderError) as info:
        load_document(path, "badges.pdf", make_settings(tmp_path))
    message = info.value.user_message
    assert message.startswith(f"{path}: text quality 0.00 (100% unmapped glyph names such as /g12)")
    assert "below ingest.min_text_quality (0.5)" in message and "ingest.low_quality: flag" in message
    assert info.value.context["reason"] == "low_text_quality"


def test_the_same_text_with_a_unicode_font_loads(tmp_path: Path) -> None:
    doc = load_document(write_pdf(tmp_path / "badges.pdf", LINES), "badges.pdf", make_settings(tmp_path))
    assert "Badge access is granted by security." in doc.text
    assert doc.diagnostics["text_quality"] >= REAL_TEXT_FLOOR


def test_flag_loads_the_document_and_records_why(tmp_path: Path) -> None:
    path = custom_encoding_pdf(tmp_path / "badges.pdf", LINES, glyph_prefix="glyph")
    doc = load_document(path, "badges.pdf", make_settings(tmp_path, ingest={"low_quality": "flag"}))
    assert doc.text.startswith("/glyph0/glyph1")
    assert doc.diagnostics["text_quality"] == 0.0
    assert doc.diagnostics["low_text_quality"].startswith("text quality 0.00")
    assert doc.diagnostics["low_text_quality"].endswith("indexed anyway (ingest.low_quality: flag)")


def test_min_text_quality_zero_turns_the_check_off(tmp_path: Path) -> None:
    path = custom_encoding_pdf(tmp_path / "badges.pdf", LINES)
    doc = load_document(path, "badges.pdf", make_settings(tmp_path, ingest={"min_text_quality": 0}))
    assert "low_text_quality" not in doc.diagnostics


@pytest.mark.parametrize("lang", sorted(MULTILINGUAL))
def test_real_text_in_any_script_is_not_flagged(lang: str) -> None:
    assert text_quality(normalize_text(MULTILINGUAL[lang])).score >= REAL_TEXT_FLOOR


def test_multilingual_text_files_load(tmp_path: Path) -> None:
    settings = make_settings(tmp_path)
    for lang, text in MULTILINGUAL.items():
        path = tmp_path / f"{lang}.txt"
        path.write_text(text, encoding="utf-8")
        assert load_document(path, lang, settings).diagnostics["text_quality"] >= REAL_TEXT_FLOOR


@pytest.mark.parametrize("garbage, share", [
    # pypdf's output for glyphs named /a0, /a1...: control characters
    ("".join(chr(i % 20) for i in range(200)), "bad_chars"),
    # a TrueType subset read by glyph index (code - 29): spaces become \x03, capitals punctuation
    ("".join(chr(ord(c) - 29) for c in "Badge access is granted by security. Visitors sign in."), "bad_chars"),
    ("\ufffd\ufffd\ufffd \ue000\ue001\ue002 \ufffd\ufffd", "bad_chars"),
])
def test_control_private_use_and_replacement_characters_score_low(garbage: str, share: str) -> None:
    quality = text_quality(garbage)
    assert quality.score < MINIMUM and getattr(quality, share) > 0.1


def test_utf8_read_as_windows_1252_is_counted_as_mis_decoded() -> None:
    text = MULTILINGUAL["fr"]
    garbled = text.encode("utf-8").decode("cp1252")
    good, bad = text_quality(text), text_quality(garbled)
    assert good.mis_decoded == 0 and bad.mis_decoded > 0.05 and bad.score < good.score - 0.15
    assert "mis-decoded sequences" in bad.describe()


def test_paths_and_urls_are_not_glyph_names() -> None:
    text = "Config lives in /etc/rag/rag.yaml and /srv/v1/api; see https://example.com/docs/v2/index.html."
    assert text_quality(text).glyph_names == 0


def _manifest_paths() -> list[Path]:
    paths = []
    for manifest in sorted((REPO / "manifests").glob("*.jsonl")):
        for line in manifest.read_text(encoding="utf-8").splitlines():
            if line.strip():
                paths.append((manifest.parent / json.loads(line)["path"]).resolve())
    return paths


def test_every_shipped_document_scores_well_above_the_threshold(tmp_path: Path) -> None:
    settings = make_settings(tmp_path)
    paths = _manifest_paths()
    assert len(paths) >= 40
    scores = {p.name: load_document(p, p.name, settings).diagnostics["text_quality"] for p in paths}
    assert min(scores.values()) >= 0.95, sorted(scores.items(), key=lambda kv: kv[1])[:5]


@pytest.mark.skipif(not (CISI_DIR / "CISI.ALL").exists(), reason="the CISI collection is not checked out")
def test_every_cisi_document_scores_well_above_the_threshold() -> None:
    scores = {rid: text_quality(normalize_text(text)).score for rid, text in cisi_documents().items()}
    assert len(scores) == 1460
    assert min(scores.values()) >= 0.9, sorted(scores.items(), key=lambda kv: kv[1])[:5]


def test_flagged_document_is_indexed_with_a_note_and_a_refused_one_fails_the_run(
        tmp_path: Path, embedder: Any, sqlite_store: Any) -> None:
    custom_encoding_pdf(tmp_path / "badges.pdf", LINES)
    (tmp_path / "ok.txt").write_text("The parking policy: park in zone B.", encoding="utf-8")
    manifest = write_manifest(tmp_path / "m.jsonl", [{"path": "badges.pdf"}, {"path": "ok.txt"}])
    refused = IngestPipeline.from_settings(make_settings(tmp_path), sqlite_store, embedder, progress=False).run(manifest)
    assert refused.documents_written == 1 and not refused.ok
    [(where, reason)] = refused.failures
    assert where == str(tmp_path / "badges.pdf") and reason.startswith("text quality 0.00")
    flagged_settings = make_settings(tmp_path, ingest={"low_quality": "flag"})
    flagged = IngestPipeline.from_settings(flagged_settings, sqlite_store, embedder, progress=False).run(manifest)
    assert flagged.failures == [] and flagged.documents_written == 1
    assert any(n.startswith(f"{tmp_path / 'badges.pdf'}: text quality 0.00") for n in flagged.notes)
