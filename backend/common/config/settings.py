"""The root ``Settings`` model and the checks that span several areas."""

from __future__ import annotations

from pathlib import Path

from pydantic import model_validator

from backend.common.config.audit import AuditSettings
from backend.common.config.quotas import QuotaSettings
from backend.common.config.access import AccessSettings
from backend.common.config.base import REPO_ROOT, _Model
from backend.common.config.embeddings import EmbeddingSettings
from backend.common.config.evaluation import EvaluationSettings
from backend.common.config.ingest import DocxSettings, IngestSettings
from backend.common.config.connectors import ConnectorsSettings
from backend.common.config.knowledge_bases import AdminSettings, KnowledgeBasesSettings
from backend.common.config.llm import LlmSettings, answer_time_budget_s
from backend.common.config.retrieval import RetrievalSettings
from backend.common.config.sanitize import SanitizeSettings
from backend.common.config.server import ServerSettings
from backend.common.config.store import StoreSettings
from backend.common.config.telemetry import LoggingSettings, TelemetrySettings


class Settings(_Model):
    """The whole runtime configuration."""

    store: StoreSettings = StoreSettings()
    embeddings: EmbeddingSettings = EmbeddingSettings()
    sanitize: SanitizeSettings = SanitizeSettings()
    docx: DocxSettings = DocxSettings()
    ingest: IngestSettings = IngestSettings()
    retrieval: RetrievalSettings = RetrievalSettings()
    llm: LlmSettings = LlmSettings()
    evaluation: EvaluationSettings = EvaluationSettings()
    server: ServerSettings = ServerSettings()
    access: AccessSettings = AccessSettings()
    audit: AuditSettings = AuditSettings()
    quotas: QuotaSettings = QuotaSettings()
    admin: AdminSettings = AdminSettings()
    logging: LoggingSettings = LoggingSettings()
    knowledge_bases: KnowledgeBasesSettings = KnowledgeBasesSettings()
    connectors: ConnectorsSettings = ConnectorsSettings()
    telemetry: TelemetrySettings = TelemetrySettings()

    @model_validator(mode="after")
    def _access_keys(self) -> "Settings":
        if self.access.enabled and self.server.api_keys:
            raise ValueError("server.api_keys stand for no principal; with access.enabled give each key to a "
                             "principal instead (RAG_ACCESS__PRINCIPALS__<NAME>__API_KEY)")
        return self

    @model_validator(mode="after")
    def _worker_outlives_answers(self) -> "Settings":
        needed = answer_time_budget_s(self.llm)
        given = self.server.worker_timeout_s
        if given is not None and given <= needed:
            raise ValueError(
                f"server.worker_timeout_s ({given:g}) must exceed the longest answer, llm.*.timeout_s x "
                f"retry.max_attempts plus backoff ({needed:g} s); otherwise gunicorn kills workers mid-answer")
        return self

    def worker_timeout(self) -> float:
        """``server.worker_timeout_s``, or the answer budget plus a 30 s margin, at least 120 s:
        a worker loading the embedding model at boot is silent for that long too."""
        given = self.server.worker_timeout_s
        return given if given is not None else max(answer_time_budget_s(self.llm) + 30.0, 120.0)

    @model_validator(mode="after")
    def _oracle_only_vector_options(self) -> "Settings":
        for name, prof in self.embeddings.profiles.items():
            if prof.vector_format == "int8" and (self.store.backend != "oracle" or prof.distance != "cosine"):
                raise ValueError(f"embeddings.profiles.{name}.vector_format int8 needs store.backend oracle and "
                                 f"distance cosine (each vector is scaled on its own); got {self.store.backend!r}, "
                                 f"{prof.distance!r}")
        return self

    @model_validator(mode="after")
    def _profiles_match_retrieval(self) -> "Settings":
        for name, prof in self.embeddings.profiles.items():
            if prof.distance != self.retrieval.distance:
                raise ValueError(
                    f"embeddings.profiles.{name}.distance ({prof.distance}) differs from retrieval.distance "
                    f"({self.retrieval.distance}); thresholds are tuned for one distance"
                )
        return self

    # helpers that resolve relative paths against the repo root -------------------
    def resolve_path(self, value: str) -> Path:
        p = Path(value).expanduser()
        return p if p.is_absolute() else (REPO_ROOT / p)
