"""What an ingest's closing lines say is served, and whether this run's changes are in it.

Why: a run that built a new version while the old one stays served, or whose promotion the
gate refused, used to end with counts only; a reader could not tell whether the edit they
had just ingested is what users now get. ``served_after`` decides it from facts read after
the run (the aliases as they are then, under the series lock, so nobody moved them since):
pure, so every wording is tested without a store.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Mapping, Sequence

from backend.core.versions import VersionNaming


@dataclass(frozen=True)
class Served:
    """One series' outcome: ``served`` (by ``alias``; None when no alias serves the series)
    and whether it ``includes`` the ``changed`` documents this run wrote into ``built``."""

    series: str
    alias: str | None
    served: str | None
    built: str
    changed: int
    includes: bool
    why: str = ""
    #: listed documents of the series and how many of them failed this run (a version
    #: never "holds every listed document" when some failed)
    listed: int = 0
    failed: int = 0

    def _held(self) -> str:
        """What the unchanged version holds of the listed documents, failures counted."""
        if not self.failed:
            return "every listed document"
        rest = self.listed - self.failed
        if rest <= 0:
            return "none of the listed documents: every one failed (see above)"
        return f"the other {rest} listed document{'s' if rest != 1 else ''}; {self.failed} failed (see above)"

    def render(self) -> str:
        docs = f"{self.changed} changed document{'s' if self.changed != 1 else ''}"
        failed = f"; {self.failed} failed (see above)" if self.failed else ""
        if self.served is None:
            return (f"not served: no alias serves series {self.series}; this run "
                    + (f"built {self.built} ({docs})" if self.changed else f"changed nothing in {self.built}")
                    + f", {self.why}")
        by = f" by {self.alias}"
        if self.includes:
            return f"served: {self.served}{by} (includes this run's {docs}{failed})"
        if self.served == self.built:
            if self.failed and self.failed >= self.listed:
                return (f"served: {self.served}{by} (this run changed nothing: every listed document failed, "
                        "see above)")
            return f"served: {self.served}{by} (this run changed nothing: it already holds {self._held()})"
        if self.changed:
            return (f"this run built {self.built} ({docs}{failed}); {self.served} is still served{by} "
                    f"because {self.why}")
        return (f"served: {self.served}{by}; this run changed nothing, and {self.built} (not served) holds "
                f"{self._held()}: {self.why}")

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "message": self.render()}


def why_not_served(*, update_alias: bool, ingest_ok: bool, promoted_version: str | None, gate_refused: bool,
                   built: str) -> str:
    """Pure: why ``built`` is not what an alias serves after this run."""
    if not update_alias:
        return f"this run was not asked to promote it (--update-alias): `rag index promote --version {built}` hands it to the gate"
    if not ingest_ok:
        return (f"files failed, so --update-alias did not promote it (exit 1): fix them and run again, or "
                f"`rag index promote --version {built}`")
    if gate_refused:
        return "the evaluation gate refused it (exit 3, failing gates above)"
    if promoted_version != built:
        return (f"--update-alias promotes the series of --domain-key (else of the default profile) only: "
                f"`rag index promote --version {built}` hands it to the gate")
    return "the promotion did not rotate the alias"


def served_after(builds: Sequence[Mapping[str, Any]], aliases: Mapping[str, str], naming: VersionNaming, *,
                 update_alias: bool, ingest_ok: bool, promoted_version: str | None = None,
                 gate_refused: bool = False) -> list[Served]:
    """Pure: one ``Served`` per (built series, alias serving it); ``aliases`` as they are now."""
    out: list[Served] = []
    for build in builds:
        built, series = str(build["version"]), str(build["series"])
        changed = len(build.get("written") or ()) + len(build.get("pruned") or ())
        listed, failed = int(build.get("listed") or 0), int(build.get("failed") or 0)
        why = why_not_served(update_alias=update_alias, ingest_ok=ingest_ok, promoted_version=promoted_version,
                             gate_refused=gate_refused, built=built)
        stem = naming.split(series)[0].upper()
        serving = sorted((a, v) for a, v in aliases.items() if naming.same_series(v, series))
        if not serving:
            out.append(Served(stem, None, None, built, changed, False, why, listed, failed))
        for alias, version in serving:
            out.append(Served(stem, alias, version, built, changed, version == built and changed > 0,
                              "" if version == built else why, listed, failed))
    return out
