"""The HTTP server: bind address, limits, gunicorn workers and rate limits."""

from __future__ import annotations

import re

from pydantic import Field, SecretStr, field_validator

from backend.common.config.base import _Model

#: a host name (a leading dot: the domain and its subdomains), an IPv4 address or a bracketed/bare IPv6 address
_TRUSTED_HOST = re.compile(r"\.?[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)*|\[?[0-9A-Fa-f:.]+\]?")


class RateLimitSettings(_Model):
    """Requests per API key (per principal with access control, per client address without keys)."""

    enabled: bool = Field(True, description="Answer 429 with Retry-After once a client exceeds `limit`.")
    limit: str = Field(
        "120/minute", description="flask-limiter rate string, e.g. `120/minute` or `10/second;300/hour`; probes "
        "(/healthz, /readyz, /metrics) are exempt.")
    storage_uri: str = Field(
        "memory://", description="Where counts live: `memory://` counts per worker process (the effective limit is "
        "workers x limit); `redis://host:6379` shares them across workers and hosts.")

    @field_validator("limit")
    @classmethod
    def _parses(cls, v: str) -> str:
        from limits import parse_many

        try:
            parse_many(v)
        except ValueError as exc:
            raise ValueError(f"invalid rate limit {v!r}: expected e.g. '120/minute' or '10/second;300/hour'") from exc
        return v


class ServerSettings(_Model):
    host: str = Field("127.0.0.1", description="Interface `rag serve` binds to.")
    port: int = Field(8080, ge=1, le=65535, description="Port `rag serve` listens on.")
    max_body_bytes: int = Field(64 * 1024, ge=256, description="Larger request bodies get 413.")
    max_question_chars: int = Field(4000, ge=1, description="Longer questions get 413.")
    api_keys: tuple[SecretStr, ...] = Field((), description="If set, requests need X-API-Key; environment only (RAG_SERVER__API_KEYS, comma separated).")
    metrics_token: SecretStr | None = Field(
        None, description="With API keys or access control on, /metrics needs a credential like the API; a scraper "
        "may instead send `Authorization: Bearer <this token>` (it opens /metrics only); environment only "
        "(RAG_SERVER__METRICS_TOKEN).")
    asset_url_ttl_s: int = Field(
        300, ge=10, le=86_400, description="With API keys or access control on, figure links in answers are signed "
        "`/assets` URLs (so an `<img>` loads without a header) that expire after this many seconds.")
    asset_url_secret: SecretStr | None = Field(
        None, description="HMAC key of signed asset URLs; environment (RAG_SERVER__ASSET_URL_SECRET). Default: derived "
        "from the configured API keys and shared secrets, so every worker signs alike and rotating them revokes old "
        "links; with none (JWT with a public key alone) a random key kept in asset_url_secret_file.")
    asset_url_secret_file: str = Field(
        "data/asset-url.key", description="Where the random signing key of asset URLs is kept when no secret is "
        "configured or derivable: created once (0600, 32 random bytes), read by every worker; delete it to rotate "
        "(every link issued before stops working).")
    allow_unauthenticated_exposure: bool = Field(
        False, description="Allow `rag serve` on a non-loopback address with no API keys (`--allow-unauthenticated`); "
        "refused otherwise.")
    trusted_hosts: tuple[str, ...] = Field(
        (), description="Host header values accepted (port ignored; `.example.com` matches it and its subdomains); others answer "
        "400, which stops DNS rebinding. Empty: localhost, 127.0.0.1 and ::1 when `host` is a loopback address, any "
        "host otherwise.")
    workers: int = Field(1, ge=1, le=64, description="gunicorn worker processes (each loads the embedding model).")
    threads: int = Field(
        8, ge=1, le=256, description="Threads per worker (gthread): the most requests, server-sent-event streams "
        "included, one worker serves at once.")
    worker_timeout_s: float | None = Field(
        None, gt=0, description="Seconds a gunicorn worker may stay silent (booting, or blocked) before it is "
        "restarted. Default: the answer providers' timeout_s x retry.max_attempts plus backoff waits plus 30 s, at "
        "least 120 s; a value at or below that answer budget is refused.")
    graceful_timeout_s: float = Field(30.0, gt=0, description="Seconds workers get to finish requests on shutdown.")
    rate_limit: RateLimitSettings = RateLimitSettings()

    @field_validator("trusted_hosts")
    @classmethod
    def _hosts(cls, v: tuple[str, ...]) -> tuple[str, ...]:
        bad = [h for h in v if not _TRUSTED_HOST.fullmatch(h)]
        if bad:
            raise ValueError(f"invalid trusted host(s) {bad}: expected host names or addresses without port or path")
        return v
