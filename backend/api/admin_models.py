"""Bodies of the admin console's endpoints (``/admin/...``, docs/ADMIN.md). Like ``models.py``
they validate requests, serialize every response and are the source of ``/openapi.json``."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, SerializerFunctionWrapHandler, model_serializer

from backend.api.models import ErrorBody, ResponseModel

#: a knowledge base in a URL path: ``default`` or a domain key
KB_KEY_PATTERN = r"^[a-z][a-z0-9_-]{0,62}$"
#: a version name in a URL path or a body (an identifier; unknown names answer 404)
VERSION_PATTERN = r"^[A-Za-z][A-Za-z0-9_]{0,29}$"
#: a job id (what the server makes: 32 hex digits)
JOB_ID_PATTERN = r"^[0-9a-f]{32}$"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


class PromoteBody(_Strict):
    """Body of ``POST /admin/knowledge-bases/<key>/promote``: through the gate, never forced."""

    version: str | None = Field(None, pattern=VERSION_PATTERN, description="The version to promote; null: the "
                                "newest of the knowledge base's series.")
    confirm: bool | None = Field(None, description="Must be true: the page asked the person first.")


class RollbackBody(_Strict):
    """Body of ``POST /admin/knowledge-bases/<key>/rollback``."""

    confirm: bool | None = Field(None, description="Must be true: the page asked the person first.")


class UploadLimits(ResponseModel):
    max_upload_bytes: int = Field(..., description="Largest file an upload accepts (knowledge_bases.max_upload_bytes).")
    max_files_per_upload: int = Field(..., description="Most files one upload accepts.")
    suffixes: list[str] = Field(..., description="File types the loaders read, e.g. `.docx`.")


class AdminMe(ResponseModel):
    admin: bool = Field(..., description="The caller may write: upload, evaluate, promote, roll back.")
    can_view: bool = Field(..., description="The caller may read the console (admins, and everyone with "
                           "admin.non_admins: read_only).")
    principal: str | None = Field(..., description="The caller's principal; `local` for a loopback admin without "
                                  "access control; null otherwise.")
    limits: UploadLimits | None = Field(None, description="What an upload accepts, so the page hints before sending "
                                        "(admins only; the server checks again).")
    sign_in: str | None = Field(None, description="Without access control, to a browser on the server's machine "
                                "that has not opened the admin link: how to become the admin (absent otherwise).")

    @model_serializer(mode="wrap")
    def _drop_absent(self, handler: SerializerFunctionWrapHandler) -> Any:
        data = handler(self)
        if isinstance(data, dict) and data.get("sign_in") is None:
            data.pop("sign_in", None)
        return data


class GoldenInfo(ResponseModel):
    path: str
    generated: bool = Field(..., description="A starter set generated from the documents, not real questions.")
    queries: int


class KnowledgeBaseOut(ResponseModel):
    key: str = Field(..., description="`default` (the default alias) or the domain key (X-RAG-Domain).")
    title: str
    alias: str
    series: str = Field(..., description="The configured index_name whose versions the knowledge base has.")
    live: str | None
    rollback: str | None
    candidates: list[str]
    documents: int = Field(..., description="Documents of the live version.")
    managed: bool = Field(..., description="Registered by the runtime (rag kb create), not in config/rag.yaml.")
    golden: GoldenInfo | None


class KnowledgeBasesResponse(ResponseModel):
    knowledge_bases: list[KnowledgeBaseOut]


class DocumentOut(ResponseModel):
    doc_id: str
    source: str
    chunks: int
    changed_in: str = Field(..., description="The version the live copy was last written in, as far as the "
                            "retained versions show.")
    pii: dict[str, int] = Field(default_factory=dict, description="PII the sanitizer found in it as last ingested: "
                                "entity type -> count (never a value); empty: none found, or sanitizing was off.")


HIDDEN = ("How many rows were left out because the caller reads without the admin role under access control "
          "(admin.non_admins: read_only): it sees counts, never document names, sources or golden questions.")


class DocumentsResponse(ResponseModel):
    version: str | None = Field(..., description="The live version (null: the alias serves nothing).")
    documents: list[DocumentOut]
    hidden: int = Field(0, ge=0, description=HIDDEN)


class VersionEvaluationOut(ResponseModel):
    metrics: dict[str, Any]
    gates_passed: bool | None
    created_at: str | None
    current: bool = Field(..., description="Made on the version's present content.")


class VersionOut(ResponseModel):
    name: str
    role: Literal["live", "rollback", "candidate", "older"]
    created_at: str
    documents: int
    chunks: int
    parent: str | None
    evaluation: VersionEvaluationOut | None


class HistoryOut(ResponseModel):
    version: str
    previous: str | None
    changed_at: str
    reason: str
    forced: bool


class VersionsResponse(ResponseModel):
    alias: str
    live: str | None
    rollback: str | None
    versions: list[VersionOut] = Field(..., description="Newest first.")
    history: list[HistoryOut] = Field(..., description="The alias's changes, newest first.")


class QueryOutcome(ResponseModel):
    mode: str | None = Field(..., description="The decided answer mode.")
    mode_correct: bool
    hit: bool | None = Field(..., description="An expected document in the top k; null: the query expects none.")
    rank: int | None = Field(..., description="1-based rank of the first expected document; null: not found.")
    reciprocal_rank: float | None


class QueryChangeOut(ResponseModel):
    id: str | None
    query: str | None
    expected_mode: str | None
    candidate: QueryOutcome
    live: QueryOutcome | None
    change: Literal["win", "loss", "same", "new"] = Field(
        ..., description="Against the live version: more of (hit@k, mode) right is a win, fewer a loss; on a tie "
        "the rank of the first expected document decides; `new`: the live evaluation has no such query.")


class GateOut(ResponseModel):
    name: str | None
    metric: str | None
    passed: bool
    value: float | None
    threshold: float | None
    kind: str | None = None
    baseline: float | None = None
    warning: str | None = Field(None, description="Why a floor the value misses did not block: "
                                "`served_version_below_floor` (the served version misses it too and this one is no "
                                "worse) or `first_version_on_starter_set` (docs/EVALUATION_AND_PROMOTION.md).")


class EvaluationSummary(ResponseModel):
    wins: int
    losses: int
    same: int
    new: int


class EvaluationResponse(ResponseModel):
    version: str | None
    baseline_version: str | None
    created_at: str | None
    golden: GoldenInfo | None
    metrics: dict[str, Any]
    baseline_metrics: dict[str, Any] | None
    gates: list[GateOut]
    gates_passed: bool | None = Field(..., description="null: an evaluation without gates (rag eval).")
    queries: list[QueryChangeOut]
    summary: EvaluationSummary
    hidden: int = Field(0, ge=0, description=HIDDEN)


class JobAccepted(ResponseModel):
    job: str = Field(..., description="GET /admin/jobs/<job> follows it.")


class RefusedFile(ResponseModel):
    file: str
    reason: str


class UploadAccepted(ResponseModel):
    job: str
    accepted: list[str]
    refused: list[RefusedFile]


class PromoteResponse(ResponseModel):
    promoted: bool = Field(..., description="False: the alias already served the version (nothing to do).")
    version: str
    previous: str | None
    alias: str
    gates: list[GateOut]
    metrics: dict[str, Any] | None
    notes: list[str]


class GateFailedResponse(ResponseModel):
    error: ErrorBody
    version: str
    alias: str
    gates: list[GateOut]
    metrics: dict[str, Any] | None


class RollbackResponse(ResponseModel):
    alias: str
    version: str = Field(..., description="What the alias serves now.")
    previous: str | None = Field(..., description="What it served before the rollback.")
    reason: str


class FeedbackRow(ResponseModel):
    interaction_id: str
    vote: Literal["up", "down"]
    comment: str | None
    created_at: str
    question: str
    mode: str
    version: str
    expected_answer: str | None


class AdminFeedbackResponse(ResponseModel):
    feedback: list[FeedbackRow] = Field(..., description="Newest first.")


class GoldenQueryOut(ResponseModel):
    id: str | None
    query: str
    expected_mode: str
    expected_sources: list[str]


class GoldenResponse(ResponseModel):
    path: str | None
    generated: bool
    queries: list[GoldenQueryOut]
    how_to_replace: str
    hidden: int = Field(0, ge=0, description=HIDDEN)


class JobOut(ResponseModel):
    id: str
    kind: Literal["upload", "evaluate", "sync"]
    key: str
    state: Literal["queued", "running", "succeeded", "failed", "cancelled"]
    stage: str
    done: int
    total: int
    message: str
    result: dict[str, Any] | None
    created_at: str
    updated_at: str
    principal: str | None
    #: while an upload ingests: total, documents, chunks, documents_per_s, chunks_per_s, eta_s, ...
    rates: dict[str, Any] | None = None



class ConnectorRun(ResponseModel):
    status: str = Field(..., description="ok, up_to_date, gate_refused, refused, cancelled or failed.")
    recorded_at: str
    counts: dict[str, int] = Field(default_factory=dict, description="new, changed, unchanged, deleted, "
                                   "permission_only, failed.")
    errors: list[dict[str, str]] = Field(default_factory=list, description="Items that failed (admins only).")
    unknown_permissions: int = Field(0, description="Items visible to admins only: the source gave no readers.")
    unmapped_readers: dict[str, int] = Field(default_factory=dict, description="Readers no mapping entry knows "
                                             "(admins only).")
    version: str | None = None
    gate_passed: bool | None = None
    promoted: bool = False
    embeddings_computed: int = 0
    message: str = ""


class ConnectorOut(ResponseModel):
    name: str
    kind: str
    knowledge_base: str
    last: ConnectorRun | None = None


class ConnectorsResponse(ResponseModel):
    connectors: list[ConnectorOut]


class CancelRequested(ResponseModel):
    connector: str
    knowledge_base: str
    series: str = Field(..., description="The index series whose running ingest is asked to stop.")
    message: str

MODELS: list[tuple[type[BaseModel], Any]] = [
    (PromoteBody, "validation"), (RollbackBody, "validation"),
    *[(m, "serialization") for m in (AdminMe, KnowledgeBasesResponse, DocumentsResponse, VersionsResponse,
                                     EvaluationResponse, JobAccepted, UploadAccepted, PromoteResponse,
                                     GateFailedResponse, RollbackResponse, AdminFeedbackResponse, GoldenResponse,
                                     JobOut, ConnectorsResponse, CancelRequested)],
]
