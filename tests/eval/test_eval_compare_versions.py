"""``rag eval --compare-version``: two versions of the same content built with different
retrieval strategies, each evaluated with its own stamped settings, side by side."""

from __future__ import annotations

from typing import Any

import pytest
from click.testing import CliRunner

from backend.cli.main import cli
from backend.common.config import Settings
from backend.core.retrieval_stamp import retrieval_stamp
from backend.core.types import VersionSpec


def _copy_with_strategy(settings: Settings, store: Any, name: str, strategy: str) -> None:
    """A copy of KB_SAMPLE_V1 (same rows) stamped to be searched with ``strategy``."""
    parent = store.get_version("KB_SAMPLE_V1")
    profile = settings.embeddings.profiles[parent.profile or settings.embeddings.default_profile]
    stamp = retrieval_stamp(settings.retrieval.model_copy(update={"strategy": strategy}), profile)
    store.create_version(VersionSpec(name, parent.model, parent.dimension, parent.distance, parent.profile,
                                     parent="KB_SAMPLE_V1", retrieval=stamp))


@pytest.mark.parametrize("strategy", ["hierarchical", "hyde"])
def test_compare_version_evaluates_each_version_with_its_own_strategy(cli_env: Settings, eval_store: Any,
                                                                      strategy: str) -> None:
    name = f"KB_SAMPLE_{strategy.upper()}"
    _copy_with_strategy(cli_env, eval_store, name, strategy)
    result = CliRunner().invoke(cli, ["eval", "--version", name, "--no-answers", "--compare-version", "KB_SAMPLE_V1"],
                                catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert "(baseline: KB_SAMPLE_V1, named by --compare-version)" in result.stdout
    assert f"strategies: {name} {strategy}, KB_SAMPLE_V1 dense" in result.stdout
    recall = next(line for line in result.stdout.splitlines() if line.startswith("recall@5")).split()[1:4]
    value, baseline, delta = (float(x) for x in recall)
    assert delta == pytest.approx(value - baseline, abs=1e-4)
    if strategy == "hyde":
        # the sample corpus was ingested without enrichment: no questions, so hyde finds nothing
        assert value == 0.0 and delta < 0
    else:
        # hierarchical without summaries still ranks the same chunks (document- and page-aware)
        assert value > 0.5


def test_compare_and_compare_version_are_exclusive(cli_env: Settings) -> None:
    result = CliRunner().invoke(cli, ["eval", "--version", "KB_SAMPLE_V1", "--compare", "KB_ACTIVE",
                                      "--compare-version", "KB_SAMPLE_V1"])
    assert result.exit_code == 2 and "exclusive" in result.output
