"""The audit trail: admin actions, MCP tool calls and denied requests (docs/SECURITY.md, "Audit trail")."""

from __future__ import annotations

from pydantic import Field

from backend.common.config.base import _Model


class AuditSettings(_Model):
    """Who did what, appended to the store's audit table (SQLite and Oracle alike)."""

    enabled: bool = Field(
        True, description="Append every admin action (promote, rollback, upload, evaluate, golden-set and feedback "
        "export, conversation delete), every MCP tool call and every denied request (401, 403, 429) to the store's "
        "audit table; readable at GET /admin/audit and exported as JSONL (GET /admin/audit/export).")
    include_questions: bool = Field(
        False, description="Also keep the question text of MCP ask/search calls in their audit lines. Off: the "
        "audit never holds what a user asked (the interactions table does, sanitized when configured); credentials "
        "are never recorded either way.")
    max_export: int = Field(100_000, ge=1, description="Most lines one GET /admin/audit/export returns (newest first).")
