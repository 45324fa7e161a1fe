"""Per-principal (and per-API-key) quotas: requests per minute and per day (docs/SECURITY.md, "Quotas")."""

from __future__ import annotations

from pydantic import Field

from backend.common.config.base import _Model


class QuotaLimit(_Model):
    """One budget; a window without a number is not limited."""

    per_minute: int | None = Field(None, ge=1, description="Requests in one calendar minute (UTC); none: unlimited.")
    per_day: int | None = Field(None, ge=1, description="Requests in one calendar day (UTC); none: unlimited.")


class QuotaSettings(_Model):
    """Budgets per principal, per role, or for every credential; counted in the store (one counter row per
    subject and window, added to atomically), so every gunicorn worker counts against the same budget.
    Applies to the API (``/chat``, ``/search``, ``/v1``, ``/admin``...) and to MCP tool calls over HTTP and
    stdio; probes, ``/metrics`` and the page's files are exempt. The global ``server.rate_limit`` still applies."""

    enabled: bool = Field(False, description="Count requests per principal (or per API key without access "
                          "control) and answer 429 with Retry-After past its budget.")
    default: QuotaLimit = Field(QuotaLimit(), description="The budget of a principal or API key with none of its "
                                "own or of its roles.")
    principals: dict[str, QuotaLimit] = Field(default_factory=dict, description="Principal name -> its budget "
                                              "(wins over its roles' and the default).")
    roles: dict[str, QuotaLimit] = Field(default_factory=dict, description="Role -> budget, for principals "
                                         "without one of their own; a principal with several roles gets the most "
                                         "generous of each window.")
