"""The version lifecycle: which version an ingest writes, and which versions may go.

A *series* is every version of one configured ``index_name``: ``KB_HANDBOOK_V1``,
``KB_HANDBOOK_V2``... named by ``ingest.version_name_template``. A version an alias
serves, or keeps as its rollback target, is *protected*: nothing writes it. An
ingest that would change a protected version builds the next one instead, as a
copy of it (vectors carried, never recomputed) that then only takes the changes;
the evaluation gate alone moves the alias to it. These are pure functions of the
store's listings, so every rule is tested without a store.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Collection, Literal, Mapping, Sequence

from backend.core.types import IndexVersion
from backend.core.vector_format import stamped_format

Action = Literal["create", "resume", "new_version", "in_place", "up_to_date"]


@dataclass(frozen=True)
class VersionNaming:
    """``{stem}_V{n}`` by default; a name without the suffix is number 1 of its stem."""

    template: str = "{stem}_V{n}"

    @property
    def _pattern(self) -> re.Pattern[str]:
        between = self.template[len("{stem}"):-len("{n}")]
        return re.compile(rf"^(?P<stem>.+?){re.escape(between)}(?P<n>[0-9]+)$", re.IGNORECASE)

    def split(self, name: str) -> tuple[str, int]:
        match = self._pattern.match(name)
        return (match["stem"], int(match["n"])) if match else (name, 1)

    def name(self, stem: str, n: int) -> str:
        return self.template.replace("{stem}", stem).replace("{n}", str(n))

    def same_series(self, a: str, b: str) -> bool:
        return self.split(a)[0].upper() == self.split(b)[0].upper()

    def series(self, configured: str, versions: Sequence[IndexVersion]) -> list[IndexVersion]:
        """The versions of ``configured``'s series, oldest (lowest number) first."""
        own = [v for v in versions if self.same_series(v.name, configured)]
        return sorted(own, key=lambda v: (self.split(v.name)[1], v.created_at))


@dataclass(frozen=True)
class BuildPlan:
    """Where an ingest writes. ``parent`` is copied into ``target`` when it is created."""

    action: Action
    target: str
    parent: str | None
    reason: str

    @property
    def writes(self) -> bool:
        return self.action != "up_to_date"

    @property
    def allow_served(self) -> bool:
        return self.action == "in_place"


def latest_version(naming: VersionNaming, configured: str, versions: Sequence[IndexVersion]) -> IndexVersion | None:
    series = naming.series(configured, versions)
    return series[-1] if series else None


def plan_build(naming: VersionNaming, configured: str, latest: IndexVersion | None, protected: Mapping[str, str],
               *, model: str, dimension: int, distance: str, changed: bool, in_place: bool = False,
               retrieval_changes: Sequence[str] = (), vector_format: str = "float32",
               base: IndexVersion | None = None) -> BuildPlan:
    """Pure: the version an ingest of ``configured``'s series writes.

    ``latest`` is the newest version of the series and ``changed`` whether the run
    would change it (documents new, edited or pruned). ``retrieval_changes`` lists how the
    configured retrieval settings differ from the ones stamped on ``latest``: a served
    version never changes them, so they too need a new version (a copy with the new stamp).
    ``base`` (:func:`rolled_back_base`): the version the series serves when ``latest`` was
    rolled back or built on a rolled-back version; the next version is built from it, and
    ``changed`` and ``retrieval_changes`` are then relative to it, so the content that was
    rolled back does not return with the next unrelated change (issue 49 M4)."""
    if latest is None:
        return BuildPlan("create", configured, None, f"{configured} does not exist yet")
    stem, latest_n = naming.split(latest.name)
    if naming.split(configured)[1] > latest_n:
        return BuildPlan("create", configured, None,
                         f"{configured} is configured and newer than {latest.name}: built from scratch")
    latest_format = stamped_format(latest.retrieval)
    # a vector format change is a change of kind: its rows are rewritten from scratch, never mixed
    same_kind = (latest.model, latest.dimension, latest.distance, latest_format) == (
        model, dimension, distance, vector_format)
    if in_place:
        return BuildPlan("in_place", latest.name, latest.parent,
                         f"--in-place: writing {latest.name} directly"
                         + (f" although it is served ({protected[latest.name]})" if latest.name in protected else ""))
    if not same_kind:
        return BuildPlan("new_version", naming.name(stem, latest_n + 1), None,
                         f"{latest.name} holds {latest.model} ({latest.dimension} dims, {latest.distance}, "
                         f"{latest_format}); the new version is built from scratch with {model} ({vector_format})")
    if base is not None and base.name != latest.name:
        why = protected.get(latest.name, f"a candidate built from {latest.parent}, which is no longer served")
        if not changed and not retrieval_changes:
            return BuildPlan("up_to_date", base.name, None,
                             f"{base.name} ({protected.get(base.name, 'served')}) already holds every readable listed "
                             f"document as it is ({latest.name} is {why})")
        return BuildPlan("new_version", naming.name(stem, latest_n + 1), base.name,
                         f"{latest.name} is {why}; {base.name} is served: changes go into a new version built from "
                         f"{base.name}, without {latest.name}'s content")
    if latest.name not in protected:
        return BuildPlan("resume", latest.name, latest.parent,
                         f"{latest.name} is a candidate no alias serves: writing it")
    if not changed and retrieval_changes:
        return BuildPlan("new_version", naming.name(stem, latest_n + 1), latest.name,
                         f"{latest.name} is served ({protected[latest.name]}) with other retrieval settings "
                         f"({'; '.join(retrieval_changes)}): a new version carries them to the gate")
    if not changed:
        return BuildPlan("up_to_date", latest.name, None,
                         f"{latest.name} ({protected[latest.name]}) already holds every readable listed document as it is")
    return BuildPlan("new_version", naming.name(stem, latest_n + 1), latest.name,
                     f"{latest.name} is served ({protected[latest.name]}): changes go into a new version")


def rolled_back_base(naming: VersionNaming, configured: str, versions: Sequence[IndexVersion],
                     served: Collection[str], protected: Mapping[str, str]) -> IndexVersion | None:
    """Pure: the served version of ``configured``'s series to build the next version from, when
    the newest version must not be the parent: it was rolled back (protected, not served), or it
    is a candidate whose parent was (built before the rollback). None otherwise: no alias serves
    the series, or the newest version is served or a candidate of the served one."""
    series = naming.series(configured, versions)
    if not series:
        return None
    latest = series[-1]
    live = [v for v in series if v.name in served]
    if not live or latest.name in served:
        return None
    rolled_back = latest.name in protected or (
        latest.parent is not None and latest.parent not in served and latest.parent in protected)
    return live[-1] if rolled_back else None


def gc_plan(naming: VersionNaming, versions: Sequence[IndexVersion], protected: Mapping[str, str],
            keep: int) -> list[str]:
    """Pure: versions beyond the newest ``keep`` of their series, never a protected one."""
    by_stem: dict[str, list[IndexVersion]] = {}
    for v in versions:
        by_stem.setdefault(naming.split(v.name)[0].upper(), []).append(v)
    drop: list[str] = []
    for members in by_stem.values():
        newest_first = sorted(members, key=lambda v: (naming.split(v.name)[1], v.created_at), reverse=True)
        drop += [v.name for v in newest_first[keep:] if v.name not in protected]
    return drop


@dataclass(frozen=True)
class VersionRole:
    """What one version is to the aliases: ``live``, ``rollback``, ``candidate`` (newer
    than what its series serves, not served) or ``retired``."""

    name: str
    role: str
    detail: str


def version_roles(naming: VersionNaming, versions: Sequence[IndexVersion], aliases: Mapping[str, str],
                  protected: Mapping[str, str]) -> dict[str, VersionRole]:
    serving_n: dict[str, int] = {}
    for version in aliases.values():
        stem, n = naming.split(version)
        serving_n[stem.upper()] = max(n, serving_n.get(stem.upper(), 0))
    out: dict[str, VersionRole] = {}
    for v in versions:
        stem, n = naming.split(v.name)
        why = protected.get(v.name)
        if why is not None:
            role = "live" if why.endswith(" live") else "rollback"
            out[v.name] = VersionRole(v.name, role, why)
        elif n > serving_n.get(stem.upper(), 0):
            out[v.name] = VersionRole(v.name, "candidate", "not served yet")
        else:
            out[v.name] = VersionRole(v.name, "retired", "kept by retention")
    return out
