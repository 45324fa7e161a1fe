"""One sync of a connector: its listing diffed against the sync state, ONE new version through the gate.

Why through ``ingest_into_candidate``: a sync is an ingest of the knowledge base's whole
document set, so it takes the same path as ``rag kb create`` (the runtime's pipeline, the series
lock, the gate) and composes nothing of its own. New and changed items are fetched into the
knowledge base's staging folder (``<workspace>/sync/<connector>/``) and ingested; unchanged ones
keep their staged file, whose document hash is unchanged, so the pipeline carries them with their
vectors; deleted ones are left out of the manifest and pruned; a permission-only change rewrites
the document's ``rag_acl`` (metadata, never embedded: its vectors come from the embedding cache,
nothing is embedded).

Safety: a listing that fails raises ``SourceUnavailable`` before anything is diffed; an item that
cannot be fetched is reported and kept as it was (never a deletion); ``check_deletions`` refuses
a suspicious listing unless forced; any failure leaves the served version as it was (the
candidate is only served when the gate passes) and the sync state unchanged, so the next sync
redoes what this one did not finish.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import re
import time
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Protocol

import structlog

from backend.common.config import DEFAULT_DOMAIN, ConnectorSpec, Settings
from backend.common.errors import ConfigError, RagError, SourceItemFailed, SyncRefused
from backend.common.progress import Progress as IngestProgress
from backend.core.connector import Connector, SourceItem
from backend.core.permission_map import map_readers
from backend.core.sync_diff import ListedItem, SyncedItem, check_deletions, diff
from backend.core.services.series_lock import series_key
from backend.core.versions import VersionNaming
from backend.ingest.cancel import CancelToken, IngestCancelled
from backend.ingest.knowledge_bases import KbRuntime, apply_registry, ingest_into_candidate, register, workspace
from backend.ingest.knowledge_bases import Progress as StepProgress

log = structlog.get_logger(__name__)


class SyncRuntime(KbRuntime, Protocol):
    """A ``KbRuntime`` (``backend.runtime.Runtime`` is one) whose stores keep sync state."""


@dataclass
class SyncReport:
    """What a sync did: what the console and ``rag connector status`` show."""

    connector: str
    knowledge_base: str
    status: str = "running"  # ok | up_to_date | gate_refused | refused | cancelled | failed
    counts: dict[str, int] = field(default_factory=dict)
    errors: list[dict[str, str]] = field(default_factory=list)
    unmapped_readers: dict[str, int] = field(default_factory=dict)
    unknown_permissions: list[str] = field(default_factory=list)
    version: str | None = None
    gate_passed: bool | None = None
    promoted: bool = False
    served_version: str | None = None
    embeddings_computed: int = 0
    documents_written: int = 0
    #: seconds of the ingest step alone (the gate's evaluation not included)
    ingest_seconds: float = 0.0
    forced: bool = False
    message: str = ""
    started_at: str = ""
    seconds: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def staging_dir(settings: Settings, kb: str, connector: str) -> Path:
    return workspace(settings, kb) / "sync" / connector


_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def staged_name(item_id: str, suffix: str) -> str:
    """Pure: a readable, unique file name for an item (what a citation's source shows)."""
    stem = _UNSAFE.sub("_", item_id.rsplit("/", 1)[-1] or item_id).strip("._")[:60] or "item"
    stem = stem[: -len(suffix)] if stem.lower().endswith(suffix) else stem
    return f"{stem}-{hashlib.sha256(item_id.encode()).hexdigest()[:10]}{suffix}"


def doc_id_for(item_id: str) -> str:
    """Pure: the item id, or a hash of it when it is too long for a document id."""
    return item_id if len(item_id) <= 400 else "sha256:" + hashlib.sha256(item_id.encode()).hexdigest()


def ensure_registered(settings: Settings, kb: str) -> Settings:
    """``settings`` with knowledge base ``kb`` in the registry (registered now when it is not)."""
    settings = apply_registry(settings)
    if kb != DEFAULT_DOMAIN and kb not in settings.embeddings.domains:
        register(settings, kb, title=None)
        settings = apply_registry(settings)
    return settings


def sync_series(settings: Settings, kb: str) -> str:
    """The index series a sync of knowledge base ``kb`` ingests into (what ``rag connector cancel``
    asks to stop, as ``rag ingest cancel --series`` does)."""
    settings = apply_registry(settings)
    emb = settings.embeddings
    if kb in emb.domains:
        index_name = emb.domains[kb].index_name
    elif kb == DEFAULT_DOMAIN:
        index_name = emb.profiles[emb.default_profile].index_name
    else:
        raise ConfigError(f"knowledge base {kb!r} is not registered yet, so no sync of it is running",
                          field="knowledge_base")
    return series_key(VersionNaming(settings.ingest.version_name_template), index_name)


def sync_connector(runtime: SyncRuntime, name: str, spec: ConnectorSpec, connector: Connector, *,
                   force: bool = False, max_delete_share: float | None = None,
                   cancel: CancelToken | None = None, progress: StepProgress | None = None, bars: bool = False,
                   ingest_progress: IngestProgress | None = None) -> SyncReport:
    """Sync ``connector`` (declared as ``name``) into ``spec.knowledge_base``: one version through
    the gate. Raises ``SourceUnavailable`` (listing), ``SyncRefused`` (suspicious listing),
    ``IngestCancelled`` (``cancel`` set, or ``rag connector cancel``, during the ingest step: the
    candidate stays resumable, the sync state and the served version are unchanged, so the next
    sync picks up where this one stopped) and the ingest's errors; each is recorded as the
    connector's last run before it propagates. ``progress`` (its stages: ``list``, ``fetch``,
    then the ingest's and the gate's), ``bars`` and ``ingest_progress`` report as ``rag kb create``
    and an upload job do."""
    started = time.perf_counter()
    state_store = runtime.stores.sync_state
    if state_store is None:
        raise ConfigError("this store keeps no connector sync state", field="store.backend")
    report = SyncReport(name, spec.knowledge_base, forced=force,
                        started_at=dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"))
    try:
        _run(runtime, name, spec, connector, report, force=force, started=started, cancel=cancel,
             progress=progress or (lambda stage, done, total: None), bars=bars, ingest_progress=ingest_progress,
             share=max_delete_share if max_delete_share is not None else (
                 spec.max_delete_share if spec.max_delete_share is not None
                 else runtime.settings.connectors.max_delete_share))
    except RagError as exc:
        report.status = ("refused" if isinstance(exc, SyncRefused) else
                         "cancelled" if isinstance(exc, IngestCancelled) else "failed")
        report.message = exc.user_message
        report.seconds = round(time.perf_counter() - started, 3)
        state_store.record_sync_run(name, report.to_dict())
        log.warning("connector.sync_failed", connector=name, status=report.status, reason=exc.code)
        raise
    report.seconds = round(time.perf_counter() - started, 3)
    log.info("connector.synced", connector=name, status=report.status, version=report.version, **report.counts)
    return report


def _mapped(items: list[SourceItem], spec: ConnectorSpec, report: SyncReport) -> dict[str, ListedItem]:
    unmapped: Counter[str] = Counter()
    listed: dict[str, ListedItem] = {}
    for item in items:
        readers = item.readers if item.readers is not None or spec.readers is None else tuple(spec.readers)
        mapped = map_readers(readers, spec.permissions)
        unmapped.update(mapped.unmapped)
        if mapped.unknown:
            report.unknown_permissions.append(item.item_id)
        listed.setdefault(item.item_id, ListedItem(item.item_id, item.token, mapped.labels))
    report.unmapped_readers = dict(sorted(unmapped.items()))
    return listed


def _run(runtime: SyncRuntime, name: str, spec: ConnectorSpec, connector: Connector, report: SyncReport, *,
         force: bool, share: float, started: float, cancel: CancelToken | None, progress: StepProgress,
         bars: bool, ingest_progress: IngestProgress | None) -> None:
    state_store = runtime.stores.sync_state
    assert state_store is not None
    state = state_store.sync_items(name)
    progress("list", 0, 1)
    items = list(connector.list_items())
    progress("list", 1, 1)
    by_id = {i.item_id: i for i in items}
    listed = _mapped(items, spec, report)
    change = diff(state, list(listed.values()))
    report.counts = {**change.to_counts(), "failed": 0}
    check_deletions(change, len(state), max_delete_share=share, force=force)
    if change.empty:
        report.status = "up_to_date"
        report.seconds = round(time.perf_counter() - started, 3)
        state_store.record_sync_run(name, report.to_dict())
        return
    settings = ensure_registered(runtime.settings, spec.knowledge_base)
    staging = staging_dir(settings, spec.knowledge_base, name)
    staging.mkdir(parents=True, exist_ok=True)
    now_state = dict(state)
    to_fetch = (*change.new, *change.changed)
    for done, item_id in enumerate(to_fetch):
        progress("fetch", done, len(to_fetch))
        item = by_id[item_id]
        try:
            fetched = connector.fetch(item)
        except SourceItemFailed as exc:
            report.errors.append({"item": item_id, "reason": exc.user_message})
            continue
        file = staged_name(item_id, fetched.suffix)
        before = state.get(item_id)
        (staging / file).write_bytes(fetched.content)
        if before is not None and before.file != file:
            (staging / before.file).unlink(missing_ok=True)
        now_state[item_id] = SyncedItem(item_id, item.token, listed[item_id].labels, doc_id_for(item_id), file,
                                        item.title, item.url)
    for item_id in change.permission_only:
        now_state[item_id] = SyncedItem(**{**asdict(state[item_id]), "labels": listed[item_id].labels})
    for item_id in change.deleted:
        now_state.pop(item_id, None)
    report.counts["failed"] = len(report.errors)
    lines = [{"path": str(staging / s.file), "doc_id": s.doc_id, "acl": list(s.labels),
              "metadata": {"connector": name, "title": s.title, "url": s.url}}
             for s in sorted(now_state.values(), key=lambda s: s.item_id)]
    if not lines:
        raise SyncRefused(f"the sync would leave knowledge base {spec.knowledge_base!r} with no document; remove "
                          f"the connector (`rag connector remove {name}`) to empty it")
    run = runtime if settings is runtime.settings else runtime.with_settings(settings)
    progress("fetch", len(to_fetch), len(to_fetch))
    result = ingest_into_candidate(run, spec.knowledge_base, lines, principal=f"connector:{name}",
                                   promote=spec.promote, prune=True, roots=[staging], cancel=cancel,
                                   progress=progress, bars=bars, ingest_progress=ingest_progress)
    report.version, report.promoted, report.served_version = result.version, result.promoted, result.served_version
    report.embeddings_computed = int(result.ingest.get("embeddings_computed", 0))
    report.documents_written = int(result.ingest.get("documents_written", 0))
    report.ingest_seconds = round(float(result.ingest.get("seconds", 0.0)), 3)
    report.gate_passed = None if not result.evaluation else bool(result.evaluation.get("gates_passed"))
    by_path = {str(staging / s.file): s.item_id for s in now_state.values()}
    unloaded: set[str] = set()
    for failure in result.ingest.get("failures") or []:
        item_id = by_path.get(str(failure.get("where")), str(failure.get("where")))
        unloaded.add(item_id)
        report.errors.append({"item": item_id, "reason": str(failure.get("reason"))})
    report.counts["failed"] = len(report.errors)
    report.status = "gate_refused" if result.gate_refused else "ok"
    # an item that failed to load keeps its old state, so the next sync tries it again
    written = [now_state[i] for i in (*change.new, *change.changed, *change.permission_only) if i in now_state
               and now_state[i] is not state.get(i) and i not in unloaded]
    report.seconds = round(time.perf_counter() - started, 3)
    state_store.save_sync(name, written, change.deleted, report.to_dict())
    for item_id in change.deleted:  # their documents are gone from the new version: so are their staged files
        (staging / state[item_id].file).unlink(missing_ok=True)
