"""Connectors (docs/CONNECTORS.md): where a knowledge base's documents live, declared in YAML.

``ConnectorsSettings`` is the area of ``Settings`` (the declarations file, the deletion guard);
``ConnectorSpec`` is one entry of ``connectors.file``, which ``rag connector add`` writes and a
person may edit. A spec never holds a secret's value: ``secrets`` names environment variables
(``RAG_S3_SECRET``) or OCI vault secrets (``oci-vault:ocid1.vaultsecret...``), and an option
whose name says it is a secret is refused at load, naming the file and the field.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, Field, ValidationError, field_validator, model_validator

from backend.common.config.base import _Model, validate_domain_key
from backend.common.errors import ConfigError

ConnectorKind = Literal["folder", "git", "s3", "oci_object_storage", "web", "sql", "sharepoint", "confluence"]
#: the names a secret option goes by: refused in ``options`` (its value would sit in a file)
_SECRET_NAMES = re.compile(r"(password|passwd|secret|token|api_?key|access_?key|credential)", re.IGNORECASE)
_ENV_NAME = re.compile(r"^[A-Z][A-Z0-9_]{0,127}$")
_VAULT_REF = re.compile(r"^oci-vault:ocid1\.vaultsecret\.[a-z0-9.\-_]+$")
_LABEL = re.compile(r"^((user|group):)?[a-z0-9][a-z0-9_.@+-]{0,127}$")
_CONNECTOR_NAME = re.compile(r"^[a-z0-9][a-z0-9_-]{0,47}$")
#: kinds whose items without readers are unknown to the source (never the declaration's `readers`): where
#: the readers of an item that has no restriction go instead
_OWN_READERS = {"confluence": "options.space_readers"}


class VaultSettings(_Model):
    """How a connector secret given as ``oci-vault:<secret OCID>`` is read (OCI Vault's Secrets
    service, ``GetSecretBundle``, the current version)."""

    auth: Literal["config_file", "instance_principal", "resource_principal"] = Field(
        "config_file", description="How the Secrets service call is signed: the API key of an OCI config file, the "
        "instance principal, or the resource principal.")
    config_file: str = Field("~/.oci/config", description="OCI config file (auth=config_file).")
    config_profile: str = Field("DEFAULT", description="Profile in the OCI config file.")
    endpoint: str | None = Field(None, pattern=r"^https?://", description="The Secrets service endpoint "
                                 "(default: the one of the config's or principal's region, "
                                 "https://secrets.vaults.<region>.oci.oraclecloud.com).")
    timeout_s: float = Field(10.0, gt=0, description="Read timeout of one Secrets service call.")


class ConnectorsSettings(_Model):
    """Connectors that sync a knowledge base from where its documents live (docs/CONNECTORS.md)."""

    file: str = Field("data/connectors.yaml", description="YAML declarations of the connectors (`rag connector "
                      "add` writes it; a person may edit it): kind, knowledge base, options, secrets by environment "
                      "variable name, permission mapping.")
    max_delete_share: float = Field(0.5, ge=0, le=1, description="A sync that would delete more than this share of "
                                    "a knowledge base's synced items (or whose listing is empty) is refused as "
                                    "suspicious unless run with --force; a connector's own `max_delete_share` wins.")
    max_attempts: int = Field(4, ge=1, le=20, description="Attempts of a source call that failed with 429, 5xx or a "
                              "connection error (exponential backoff, Retry-After honoured) before the sync fails.")
    max_wait_s: float = Field(30.0, ge=0, description="Longest wait between two attempts of a source call (seconds).")
    vault: VaultSettings = VaultSettings()


class PermissionMapping(_Model):
    """How a source's readers become the runtime's ACL labels (``public``, ``user:<name>``,
    ``group:<name>``). A reader no entry maps is reported and never widened to public; an item
    none of whose readers maps gets ``default``, else ``unknown`` (admins only)."""

    users: dict[str, str | list[str]] = Field(default_factory=dict, description="Source user -> label(s).")
    groups: dict[str, str | list[str]] = Field(default_factory=dict, description="Source group -> label(s).")
    domains: dict[str, str | list[str]] = Field(default_factory=dict,
                                                description="E-mail domain of a source user -> label(s).")
    users_as_principals: bool = Field(False, description="A source user whose name is a valid principal name "
                                      "(an SSO e-mail subject) becomes `user:<name>` when no entry maps it.")
    everyone: str | list[str] | None = Field(None, description="The source's 'everyone in the tenant'; unmapped "
                                             "when unset.")
    public: str | list[str] | None = Field("public", description="An item the source marks public.")
    default: str | list[str] | None = Field(None, description="Labels of an item none of whose readers maps "
                                            "(unset: `unknown`).")
    unknown: str | list[str] = Field("group:admins", description="Labels of an item whose permissions the source "
                                     "did not give (or none mapped and no default): admins only.")

    @model_validator(mode="after")
    def _labels(self) -> PermissionMapping:
        values: list[tuple[str, str | list[str] | None]] = [
            *((f"users.{k}", v) for k, v in self.users.items()), *((f"groups.{k}", v) for k, v in self.groups.items()),
            *((f"domains.{k}", v) for k, v in self.domains.items()), ("everyone", self.everyone),
            ("public", self.public), ("default", self.default), ("unknown", self.unknown)]
        for where, value in values:
            for label in [] if value is None else [value] if isinstance(value, str) else value:
                if label != "public" and not _LABEL.fullmatch(label):
                    raise ValueError(f"{where}: {label!r} is no ACL label; expected 'public', a principal name, "
                                     "'user:<name>' or 'group:<name>' (lowercase letters, digits, '_', '.', '-', "
                                     "'@', '+')")
        return self


class FolderOptions(_Model):
    path: str = Field(min_length=1, description="The folder (local or mounted).")


class GitOptions(_Model):
    repo: str = Field(min_length=1, description="A local path or a URL `git clone` accepts.")
    ref: str = Field("HEAD", min_length=1, description="Branch, tag or commit whose files are synced.")
    subdir: str = Field("", description="Only files under this folder of the repository.")


class S3Options(_Model):
    bucket: str = Field(min_length=3)
    prefix: str = ""
    endpoint_url: str | None = Field(None, description="An S3-compatible endpoint (OCI Object Storage's "
                                     "`https://<ns>.compat.objectstorage.<region>.oraclecloud.com`, MinIO).")
    region: str = "us-east-1"
    readers_tag: str | None = Field(None, description="Object tag holding the object's readers, space-separated "
                                    "(`rag-readers`); unset: the declaration's `readers`.")


class OciObjectStorageOptions(_Model):
    """OCI Object Storage through its native API (``oci`` SDK). The API key's PEM, when not in
    ``key_file``, comes from the environment: ``secrets: {private_key: RAG_OCI_KEY}`` (and
    ``pass_phrase`` if it is encrypted)."""

    namespace: str = Field(min_length=1, description="The tenancy's Object Storage namespace.")
    bucket: str = Field(min_length=1)
    prefix: str = Field("", description="Only objects whose names start with it.")
    region: str | None = Field(None, description="e.g. `eu-frankfurt-1`; required for `auth: api_key`; else "
                               "the config file's or the principal's region.")
    endpoint: str | None = Field(None, pattern=r"^https?://", description="Overrides the region's endpoint "
                                 "(`https://objectstorage.<region>.oraclecloud.com`).")
    auth: Literal["config_file", "api_key", "instance_principal", "resource_principal"] = Field(
        "config_file", description="`config_file` (config_file + config_profile), `api_key` (user, fingerprint, "
        "tenancy, region, key_file or secrets.private_key), `instance_principal` or `resource_principal`.")
    config_file: str = "~/.oci/config"
    config_profile: str = "DEFAULT"
    user: str | None = Field(None, description="User OCID (auth: api_key).")
    fingerprint: str | None = Field(None, description="The API key's fingerprint (auth: api_key).")
    tenancy: str | None = Field(None, description="Tenancy OCID (auth: api_key).")
    key_file: str | None = Field(None, description="Path of the API key's PEM file (auth: api_key; else "
                                 "secrets.private_key).")
    readers_metadata: str | None = Field(None, description="User metadata key holding the object's readers, "
                                         "space-separated (`rag-readers`: the `opc-meta-rag-readers` header).")
    readers_file: str | None = Field(None, description="Object under the prefix holding readers rules "
                                     "(`.rag-readers.yaml`), for objects without readers metadata.")

    @model_validator(mode="after")
    def _api_key(self) -> OciObjectStorageOptions:
        if self.auth == "api_key":
            missing = [f for f in ("user", "fingerprint", "tenancy", "region") if not getattr(self, f)]
            if missing:
                raise ValueError(f"auth api_key needs {', '.join(missing)} (the API key's user OCID, fingerprint, "
                                 "tenancy OCID and region)")
        return self


class WebOptions(_Model):
    start_url: str = Field(pattern=r"^https?://")
    max_depth: int = Field(2, ge=0, le=20)
    max_pages: int = Field(200, ge=1, le=100_000)
    user_agent: str = "rag-connector"
    include_start: bool = Field(True, description="The start page is a document too (false: a hub whose links "
                                "are followed, such as a sitemap page).")


class SqlOptions(_Model):
    url: str = Field(min_length=1, description="SQLAlchemy URL without a password (give it in secrets.password).")
    query: str = Field(min_length=1, description="SELECT returning one row per document.")
    id_column: str = "id"
    content_column: str = "content"
    change_column: str = Field("updated_at", description="A column that changes whenever the row does.")
    title_column: str | None = None
    readers_column: str | None = Field(None, description="Comma-separated readers of the row (else `readers`).")


class SharePointOptions(_Model):
    """A SharePoint Online document library or a OneDrive, read through Microsoft Graph with an app
    registration's client credentials (its secret in ``secrets.client_secret``)."""

    tenant_id: str = Field(min_length=1, description="The Entra ID (Azure AD) tenant: its id or its domain.")
    client_id: str = Field(min_length=1, description="The app registration's application (client) id (application "
                           "permission `Sites.Read.All` or `Files.Read.All`, admin-consented).")
    drive_id: str | None = Field(None, description="The drive (document library, OneDrive) to sync; unset: "
                                 "`site_id` and `drive_name`.")
    site_id: str | None = Field(None, description="The SharePoint site whose library `drive_name` is synced "
                                "(when `drive_id` is unset).")
    drive_name: str = Field("Documents", min_length=1, description="The library of `site_id` to sync, by name.")
    folder: str = Field("", description="Only files under this folder of the drive (`Policies/HR`); empty: the "
                        "whole drive.")
    graph_url: str = Field("https://graph.microsoft.com/v1.0", pattern=r"^https?://",
                           description="Microsoft Graph's base URL (a national cloud's, or a test server's).")
    authority: str = Field("https://login.microsoftonline.com", pattern=r"^https://",
                           description="The token authority; `/<tenant_id>` is appended (msal needs https).")
    ca_bundle: str | None = Field(None, description="A PEM file of CA certificates trusted for `graph_url` and "
                                 "`authority` (a TLS-inspecting proxy); unset: the default ones.")

    @model_validator(mode="after")
    def _drive(self) -> SharePointOptions:
        if not self.drive_id and not self.site_id:
            raise ValueError("sharepoint: give options.drive_id, or options.site_id (with options.drive_name)")
        return self


class ConfluenceOptions(_Model):
    url: str = Field(pattern=r"^https?://", description="The site's REST base: `https://<site>.atlassian.net/wiki` "
                     "(Cloud), `https://confluence.example.com` or with its context path (Data Center).")
    space: str = Field(pattern=r"^~?[A-Za-z0-9_]{1,255}$", description="The key of the space whose pages are synced.")
    cloud: bool = Field(False, description="Confluence Cloud (`username` is the account e-mail, `secrets.api_token` "
                        "its API token); false: Data Center / Server (`secrets.password`, or `secrets.api_token` "
                        "as a personal access token without `username`).")
    username: str | None = Field(None, min_length=1, description="The account the connector reads as (basic auth).")
    space_readers: list[str] | None = Field(None, description="Readers of a page without read restrictions (who "
                                            "may read the space: `everyone`, `group:confluence-users`); unset: "
                                            "unknown (admins only).")
    page_size: int = Field(50, ge=1, le=500, description="Pages asked for per listing request (`limit`).")


OPTIONS: dict[str, type[_Model]] = {"folder": FolderOptions, "git": GitOptions, "s3": S3Options,
                                    "oci_object_storage": OciObjectStorageOptions, "web": WebOptions,
                                    "sql": SqlOptions, "sharepoint": SharePointOptions, "confluence": ConfluenceOptions}


class ConnectorSpec(_Model):
    """One connector of ``connectors.file``."""

    kind: ConnectorKind
    knowledge_base: str = Field(min_length=1, description="The knowledge base it feeds (one connector a base).")
    options: dict[str, Any] = Field(default_factory=dict)
    secrets: dict[str, str] = Field(default_factory=dict, description="Option -> environment variable name or "
                                    "`oci-vault:<secret ocid>`; never a value.")
    permissions: PermissionMapping = PermissionMapping()
    readers: list[str] | None = Field(None, description="Readers of every item when the source gives none.")
    max_delete_share: float | None = Field(None, ge=0, le=1)
    promote: bool = Field(True, description="Serve a version that passes the gate (false: candidates only).")

    @field_validator("knowledge_base")
    @classmethod
    def _kb(cls, v: str) -> str:
        return validate_domain_key(v)

    @field_validator("secrets")
    @classmethod
    def _secret_refs(cls, v: dict[str, str]) -> dict[str, str]:
        for key, ref in v.items():
            if not (_ENV_NAME.fullmatch(ref) or _VAULT_REF.fullmatch(ref)):
                raise ValueError(f"{key}: expected an environment variable name (RAG_S3_SECRET) or "
                                 "'oci-vault:<secret ocid>', never the secret itself")
        return v

    @model_validator(mode="after")
    def _options(self) -> ConnectorSpec:
        for key in self.options:
            if _SECRET_NAMES.search(key):
                raise ValueError(f"options.{key}: a secret never goes in the file; name its environment variable "
                                 f"under secrets ({key}: RAG_...)")
        OPTIONS[self.kind].model_validate(self.options)
        if self.kind in _OWN_READERS and self.readers is not None:
            raise ValueError(f"readers: a {self.kind} item's readers come from the source, and the declaration's "
                             f"would also open the items whose permissions cannot be read; give them as "
                             f"{_OWN_READERS[self.kind]}")
        return self

    def typed_options(self) -> Any:
        return OPTIONS[self.kind].model_validate(self.options)


class ConnectorsFile(BaseModel):
    connectors: dict[str, ConnectorSpec] = Field(default_factory=dict)


def read_connectors(path: Path) -> dict[str, ConnectorSpec]:
    """The declarations in ``path`` (none when it does not exist); ``ConfigError`` naming the file
    and the field of the first problem."""
    if not path.exists():
        return {}
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{path}:{mark.line + 1}" if mark is not None else str(path)
        raise ConfigError(f"{where}: not valid YAML: {getattr(exc, 'problem', exc)}", field="connectors") from exc
    if not isinstance(data, dict) or set(data) - {"connectors"}:
        raise ConfigError(f"{path}: expected one top-level key 'connectors'", field="connectors")
    for name in (data.get("connectors") or {}):
        if not isinstance(name, str) or not _CONNECTOR_NAME.fullmatch(name):
            raise ConfigError(f"{path}: connectors.{name}: a name is lowercase letters, digits, '-' and '_' "
                              "(at most 48)", field="name")
    try:
        return dict(ConnectorsFile.model_validate(data).connectors)
    except ValidationError as exc:
        first = exc.errors()[0]
        loc = ".".join(str(p) for p in first["loc"] if p not in ("function-after[_options()]",))
        raise ConfigError(f"{path}: {loc}: {first['msg'].removeprefix('Value error, ')}", field=loc,
                          problems=[f"{path}: {'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors()]) \
            from exc


def validate_connector_name(name: str) -> str:
    if not _CONNECTOR_NAME.fullmatch(name):
        raise ConfigError(f"connector name {name!r}: lowercase letters, digits, '-' and '_' (at most 48)",
                          field="name")
    return name
