"""Principals, document ACL labels and token verification (docs/ACCESS_CONTROL.md).

A principal is who a request runs as: an API key stands for one configured
principal, or a signed bearer token (JWT) names one. What a principal may *see*
is a ``Visibility`` (its ACL labels) that the stores apply inside the search
query; what it may *use* is its list of domains, checked before any search.
Nothing here touches HTTP or the store.
"""

from __future__ import annotations

import hmac
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Sequence

from backend.common.config import DEFAULT_DOMAIN, ROLES, AccessSettings, JwtSettings
from backend.common.errors import ConfigError, Forbidden, ManifestError, Unauthorized
from backend.core.types import ACL_FIELD, PUBLIC_LABEL, Visibility


@dataclass(frozen=True)
class Principal:
    name: str
    groups: tuple[str, ...] = ()
    domains: tuple[str, ...] = ()
    #: how it was authenticated: ``api_key`` or ``jwt`` (audit; never the credential)
    source: str = "api_key"
    #: roles (``admin``: the admin console); from the configured principal or the token's roles claim
    roles: tuple[str, ...] = ()

    @property
    def is_admin(self) -> bool:
        return "admin" in self.roles

    @property
    def visibility(self) -> Visibility:
        return Visibility.of(self.name, self.groups)

    def may_use(self, domain: str | None) -> bool:
        return "*" in self.domains or (domain or DEFAULT_DOMAIN) in self.domains

    def check_domain(self, domain: str | None) -> None:
        """``Forbidden`` (403) unless the principal may use ``domain`` (None: the default alias)."""
        if not self.may_use(domain):
            shown = domain or f"{DEFAULT_DOMAIN} (no X-RAG-Domain)"
            raise Forbidden(f"principal {self.name!r} may not use domain {shown}", field="X-RAG-Domain")


def configured_principal(settings: AccessSettings, name: str) -> Principal:
    """The configured principal ``name`` (golden queries run as one); ``ConfigError`` if unknown."""
    p = settings.principals.get(name)
    if p is None:
        raise ConfigError(f"principal {name!r} is not configured under access.principals; known: "
                          f"{sorted(settings.principals)}", field="principal")
    return Principal(name, p.groups, p.domains, "config", p.roles)


def run_as(settings: AccessSettings, name: str | None, domain: str | None) -> Visibility | None:
    """``rag search`` / ``rag ask --as NAME``: the configured principal's visibility after its domain
    check (``Forbidden``); None (the operator sees everything) without ``--as``."""
    if name is None:
        return None
    principal = configured_principal(settings, name)
    principal.check_domain(domain)
    return principal.visibility


def principal_for_key(settings: AccessSettings, given: str) -> Principal | None:
    """The principal whose API key is ``given``; every key is compared in constant time."""
    found: Principal | None = None
    for name, p in settings.principals.items():
        if p.api_key is not None and hmac.compare_digest(given.encode(), p.api_key.get_secret_value().encode()):
            found = Principal(name, p.groups, p.domains, "api_key", p.roles)
    return found


def principal_from_credentials(settings: AccessSettings, api_key: str | None, authorization: str | None, *,
                               bearer_keys: bool = False, key_header: str = "X-API-Key") -> Principal:
    """The principal a request's credentials name (HTTP, the MCP server over HTTP): ``api_key``
    (the ``X-API-Key`` header) first, else ``authorization`` (``Bearer <JWT>``; with
    ``bearer_keys``, as OpenAI and MCP clients send it, ``Bearer <API key>`` too); ``Unauthorized``
    (401) for a missing or wrong one. The credential is never part of a message."""
    if api_key:
        principal = principal_for_key(settings, api_key)
        if principal is None:
            raise Unauthorized(f"{key_header} header is wrong; it names no principal", field=key_header)
        return principal
    if authorization:
        scheme, _, token = authorization.partition(" ")
        token = token.strip()
        if scheme.lower() == "bearer" and token and bearer_keys:
            principal = principal_for_key(settings, token)
            if principal is not None:
                return principal
            if not settings.jwt.enabled:
                raise Unauthorized("Authorization: Bearer names no API key of a principal", field="Authorization")
        if not settings.jwt.enabled or scheme.lower() != "bearer" or not token:
            raise Unauthorized("Authorization must be 'Bearer <token>' and access.jwt.enabled must be true",
                               field="Authorization")
        return principal_for_token(settings, token)
    accepted = f"{key_header} or Authorization: Bearer" if settings.jwt.enabled or bearer_keys else key_header
    raise Unauthorized(f"no credential; this server requires {accepted}", field=key_header)


def principal_for_token(settings: AccessSettings, token: str) -> Principal:
    """Verify a JWT (signature with the one configured algorithm, ``exp`` required, ``aud``,
    ``iss`` if configured) and return its principal; ``Unauthorized`` otherwise. The subject
    must be canonical and may name a configured principal only one marked ``sso``, exactly
    (:func:`token_name`). Groups come from the token; domains from its domains claim, else from
    that ``sso`` principal (none if there is no such principal); roles likewise from its roles
    claim (only known roles count: an SSO's other roles mean nothing here), else from it."""
    import jwt

    cfg = settings.jwt
    try:
        claims = jwt.decode(token, _verification_key(cfg), algorithms=[cfg.algorithm], audience=cfg.audience,
                            issuer=cfg.issuer, leeway=cfg.leeway_seconds,
                            options={"require": ["exp", "aud", cfg.principal_claim]})
    except jwt.ExpiredSignatureError as exc:
        raise Unauthorized("bearer token has expired", field="Authorization") from exc
    except jwt.InvalidAudienceError as exc:
        raise Unauthorized("bearer token is for another audience", field="Authorization") from exc
    except jwt.InvalidTokenError as exc:
        raise Unauthorized(f"bearer token rejected: {type(exc).__name__}", field="Authorization") from exc
    subject = claims.get(cfg.principal_claim)
    if not isinstance(subject, str) or not subject:
        raise Unauthorized(f"bearer token has no string claim {cfg.principal_claim!r}", field="Authorization")
    name = token_name(settings, subject, cfg.principal_claim)
    groups = tuple(g.strip().lower() for g in _strings(claims.get(cfg.groups_claim), cfg.groups_claim))
    configured = settings.principals.get(name)
    if cfg.domains_claim in claims:
        domains = _strings(claims[cfg.domains_claim], cfg.domains_claim)
    else:
        domains = configured.domains if configured is not None else ()
    if cfg.roles_claim in claims:
        roles = tuple(r for r in _strings(claims[cfg.roles_claim], cfg.roles_claim) if r in ROLES)
    else:
        roles = configured.roles if configured is not None else ()
    return Principal(name, groups, domains, "jwt", roles)


def token_name(settings: AccessSettings, subject: str, claim: str = "sub") -> str:
    """The principal a token's subject names (issue 49 M2); ``Unauthorized`` for a subject that is
    not canonical (surrounding spaces, characters an ACL name cannot hold) or that names a
    configured principal it may not be: one not marked ``sso`` (an API-key principal), or an
    ``sso`` one spelled otherwise (``ROOT`` for ``root``). Other subjects compare lowercase, as
    ACL entries are written (SSO subjects are often e-mail addresses in mixed case)."""
    name = subject.lower()
    if subject != subject.strip() or not _valid_name(name):
        raise Unauthorized(f"bearer token claim {claim!r} is not a canonical principal name (lowercase letters, "
                           "digits, '_', '.', '-', '@', '+'; no spaces)", field="Authorization")
    configured = settings.principals.get(name)
    if configured is not None and not configured.sso:
        raise Unauthorized(f"bearer token claim {claim!r} names a configured principal that is not an SSO identity "
                           "(access.principals.<name>.sso is false)", field="Authorization")
    if configured is not None and subject != name:
        raise Unauthorized(f"bearer token claim {claim!r} must spell the configured principal exactly, in lowercase",
                           field="Authorization")
    return name


def _strings(value: Any, claim: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        return (value,)
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return tuple(value)
    raise Unauthorized(f"bearer token claim {claim!r} must be a string or a list of strings", field="Authorization")


_KEYS: dict[str, str] = {}


def _verification_key(cfg: JwtSettings) -> str:
    if cfg.algorithm == "HS256":
        assert cfg.secret is not None  # the settings validator guarantees it
        return cfg.secret.get_secret_value()
    path = str(cfg.public_key_file)
    if path not in _KEYS:
        try:
            _KEYS[path] = Path(path).read_text(encoding="ascii")
        except (OSError, UnicodeDecodeError) as exc:
            raise ConfigError(f"access.jwt.public_key_file {path}: cannot read: {exc}") from exc
    return _KEYS[path]


# --- document ACLs (manifest ``acl``) -------------------------------------------------
def acl_labels(entries: Sequence[str]) -> list[str]:
    """A manifest ``acl`` as stored labels: ``public``, ``user:<name>`` (a bare name is a
    principal), ``group:<name>``. Sorted and unique, so the same ACL always hashes the same.
    ``ManifestError`` for anything else."""
    out: set[str] = set()
    for raw in entries:
        entry = raw.strip() if isinstance(raw, str) else ""
        kind, _, name = entry.partition(":") if ":" in entry else ("user", "", entry)
        if entry == PUBLIC_LABEL:
            out.add(PUBLIC_LABEL)
            continue
        if kind not in ("user", "group") or not _valid_name(name):
            raise ManifestError(f"acl: invalid entry {raw!r}; expected 'public', a principal name, "
                                "'user:<name>' or 'group:<name>' (lowercase letters, digits, '_', '.', '-', '@', '+')")
        out.add(f"{kind}:{name}")
    return sorted(out)


def default_labels(settings: AccessSettings) -> list[str]:
    """What a document without ``acl`` gets at ingest when access control is on."""
    return [PUBLIC_LABEL] if settings.default_acl == "public" else []


#: a user or group name in an ACL entry: lowercase, e-mail addresses allowed (token subjects)
_ACL_NAME = re.compile(r"^[a-z0-9][a-z0-9_.@+-]{0,127}$")


def _valid_name(name: str) -> bool:
    return bool(_ACL_NAME.fullmatch(name))


def strip_acl(metadata: Mapping[str, Any]) -> dict[str, Any]:
    """Metadata as a client sees it: without the ACL (who else may read a document is not its business)."""
    return {k: v for k, v in metadata.items() if k != ACL_FIELD}
