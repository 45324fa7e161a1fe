"""The closing summary of an ingest run (printed by the CLI, ``--json`` for scripts)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any, Sequence

import structlog

from backend.common.counts import add_counts
from backend.core.injection import addressed_to_assistant
from backend.core.types import Chunk

if TYPE_CHECKING:
    from backend.ingest.embedding_batches import EmbeddingStats

log = structlog.get_logger("backend.ingest.pipeline")  # the events the pipeline has always logged

#: the report's field -> the ``EnrichmentStats`` field added to it
_ENRICHMENT_COUNTS = {"chunks_enriched": "chunks_enriched", "enrichment_cache_hits": "cache_hits",
                      "llm_calls": "llm_calls", "metadata_dropped": "metadata_dropped",
                      "questions_written": "questions", "summaries_written": "summaries",
                      "enrichment_seconds": "seconds"}
#: the report's field -> the ``EmbeddingStats`` field added to it
_ENGINE_COUNTS = {"embeddings_computed": "computed", "embeddings_reused": "reused", "embedding_retries": "retries"}
#: what ``absorb`` takes from a stage's own report (PII findings apart)
_ABSORBED = ("failures", "skipped", "notes", "duplicates_dropped", "ocr_pages", "ocr_low_confidence_blocks")
_ACTIONS = {"create": "created", "resume": "candidate written", "new_version": "new version built",
            "in_place": "written in place", "up_to_date": "up to date, nothing written"}


@dataclass
class IngestReport:
    """Counts of one run. ``failures`` and ``manifest_errors`` are ``(where, reason)``
    pairs: ``where`` is a file path or ``manifest.jsonl:17``."""

    manifest: str
    versions: list[str] = field(default_factory=list)
    #: per target series: action, version, parent, reason and documents carried
    builds: list[dict[str, Any]] = field(default_factory=list)
    documents_seen: int = 0
    skipped_unchanged: int = 0
    documents_written: int = 0
    documents_pruned: int = 0
    chunks_written: int = 0
    duplicates_dropped: int = 0
    embeddings_computed: int = 0
    embeddings_reused: int = 0
    embedding_retries: int = 0
    #: enrichment (``profile.enrichment``): chunks enriched, results taken from the cache,
    #: generative calls made, proposed metadata values dropped by the schema, rows made, seconds
    chunks_enriched: int = 0
    enrichment_cache_hits: int = 0
    llm_calls: int = 0
    metadata_dropped: int = 0
    questions_written: int = 0
    summaries_written: int = 0
    enrichment_seconds: float = 0.0
    #: chunks written that address an AI assistant ("ignore previous instructions ..."): never quoted (issue 49 L5)
    instruction_chunks: int = 0
    #: OCR (docs/OCR.md): pages (and pictures) read, and blocks below ingest.ocr.min_confidence
    ocr_pages: int = 0
    ocr_low_confidence_blocks: int = 0
    seconds: float = 0.0
    #: PII findings of the documents read (``sanitize``): doc_id -> entity type -> count; never a value
    pii_findings: dict[str, dict[str, int]] = field(default_factory=dict)
    #: ``sanitize.mode`` of the run when sanitizing was on ("redact" or "audit"), else None
    pii_mode: str | None = None
    #: where the findings were appended (``sanitize.audit_path``)
    pii_audit_path: str | None = None
    failures: list[tuple[str, str]] = field(default_factory=list)
    #: files read and left out on purpose, ``(path, reason)``: pictures with no text to read
    skipped: list[tuple[str, str]] = field(default_factory=list)
    manifest_errors: list[tuple[str, str]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def version(self) -> str | None:
        """The version written (the first one when lines targeted several profiles)."""
        return self.versions[0] if self.versions else None

    def add_build(self, series: str, action: str, version: str, parent: str | None, reason: str) -> dict[str, Any]:
        build: dict[str, Any] = {"series": series, "action": action, "version": version, "parent": parent,
                                 "reason": reason, "carried": 0, "written": [], "pruned": [], "listed": 0, "failed": 0}
        self.builds.append(build)
        return build

    def add_enrichment(self, stats: Any) -> None:
        """Add one target's ``EnrichmentStats``."""
        add_counts(self, stats, _ENRICHMENT_COUNTS)

    def fail(self, path: Any, exc: Exception) -> None:
        """Record a file that failed (the run goes on), its reason without the path prefix."""
        message = getattr(exc, "user_message", str(exc))
        reason = message.removeprefix(f"{path}: ")
        self.failures.append((str(path), reason))
        log.warning("ingest.file_failed", file=str(path), reason=reason)

    def skip(self, path: Any, exc: Exception) -> None:
        """Record a file left out on purpose (a picture with no text): not a failure, the run stays ok."""
        message = getattr(exc, "user_message", str(exc))
        self.skipped.append((str(path), message.removeprefix(f"{path}: ")))
        log.info("ingest.file_skipped", file=str(path))

    def flag_instructions(self, doc_id: str, version: str, chunks: Sequence[Chunk]) -> None:
        """Count (and note, and log without their text) the chunks of a written document that
        address an AI assistant ("ignore previous instructions ..."): the audit of issue 49 L5;
        the extractive answerer never quotes them."""
        flagged = [c for c in chunks if addressed_to_assistant(c.text)]
        if not flagged:
            return
        self.instruction_chunks += len(flagged)
        self.notes.append(f"{doc_id}: {len(flagged)} passage{'s' if len(flagged) != 1 else ''} address an AI "
                          "assistant (\"ignore previous instructions\", ...); the extractive answerer never quotes them")
        log.warning("ingest.instructions_flagged", doc_id=doc_id, version=version, chunks=len(flagged),
                    chunk_ids=[c.chunk_id for c in flagged][:20])

    def absorb(self, part: IngestReport) -> None:
        """Take what a stage recorded in a report of its own (the prepare-ahead thread's: failures,
        notes, duplicates dropped), so the run's report is only edited by one thread."""
        add_counts(self, part, _ABSORBED)
        self.add_pii(part.pii_findings, part.pii_mode, part.pii_audit_path)

    def add_pii(self, counts: dict[str, dict[str, int]], mode: str | None, audit_path: str | None) -> None:
        """Add PII finding counts (per document and type) of a group."""
        for doc_id, types in counts.items():
            mine = self.pii_findings.setdefault(doc_id, {})
            for kind, n in types.items():
                mine[kind] = mine.get(kind, 0) + n
        self.pii_mode = mode or self.pii_mode
        self.pii_audit_path = audit_path or self.pii_audit_path

    def pii_lines(self) -> list[str]:
        """What the run found and what to do about it (``pii_summary``)."""
        return pii_summary(self.pii_findings, self.pii_mode, self.pii_audit_path)

    def add_engine_stats(self, stats: EmbeddingStats) -> None:
        """Add an engine's counts (its embedding batchers', summed)."""
        add_counts(self, stats, _ENGINE_COUNTS)

    @property
    def documents_carried(self) -> int:
        return sum(int(b["carried"]) for b in self.builds)

    @property
    def failed(self) -> int:
        return len(self.failures)

    def counts(self) -> dict[str, int]:
        """The run's counts, named once: the summary's labels, the ``ingest.finished`` log's
        fields and the JSON keys are these names, so the three never disagree."""
        return {"documents_seen": self.documents_seen, "skipped_unchanged": self.skipped_unchanged,
                "documents_carried": self.documents_carried, "documents_written": self.documents_written,
                "documents_pruned": self.documents_pruned, "files_failed": self.failed,
                "manifest_errors": len(self.manifest_errors), "chunks_written": self.chunks_written,
                "duplicates_dropped": self.duplicates_dropped, "embeddings_computed": self.embeddings_computed,
                "embeddings_reused": self.embeddings_reused}

    @property
    def ok(self) -> bool:
        return not self.failures and not self.manifest_errors

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data.update(version=self.version, failed=self.failed, files_failed=self.failed, ok=self.ok,
                    documents_carried=self.documents_carried)
        data["failures"] = [{"where": w, "reason": r} for w, r in self.failures]
        data["skipped"] = [{"where": w, "reason": r} for w, r in self.skipped]
        data["manifest_errors"] = [{"where": w, "reason": r} for w, r in self.manifest_errors]
        data["seconds"] = round(self.seconds, 3)
        data["enrichment_seconds"] = round(self.enrichment_seconds, 3)
        return data

    def render(self) -> str:
        lines = [f"version {b['version']}: {_ACTIONS.get(b['action'], b['action'])}"
                 + (f" from {b['parent']}, {b['carried']} documents carried with their vectors"
                    if b["action"] == "new_version" and b["parent"] else "")
                 + f" ({b['reason']})" for b in self.builds]
        for b in self.builds:
            for what in ("written", "pruned"):
                if b[what]:
                    shown = ", ".join(b[what][:12]) + (f" and {len(b[what]) - 12} more" if len(b[what]) > 12 else "")
                    lines.append(f"  {what}: {shown}")
        lines.append(f"{'versions:':<22}{', '.join(self.versions) or '-'}")
        lines += [f"{name.replace('_', ' ') + ':':<22}{value}" for name, value in self.counts().items()]
        if self.chunks_enriched or self.enrichment_cache_hits:
            lines += [
                f"chunks enriched:      {self.chunks_enriched} ({self.enrichment_cache_hits} results (chunks or "
                f"summaries) from the cache, {self.llm_calls} LLM calls, {self.enrichment_seconds:.1f} s)",
                f"questions, summaries: {self.questions_written}, {self.summaries_written}",
                f"metadata dropped:     {self.metadata_dropped}",
            ]
        if self.ocr_pages:
            lines.append(f"ocr pages:            {self.ocr_pages} ({self.ocr_low_confidence_blocks} low-confidence "
                         "blocks)")
        lines += [
            f"seconds:              {self.seconds:.1f}",
        ]
        lines += self.pii_lines()
        lines += [f"manifest error  {w}: {r}" for w, r in self.manifest_errors]
        lines += [f"failed          {w}: {r}" for w, r in self.failures]
        lines += [f"skipped         {w}: {r}" for w, r in self.skipped]
        lines += [f"note: {n}" for n in self.notes]
        return "\n".join(lines)


def pii_summary(counts: dict[str, dict[str, int]], mode: str | None, audit_path: str | None) -> list[str]:
    """The PII lines of an ingest's summary (pure): how many findings in how many documents, of which
    types, where the audit log is, and, in audit mode, how to redact them. Nothing when sanitizing
    was off or found nothing; never a value."""
    if mode is None:
        return []
    total = sum(sum(types.values()) for types in counts.values())
    if not total:
        return [f"PII ({mode}):            no finding"]
    by_type: dict[str, int] = {}
    for types in counts.values():
        for kind, n in types.items():
            by_type[kind] = by_type.get(kind, 0) + n
    kinds = ", ".join(f"{k} {n}" for k, n in sorted(by_type.items(), key=lambda kv: (-kv[1], kv[0])))
    docs = sum(1 for types in counts.values() if sum(types.values()))
    head = (f"PII ({mode}):            {total} finding(s) in {docs} document(s): {kinds}"
            + (f"; per document in {audit_path}" if audit_path else ""))
    if mode == "redact":
        return [head, "  redacted: the chunks hold typed placeholders (<PERSON>, <EMAIL_ADDRESS>, ...)"]
    return [head, "  audit only: nothing was redacted, answers quote these values. To redact them, set "
                  "sanitize.mode: redact (or RAG_SANITIZE__MODE=redact) and ingest again (a new version is built)"]
