"""The closing lines of an ingest: which version is served and whether this run's changes are in it."""

from __future__ import annotations

from typing import Any

from backend.core.versions import VersionNaming
from backend.ingest.served import served_after

NAMING = VersionNaming()


def build(action: str, version: str, written: int = 2, series: str = "KB_V1") -> dict[str, Any]:
    return {"series": series, "action": action, "version": version, "written": [f"d{i}" for i in range(written)],
            "pruned": []}


def lines(builds: list[dict[str, Any]], aliases: dict[str, str], **kw: Any) -> list[str]:
    options = {"update_alias": True, "ingest_ok": True, **kw}
    return [s.render() for s in served_after(builds, aliases, NAMING, **options)]


def test_promoted_version_includes_the_changes() -> None:
    assert lines([build("new_version", "KB_V3")], {"KB_ACTIVE": "KB_V3"}, promoted_version="KB_V3") == [
        "served: KB_V3 by KB_ACTIVE (includes this run's 2 changed documents)"]


def test_gate_refusal_says_the_old_version_is_still_served_and_why() -> None:
    assert lines([build("new_version", "KB_V4", 1)], {"KB_ACTIVE": "KB_V3"}, promoted_version="KB_V4",
                 gate_refused=True) == [
        "this run built KB_V4 (1 changed document); KB_V3 is still served by KB_ACTIVE because the evaluation gate "
        "refused it (exit 3, failing gates above)"]


def test_without_update_alias_it_names_the_command_that_serves_it() -> None:
    assert lines([build("new_version", "KB_V4")], {"KB_ACTIVE": "KB_V3"}, update_alias=False) == [
        "this run built KB_V4 (2 changed documents); KB_V3 is still served by KB_ACTIVE because this run was not "
        "asked to promote it (--update-alias): `rag index promote --version KB_V4` hands it to the gate"]


def test_failed_files_and_in_place_and_nothing_changed() -> None:
    assert "files failed, so --update-alias did not promote it (exit 1)" in lines(
        [build("new_version", "KB_V4")], {"KB_ACTIVE": "KB_V3"}, ingest_ok=False)[0]
    assert lines([build("in_place", "KB_V3", 1)], {"KB_ACTIVE": "KB_V3"}, update_alias=False) == [
        "served: KB_V3 by KB_ACTIVE (includes this run's 1 changed document)"]
    assert lines([build("up_to_date", "KB_V3", 0)], {"KB_ACTIVE": "KB_V3"}) == [
        "served: KB_V3 by KB_ACTIVE (this run changed nothing: it already holds every listed document)"]


def test_only_aliases_of_the_series_count() -> None:
    assert lines([build("create", "KB_V1")], {"OTHER": "HR_V2"}, update_alias=False)[0].startswith(
        "not served: no alias serves series KB; this run built KB_V1 (2 changed documents), ")


def test_a_run_whose_documents_failed_never_claims_the_version_holds_them() -> None:
    def failed(listed: int, failures: int, written: int = 0) -> dict[str, Any]:
        return {**build("up_to_date", "KB_V3", written), "listed": listed, "failed": failures}

    assert lines([failed(1, 1)], {"KB_ACTIVE": "KB_V3"}, ingest_ok=False) == [
        "served: KB_V3 by KB_ACTIVE (this run changed nothing: every listed document failed, see above)"]
    assert lines([failed(3, 1)], {"KB_ACTIVE": "KB_V3"}, ingest_ok=False) == [
        "served: KB_V3 by KB_ACTIVE (this run changed nothing: it already holds the other 2 listed documents; "
        "1 failed (see above))"]
    assert lines([failed(3, 1, written=2)], {"KB_ACTIVE": "KB_V3"}, ingest_ok=False) == [
        "served: KB_V3 by KB_ACTIVE (includes this run's 2 changed documents; 1 failed (see above))"]
