"""Knowledge bases a user makes from a folder or an upload: the registry and one ingest-and-gate run.

Why a registry the runtime writes: a new knowledge base must not need a hand-edited config or
environment variables. ``rag kb create`` (and the admin page) add an entry to
``knowledge_bases.registry_file`` (YAML, replaced atomically under a file lock); ``load_settings``
merges each entry into ``embeddings.domains`` and its folders into ``ingest.allowed_roots``, and the
server re-reads it when the file changes (``ServingRuntime.refresh`` in ``backend.runtime``).

Each knowledge base has a workspace, ``<knowledge_bases.dir>/<key>/``: ``manifests/<UTC stamp>.jsonl``
(the manifest each run used, for the record), ``uploads/`` and ``golden.generated.jsonl`` (its
starter golden set, ``backend.core.services.starter_golden``).

``ingest_into_candidate`` is the one path from files to a gated version, for the CLI and the
page: it writes the manifest, ingests under the series lock into a candidate version, evaluates it
against the live version on the knowledge base's own golden set (the starter set when it has
none), writes both reports, and promotes through the gate only when asked. It is handed the
caller's runtime (``KbRuntime``, which ``backend.runtime.Runtime`` is) and composes nothing itself:
the ingest, the evaluator and the gate are the runtime's, so an upload is judged with the
configured reranker, as ``rag kb create`` and ``rag index promote`` judge.
"""

from __future__ import annotations

import datetime as dt
import json
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable, Collection, Protocol

import structlog
import yaml

from backend.common.config import (DEFAULT_DOMAIN, RegisteredKnowledgeBase, Settings, read_registry, registry_path,
                                   validate_domain_key)
from backend.common.file_lock import locked_beside
from backend.common.errors import ConfigError, GateFailed, KnowledgeBaseExists, NothingIngested, UnknownDomain
from backend.common.display_text import spoofing_problem
from backend.common.identifiers import validate_table_name
from backend.core.golden import load_golden_set
from backend.core.ports import IndexAdmin, Stores
from backend.core.services.promotion import PromotionResult, resolve_target
from backend.core.services.series_lock import SeriesLocks
from backend.core.services.starter_golden import is_generated
from backend.ingest.cancel import CancelToken
from backend.ingest.folder import walk_folder
from backend.common.progress import Progress as IngestProgress
from backend.ingest.pipeline import IngestPipeline
from backend.ingest.report import IngestReport

log = structlog.get_logger(__name__)

RegisteredKb = RegisteredKnowledgeBase
Progress = Callable[[str, int, int], None]


class KbRuntime(Protocol):
    """What a knowledge-base run takes from the runtime it runs in (``backend.runtime.Runtime`` is
    one): its settings and stores, the same runtime under a run's settings, an ingest pipeline, the
    series locks and the gate."""

    @property
    def settings(self) -> Settings: ...

    @property
    def stores(self) -> Stores: ...

    def with_settings(self, settings: Settings) -> KbRuntime: ...

    def ingest(self, *, progress: bool | IngestProgress | None = None,
               cancel: CancelToken | None = None) -> IngestPipeline: ...

    def locks(self, command: str) -> SeriesLocks: ...

    def promote(self, *, domain_key: str | None = None, version: str | None = None, answers: bool = True,
                rotate: bool = True, locks: SeriesLocks | None = None) -> PromotionResult: ...


def index_names(key: str) -> tuple[str, str]:
    """``policies-2026`` -> (``KB_POLICIES_2026_V1``, ``KB_POLICIES_2026``) (pure); ``ConfigError``
    when the key is too long for a table name."""
    validate_key(key)
    alias = "KB_" + key.upper().replace("-", "_")
    try:
        return validate_table_name(alias + "_V1", "index_name"), validate_table_name(alias, "alias name")
    except ConfigError as exc:
        raise ConfigError(f"knowledge base name {key!r} is too long for an index name ({exc.user_message}); "
                          "use at most 24 characters", field="name") from exc


def validate_key(key: str) -> str:
    try:
        return validate_domain_key(key)
    except ValueError as exc:
        raise ConfigError(f"knowledge base name {key!r}: {exc}; e.g. policies-2026", field="name") from exc


def workspace(settings: Settings, key: str) -> Path:
    return settings.resolve_path(settings.knowledge_bases.dir) / validate_key(key)


def uploads_dir(settings: Settings, key: str) -> Path:
    return workspace(settings, key) / "uploads"


def registry_file(settings: Settings) -> Path:
    return registry_path({"knowledge_bases": {"registry_file": settings.knowledge_bases.registry_file}})


def list_registered(settings: Settings) -> dict[str, RegisteredKb]:
    """The registry as it is on disk now (not as ``settings`` saw it at load)."""
    return read_registry(registry_file(settings))


def _write_registry(path: Path, entries: dict[str, RegisteredKb]) -> None:
    body = {"knowledge_bases": {k: v.model_dump(exclude_none=True) for k, v in sorted(entries.items())}}
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text("# Written by the rag runtime (rag kb create, uploads); see docs/KNOWLEDGE_BASES.md.\n"
                   + yaml.safe_dump(body, sort_keys=False, allow_unicode=True), encoding="utf-8")
    os.replace(tmp, path)


def register(settings: Settings, key: str, *, title: str | None = None, source_dir: Path | str | None = None,
             profile: str | None = None, principal: str | None = None) -> RegisteredKb:
    """Add knowledge base ``key`` to the registry. ``KnowledgeBaseExists`` when the name is taken
    (in the registry or the config); ``ConfigError`` for a bad name, folder or profile."""
    index_name, alias_name = index_names(key)
    if title and (problem := spoofing_problem(title)):
        raise ConfigError(f"--title {problem}", field="title")
    if profile is not None and profile not in settings.embeddings.profiles:
        raise ConfigError(f"--profile {profile!r} is not configured; known: {sorted(settings.embeddings.profiles)}",
                          field="profile")
    folder = None
    if source_dir is not None:
        resolved = Path(source_dir).expanduser().resolve()
        if not resolved.is_dir():
            raise ConfigError(f"{source_dir}: no such folder", field="from")
        folder = str(resolved)
    if key == DEFAULT_DOMAIN:
        raise ConfigError(f"{key!r} names the default knowledge base (embeddings.alias); choose another name",
                          field="name")
    path = registry_file(settings)
    with locked_beside(path):
        entries = read_registry(path)
        if key in entries or key in settings.embeddings.domains:
            raise KnowledgeBaseExists(
                f"knowledge base {key!r} already exists; add or change its files with "
                f"`rag ingest DIR --domain-key {key} --update-alias`", key=key)
        entry = RegisteredKb(title=title or key.replace("-", " ").capitalize(), source_dir=folder,
                             index_name=index_name, alias_name=alias_name, profile=profile,
                             created_at=dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
                             created_by=principal)
        _write_registry(path, {**entries, key: entry})
    log.info("kb.registered", key=key, registry=str(path), source_dir=folder, principal=principal)
    return entry


def unregister(settings: Settings, key: str) -> RegisteredKb:
    """Take knowledge base ``key`` out of the registry, so it is no longer listed or routed (a running
    server drops it at its next request). Its versions, alias and workspace stay as they are: creating
    it again under the same name serves them again. ``UnknownDomain`` when it is not registered (a
    domain of the configuration file is named as such)."""
    path = registry_file(settings)
    with locked_beside(path):
        entries = read_registry(path)
        if key not in entries:
            where = ("is defined in the configuration file (embeddings.domains), not the registry; remove it "
                     "there" if key in settings.embeddings.domains or key == DEFAULT_DOMAIN else
                     f"is not in the registry {path}; known: {sorted(entries) or '(none)'}")
            raise UnknownDomain(f"knowledge base {key!r} {where}", field="name")
        entry = entries.pop(key)
        _write_registry(path, entries)
    log.info("kb.unregistered", key=key, registry=str(path))
    return entry


def set_golden_set(settings: Settings, key: str, golden: Path | str | None) -> RegisteredKb:
    """Point knowledge base ``key`` at a golden set of real questions (``None``: back to its
    starter set). The file must load as a golden set; ``UnknownDomain`` if ``key`` is not registered."""
    value = None
    if golden is not None:
        resolved = Path(golden).expanduser().resolve()
        load_golden_set(resolved)
        value = str(resolved)
    path = registry_file(settings)
    with locked_beside(path):
        entries = read_registry(path)
        if key not in entries:
            raise UnknownDomain(f"knowledge base {key!r} is not in the registry {path}; known: "
                                f"{sorted(entries) or '(none)'}", field="name")
        entry = entries[key].model_copy(update={"golden_set": value})
        _write_registry(path, {**entries, key: entry})
    log.info("kb.golden_set", key=key, golden_set=value)
    return entry


def apply_registry(settings: Settings, *, forget: Collection[str] = ()) -> Settings:
    """``settings`` with the registry as it is on disk now merged in (what ``load_settings`` does),
    for a process that loaded its settings before an entry was added (the server, a job).
    ``forget``: keys that came from the registry before (the server's last refresh); those no
    longer in it are dropped, so a knowledge base removed from the registry stops being routed
    at once, as a new one starts."""
    entries = list_registered(settings)
    domains = dict(settings.embeddings.domains)
    roots = list(settings.ingest.allowed_roots)
    from backend.common.config import DomainSettings

    changed = False
    for key in forget:
        if key not in entries and key in domains:
            del domains[key]
            changed = True
    for key, entry in entries.items():
        new = DomainSettings.model_validate({**entry.domain(), **_kept_fields(domains.get(key))})
        old = domains.get(key)
        if old is not None and (old.index_name, old.alias_name) != (new.index_name, new.alias_name):
            raise ConfigError(f"knowledge base {key!r} is defined in the config and in the registry "
                              f"{registry_file(settings)}; remove one", key=key)
        if old != new:
            domains[key], changed = new, True
        for root in ([entry.source_dir] if entry.source_dir else []) + [
                str(Path(settings.knowledge_bases.dir) / key / "uploads")]:
            if root not in roots:
                roots.append(root)
                changed = True
    if not changed:
        return settings
    embeddings = settings.embeddings.model_copy(update={"domains": domains})
    ingest = settings.ingest.model_copy(update={"allowed_roots": tuple(roots)})
    return settings.model_copy(update={"embeddings": embeddings, "ingest": ingest})


def _kept_fields(domain: Any) -> dict[str, Any]:
    """Fields a registry entry does not carry (example questions) survive a re-read."""
    return {"example_questions": list(domain.example_questions)} if domain is not None and \
        domain.example_questions else {}


def _with_roots(settings: Settings, roots: list[str]) -> Settings:
    """``settings`` whose ``ingest.allowed_roots`` also hold ``roots`` (the folders a run was given)."""
    have = list(settings.ingest.allowed_roots)
    extra = [r for r in roots if r not in have]
    if not extra:
        return settings
    return settings.model_copy(update={"ingest": settings.ingest.model_copy(
        update={"allowed_roots": (*have, *extra)})})


def write_manifest(settings: Settings, key: str, lines: list[dict[str, Any]]) -> Path:
    """``<workspace>/manifests/<UTC stamp>.jsonl``: the manifest a run used, kept for the record."""
    folder = workspace(settings, key) / "manifests"
    folder.mkdir(parents=True, exist_ok=True)
    stamp = dt.datetime.now(dt.timezone.utc).strftime("%Y%m%dT%H%M%S%fZ")
    path = folder / f"{stamp}.jsonl"
    n = 1
    while path.exists():
        n += 1
        path = folder / f"{stamp}-{n}.jsonl"
    path.write_text("".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines), encoding="utf-8")
    return path


@dataclass
class KbRunResult:
    key: str
    version: str | None
    manifest: str
    ingest: dict[str, Any]
    refused: list[dict[str, str]] = field(default_factory=list)
    golden: dict[str, Any] = field(default_factory=dict)
    evaluation: dict[str, Any] = field(default_factory=dict)
    promoted: bool = False
    served_version: str | None = None
    alias: str = ""

    @property
    def gate_refused(self) -> bool:
        return bool(self.evaluation) and not self.evaluation.get("gates_passed", True)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def evaluation_dict(result: PromotionResult) -> dict[str, Any]:
    report = result.report
    baseline = result.baseline
    baseline_report = None
    if result.report_path and result.report_path.exists():
        baseline_report = json.loads(result.report_path.read_text(encoding="utf-8")).get("baseline_report")
    return {"gates": [g.__dict__ for g in result.gates], "gates_passed": not result.failed_gates,
            "metrics": report.metrics if report else None,
            "baseline_version": baseline.version if baseline else None,
            "baseline_metrics": baseline.metrics if baseline else None,
            "report_path": str(result.report_path) if result.report_path else None,
            "baseline_report": baseline_report, "notes": list(result.notes)}


PII_FILE = "pii.json"


def read_pii(settings: Settings, key: str) -> dict[str, dict[str, int]]:
    """``doc_id -> entity type -> count`` of the PII the sanitizer found in knowledge base ``key``'s
    documents as last ingested (``<workspace>/pii.json``); types and counts only, never a value."""
    path = workspace(settings, key) / PII_FILE
    if not path.exists():
        return {}
    data = json.loads(path.read_text(encoding="utf-8"))
    return {str(doc): {str(k): int(n) for k, n in kinds.items()} for doc, kinds in (data.get("documents") or {}).items()}


def record_pii(settings: Settings, key: str, report: IngestReport) -> None:
    """Bring ``<workspace>/pii.json`` up to date with a run: each document the run wrote gets this
    run's counts (none: its entry goes); the others keep theirs. Written atomically; nothing when
    sanitizing was off."""
    if report.pii_mode is None:
        return
    counts = read_pii(settings, key)
    for build in report.builds:
        for doc_id in build.get("written") or ():
            counts.pop(doc_id, None)
        for doc_id in build.get("pruned") or ():
            counts.pop(doc_id, None)
    for doc_id, kinds in report.pii_findings.items():
        if sum(kinds.values()):
            counts[doc_id] = dict(kinds)
    path = workspace(settings, key) / PII_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps({"mode": report.pii_mode, "audit_log": report.pii_audit_path,
                               "documents": dict(sorted(counts.items()))}, indent=1), encoding="utf-8")
    os.replace(tmp, path)


def golden_info(path: Path) -> dict[str, Any]:
    golden = load_golden_set(path)
    return {"path": str(path), "generated": is_generated(golden), "queries": len(golden)}


def _changed(report: IngestReport) -> bool:
    """Pure: the run wrote or removed at least one document."""
    return report.documents_written > 0 or any(b["pruned"] for b in report.builds)


def _discard_new(admin: IndexAdmin, report: IngestReport) -> None:
    """Drop the versions this run made and filled with nothing but the parent's documents (issue
    49 M3): a candidate equal to the live version would pass every gate and say nothing. A
    resumed or in-place version predates the run (an earlier upload's candidate): it stays."""
    for build in report.builds:
        if build["action"] in ("create", "new_version"):
            admin.drop_version(build["version"])
            log.info("kb.empty_candidate_dropped", version=build["version"], failed=len(report.failures))


def ingest_into_candidate(runtime: KbRuntime, key: str, lines: list[dict[str, Any]] | Path, *,
                          principal: str | None, promote: bool, answers: bool = False,
                          progress: Progress | None = None, bars: bool = False,
                          ingest_progress: IngestProgress | None = None, prune: bool = False,
                          roots: Collection[Path] = (), cancel: CancelToken | None = None) -> KbRunResult:
    """Ingest ``lines`` (manifest lines, or a folder walked by ``walk_folder``) into a candidate
    version of knowledge base ``key`` (``default``: the default alias) through ``runtime``, evaluate
    it against the live version and, with ``promote``, hand it to the gate. The registry as it is
    now and the key's uploads folder (and the walked folder) as allowed roots make the run's
    settings (``runtime.with_settings``). A file that fails to load is listed in
    ``result.refused``; when every file failed (nothing written or removed) the version the run
    made is dropped and ``NothingIngested`` names the files. Never raises ``GateFailed``: a refusal is
    ``result.gate_refused``. ``answers``: answer the golden queries through the runtime's chat
    service (as the server's promote does, so an upload's figures match the promotion's); without it
    the modes come from the search hits (as ``rag ingest --update-alias``), judged by the runtime's
    sentence scorer. ``ingest_progress``: documents/chunks rates and ETA of the ingest step (the
    jobs page reads its snapshot); else ``bars`` draws the CLI's. ``prune``: the lines are the whole
    knowledge base, so a document of the live version they no longer list is dropped from the
    candidate (a connector's sync); ``roots``: more folders the lines may come from (its staging);
    ``cancel``: checked between groups of the ingest step (``IngestCancelled``; the candidate stays
    resumable and nothing is evaluated or served)."""
    settings = apply_registry(runtime.settings)
    domain_key: str | None = None if key == DEFAULT_DOMAIN else key
    domain = settings.embeddings.domains.get(key)
    if domain is None and domain_key is not None:
        raise UnknownDomain(f"knowledge base {key!r} is not registered; known: "
                            f"{sorted(settings.embeddings.domains) or '(none)'}", field="key")
    alias = domain.alias_name if domain is not None else settings.embeddings.alias.name
    step = progress or (lambda stage, done, total: None)
    refused: list[dict[str, str]] = []
    allowed = [str(uploads_dir(settings, key)), *(str(r) for r in roots)]
    if isinstance(lines, Path):
        walk = walk_folder(lines)
        refused = [s.to_dict() for s in walk.skipped]
        lines = walk.manifest_lines()
        allowed.append(str(walk.root))
    settings = _with_roots(settings, allowed)
    if not lines:
        raise ConfigError(f"nothing to ingest into {key!r}: no supported file"
                          + (f" ({len(refused)} skipped: " + "; ".join(f"{r['file']}: {r['reason']}"
                                                                       for r in refused[:5]) + ")" if refused else ""),
                          field="files", refused=refused)
    manifest = write_manifest(settings, key, lines)
    step("ingest", 0, len(lines))
    run = runtime if settings is runtime.settings else runtime.with_settings(settings)
    stores = run.stores
    with run.locks(f"rag kb {key}") as locks:
        pipeline = run.ingest(progress=ingest_progress if ingest_progress is not None else bars, cancel=cancel)
        report = pipeline.run(manifest, domain_key=domain_key, locks=locks, prune=prune)
        record_pii(settings, key, report)
        step("ingest", len(lines), len(lines))
        refused += [{"file": Path(where).name, "reason": reason} for where, reason in report.failures]
        if report.failures and not _changed(report):
            _discard_new(stores.admin, report)
            raise NothingIngested("no file could be read, so no candidate version was made: "
                                  + "; ".join(f"{r['file']}: {r['reason']}" for r in refused[:5]), field="files",
                                  refused=refused)
        result = KbRunResult(key, report.version, str(manifest), report.to_dict(), refused, alias=alias)
        if report.version is None:
            result.served_version = stores.admin.resolve_alias(alias)
            return result
        step("evaluate", 0, 1)
        try:
            promotion = run.promote(domain_key=domain_key, version=report.version, answers=answers, locks=locks,
                                    rotate=promote)
        except GateFailed as exc:
            blocked = exc.context.get("result")
            if not isinstance(blocked, PromotionResult):
                raise
            promotion = blocked
        step("evaluate", 1, 1)
    result.golden = golden_info(resolve_target(settings, domain_key=domain_key).golden)
    result.evaluation = evaluation_dict(promotion)
    result.promoted = promotion.promoted
    result.served_version = stores.admin.resolve_alias(alias)
    log.info("kb.run", key=key, version=report.version, promoted=result.promoted, principal=principal,
             gates_passed=result.evaluation["gates_passed"], manifest=str(manifest))
    return result
