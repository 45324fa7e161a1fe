"""What ``rag index status`` / ``rag index list`` and the admin console show of versions and
aliases: one row per version (role, counts, size, age, last evaluation, retrieval stamp) and
each alias with its series. Read-only views over the ``IndexAdmin`` port; promotion, rollback
and retention, which change what is served, are ``promotion.py``."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, Mapping, Sequence

from backend.common.config import EmbeddingSettings
from backend.core.ports import IndexAdmin
from backend.core.retrieval_stamp import describe_stamp
from backend.core.versions import VersionNaming, latest_version, version_roles
from backend.core.types import AliasChange, IndexVersion


def alias_versions(history: Sequence[AliasChange]) -> list[str]:
    """Versions an alias has served, most recent first (history is newest first)."""
    out: list[str] = []
    for change in history:
        for name in (change.version, change.previous):
            if name and name not in out:
                out.append(name)
    return out


@dataclass(frozen=True)
class AliasStatus:
    """An alias, what it serves, and every version of its series or its history
    (newest first) with its role: live, rollback, candidate or retired."""

    alias: str
    active: str | None
    previous: str | None
    changed_at: str | None
    forced: bool
    reason: str
    versions: tuple[dict[str, Any], ...]

    def to_dict(self) -> dict[str, Any]:
        return {"alias": self.alias, "active": self.active, "previous": self.previous, "changed_at": self.changed_at,
                "forced": self.forced, "reason": self.reason, "versions": list(self.versions)}

    def render(self) -> str:
        head = f"{self.alias}: {self.active or '(serves nothing)'}"
        if self.active:
            head += f"  previous={self.previous or '-'}  changed_at={self.changed_at}" + ("  [forced]" if self.forced else "")
        return "\n".join([head, *(f"  {render_version(v)}" for v in self.versions)])


_MARK = {"live": "*", "rollback": "<", "candidate": "+", "retired": " "}


def render_version(v: Mapping[str, Any]) -> str:
    """One line: role, name, counts, size, age, last evaluation (and whether it is stale)."""
    ev = v.get("evaluation") or {}
    m = ev.get("metrics") or {}
    if m:
        figures = " ".join(f"{k}={m[k]}" for k in ("recall_at_k", "ndcg_at_10", "mode_accuracy") if k in m)
        passed = ev.get("gates_passed")
        verdict = "" if passed is None else (" gates=pass" if passed else " gates=FAIL")
        summary = f"eval: {figures}{verdict}" + ("" if v.get("evaluation_current") else " (STALE: content changed since)")
    else:
        summary = "eval: -"
    return (f"{_MARK.get(v.get('role', ''), ' ')} {v['name']:<22} {v.get('role', ''):<9} docs={v['doc_count']:<5} "
            f"chunks={v['chunk_count']:<6} {_size(v.get('size_bytes', 0)):>8} age={v.get('age', '?'):<6} {summary}"
            f" | retrieval: {describe_stamp(v.get('retrieval'))}")


def _size(n: int) -> str:
    return f"{n / 1e6:.1f}MB" if n >= 1e6 else f"{n / 1e3:.0f}kB"


def _age(created_at: str, now: datetime | None = None) -> str:
    try:
        seconds = ((now or datetime.now(timezone.utc)) - datetime.fromisoformat(created_at)).total_seconds()
    except (TypeError, ValueError):
        return "?"
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{int(seconds // size)}{unit}"
    return f"{max(0, int(seconds))}s"


def version_row(version: IndexVersion, role: str = "") -> dict[str, Any]:
    return {"name": version.name, "role": role, "model": version.model, "dimension": version.dimension,
            "distance": version.distance, "doc_count": version.doc_count, "chunk_count": version.chunk_count,
            "size_bytes": version.size_bytes, "created_at": version.created_at, "age": _age(version.created_at),
            "generation": version.generation, "parent": version.parent, "evaluation": version.evaluation,
            "evaluation_current": version.evaluation_current, "retrieval": version.retrieval}


def alias_status(store: IndexAdmin, configured: Mapping[str, str],
                 naming: VersionNaming) -> tuple[list[AliasStatus], list[str]]:
    """Status of every configured alias (``alias -> configured index_name``) and every
    existing one, plus the versions that belong to none of them."""
    listed = store.list_versions()
    versions = {v.name: v for v in listed}
    aliases = store.list_aliases()
    roles = version_roles(naming, listed, aliases, store.protected_versions())
    names = list(dict.fromkeys([*configured, *aliases]))
    shown: set[str] = set()
    out = []
    for name in names:
        history = store.alias_history(name)
        anchors = [a for a in (configured.get(name), aliases.get(name)) if a]
        own = [v.name for v in listed if any(naming.same_series(v.name, a) for a in anchors)]
        own += [v for v in alias_versions(history) if v in versions and v not in own]
        own.sort(key=lambda n: (naming.split(n)[1], versions[n].created_at), reverse=True)
        shown.update(own)
        latest = history[0] if history else None
        out.append(AliasStatus(
            alias=name, active=aliases.get(name), previous=latest.previous if latest else None,
            changed_at=latest.changed_at if latest else None, forced=bool(latest and latest.forced),
            reason=latest.reason if latest else "",
            versions=tuple(version_row(versions[v], roles[v].role) for v in own),
        ))
    return out, [v for v in versions if v not in shown]


def not_served_reason(admin: IndexAdmin, embeddings: EmbeddingSettings, naming: VersionNaming,
                      key: str | None) -> str | None:
    """Why knowledge base ``key`` (None: the default alias) serves nothing, with the command that
    changes it; None when its alias serves a version, or ``key`` is not configured (routing says
    so). Two reads when served (the alias), more only when not: the page and ``/chat`` ask it."""
    domain = embeddings.domains.get(key) if key is not None else None
    if key is not None and domain is None:
        return None
    alias = domain.alias_name if domain is not None else embeddings.alias.name
    if admin.resolve_alias(alias) is not None:
        return None
    configured = domain.index_name if domain is not None else embeddings.profiles[embeddings.default_profile].index_name
    where = f"--domain-key {key}" if key is not None else f"--alias {alias}"
    newest = latest_version(naming, configured, admin.list_versions())
    if newest is None:
        ingest = f"rag ingest DIR --domain-key {key} --update-alias" if key is not None else \
            "rag ingest MANIFEST --update-alias"
        return f"nothing has been ingested into it yet; add documents: {ingest}"
    evaluation = newest.evaluation or {}
    if evaluation.get("gates_passed") is False:
        from backend.core.services.promotion import GateResult

        fields = set(GateResult.__dataclass_fields__)
        try:  # a row recorded by another release may lack a field: then the names alone
            failed = [f"{g['name']}: {GateResult(**{k: v for k, v in g.items() if k in fields}).describe()}"
                      for g in evaluation.get("gates") or [] if not g.get("passed")]
        except (TypeError, KeyError, ValueError):
            failed = [str(g.get("name")) for g in evaluation.get("gates") or [] if not g.get("passed")]
        why = "; ".join(failed) or "a gate failed"
        return (f"the gate refused {newest.name} ({why}); serve it anyway: "
                f"rag index promote {where} --version {newest.name} --force")
    return (f"{newest.name} is ingested but not promoted yet (an ingest or upload in progress, or waiting for a "
            f"person); promote it: rag index promote {where} --version {newest.name}")
