"""The admin console's HTTP API (``/admin/...``, docs/ADMIN.md): knowledge bases, documents,
versions, evaluations, feedback and golden sets to read; uploads, evaluations, promote and
rollback to do.

Who may: with ``access.enabled``, a principal with the ``admin`` role (API key or JWT roles
claim) that may use the knowledge base's domain; without access control (the single-user
default), a loopback caller that no proxy relayed and that presents the admin token (the cookie
the link of ``rag serve`` sets, ``backend/api/admin_session.py``), when
``admin.local_admin_without_access``; the peer address alone is never trusted. Everyone else reads
only with ``admin.non_admins: read_only`` (the domains it may use) and never writes: 403.
Promotion goes through the gate (``promote_version``, never forced from HTTP) and, like a
rollback, records who asked in the alias history. Settings are read per request
(``current_runtime().settings``): a knowledge base registered meanwhile is seen.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from flask import Blueprint, Response, jsonify
from pydantic import BaseModel

from backend.api.runtime import current_runtime
from backend.api import access, admin_session
from backend.api.admin_models import (
    AdminFeedbackResponse,
    AdminMe,
    DocumentsResponse,
    EvaluationResponse,
    GateFailedResponse,
    GoldenResponse,
    KnowledgeBasesResponse,
    PromoteBody,
    PromoteResponse,
    RollbackBody,
    RollbackResponse,
    VersionsResponse,
)
from backend.api.chat import parse_body
from backend.common.config import Settings
from backend.common.errors import (AdminDisabled, ConfirmationRequired, Forbidden, GateFailed, NothingToRollBack,
                                   VersionNotFound)
from backend.common.identifiers import is_identifier
from backend.core.access import Principal
from backend.core.services import admin_console as console
from backend.core.versions import VersionNaming

bp = Blueprint("admin", __name__, url_prefix="/admin")
SIGN_IN = "Admin console: open the admin link that rag serve printed in its terminal (new at each start)."


@dataclass(frozen=True)
class Caller:
    """Who calls the admin API: its principal (None without access control), whether it is an
    admin, and the name recorded with what it does."""

    principal: Principal | None
    admin: bool
    name: str | None

    @property
    def by(self) -> str:
        return f"from the admin console by {self.name or 'local'}"


def settings() -> Settings:
    return current_runtime().settings


def caller() -> Caller:
    """The request's caller (authentication already ran in ``app._require_api_key``)."""
    cfg = settings()
    if cfg.access.enabled:
        principal = access.current_principal()
        if principal is None:  # an endpoint that skipped authentication must never be an admin
            from backend.common.errors import Unauthorized

            raise Unauthorized("no principal for this request", field=access.API_KEY_HEADER)
        return Caller(principal, principal.is_admin, principal.name)
    admin = cfg.admin.local_admin_without_access and admin_session.is_local_admin()
    return Caller(None, admin, "local" if admin else None)


def may_view(who: Caller, cfg: Settings) -> bool:
    """Pure: the caller may read the console at all (before the domain check)."""
    return who.admin or cfg.admin.non_admins == "read_only"


def restricted(who: Caller) -> bool:
    """Pure: the caller reads without the admin role under access control, so it gets counts,
    never document names, sources, golden questions or per-query rows (issue 49 M1): a reader
    who may see only public documents must not learn what the restricted ones are."""
    return who.principal is not None and not who.admin


def authorize(kb: console.KnowledgeBase | None, *, write: bool) -> Caller:
    """The caller, if it may read (``write``: change) ``kb`` (None: the console as a whole);
    ``Forbidden`` (403) otherwise, ``AdminDisabled`` (404) with ``admin.enabled`` off."""
    cfg = settings()
    if not cfg.admin.enabled:
        raise AdminDisabled("the admin console is off (admin.enabled: false)")
    who = caller()
    if write and not who.admin:
        raise Forbidden(_denied(who, "change knowledge bases"), field="role")
    if not may_view(who, cfg):
        raise Forbidden(_denied(who, "use the admin console") + " (admin.non_admins: hidden)", field="role")
    if kb is not None and who.principal is not None:
        access.visibility_for(kb.domain)  # 403 (counted) when the principal may not use the domain
    return who


def authorized(key: str, *, write: bool) -> tuple[Caller, console.KnowledgeBase]:
    """The caller and knowledge base ``key``: the role is checked before the name is looked up
    (a refused caller learns nothing of which knowledge bases exist), then the domain."""
    authorize(None, write=write)
    kb = knowledge_base(key)
    return authorize(kb, write=write), kb


def _denied(who: Caller, what: str) -> str:
    if who.principal is not None:
        return f"principal {who.principal.name!r} may not {what}: it needs the admin role"
    return (f"only the local admin may {what} without access control: open the admin link `rag serve` printed, "
            "in a browser on the server's machine (admin.local_admin_without_access); or enable access control and "
            "give a principal the admin role")


def _managed(cfg: Settings) -> set[str]:
    from backend.ingest.knowledge_bases import list_registered

    return set(list_registered(cfg))


def knowledge_base(key: str) -> console.KnowledgeBase:
    return console.knowledge_base(settings(), key, _managed(settings()))


def _naming() -> VersionNaming:
    return VersionNaming(settings().ingest.version_name_template)


def own_version(kb: console.KnowledgeBase, version: str) -> str:
    """``version`` if it belongs to ``kb`` (its series, or served by its alias); an unknown, foreign
    or impossible name is 404 (never a 400): the console never moves an alias across series."""
    store = current_runtime().stores.admin
    if is_identifier(version):
        history = store.alias_history(kb.alias)
        if version in {v.name for v in console.series_versions(store, kb, _naming(), history)}:
            return version
    raise VersionNotFound(f"no version {version!r} in knowledge base {kb.key!r}", field="version")


def _out(model: type[BaseModel], data: dict[str, Any], status: int = 200) -> tuple[Response, int]:
    return jsonify(model.model_validate(data).model_dump(mode="json")), status


@bp.get("/me")
def me() -> tuple[Response, int]:
    cfg = settings()
    if not cfg.admin.enabled:
        return _out(AdminMe, {"admin": False, "can_view": False, "principal": None})
    who = caller()
    limits = None
    if who.admin:
        from backend.ingest.loaders import supported_suffixes

        kb = cfg.knowledge_bases
        limits = {"max_upload_bytes": kb.max_upload_bytes, "max_files_per_upload": kb.max_files_per_upload,
                  "suffixes": sorted(supported_suffixes())}
    sign_in = None
    if not who.admin and admin_session.local_admin_possible(cfg) and admin_session.is_local_peer():
        sign_in = SIGN_IN  # the first hour: the person at the server's machine learns how to get the console
    return _out(AdminMe, {"admin": who.admin, "can_view": may_view(who, cfg), "principal": who.name,
                          "limits": limits, "sign_in": sign_in})


@bp.get("/knowledge-bases")
def list_knowledge_bases() -> tuple[Response, int]:
    """Every knowledge base the caller may read (the domains its principal may use)."""
    who = authorize(None, write=False)
    cfg, store = settings(), current_runtime().stores.admin
    listed = [kb for kb in console.knowledge_bases(cfg, _managed(cfg))
              if who.principal is None or who.principal.may_use(kb.domain)]
    rows = [console.kb_summary(store, kb, _naming()) for kb in listed]
    if restricted(who):  # the golden set's server path is an admin's business (issue 49 M1)
        rows = [{**r, "golden": r["golden"] and {**r["golden"], "path": "(shown to admins)"}} for r in rows]
    return _out(KnowledgeBasesResponse, {"knowledge_bases": rows})


@bp.get("/knowledge-bases/<key>/documents")
def documents(key: str) -> tuple[Response, int]:
    who, kb = authorized(key, write=False)
    from backend.ingest.knowledge_bases import read_pii

    view = console.documents_view(current_runtime().stores, kb, _naming(), read_pii(settings(), kb.key))
    return _out(DocumentsResponse, console.counts_only(view, "documents") if restricted(who) else view)


@bp.get("/knowledge-bases/<key>/versions")
def versions(key: str) -> tuple[Response, int]:
    _, kb = authorized(key, write=False)
    view = console.versions_view(current_runtime().stores.admin, kb, _naming())
    return _out(VersionsResponse, view)


@bp.get("/knowledge-bases/<key>/versions/<version>/evaluation")
def evaluation(key: str, version: str) -> tuple[Response, int]:
    who, kb = authorized(key, write=False)
    view = console.version_evaluation(current_runtime().stores.admin, settings(), kb, own_version(kb, version))
    return _out(EvaluationResponse, console.counts_only(view, "queries") if restricted(who) else view)


@bp.get("/knowledge-bases/<key>/feedback")
def feedback(key: str) -> tuple[Response, int]:
    """Admins see every verdict on the knowledge base; a read-only non-admin only its own."""
    who, kb = authorized(key, write=False)
    log = current_runtime().chat.conversations
    rows = log.feedback() if log is not None else []
    only = None if who.admin else (who.name or "")
    return _out(AdminFeedbackResponse, console.feedback_view(rows, kb, only))


@bp.get("/knowledge-bases/<key>/golden")
def golden(key: str) -> tuple[Response, int]:
    who, kb = authorized(key, write=False)
    view = console.golden_view(kb)
    return _out(GoldenResponse, console.counts_only(view, "queries") if restricted(who) else view)


def _confirmed(confirm: bool | None, what: str) -> None:
    if confirm is not True:
        raise ConfirmationRequired(f"{what} needs \"confirm\": true in the body (the page asks the person first)",
                                   field="confirm")


def _gates(result: Any) -> list[dict[str, Any]]:
    return [g.__dict__ for g in result.gates] if result is not None else []


@bp.post("/knowledge-bases/<key>/promote")
def promote(key: str) -> tuple[Response, int]:
    """Through the gate (never forced), under the series lock (``promote_version`` holds it);
    409 with the gates when one fails."""
    from backend.core.services.promotion import PromotionResult

    who, kb = authorized(key, write=True)
    body = parse_body(PromoteBody)
    _confirmed(body.confirm, "promote")
    svc = current_runtime()
    try:
        result = svc.promote(domain_key=kb.domain, alias=kb.alias,
                             version=own_version(kb, body.version) if body.version else None, by=who.by)
    except GateFailed as exc:
        blocked = exc.context.get("result")
        blocked = blocked if isinstance(blocked, PromotionResult) else None
        return _out(GateFailedResponse, {
            "error": exc.to_dict(), "version": exc.context.get("version", ""), "alias": kb.alias,
            "gates": _gates(blocked),
            "metrics": blocked.report.metrics if blocked is not None and blocked.report else None}, 409)
    return _out(PromoteResponse, {
        "promoted": result.promoted, "version": result.version, "previous": result.previous, "alias": result.alias,
        "gates": _gates(result), "metrics": result.report.metrics if result.report else None,
        "notes": list(result.notes)})


@bp.post("/knowledge-bases/<key>/rollback")
def rollback(key: str) -> tuple[Response, int]:
    """The alias back to the version it served before its latest change, both series locked."""
    from backend.core.services.promotion import rollback as rollback_alias
    from backend.core.services.series_lock import SeriesLocks

    who, kb = authorized(key, write=True)
    body = parse_body(RollbackBody)
    _confirmed(body.confirm, "rollback")
    svc = current_runtime()
    history = svc.stores.admin.alias_history(kb.alias)
    if not history or history[0].previous is None:
        raise NothingToRollBack(f"{kb.alias} has no earlier version to go back to"
                                + (f" (it was created serving {history[0].version})" if history else ""),
                                field="key")
    with SeriesLocks(svc.stores.admin, settings(), "admin console rollback") as locks:
        change = rollback_alias(svc.stores.admin, kb.alias, locks=locks, by=who.by)
    return _out(RollbackResponse, {"alias": change.alias, "version": change.version, "previous": change.previous,
                                   "reason": change.reason})
