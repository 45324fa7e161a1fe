"""Upload and evaluation jobs of the admin console: files from the page into a candidate
version, a version evaluated against the live one (docs/ADMIN.md).

Why jobs: an ingest and its evaluation take longer than a request should. The request
checks and saves what it was given, answers 202 with a job id, and a thread of the server
process does the work (``ingest_into_candidate(..., promote=False)``: nothing is served
before a person promotes the candidate through the gate). A job's state is a JSON file,
``<knowledge_bases.dir>/jobs/<id>.json``, replaced atomically at each step, so any gunicorn
worker answers ``GET /admin/jobs/<id>``; one job at a time runs per knowledge base (409
otherwise), checked under a file lock. A job whose process ended without finishing (a
restart) reads as failed.

Uploaded files are checked one by one (count, size, type, a plain safe name) and each
refusal names the file and why. The job's slot is checked before the body is read; each
accepted file is copied in chunks to a temporary file beside its place (``Staged``: never a
whole file in memory) and renamed into the knowledge base's ``uploads/`` folder once the slot
is held (a file of the same name is replaced: its document gets the new content). A file that
then fails to load is removed from ``uploads/`` again. A full disk answers 507 and leaves no
partial file.
"""

from __future__ import annotations

import datetime as dt
import errno
import fcntl
import json
import os
import re
import socket
import threading
import time
import uuid
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence

import structlog
from flask import Blueprint, Response, jsonify, request

from backend.api.admin import authorize, authorized, knowledge_base, own_version, restricted, settings
from backend.api.runtime import current_runtime
from backend.api.admin_models import JOB_ID_PATTERN, JobAccepted, JobOut, UploadAccepted
from backend.common.config import Settings
from backend.common.display_text import shown, spoofing_problem
from backend.common.progress import ProgressSnapshot, ReportingProgress
from backend.common.errors import (InsufficientStorage, JobNotFound, JobRunning, NothingIngested, RagError,
                                   UploadNotSupported, UploadRefused, UploadTooLarge)

log = structlog.get_logger(__name__)
bp = Blueprint("admin_jobs", __name__, url_prefix="/admin")
Work = Callable[[Callable[[str, int, int], None]], dict[str, Any]]

#: file names an upload refuses outright, whatever the suffix
MAX_NAME_CHARS = 200
#: the saved temporary name (``.<name>.upload.tmp``) stays within 200 UTF-8 bytes, well under the
#: 255 bytes most file systems allow a name (issue 49 L1: a longer one answered 500)
TEMP_NAME = ".{name}.{tag}.upload.tmp"
TAG_CHARS = 8
MAX_NAME_BYTES = 200 - len(TEMP_NAME.format(name="", tag="x" * TAG_CHARS))
#: bytes copied at a time from a request's file part to its file on disk (never a whole file in memory)
COPY_CHUNK = 256 * 1024
FULL = (errno.ENOSPC, errno.EDQUOT, errno.EFBIG)
_ACTIVE = ("queued", "running")
#: seconds between two progress writes of one stage (the first and last of a stage are always written)
_WRITE_EVERY_S = 0.5




# --- pure decisions -------------------------------------------------------------------
def name_problem(name: str) -> str | None:
    """Why ``name`` is not a plain file name an upload may save, or None (pure): no path
    separators, no hidden or temporary file, no control characters, at most 200 characters and
    ``MAX_NAME_BYTES`` UTF-8 bytes."""
    from backend.ingest.folder import temp_reason

    if not name or not name.strip():
        return "has no file name"
    if "/" in name or "\\" in name:
        return "file name has a path separator; send the file itself, not a path"
    if any(ord(c) < 32 or ord(c) == 127 for c in name):
        return "file name has control characters"
    if spoofing := spoofing_problem(name):
        return f"file name {spoofing}"
    if len(name) > MAX_NAME_CHARS:
        return f"file name has {len(name)} characters; at most {MAX_NAME_CHARS}"
    if len(name.encode("utf-8")) > MAX_NAME_BYTES:
        return f"file name is {len(name.encode('utf-8'))} bytes in UTF-8; at most {MAX_NAME_BYTES}"
    if name in (".", "..") or name != name.strip():
        return "file name is not a plain name"
    reason = temp_reason(name)
    return f"file name is a {reason} name (dotfiles and temporary files are not ingested)" if reason else None


def file_problem(name: str, size: int, suffixes: Sequence[str], max_bytes: int) -> str | None:
    """Why one uploaded file is refused, or None (pure). ``size`` may stop at ``max_bytes + 1``."""
    return type_problem(name, suffixes) or size_problem(size, max_bytes)


def type_problem(name: str, suffixes: Sequence[str]) -> str | None:
    """Why a file is refused by its name or type alone, or None (pure): checked before a byte is read."""
    problem = name_problem(name)
    if problem:
        return problem
    suffix = Path(name).suffix.lower()
    if suffix not in suffixes:
        return f"unsupported type {suffix or '(none)'}; supported: {', '.join(suffixes)}"
    return None


def size_problem(size: int, max_bytes: int) -> str | None:
    """Why a file is refused by its size, or None (pure)."""
    if size > max_bytes:
        return f"over knowledge_bases.max_upload_bytes ({max_bytes} bytes)"
    if size == 0:
        return "empty file (0 bytes)"
    return None


# --- files on their way in -------------------------------------------------------------
class Staged:
    """An upload's files, copied part by part to temporary files in the uploads folder (never a
    whole file in memory, issue 49 L3), renamed into place by :meth:`commit` once the job's slot
    is held; :meth:`discard` removes whatever was not committed. A full disk is
    ``InsufficientStorage`` (507) with the partial file removed (issue 49 L2)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.files: dict[str, Path] = {}

    def add(self, name: str, stream: Any, limit: int) -> int:
        """Copy at most ``limit + 1`` bytes of ``stream`` for ``name``; the bytes copied."""
        tmp = self.folder / TEMP_NAME.format(name=name, tag=uuid.uuid4().hex[:TAG_CHARS])
        size = 0
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            with open(tmp, "wb") as out:
                while size <= limit:
                    chunk = stream.read(min(COPY_CHUNK, limit + 1 - size))
                    if not chunk:
                        break
                    out.write(chunk)
                    size += len(chunk)
        except OSError as exc:
            tmp.unlink(missing_ok=True)
            raise _storage_error(exc, f"upload {tmp}") from exc
        self.files[name] = tmp
        return size

    def drop(self, name: str) -> None:
        self.files.pop(name).unlink(missing_ok=True)

    def commit(self) -> None:
        """Each file into place (a file of the same name is replaced: its document gets the new content)."""
        for name in list(self.files):
            os.replace(self.files[name], self.folder / name)
            del self.files[name]

    def discard(self) -> None:
        for name in list(self.files):
            self.drop(name)


def _remove_uploads(folder: Path, names: Sequence[str]) -> None:
    """Files that could not be read are not kept in ``uploads/`` (the index keeps what it held)."""
    for name in names:
        (folder / name).unlink(missing_ok=True)


def _shown(name: str) -> str:
    return shown(name[:MAX_NAME_CHARS]) or "(no name)"


# --- job files ------------------------------------------------------------------------
def jobs_dir(cfg: Settings) -> Path:
    return cfg.resolve_path(cfg.knowledge_bases.dir) / "jobs"


def _now() -> str:
    return dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")


def write_job(folder: Path, job: dict[str, Any]) -> None:
    """Replace the job's file atomically: a reader sees the old or the new state, never half.
    ``InsufficientStorage`` (507) on a full disk, with no temporary file left behind."""
    path = folder / f"{job['id']}.json"
    tmp = folder / f".{job['id']}.{os.getpid()}.{threading.get_ident()}.tmp"
    try:
        folder.mkdir(parents=True, exist_ok=True)
        tmp.write_text(json.dumps(job, default=str), encoding="utf-8")
        os.replace(tmp, path)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise _storage_error(exc, f"job file {path}") from exc


def _storage_error(exc: OSError, what: str) -> Exception:
    """A full disk as ``InsufficientStorage``; any other ``OSError`` as it is."""
    if exc.errno in FULL:
        return InsufficientStorage(f"no space left for {what}: {exc.strerror}", path=what)
    return exc


def read_job(folder: Path, job_id: str) -> dict[str, Any] | None:
    """The job ``job_id`` as its file says; one whose process is gone without finishing reads as failed."""
    try:
        job = json.loads((folder / f"{job_id}.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(job, dict):
        return None
    if job.get("state") in _ACTIVE and not _alive(job):
        job = {**job, "state": "failed", "message": "the server process that ran this job ended before it finished; "
               "upload or evaluate again"}
    return job


def _alive(job: dict[str, Any]) -> bool:
    if job.get("host") != socket.gethostname():
        return True  # another host's process: cannot tell, trust the file
    try:
        os.kill(int(job.get("pid", 0)), 0)
    except (OSError, ValueError):
        return False
    return True


def active_job(folder: Path, key: str) -> dict[str, Any] | None:
    """The queued or running job of knowledge base ``key``, if any."""
    if not folder.is_dir():
        return None
    for path in folder.glob("*.json"):
        job = read_job(folder, path.stem)
        if job is not None and job.get("key") == key and job.get("state") in _ACTIVE:
            return job
    return None


@contextmanager
def _kb_lock(folder: Path, key: str) -> Iterator[None]:
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / f".{key}.lock", "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


@dataclass
class _Progress:
    """Writes a job's stage and counts as the work reports them (at most every half second)."""

    folder: Path
    job: dict[str, Any]
    last: float = 0.0

    def __call__(self, stage: str, done: int, total: int, rates: ProgressSnapshot | None = None) -> None:
        now = time.monotonic()
        boundary = stage != self.job["stage"] or done in (0, total)
        eta = f", {rates.documents_per_s:.1f} documents/s, ETA {rates.eta_s:.0f} s" if rates and rates.eta_s else ""
        self.job.update(stage=stage, done=done, total=total, updated_at=_now(),
                        message=f"{stage}: {done} of {total}{eta}")
        if rates is not None:  # the ingest stage's documents/s, chunks/s and ETA (issue 33)
            self.job["rates"] = rates.to_dict()
        if boundary or now - self.last >= _WRITE_EVERY_S:
            write_job(self.folder, self.job)
            self.last = now


def start_job(cfg: Settings, kind: str, key: str, principal: str | None, work: Work,
              before_start: Callable[[], None] | None = None) -> str:
    """Record a queued job for ``key`` and run ``work`` in a thread; ``JobRunning`` (409) when
    the knowledge base has one that has not ended. ``before_start`` runs under the lock once the
    slot is taken (an upload saves its files there, never while another job reads them)."""
    folder = jobs_dir(cfg)
    with _kb_lock(folder, key):
        running = active_job(folder, key)
        if running is not None:
            raise JobRunning(f"knowledge base {key!r} has a {running.get('kind')} job {running.get('state')} "
                             f"({running.get('id')}); wait until it ends", field="key", job=running.get("id"))
        job_id = uuid.uuid4().hex
        job: dict[str, Any] = {"id": job_id, "kind": kind, "key": key, "state": "queued", "stage": "queued", "done": 0,
               "total": 0, "message": "waiting to start", "result": None, "created_at": _now(),
               "updated_at": _now(), "principal": principal, "pid": os.getpid(), "host": socket.gethostname()}
        write_job(folder, job)  # first: on a full disk nothing else has happened yet
        if before_start is not None:
            try:
                before_start()
            except BaseException:
                (folder / f"{job_id}.json").unlink(missing_ok=True)
                raise
    threading.Thread(target=_run, args=(folder, job, work), name=f"rag-job-{job_id[:8]}", daemon=True).start()
    log.info("admin.job_started", job=job_id, kind=kind, key=key, principal=principal)
    return job_id


def _run(folder: Path, job: dict[str, Any], work: Work) -> None:
    job.update(state="running", stage="starting", updated_at=_now(), message="started")
    write_job(folder, job)
    try:
        result = work(_Progress(folder, job))
    except RagError as exc:  # a cancel asked for (``ingest_cancelled``) ends the job as cancelled, not failed
        if exc.code == "ingest_cancelled":
            job.update(state="cancelled", updated_at=_now(), message=(
                f"cancelled after {getattr(exc, 'written', '?')} of {getattr(exc, 'total', '?')} documents were "
                "written; start it again to resume (what was written is kept)"))
        else:
            job.update(state="failed", message=exc.user_message, updated_at=_now())
        log.warning("admin.job_failed", job=job["id"], code=exc.code, error=exc.user_message)
    except Exception:  # noqa: BLE001 - the job records the failure; the traceback goes to the log
        log.exception("admin.job_crashed", job=job["id"])
        job.update(state="failed", message=f"internal error; the details are in the server log under job {job['id']}",
                   updated_at=_now())
    else:
        job.update(state="succeeded", stage="done", result=result, updated_at=_now(), message=_summary(result))
    write_job(folder, job)


def _summary(result: dict[str, Any]) -> str:
    evaluation = result.get("evaluation") or {}
    passed = evaluation.get("gates_passed")
    version = result.get("version")
    if version is None and "ingest" in result:
        return "nothing changed: the knowledge base already holds these files as they are"
    verdict = "" if passed is None else (" and passes every gate: promote it to serve it" if passed
                                         else " but fails a gate: it is not served")
    failed = len(result.get("refused") or [])
    unread = f" ({failed} file{'s' if failed != 1 else ''} could not be read: see the refused list)" if failed else ""
    return f"{version} is ready{verdict}{unread}"


def _jsonable(value: Any) -> Any:
    return json.loads(json.dumps(value, default=str))


#: an absolute path inside a text (not a URL's ``//host/...``, not ``60/minute``)
_ABSOLUTE_PATH = re.compile(r"(?<![\w.:/~-])/(?:[^\s'\"<>|:;,()\[\]{}/]+/)*([^\s'\"<>|:;,()\[\]{}/]+)")


def without_server_paths(value: Any) -> Any:
    """Pure: ``value`` (a job's result or message) with every absolute server path cut to its last
    part (``/srv/rag/data/kb/garden/manifests/2026.jsonl`` -> ``2026.jsonl``): the page needs the
    file's name, never where the server keeps it (issue 49 L6). The job's file keeps them all."""
    if isinstance(value, str):
        return _ABSOLUTE_PATH.sub(r"\1", value)
    if isinstance(value, dict):
        return {k: without_server_paths(v) for k, v in value.items()}
    if isinstance(value, list):
        return [without_server_paths(v) for v in value]
    return value


# --- routes ---------------------------------------------------------------------------
def _job_out(job: dict[str, Any]) -> dict[str, Any]:
    out = {k: job.get(k) for k in JobOut.model_fields}
    return {**out, "result": without_server_paths(out["result"]), "message": without_server_paths(out["message"])}


@bp.get("/jobs/<job_id>")
def get_job(job_id: str) -> tuple[Response, int]:
    job = read_job(jobs_dir(settings()), job_id) if re.fullmatch(JOB_ID_PATTERN, job_id) else None
    if job is None:
        authorize(None, write=False)
        raise JobNotFound(f"no job {job_id!r}", field="job_id")
    who = authorize(knowledge_base(str(job.get("key"))), write=False)
    out = _job_out(job)
    if restricted(who):  # a reader without the admin role learns no document or file name here either (M1)
        out = {**out, "result": None, "message": f"{job.get('kind')} job {job.get('state')}"}
    return jsonify(JobOut.model_validate(out).model_dump(mode="json")), 200


@bp.post("/knowledge-bases/<key>/versions/<version>/evaluate")
def evaluate(key: str, version: str) -> tuple[Response, int]:
    """Evaluate ``version`` against the live version on the knowledge base's golden set, with
    the gates (``promote_version(rotate=False)``): reports written, nothing rotated."""
    who, kb = authorized(key, write=True)
    svc, cfg = current_runtime(), settings()
    own_version(kb, version)  # 404 before a job is made

    def work(progress: Callable[[str, int, int], None]) -> dict[str, Any]:
        from backend.ingest.knowledge_bases import evaluation_dict

        progress("evaluate", 0, 1)
        result = svc.promote(domain_key=kb.domain, alias=kb.alias, version=version, rotate=False)
        progress("evaluate", 1, 1)
        return _jsonable({"key": kb.key, "version": version, "alias": kb.alias, "evaluation": evaluation_dict(result)})

    job = start_job(cfg, "evaluate", kb.key, who.name, work)
    return jsonify(JobAccepted(job=job).model_dump(mode="json")), 202


@bp.post("/knowledge-bases/<key>/uploads")
def upload(key: str) -> tuple[Response, int]:
    """Multipart field ``files``: each file checked, the acceptable ones saved to the knowledge
    base's uploads folder and ingested into a candidate version by a job (202)."""
    from backend.ingest.folder import slug
    from backend.ingest.knowledge_bases import ingest_into_candidate, list_registered, uploads_dir
    from backend.ingest.loaders import supported_suffixes

    who, kb = authorized(key, write=True)
    runtime = current_runtime()
    cfg = runtime.settings
    limits = cfg.knowledge_bases
    if kb.key not in list_registered(cfg):
        raise UploadNotSupported(f"uploads go into knowledge bases made with `rag kb create` (or the page); "
                                 f"{kb.key!r} is defined in the configuration: add its files with `rag ingest`",
                                 field="key")
    folder_of_jobs = jobs_dir(cfg)
    running = active_job(folder_of_jobs, kb.key)
    if running is not None:  # before a byte of the body is read (issue 49 L3); start_job checks again under its lock
        raise JobRunning(f"knowledge base {kb.key!r} has a {running.get('kind')} job {running.get('state')} "
                         f"({running.get('id')}); wait until it ends", field="key", job=running.get("id"))
    total_limit = limits.max_upload_bytes * limits.max_files_per_upload + 1_000_000
    if (request.content_length or 0) > total_limit:
        raise UploadTooLarge(f"upload of {request.content_length} bytes is over {limits.max_files_per_upload} files "
                             f"of knowledge_bases.max_upload_bytes ({limits.max_upload_bytes})", field="files",
                             limit=total_limit)
    request.max_content_length = total_limit  # the app's server.max_body_bytes is for JSON bodies
    if request.mimetype != "multipart/form-data":
        raise UploadRefused(f"send the files as multipart/form-data in the field `files`, got "
                            f"{request.mimetype or 'no content type'}", field="files")
    files = request.files.getlist("files")
    if not files:
        raise UploadRefused("no file in the multipart field `files`", field="files")
    if len(files) > limits.max_files_per_upload:
        raise UploadRefused(f"{len(files)} files; knowledge_bases.max_files_per_upload is "
                            f"{limits.max_files_per_upload}", field="files", limit=limits.max_files_per_upload)
    suffixes = supported_suffixes()
    folder = uploads_dir(cfg, kb.key)
    staged = Staged(folder)
    refused: list[dict[str, str]] = []
    too_large = False
    try:
        for part in files:
            name = part.filename or ""
            problem = type_problem(name, suffixes) or ("sent twice in one upload" if name in staged.files else None)
            if problem is None:
                size = staged.add(name, part.stream, limits.max_upload_bytes)
                problem = size_problem(size, limits.max_upload_bytes)
                if problem is not None:
                    staged.drop(name)
                    too_large |= size > limits.max_upload_bytes
            if problem is not None:
                refused.append({"file": _shown(name), "reason": problem})
        accepted = list(staged.files)
        if not accepted:
            summary = "; ".join(f"{r['file']}: {r['reason']}" for r in refused)
            error = UploadTooLarge if too_large else UploadRefused
            raise error(f"no file was acceptable: {summary}", field="files", refused=refused,
                        limit=limits.max_upload_bytes)
        lines = [{"path": str(folder / name), "doc_id": slug(name)} for name in accepted]

        def work(progress: Callable[[str, int, int], None]) -> dict[str, Any]:
            assert isinstance(progress, _Progress)  # _run's: it also records the ingest's rates and ETA
            rates = ReportingProgress(lambda snap: progress("ingest", snap.documents, snap.total, snap))
            try:
                result = ingest_into_candidate(runtime, kb.key, lines, principal=who.name,
                                               progress=progress, promote=False, answers=True,
                                               ingest_progress=rates)
            except NothingIngested:
                _remove_uploads(folder, accepted)
                raise
            _remove_uploads(folder, [r["file"] for r in result.refused if r["file"] in accepted])
            return _jsonable(result.to_dict())

        job = start_job(cfg, "upload", kb.key, who.name, work, before_start=staged.commit)
    finally:
        staged.discard()  # whatever was not committed: refused, or the request failed
    log.info("admin.upload", key=kb.key, accepted=sorted(accepted), refused=len(refused), principal=who.name)
    body = UploadAccepted.model_validate({"job": job, "accepted": list(accepted), "refused": refused})
    return jsonify(body.model_dump(mode="json")), 202
