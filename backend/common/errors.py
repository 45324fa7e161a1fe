"""One error hierarchy for the whole runtime.

Every error a user can cause or fix derives from :class:`RagError`. Its
``user_message`` is safe to show (no secrets, no raw document text); ``context``
carries structured details for logs. The CLI prints ``user_message`` and exits
non-zero; the HTTP API renders ``{"error": {"code", "message", ...}}`` with
``http_status``. Adapters convert driver errors into these classes at the
boundary and keep the cause (``raise StoreUnavailable(...) from exc``). ``exit_code``
is what the CLI exits with: 2 configuration, 3 a failed promotion gate, 4 a locked
series, 1 anything else.

Every request error lives in the "requests" section below, one class per kind of
error and so one status per kind: a value outside its range or its choices is
``FieldOutOfRange`` (422), text over its configured length ``RequestTooLarge`` (413).
"""

from __future__ import annotations

from typing import Any


class RagError(Exception):
    """Base class: an error whose message a user can read and act on."""

    code = "rag_error"
    http_status = 500
    #: the CLI's exit status for this error (a scheduler tells a bad config or a lock from a failure)
    exit_code = 1

    def __init__(self, user_message: str, **context: Any) -> None:
        super().__init__(user_message)
        self.user_message = user_message
        self.context = context

    def to_dict(self) -> dict[str, Any]:
        payload: dict[str, Any] = {"code": self.code, "message": self.user_message}
        details = {k: v for k, v in self.context.items() if k in self.public_context}
        if details:
            payload["details"] = details
        return payload

    #: context keys that may be shown to an HTTP client (everything else is log-only)
    public_context: frozenset[str] = frozenset()


# --- configuration --------------------------------------------------------------
class ConfigError(RagError):
    """The configuration file, environment or overrides are invalid."""

    code = "config_error"
    exit_code = 2

    def __init__(self, user_message: str, problems: list[str] | None = None, **context: Any) -> None:
        super().__init__(user_message, **context)
        self.problems = problems or [user_message]


class KnowledgeBaseExists(ConfigError):
    """``rag kb create`` (or the page) names a knowledge base that already exists."""

    code = "knowledge_base_exists"
    http_status = 409
    public_context = frozenset({"key"})


class InvalidIdentifier(ConfigError):
    """A table, view, alias, domain or field name failed the strict identifier pattern."""

    code = "invalid_identifier"
    http_status = 400


# --- ingestion ------------------------------------------------------------------
class ManifestError(RagError):
    """A manifest line is malformed or points outside the allowed roots."""

    code = "manifest_error"


class LoaderError(RagError):
    """A source file could not be read: unreadable, encrypted, empty or corrupt."""

    code = "loader_error"


class PictureWithoutText(LoaderError):
    """An image file that holds no text to read: a logo or a photograph (OCR found none), or any
    picture while OCR is off. The run skips it and says so; it is not a failed file."""

    code = "picture_without_text"


class NothingIngested(LoaderError):
    """Every file of a run failed to load, so nothing was written and no candidate is made: an
    upload whose files all failed used to report a candidate that "passes every gate"."""

    code = "nothing_ingested"
    http_status = 422
    public_context = frozenset({"field", "refused"})


class SanitizerError(RagError):
    """PII analysis could not run (for example the NER model is not installed)."""

    code = "sanitizer_error"


# --- stores ---------------------------------------------------------------------
class StoreError(RagError):
    """A vector store operation failed."""

    code = "store_error"


class StoreUnavailable(StoreError):
    """The store cannot be reached or opened."""

    code = "store_unavailable"
    http_status = 503


class VersionNotFound(StoreError):
    """No index version with that name exists."""

    code = "version_not_found"
    http_status = 404


class VersionConflict(StoreError):
    """A version exists with a different model, dimension or distance."""

    code = "version_conflict"
    http_status = 409


class VersionChanged(VersionConflict):
    """The version was written (its ``generation`` moved) since the caller read it: a rotation
    that names the generation it evaluated (``point_alias(expected_generation=...)``) is refused."""

    code = "version_changed"
    http_status = 409


class VersionServed(StoreError):
    """A write into a version an alias serves (or keeps for rollback) without the
    explicit in-place override: served versions are immutable."""

    code = "version_served"
    http_status = 409


class AliasNotFound(StoreError):
    """The alias does not exist or points at nothing."""

    code = "alias_not_found"
    http_status = 503


class SeriesLocked(RagError):
    """Another run holds the writer lock of an index series (an ingest, promotion or
    rollback of it): this run was refused, or waited ``ingest.lock_wait_s`` in vain.
    Its own exit code (4), so a scheduler can tell "try again later" from a failure."""

    code = "series_locked"
    http_status = 409
    exit_code = 4


class EmbeddingModelMismatch(StoreError):
    """A query vector comes from another model or dimension than the version searched."""

    code = "embedding_model_mismatch"
    http_status = 409


# --- providers ------------------------------------------------------------------
class ProviderError(RagError):
    """An embedding or chat provider failed permanently."""

    code = "provider_error"
    http_status = 502


class ProviderRateLimited(ProviderError):
    """The provider throttled us (HTTP 429); retried with backoff."""

    code = "provider_rate_limited"
    http_status = 503


class ProviderTimeout(ProviderError):
    """The provider did not answer in time or answered 5xx; retried with backoff."""

    code = "provider_timeout"
    http_status = 504


class ProviderUnavailable(ProviderError):
    """The provider's endpoint cannot be reached or is not configured."""

    code = "provider_unavailable"
    http_status = 503


# --- connectors (docs/CONNECTORS.md) -------------------------------------------
class SourceUnavailable(RagError):
    """A connector's source cannot be listed (down, refusing, 429/5xx after the retries, a
    malformed answer): nothing is diffed from a partial listing, the served version stays."""

    code = "source_unavailable"
    http_status = 503


class SourceItemFailed(RagError):
    """One item of a source cannot be fetched: the sync reports it and goes on (never a deletion)."""

    code = "source_item_failed"


class SyncRefused(RagError):
    """A sync whose listing looks wrong (empty, or dropping more than ``max_delete_share`` of the
    documents) is refused unless forced; nothing is written."""

    code = "sync_refused"
    http_status = 409


# --- requests (every error a client request can cause) --------------------------
class RequestError(RagError):
    """A client request is invalid."""

    code = "bad_request"
    http_status = 400
    public_context = frozenset({"field", "known_domains", "limit", "allowed"})


class UnknownDomain(RequestError):
    """The X-RAG-Domain header names a domain that is not configured."""

    code = "unknown_domain"


class UnknownModel(RequestError):
    """``/v1/chat/completions`` names a model that is no knowledge base the caller may use."""

    code = "model_not_found"
    http_status = 404
    public_context = frozenset({"field", "known_models"})


class QuotaExceeded(RequestError):
    """A principal (or API key) is over its per-minute or per-day quota (``access.quotas``)."""

    code = "quota_exceeded"
    http_status = 429
    public_context = frozenset({"field", "limit", "retry_after"})


class RequestTooLarge(RequestError):
    """The request body or a field exceeds its configured limit."""

    code = "request_too_large"
    http_status = 413


class Unauthorized(RequestError):
    """The API key is missing or wrong."""

    code = "unauthorized"
    http_status = 401


class Forbidden(RequestError):
    """The principal is known but may not use what it asked for (a domain)."""

    code = "forbidden"
    http_status = 403


class FieldOutOfRange(RequestError):
    """A field is valid JSON of the right type but outside a configured limit or its choices
    (``top_k`` over ``retrieval.max_top_k``, an unknown strategy): the status of a body that
    failed its schema, since both are "this value is not acceptable"."""

    code = "validation_error"
    http_status = 422


class UnsupportedMediaType(RequestError):
    """The body is not sent as application/json."""

    code = "unsupported_media_type"
    http_status = 415


class InvalidConversationId(RequestError):
    """A conversation id in a URL path does not match ``web_models.CONVERSATION_ID_PATTERN``."""

    code = "invalid_conversation_id"


class InteractionNotFound(RequestError):
    """``POST /feedback`` names no answer the caller may rate (unknown, or another principal's)."""

    code = "interaction_not_found"
    http_status = 404


class FeedbackUnavailable(RequestError):
    """The store keeps no conversation turns, so there is nothing to rate."""

    code = "feedback_unavailable"
    http_status = 404


class InvalidAssetPath(RequestError):
    """The asset reference is not a relative path inside the assets directory."""

    code = "invalid_asset_path"
    public_context = frozenset({"field"})


class AssetNotFound(RequestError):
    """No asset file exists at that reference (or it resolves outside the assets dir)."""

    code = "asset_not_found"
    http_status = 404


# --- the admin console (backend/api/admin.py, jobs.py) --------------------------
class AdminDisabled(RequestError):
    code = "admin_disabled"
    http_status = 404


class CrossSiteRequest(Forbidden):
    """A state-changing request a browser sent from another site (``Origin``, ``Sec-Fetch-Site``),
    or one authenticated by the admin cookie without this server's ``Origin``: refused, since a
    page the person merely opened must not act with their credentials (issue 49 H1)."""

    code = "cross_site_request"


class AdminLinkInvalid(Forbidden):
    """``/admin/login`` with a token that is not this server's, or where no local admin exists."""

    code = "admin_link_invalid"


class ConfirmationRequired(RequestError):
    """A promote or rollback without ``"confirm": true``: the page asks the person first."""

    code = "confirmation_required"


class KnowledgeBaseNotFound(RequestError):
    """The path names no knowledge base (neither ``default`` nor a configured domain)."""

    code = "knowledge_base_not_found"
    http_status = 404


class ConnectorNotFound(RequestError):
    """The path names no connector declared in ``connectors.file``."""

    code = "connector_not_found"
    http_status = 404


class KnowledgeBaseNotServed(RequestError):
    """The knowledge base exists but no version of it is served yet (the gate refused its first
    version, or nothing was ingested): the message says why and what serves it. Not retryable,
    so 409, never 503."""

    code = "not_served"
    http_status = 409


class PassageNotFound(RequestError):
    """The MCP ``fetch`` tool names no passage or document the caller may read (missing and hidden alike)."""

    code = "passage_not_found"
    http_status = 404


class EvaluationNotFound(RequestError):
    """No evaluation report exists for the version yet."""

    code = "evaluation_not_found"
    http_status = 404


class NothingToRollBack(RequestError):
    code = "nothing_to_roll_back"
    http_status = 409


class JobRunning(RequestError):
    """Another job of the knowledge base has not ended."""

    code = "job_running"
    http_status = 409
    public_context = frozenset({"field", "job"})


class JobNotFound(RequestError):
    code = "job_not_found"
    http_status = 404


class UploadRefused(RequestError):
    """No file of the upload was acceptable (each refusal says why)."""

    code = "upload_refused"
    public_context = frozenset({"field", "limit", "refused"})


class UploadTooLarge(RequestTooLarge):
    public_context = frozenset({"field", "limit", "refused"})


class UploadNotSupported(RequestError):
    code = "upload_not_supported"
    public_context = frozenset({"field"})


# --- serving ------------------------------------------------------------------
class InsufficientStorage(RagError):
    """The server's disk (or quota) is full: nothing was saved (an upload's file, a job's state).
    HTTP 507 with a fixed message; the path is in the log (issue 49 L2)."""

    code = "insufficient_storage"
    http_status = 507


class ServerFailed(RagError):
    """gunicorn stopped with an error (a worker could not build the app, a port in use)."""

    code = "server_failed"


# --- evaluation -----------------------------------------------------------------
class EvaluationError(RagError):
    """A golden set is malformed or an evaluation could not run."""

    code = "evaluation_error"


class GateFailed(EvaluationError):
    """A candidate version failed one or more promotion gates."""

    code = "gate_failed"
    http_status = 409
    exit_code = 3
