"""The lifecycle rules as pure functions: naming, which version an ingest writes,
what garbage collection may drop, and the role each version plays."""

from __future__ import annotations

import pytest

from backend.common.config import IngestSettings
from backend.core.versions import (VersionNaming, gc_plan, latest_version, plan_build, rolled_back_base,
                                   version_roles)
from backend.core.types import IndexVersion

NAMING = VersionNaming()
MODEL, DIM = "sentence-transformers/all-MiniLM-L6-v2", 384


def version(name: str, *, model: str = MODEL, dimension: int = DIM, created: str = "2026-01-01T00:00:00",
            parent: str | None = None) -> IndexVersion:
    return IndexVersion(name, model, dimension, "cosine", created, parent=parent)


def plan(latest: IndexVersion | None, protected: dict[str, str], *, changed: bool = True, configured: str = "KB_V1",
         in_place: bool = False, model: str = MODEL):
    return plan_build(NAMING, configured, latest, protected, model=model, dimension=DIM, distance="cosine",
                      changed=changed, in_place=in_place)


@pytest.mark.parametrize(("name", "split"), [
    ("KB_HANDBOOK_V1", ("KB_HANDBOOK", 1)), ("KB_HANDBOOK_V12", ("KB_HANDBOOK", 12)), ("kb_v3", ("kb", 3)),
    ("KB_HANDBOOK", ("KB_HANDBOOK", 1)), ("KB_V1_V2", ("KB_V1", 2)), ("KB_VX", ("KB_VX", 1)),
])
def test_names_split_into_stem_and_number(name: str, split: tuple[str, int]) -> None:
    assert NAMING.split(name) == split


def test_next_name_follows_the_template_and_a_custom_template_is_honoured() -> None:
    assert NAMING.name("KB_HANDBOOK", 2) == "KB_HANDBOOK_V2"
    custom = VersionNaming("{stem}__R{n}")
    assert custom.split("KB__R7") == ("KB", 7) and custom.name("KB", 8) == "KB__R8"
    assert custom.split("KB_V7") == ("KB_V7", 1)


@pytest.mark.parametrize("template", ["{n}_{stem}", "{stem}", "V{n}", "{stem}_{n}_{n}", "{stem}-V{n}"])
def test_a_template_that_cannot_name_versions_is_refused_at_startup(template: str) -> None:
    with pytest.raises(ValueError, match="version_name_template"):
        IngestSettings(version_name_template=template)


def test_series_holds_only_its_stem_in_number_order() -> None:
    versions = [version("KB_V10"), version("KB_V2"), version("KB_OTHER_V3"), version("KB_V1"), version("KBX_V4")]
    assert [v.name for v in NAMING.series("KB_V1", versions)] == ["KB_V1", "KB_V2", "KB_V10"]
    assert latest_version(NAMING, "KB_V1", versions).name == "KB_V10"
    assert latest_version(NAMING, "NONE_V1", versions) is None


def test_nothing_yet_creates_the_configured_version() -> None:
    p = plan(None, {})
    assert (p.action, p.target, p.parent, p.writes) == ("create", "KB_V1", None, True)


def test_a_served_version_with_changes_gets_a_successor_built_from_it() -> None:
    p = plan(version("KB_V1"), {"KB_V1": "KB live"})
    assert (p.action, p.target, p.parent, p.allow_served) == ("new_version", "KB_V2", "KB_V1", False)
    assert "KB_V1 is served (KB live)" in p.reason


def test_a_rollback_target_is_as_immutable_as_a_live_version() -> None:
    p = plan(version("KB_V4"), {"KB_V3": "KB live", "KB_V4": "KB rollback"})
    assert (p.action, p.target, p.parent) == ("new_version", "KB_V5", "KB_V4")


def test_a_served_version_without_changes_means_nothing_to_do() -> None:
    p = plan(version("KB_V2"), {"KB_V2": "KB live"}, changed=False)
    assert (p.action, p.target, p.writes) == ("up_to_date", "KB_V2", False)


@pytest.mark.parametrize("changed", [True, False])
def test_an_unserved_newest_version_is_a_candidate_and_is_resumed(changed: bool) -> None:
    p = plan(version("KB_V3", parent="KB_V2"), {"KB_V2": "KB live"}, changed=changed)
    assert (p.action, p.target, p.parent, p.writes) == ("resume", "KB_V3", "KB_V2", True)


def test_in_place_writes_the_newest_version_even_when_served() -> None:
    p = plan(version("KB_V2"), {"KB_V2": "KB live"}, in_place=True)
    assert (p.action, p.target, p.allow_served) == ("in_place", "KB_V2", True)
    assert "although it is served (KB live)" in p.reason


def test_another_model_starts_a_fresh_version_without_parent_even_over_a_candidate() -> None:
    for protected in ({"KB_V1": "KB live"}, {}):
        p = plan(version("KB_V1", model="other/model"), protected)
        assert (p.action, p.target, p.parent) == ("new_version", "KB_V2", None)


def test_a_configured_name_newer_than_the_series_is_built_from_scratch() -> None:
    p = plan(version("KB_V2"), {"KB_V2": "KB live"}, configured="KB_V5")
    assert (p.action, p.target, p.parent) == ("create", "KB_V5", None)
    assert plan(version("KB_V5"), {"KB_V5": "KB live"}, configured="KB_V5").target == "KB_V6"


def test_gc_keeps_the_newest_per_series_and_every_protected_version() -> None:
    versions = [version(f"KB_V{n}") for n in range(1, 7)] + [version("HB_V1"), version("HB_V2")]
    protected = {"KB_V2": "KB live", "KB_V1": "KB rollback"}
    assert gc_plan(NAMING, versions, protected, keep=3) == ["KB_V3"]
    assert gc_plan(NAMING, versions, protected, keep=2) == ["KB_V4", "KB_V3"]
    assert gc_plan(NAMING, versions, {}, keep=6) == []
    assert gc_plan(NAMING, versions, {}, keep=1) == ["KB_V5", "KB_V4", "KB_V3", "KB_V2", "KB_V1", "HB_V1"]


def test_roles_name_live_rollback_candidate_and_retired() -> None:
    versions = [version(f"KB_V{n}") for n in range(1, 5)]
    protected = {"KB_V2": "KB live", "KB_V3": "KB rollback"}
    roles = version_roles(NAMING, versions, {"KB": "KB_V2"}, protected)
    assert {n: r.role for n, r in roles.items()} == {"KB_V1": "retired", "KB_V2": "live", "KB_V3": "rollback",
                                                     "KB_V4": "candidate"}


@pytest.mark.parametrize(("versions", "served", "protected", "base"), [
    # V2 rolled back: V1 serves, V2 is the rollback target -> build from V1
    ([version("KB_V1"), version("KB_V2", parent="KB_V1")], {"KB_V1"}, {"KB_V1": "A live", "KB_V2": "A rollback"},
     "KB_V1"),
    # V3 was a candidate of V2, then V2 was rolled back -> build from V1
    ([version("KB_V1"), version("KB_V2", parent="KB_V1"), version("KB_V3", parent="KB_V2")], {"KB_V1"},
     {"KB_V1": "A live", "KB_V2": "A rollback"}, "KB_V1"),
    # the ordinary cases: latest served, a candidate of the served one, nothing served
    ([version("KB_V1"), version("KB_V2", parent="KB_V1")], {"KB_V2"}, {"KB_V2": "A live", "KB_V1": "A rollback"},
     None),
    ([version("KB_V1"), version("KB_V2", parent="KB_V1")], {"KB_V1"}, {"KB_V1": "A live"}, None),
    ([version("KB_V1")], set(), {}, None),
    ([], set(), {}, None),
])
def test_the_base_after_a_rollback_is_the_served_version(versions: list[IndexVersion], served: set[str],
                                                         protected: dict[str, str], base: str | None) -> None:
    """Issue 49 M4."""
    found = rolled_back_base(NAMING, "KB_V1", versions, served, protected)
    assert (found.name if found else None) == base


def test_a_rolled_back_latest_gets_a_successor_built_from_the_served_version() -> None:
    """Issue 49 M4: the number follows the newest version, the parent is the served one."""
    latest, live = version("KB_V2", parent="KB_V1"), version("KB_V1")
    protected = {"KB_V1": "KB live", "KB_V2": "KB rollback"}
    built = plan_build(NAMING, "KB_V1", latest, protected, model=MODEL, dimension=DIM, distance="cosine",
                       changed=True, base=live)
    assert (built.action, built.target, built.parent) == ("new_version", "KB_V3", "KB_V1")
    same = plan_build(NAMING, "KB_V1", latest, protected, model=MODEL, dimension=DIM, distance="cosine",
                      changed=False, base=live)
    assert (same.action, same.target, same.writes) == ("up_to_date", "KB_V1", False)
