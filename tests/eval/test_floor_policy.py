"""The floors and what is served (issue 48): an edit no worse than a served version that is itself
below a floor is promoted with a warning; a first version on a generated starter set that misses a
floor is served with a warning or refused with the command that serves it anyway, by config."""

from __future__ import annotations

from typing import Any

import pytest

from backend.common.config import GateSettings, Settings
from backend.common.errors import GateFailed
from backend.core.services.promotion import (
    FIRST_ON_STARTER,
    FLOOR_SHARED,
    check_gates,
    waive_first_floors,
)
from tests.conftest import make_settings
from tests.eval.conftest import SAMPLE_GOLDEN
from tests.promoting import promote

ALIAS = "KB_ACTIVE"
GATES = GateSettings(min_recall_at_k=0.6, min_ndcg_at_10=0.5, min_mode_accuracy=0.7, max_regression=0.05)


@pytest.mark.parametrize(("served", "candidate", "passed", "warning"), [
    (0.69, 0.69, True, FLOOR_SHARED),   # the case: equal on every question, both below 0.70
    (0.69, 0.65, True, FLOOR_SHARED),   # a drop within max_regression (0.04 <= 0.05)
    (0.69, 0.63, False, None),          # a drop beyond it: the floor blocks again
    (0.72, 0.69, False, None),          # the served version meets the floor: the candidate must too
    (None, 0.69, False, None),          # nothing served: no baseline, the floor blocks
    (0.69, 0.71, True, None),           # the candidate meets the floor: no warning
])
def test_a_floor_the_served_version_misses_blocks_only_a_worse_candidate(
        served: float | None, candidate: float, passed: bool, warning: str | None) -> None:
    metrics = {"recall_at_k": 0.9, "ndcg_at_10": 0.8, "mode_accuracy": candidate}
    baseline = None if served is None else {"recall_at_k": 0.9, "ndcg_at_10": 0.8, "mode_accuracy": served}
    gate = next(g for g in check_gates(metrics, GATES, baseline) if g.name == "min_mode_accuracy")
    assert (gate.passed, gate.warning) == (passed, warning)


def test_without_max_regression_no_worse_means_not_lower() -> None:
    gates = GateSettings(min_recall_at_k=None, min_ndcg_at_10=None, min_mode_accuracy=0.7, max_regression=None)
    same = check_gates({"mode_accuracy": 0.69}, gates, {"mode_accuracy": 0.69})
    lower = check_gates({"mode_accuracy": 0.68}, gates, {"mode_accuracy": 0.69})
    assert [(g.passed, g.warning) for g in same] == [(True, FLOOR_SHARED)]
    assert [(g.passed, g.warning) for g in lower] == [(False, None)]


def test_a_shared_floor_says_why_it_does_not_block() -> None:
    gate = check_gates({"mode_accuracy": 0.69}, GATES, {"mode_accuracy": 0.69})[2]
    assert gate.describe() == ("mode_accuracy = 0.6900, below the minimum 0.7000 as the served version is (0.6900); "
                               "no worse than it, so it does not block")


def test_first_version_waiver_turns_only_min_floors_into_warnings() -> None:
    gates = GateSettings(min_recall_at_k=0.6, min_ndcg_at_10=0.5, min_mode_accuracy=0.7, max_unanswerable_as_rag=0.0)
    checked = check_gates({"recall_at_k": 0.9, "ndcg_at_10": 0.8, "mode_accuracy": 0.69,
                           "unanswerable_as_rag": 0.5}, gates, None)
    waived = waive_first_floors(checked)
    assert [(g.name, g.passed, g.warning) for g in waived] == [
        ("min_recall_at_k", True, None), ("min_ndcg_at_10", True, None),
        ("min_mode_accuracy", True, FIRST_ON_STARTER), ("max_unanswerable_as_rag", False, None)]


def _raised_floor(settings: Settings) -> Settings:
    """The sample corpus's gates with the mode-accuracy floor raised above what it reaches."""
    gates = settings.evaluation.gates.model_copy(update={"min_mode_accuracy": 0.99})
    return settings.model_copy(update={"evaluation": settings.evaluation.model_copy(update={"gates": gates})})


def test_an_edit_no_worse_than_a_served_version_below_a_raised_floor_is_promoted_with_a_warning(
        eval_settings: Settings, eval_store: Any, embedder: Any) -> None:
    settings = _raised_floor(eval_settings)
    forced = promote(settings, eval_store, embedder, version="KB_SAMPLE_V1", golden=SAMPLE_GOLDEN, force=True)
    assert forced.forced is True and [g.name for g in forced.failed_gates] == ["min_mode_accuracy"]

    result = promote(settings, eval_store, embedder, version="KB_SAMPLE_V2", golden=SAMPLE_GOLDEN)
    assert (result.promoted, result.forced, result.failed_gates) == (True, False, [])
    warned = [g for g in result.gates if g.warning]
    assert [(g.name, g.warning) for g in warned] == [("min_mode_accuracy", FLOOR_SHARED)]
    assert warned[0].value == pytest.approx(warned[0].baseline) and warned[0].value < 0.99
    assert any(n.startswith("warning: min_mode_accuracy: mode_accuracy = ") for n in result.notes)
    latest = eval_store.alias_history(ALIAS)[0]
    assert (latest.version, latest.forced) == ("KB_SAMPLE_V2", False)
    assert latest.reason.startswith("all gates passed; warning: min_mode_accuracy: ")
    assert "as the served version is" in latest.reason


def test_a_worse_edit_is_still_refused_and_the_message_names_the_force_command(
        eval_settings: Settings, eval_store: Any, embedder: Any) -> None:
    settings = _raised_floor(eval_settings)
    promote(settings, eval_store, embedder, version="KB_SAMPLE_V1", golden=SAMPLE_GOLDEN, force=True)
    with pytest.raises(GateFailed, match=r"rag index promote --alias KB_ACTIVE --version KB_SAMPLE_BAD --force"):
        promote(settings, eval_store, embedder, version="KB_SAMPLE_BAD", golden=SAMPLE_GOLDEN)
    assert eval_store.resolve_alias(ALIAS) == "KB_SAMPLE_V1"


def _with_policy(settings: Settings, policy: str, floor: float) -> Settings:
    gates = settings.evaluation.gates.model_copy(update={"min_mode_accuracy": floor,
                                                         "first_version_below_floor": policy})
    return settings.model_copy(update={"evaluation": settings.evaluation.model_copy(update={"gates": gates})})


@pytest.mark.parametrize("policy", ["serve", "refuse"])
def test_a_first_version_below_a_floor_of_its_starter_set_is_served_or_refused_by_policy(
        eval_settings: Settings, eval_store: Any, embedder: Any, policy: str) -> None:
    """``handbook`` has a golden set of its own; without one it is gated on the generated starter set."""
    domains = dict(eval_settings.embeddings.domains)
    domains["handbook"] = domains["handbook"].model_copy(update={"golden_set": None})
    settings = eval_settings.model_copy(update={"embeddings": eval_settings.embeddings.model_copy(
        update={"domains": domains})})
    settings = _with_policy(settings, policy, 1.0)
    alias = settings.embeddings.domains["handbook"].alias_name
    if policy == "serve":
        result = promote(settings, eval_store, embedder, domain_key="handbook")
        assert result.promoted is True and result.forced is False
        assert [g.warning for g in result.gates if g.name == "min_mode_accuracy"] == [FIRST_ON_STARTER]
        assert "first version, served with this warning" in eval_store.alias_history(alias)[0].reason
        return
    with pytest.raises(GateFailed, match=r"rag index promote --domain-key handbook --version KB_HANDBOOK_V1 --force"):
        promote(settings, eval_store, embedder, domain_key="handbook")
    assert eval_store.resolve_alias(alias) is None


def test_a_real_golden_set_is_never_waived(eval_settings: Settings, eval_store: Any, embedder: Any) -> None:
    settings = _with_policy(eval_settings, "serve", 0.99)
    with pytest.raises(GateFailed, match=r"min_mode_accuracy: mode_accuracy = 0\.\d+, minimum 0\.9900"):
        promote(settings, eval_store, embedder, version="KB_SAMPLE_V1", golden=SAMPLE_GOLDEN)


def test_the_policy_is_a_checked_setting(tmp_path: Any) -> None:
    settings = make_settings(tmp_path, evaluation={"gates": {"first_version_below_floor": "refuse"}})
    assert settings.evaluation.gates.first_version_below_floor == "refuse"
    with pytest.raises(Exception, match="first_version_below_floor"):
        make_settings(tmp_path, evaluation={"gates": {"first_version_below_floor": "maybe"}})
