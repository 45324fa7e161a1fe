"""The admin console's endpoints in ``/openapi.json`` (``/admin/...``, docs/ADMIN.md);
``openapi.build_openapi`` adds these paths and models to its document."""

from __future__ import annotations

from typing import Any

from backend.api.admin_models import JOB_ID_PATTERN, KB_KEY_PATTERN, MODELS, VERSION_PATTERN

__all__ = ["MODELS", "admin_paths", "apply_admin_limits"]

_REF = "#/components/schemas/{model}"
_CONFIRM = {"const": True, "description": "Must be true: the page asked the person first (else 400 naming `confirm`)."}


def _json(ref: str, description: str) -> dict[str, Any]:
    return {"description": description, "content": {"application/json": {"schema": {"$ref": _REF.format(model=ref)}}}}


def apply_admin_limits(schemas: dict[str, Any], max_files: int) -> None:
    """What the server checks beyond the models: ``confirm`` must be true; at most ``max_files`` files."""
    for name in ("PromoteBody", "RollbackBody"):
        schemas[name]["properties"]["confirm"] = _CONFIRM
        schemas[name]["required"] = ["confirm"]
    schemas["AdminUploadBody"] = {
        "type": "object", "required": ["files"], "additionalProperties": False,
        "properties": {"files": {"type": "array", "minItems": 1, "maxItems": max_files,
                                 "items": {"type": "string", "format": "binary"},
                                 "description": "The files (knowledge_bases.max_files_per_upload at most, each at "
                                                "most knowledge_bases.max_upload_bytes; a supported type and a plain "
                                                "file name: no path, no dotfile, at most 200 characters and 179 UTF-8 "
                                                "bytes, no bidirectional, invisible or look-alike separator "
                                                "character)."}}}


def _key() -> dict[str, Any]:
    return {"name": "key", "in": "path", "required": True, "schema": {"type": "string", "pattern": KB_KEY_PATTERN},
            "description": "`default` (the default alias) or a domain key."}


def _version() -> dict[str, Any]:
    return {"name": "version", "in": "path", "required": True,
            "schema": {"type": "string", "pattern": VERSION_PATTERN}, "description": "A version of the series."}


def admin_paths(errors: dict[str, str]) -> dict[str, Any]:
    """The paths object entries; ``errors`` are the shared status descriptions of ``openapi.py``."""
    auth = {"401": _json("ErrorResponse", errors["401"]),
            "403": _json("ErrorResponse", "The caller may not: writes need the admin role (or, without access "
                         "control, the local admin: a loopback caller, relayed by no proxy, with the admin link's "
                         "cookie or X-RAG-Admin-Token); reads too unless admin.non_admins is read_only; the "
                         "principal may not use the knowledge base's domain; or a browser sent a state-changing "
                         "request from another site or origin (cross_site_request).")}
    missing = {"404": _json("ErrorResponse", "No such knowledge base (or version, or job); or admin.enabled is "
                            "false.")}
    busy = {"409": _json("ErrorResponse", "The series is locked by another run, a job of the knowledge base is "
                         "running, or the version cannot be promoted (rolled back, another model).")}
    body_errors = {"400": _json("ErrorResponse", "Malformed JSON, or `confirm` is not true."),
                   "413": _json("ErrorResponse", errors["413"]), "415": _json("ErrorResponse", errors["415"]),
                   "422": _json("ErrorResponse", errors["422"])}

    def read(summary: str, op: str, model: str, what: str, *params: dict[str, Any]) -> dict[str, Any]:
        return {"get": {"summary": summary, "operationId": op, "parameters": list(params),
                        "responses": {"200": _json(model, what), **auth, **missing}}}

    def body(model: str) -> dict[str, Any]:
        return {"required": True, "content": {"application/json": {"schema": {"$ref": _REF.format(model=model)}}}}

    kb = "/admin/knowledge-bases/{key}"
    return {
        "/admin/login": {"get": {
            "summary": "The local admin's link (printed by rag serve; access control off): sets the rag_admin "
                       "cookie (HttpOnly, SameSite=Strict) and redirects to the page.",
            "operationId": "admin_login", "security": [],
            "parameters": [{"name": "token", "in": "query", "required": True, "schema": {"type": "string"},
                            "description": "The token of the printed link (new at each rag serve start)."}],
            "responses": {"303": {"description": "Signed in: the cookie is set, the page follows.",
                                  "headers": {"Location": {"schema": {"type": "string"}}}},
                          "403": _json("ErrorResponse", "Not this run's token, not from the server's machine, "
                                       "relayed by a proxy, or no local admin here (admin_link_invalid).")}}},
        "/admin/me": {"get": {
            "summary": "What the caller may do in the admin console.", "operationId": "admin_me",
            "responses": {"200": _json("AdminMe", "admin (may write), can_view (may read), principal."),
                          "401": auth["401"]}}},
        "/admin/knowledge-bases": {"get": {
            "summary": "Knowledge bases the caller may read: the default alias and every domain.",
            "operationId": "admin_knowledge_bases",
            "responses": {"200": _json("KnowledgeBasesResponse", "Live, rollback and candidate versions, documents, "
                                       "golden set."), **auth, **missing}}},
        f"{kb}/documents": read("Documents of the live version, with the version each last changed in.",
                                "admin_documents", "DocumentsResponse", "The live version's documents.", _key()),
        f"{kb}/versions": read("Versions (live, rollback, candidate, older) with their evaluation, and the alias "
                               "history.", "admin_versions", "VersionsResponse", "Versions, newest first.", _key()),
        f"{kb}/versions/{{version}}/evaluation": read(
            "The newest evaluation of a version, each golden query a win, loss or same against the live version.",
            "admin_evaluation", "EvaluationResponse", "Figures, gates and per-query changes.", _key(), _version()),
        f"{kb}/versions/{{version}}/evaluate": {"post": {
            "summary": "Evaluate a version against the live one with the gates (nothing is rotated); a job.",
            "operationId": "admin_evaluate", "parameters": [_key(), _version()],
            "responses": {"202": _json("JobAccepted", "Started: GET /admin/jobs/{job}."), **auth, **missing,
                          **busy}}},
        f"{kb}/promote": {"post": {
            "summary": "Promote a version through the gate (never forced); recorded with the caller.",
            "operationId": "admin_promote", "parameters": [_key()], "requestBody": body("PromoteBody"),
            "responses": {"200": _json("PromoteResponse", "Promoted (or already served)."), **auth, **missing,
                          "409": {"description": "A gate failed (the gates say which), or the series is locked, or "
                                                 "the version cannot be promoted.",
                                  "content": {"application/json": {"schema": {"anyOf": [
                                      {"$ref": _REF.format(model="GateFailedResponse")},
                                      {"$ref": _REF.format(model="ErrorResponse")}]}}}},
                          **body_errors}}},
        f"{kb}/rollback": {"post": {
            "summary": "Point the alias back at the version it served before; recorded with the caller.",
            "operationId": "admin_rollback", "parameters": [_key()], "requestBody": body("RollbackBody"),
            "responses": {"200": _json("RollbackResponse", "Rolled back."), **auth, **missing,
                          "409": _json("ErrorResponse", "Nothing to roll back to, or the series is locked."),
                          **body_errors}}},
        f"{kb}/feedback": read("Feedback on answers of the knowledge base (a non-admin reader: its own).",
                               "admin_feedback", "AdminFeedbackResponse", "Newest first.", _key()),
        f"{kb}/golden": read("The golden set that gates the knowledge base (starter or real) and how to replace it.",
                             "admin_golden", "GoldenResponse", "The golden queries.", _key()),
        f"{kb}/uploads": {"post": {
            "summary": "Upload files into a new candidate version (a job); nothing is served before a promote.",
            "operationId": "admin_upload", "parameters": [_key()],
            "requestBody": {"required": True, "content": {"multipart/form-data": {
                "schema": {"$ref": _REF.format(model="AdminUploadBody")}}}},
            "responses": {"202": _json("UploadAccepted", "Accepted files saved and a job started; refused files "
                                       "listed with their reason."), **auth, **missing, **busy,
                          "400": _json("ErrorResponse", "No file acceptable (details.refused says why for each), "
                                       "too many files, not multipart, or the knowledge base takes no uploads "
                                       "(defined in the configuration)."),
                          "413": _json("ErrorResponse", "Every file over knowledge_bases.max_upload_bytes, or the "
                                       "whole upload over the files' limits."),
                          "507": _json("ErrorResponse", "The server's disk is full: nothing was saved.")}}},
        "/admin/connectors": {"get": {
            "summary": "Connectors of the knowledge bases the caller may read, with their last sync (counts of each "
                       "kind of change, failed items, the version built and its gate verdict).",
            "operationId": "admin_connectors",
            "responses": {"200": _json("ConnectorsResponse", "Declared connectors."), **auth, **missing}}},
        "/admin/connectors/{name}/sync": {"post": {
            "summary": "Start a sync of the connector (a job): one version through the gate.",
            "operationId": "admin_connector_sync",
            "parameters": [{"name": "name", "in": "path", "required": True,
                            "schema": {"type": "string", "pattern": r"^[a-z0-9][a-z0-9_-]{0,47}$"},
                            "description": "The connector's name in connectors.file."}],
            "responses": {"202": _json("JobAccepted", "Started: GET /admin/jobs/{job}."), **auth, **missing,
                          **busy}}},
        "/admin/connectors/{name}/cancel": {"post": {
            "summary": "Ask a running sync of the connector to stop after the group in flight (as `rag connector "
                       "cancel`): the served version and the sync state stay as they were; the next sync resumes.",
            "operationId": "admin_connector_cancel",
            "parameters": [{"name": "name", "in": "path", "required": True,
                            "schema": {"type": "string", "pattern": r"^[a-z0-9][a-z0-9_-]{0,47}$"},
                            "description": "The connector's name in connectors.file."}],
            "responses": {"202": _json("CancelRequested", "Asked; the sync's job ends as cancelled."), **auth,
                          **missing}}},
        "/admin/jobs/{job_id}": read("An upload or evaluation job: state, stage, progress and result.", "admin_job",
                                     "JobOut", "The job.", {"name": "job_id", "in": "path", "required": True,
                                                            "schema": {"type": "string", "pattern": JOB_ID_PATTERN}}),
    }
