"""Logging and OpenTelemetry export."""

from __future__ import annotations

import re
from typing import Literal

from pydantic import Field, SecretStr, field_validator

from backend.common.config.base import _Model


class LoggingSettings(_Model):
    format: Literal["console", "json"] = Field("console", description="console: readable lines; json: one JSON object per event.")
    level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = Field("INFO", description="Lowest level logged (`--debug` forces DEBUG).")


class TelemetrySettings(_Model):
    """OpenTelemetry traces and metrics over OTLP (docs/OBSERVABILITY.md). Off by default: then
    nothing is configured and every span helper returns at once."""

    enabled: bool = Field(False, description="Export spans (one per stage of a question and of an ingest) and the "
                          "stage-duration histogram over OTLP. Off: no provider is configured, nothing is recorded.")
    service_name: str = Field("oracle-rag-runtime", min_length=1, max_length=200,
                              description="`service.name` of the exported resource.")
    endpoint: str = Field("http://127.0.0.1:4318", description="OTLP/HTTP base URL of the collector; spans go to "
                          "`{endpoint}/v1/traces`, metrics to `{endpoint}/v1/metrics`.")
    protocol: Literal["http/protobuf"] = Field("http/protobuf", description="OTLP transport (HTTP with protobuf bodies).")
    headers: SecretStr | None = Field(
        None, description="Headers sent with every export, `key=value` pairs separated by commas (a collector's API "
        "key); environment only (RAG_TELEMETRY__HEADERS). Unset: the exporter's own OTEL_EXPORTER_OTLP_HEADERS, if any.")
    sample_ratio: float = Field(1.0, ge=0.0, le=1.0, description="Share of traces recorded (parent-based: a "
                                "request's stages follow its root span's decision).")
    metrics: bool = Field(True, description="Also export the `rag.stage.duration` histogram (seconds, by stage).")
    metrics_interval_s: float = Field(60.0, gt=0, le=3600, description="Seconds between metric exports.")
    timeout_s: float = Field(10.0, gt=0, le=120, description="Seconds one export may take before it is dropped.")

    @field_validator("endpoint")
    @classmethod
    def _http_url(cls, v: str) -> str:
        if not re.fullmatch(r"https?://[^\s/?#]+(/[^\s?#]*)?", v):
            raise ValueError(f"invalid OTLP endpoint {v!r}: expected an http(s) URL such as http://127.0.0.1:4318")
        return v.rstrip("/")

    @field_validator("headers")
    @classmethod
    def _header_pairs(cls, v: SecretStr | None) -> SecretStr | None:
        if v is not None:
            header_pairs(v.get_secret_value())
        return v

    def header_map(self) -> dict[str, str] | None:
        """``headers`` as a mapping (None when unset)."""
        return header_pairs(self.headers.get_secret_value()) if self.headers is not None else None


def header_pairs(raw: str) -> dict[str, str]:
    """``k1=v1,k2=v2`` (values URL-encoded, as in OTEL_EXPORTER_OTLP_HEADERS) as a mapping; a pair
    without ``=`` or with an empty name is a ``ValueError`` that never quotes the secret value."""
    from urllib.parse import unquote

    out: dict[str, str] = {}
    for i, pair in enumerate(p for p in raw.split(",") if p.strip()):
        name, sep, value = pair.partition("=")
        if not sep or not name.strip():
            raise ValueError(f"telemetry.headers: pair {i + 1} is not key=value (expected e.g. 'api-key=...,x-team=rag')")
        out[unquote(name.strip())] = unquote(value.strip())
    return out
