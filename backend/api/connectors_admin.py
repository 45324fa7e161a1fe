"""The admin console's connectors (docs/CONNECTORS.md, docs/ADMIN.md): each declared connector
with its last sync, a button that starts a sync as a job, and one that asks a running sync to stop
(as ``rag connector cancel`` does: a marker file any worker process sees; the group in flight is
written, the candidate stays resumable, the served version and the sync state stay as they were).

A reader without the admin role (``admin.non_admins: read_only``) sees the counts of the
connectors of its domains, never the failed items' names or the unmapped readers (issue 49 M1).
A sync runs as the upload jobs do (``jobs.start_job``: one job a knowledge base at a time), with
the served runtime: ``sync_connector`` hands it to ``ingest_into_candidate`` and the gate.
"""

from __future__ import annotations

from typing import Any, Callable

from flask import Blueprint, Response, g, jsonify

from backend.api.admin import authorize, knowledge_base, restricted, settings
from backend.api.admin_models import CancelRequested, ConnectorsResponse, JobAccepted
from backend.api.jobs import start_job
from backend.api.runtime import current_runtime, serving
from backend.common.config import ConnectorSpec, Settings
from backend.common.errors import ConnectorNotFound
from backend.common.progress import ReportingProgress
from backend.ingest.cancel import CancelToken, default_cancel_dir, request_cancel

bp = Blueprint("admin_connectors", __name__, url_prefix="/admin")


def _run_out(run: dict[str, Any] | None, hide: bool) -> dict[str, Any] | None:
    if run is None:
        return None
    out = {k: run.get(k) for k in ("status", "recorded_at", "counts", "version", "gate_passed", "promoted",
                                   "embeddings_computed")}
    out.update(unknown_permissions=len(run.get("unknown_permissions") or []),
               errors=[] if hide else list(run.get("errors") or [])[:50],
               unmapped_readers={} if hide else dict(run.get("unmapped_readers") or {}),
               message="" if hide else str(run.get("message") or ""))
    return out


@bp.get("/connectors")
def list_connectors() -> tuple[Response, int]:
    from backend.connectors.declarations import declared

    who = authorize(None, write=False)
    cfg = settings()
    stores = current_runtime().stores
    runs = stores.sync_state.sync_runs(limit=1000) if stores.sync_state is not None else []
    last: dict[str, dict[str, Any]] = {}
    for run in runs:
        last.setdefault(str(run["connector"]), run)
    rows = []
    for name, spec in sorted(declared(cfg).items()):
        if who.principal is not None and not who.principal.may_use(spec.knowledge_base):
            continue
        rows.append({"name": name, "kind": spec.kind, "knowledge_base": spec.knowledge_base,
                     "last": _run_out(last.get(name), restricted(who))})
    return jsonify(ConnectorsResponse.model_validate({"connectors": rows}).model_dump(mode="json")), 200


def _declared(name: str) -> tuple[Settings, ConnectorSpec]:
    """The settings and connector ``name`` for a state-changing route: the admin role checked before
    the name (so a non-admin learns no connector names), the knowledge base noted for the audit trail."""
    from backend.connectors.declarations import declared

    authorize(None, write=True)
    cfg = settings()
    spec = declared(cfg).get(name)
    if spec is None:
        raise ConnectorNotFound(f"no connector {name!r}", field="name")
    g.rag_audit_kb = spec.knowledge_base
    return cfg, spec


@bp.post("/connectors/<name>/sync")
def sync(name: str) -> tuple[Response, int]:
    """Start a sync of connector ``name`` (202 with the job); the role is checked before the name."""
    from backend.connectors.sync import ensure_registered, sync_connector
    from backend.runtime import open_connector

    cfg, spec = _declared(name)
    ensure_registered(cfg, spec.knowledge_base)  # its first sync makes the knowledge base: the job's page needs it
    serving().refresh()
    runtime = current_runtime()
    who = authorize(knowledge_base(spec.knowledge_base), write=True)
    spec, source = open_connector(cfg, name)  # a bad declaration or a missing secret: refused now, not in the job

    def work(progress: Callable[..., None]) -> dict[str, Any]:
        # the stages as the jobs page shows an upload's: list, fetch, ingest (documents/s, ETA), evaluate
        rates = ReportingProgress(lambda snap: progress("ingest", snap.documents, snap.total, snap))
        token = CancelToken(default_cancel_dir(cfg))  # honours a cancel asked after the job started
        report = sync_connector(runtime, name, spec, source, progress=progress, ingest_progress=rates,
                                cancel=token).to_dict()
        return {**report, "version": report["version"], "evaluation": {"gates_passed": report["gate_passed"]}
                if report["gate_passed"] is not None else {}}

    job = start_job(cfg, "sync", spec.knowledge_base, who.name, work)
    return jsonify(JobAccepted(job=job).model_dump(mode="json")), 202


@bp.post("/connectors/<name>/cancel")
def cancel(name: str) -> tuple[Response, int]:
    """Ask a running sync of connector ``name`` to stop after the group in flight (202); the role is
    checked before the name. Nothing running: the request is harmless (a later sync ignores it)."""
    from backend.connectors.sync import sync_series

    cfg, spec = _declared(name)
    authorize(knowledge_base(spec.knowledge_base), write=True)
    series = sync_series(cfg, spec.knowledge_base)
    request_cancel(default_cancel_dir(cfg), series)
    body = CancelRequested(connector=name, knowledge_base=spec.knowledge_base, series=series,
                           message="a running sync stops after the group in flight; the served version stays, "
                                   "and the next sync resumes")
    return jsonify(body.model_dump(mode="json")), 202
