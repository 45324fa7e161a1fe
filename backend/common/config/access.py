"""Access control: principals, roles, JWT."""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import Field, SecretStr, field_validator, model_validator

from backend.common.config.base import _Model, hint, validate_domain_key

_PRINCIPAL_NAME = re.compile(r"^[a-z][a-z0-9_.-]{0,63}$")
#: roles a principal may hold; ``admin`` opens the admin console (uploads, promote, rollback)
ROLES = ("admin",)
#: the domain key a request without X-RAG-Domain uses (the default alias), for ``domains`` lists
DEFAULT_DOMAIN = "default"


def _principal_name(value: str, what: str) -> str:
    if not _PRINCIPAL_NAME.fullmatch(value):
        raise ValueError(f"invalid {what} {value!r}: expected lowercase letters, digits, '_', '.' or '-', "
                         "starting with a letter, at most 64 characters")
    return value


class PrincipalSettings(_Model):
    """One principal an API key stands for. Its key is a secret: environment only."""

    groups: tuple[str, ...] = Field((), description="Groups the principal belongs to; a document ACL may name `group:<g>`.")
    domains: tuple[str, ...] = Field(
        (), description="Domain keys (X-RAG-Domain) the principal may use; `default` is the default alias (no "
        "header), `*` every domain. Anything else answers 403. Empty: none.")
    api_key: SecretStr | None = Field(
        None, description="The principal's X-API-Key; environment only (RAG_ACCESS__PRINCIPALS__<NAME>__API_KEY).")
    roles: tuple[str, ...] = Field(
        (), description="Roles of the principal: `admin` may use the admin console and its /admin endpoints "
        "(uploads, promote, rollback; docs/ADMIN.md). From the environment as a comma-separated list "
        "(RAG_ACCESS__PRINCIPALS__<NAME>__ROLES=admin).")

    sso: bool = Field(
        False, description="This name is also an SSO identity: a bearer token whose subject is exactly this name "
        "runs as it and, without a domains or roles claim, gets its `domains` and `roles`. Off: a token naming it "
        "is refused (401), so no token can take an API-key principal's name, documents or admin role.")

    @field_validator("roles", mode="before")
    @classmethod
    def _roles(cls, v: Any) -> Any:
        items = [r.strip() for r in v.split(",") if r.strip()] if isinstance(v, str) else v
        if isinstance(items, (list, tuple)):
            unknown = sorted({str(r) for r in items} - set(ROLES))
            if unknown:
                raise ValueError(f"unknown role(s) {unknown}; known roles: {sorted(ROLES)}{hint(unknown[0], ROLES)}")
        return items

    @field_validator("groups")
    @classmethod
    def _groups(cls, v: tuple[str, ...]) -> tuple[str, ...]:
        return tuple(_principal_name(g, "group name") for g in v)

    @field_validator("domains")
    @classmethod
    def _domains(cls, v: tuple[str, ...]) -> tuple[str, ...]:
        return tuple(d if d in ("*", DEFAULT_DOMAIN) else validate_domain_key(d) for d in v)


class JwtSettings(_Model):
    """Principals from a signed bearer token (an SSO proxy in front of the service)."""

    enabled: bool = Field(False, description="Accept `Authorization: Bearer <JWT>` as well as API keys.")
    algorithm: Literal["HS256", "RS256"] = Field("HS256", description="The only algorithm accepted (no `none`, no other).")
    secret: SecretStr | None = Field(None, description="HS256 shared secret; environment only (RAG_ACCESS__JWT__SECRET).")
    public_key_file: str | None = Field(None, description="RS256: PEM file of the issuer's public key.")
    audience: str | None = Field(None, description="Required `aud`; tokens for another audience answer 401.")
    issuer: str | None = Field(None, description="If set, required `iss`.")
    leeway_seconds: int = Field(30, ge=0, le=300, description="Clock skew allowed on `exp`/`nbf`.")
    principal_claim: str = Field("sub", description="Claim that names the principal.")
    groups_claim: str = Field("groups", description="Claim listing the principal's groups.")
    domains_claim: str = Field(
        "rag_domains", description="Claim listing the domains the principal may use; without it, the configured "
        "principal of that name's `domains` (none if not configured).")
    roles_claim: str = Field(
        "rag_roles", description="Claim listing the principal's roles (`admin`: the admin console; other values "
        "are ignored); without it, the configured principal of that name's `roles` (none if not configured).")

    @model_validator(mode="after")
    def _key_for_algorithm(self) -> "JwtSettings":
        if not self.enabled:
            return self
        if self.audience is None:
            raise ValueError("access.jwt.audience is required when access.jwt.enabled is true")
        if self.algorithm == "HS256" and self.secret is None:
            raise ValueError("access.jwt.algorithm HS256 needs access.jwt.secret (environment: RAG_ACCESS__JWT__SECRET)")
        if self.algorithm == "RS256" and not self.public_key_file:
            raise ValueError("access.jwt.algorithm RS256 needs access.jwt.public_key_file (a PEM public key)")
        return self


class AccessSettings(_Model):
    """Who may see which documents; see docs/ACCESS_CONTROL.md."""

    enabled: bool = Field(
        False, description="Enforce principals and document ACLs. Off: any valid key reads everything (as before).")
    default_acl: Literal["deny", "public"] = Field(
        "deny", description="ACL of a manifest line without `acl`, applied at ingest: `deny` (nobody) or `public`.")
    principals: dict[str, PrincipalSettings] = Field(
        default_factory=dict, description="Principal name -> groups, domains and (from the environment) its API key.")
    jwt: JwtSettings = JwtSettings()

    @field_validator("principals")
    @classmethod
    def _names(cls, v: dict[str, PrincipalSettings]) -> dict[str, PrincipalSettings]:
        for name in v:
            _principal_name(name, "principal name")
        keys = [p.api_key.get_secret_value() for p in v.values() if p.api_key is not None]
        if len(keys) != len(set(keys)):
            raise ValueError("two principals share one API key; each key must stand for one principal")
        return v
