"""Connector kind -> adapter: the one place a declaration (``ConnectorSpec``) becomes a
``Connector``, with its secrets resolved from the environment (``backend/runtime.py`` calls it).
Each adapter imports its client library itself, so a missing extra fails naming it."""

from __future__ import annotations

from pathlib import Path
from typing import Callable, Mapping

from backend.common.config import ConnectorsSettings, ConnectorSpec
from backend.common.errors import ConfigError
from backend.connectors.secrets import resolve_secrets
from backend.core.connector import Connector

Factory = Callable[[ConnectorSpec, dict[str, str], ConnectorsSettings, Path], Connector]


def _folder(spec: ConnectorSpec, secrets: dict[str, str], cfg: ConnectorsSettings, cache: Path) -> Connector:
    from backend.connectors.folder import FolderConnector

    return FolderConnector(spec.typed_options().path)


def _git(spec: ConnectorSpec, secrets: dict[str, str], cfg: ConnectorsSettings, cache: Path) -> Connector:
    from backend.connectors.git_repo import GitConnector

    o = spec.typed_options()
    return GitConnector(o.repo, o.ref, subdir=o.subdir, cache_dir=cache)


def _s3(spec: ConnectorSpec, secrets: dict[str, str], cfg: ConnectorsSettings, cache: Path) -> Connector:
    from backend.connectors.s3 import S3Connector

    o = spec.typed_options()
    return S3Connector(o.bucket, o.prefix, endpoint_url=o.endpoint_url, region=o.region,
                       access_key_id=secrets.get("access_key_id"), secret_access_key=secrets.get("secret_access_key"),
                       readers_tag=o.readers_tag, attempts=cfg.max_attempts, max_wait_s=cfg.max_wait_s)


def _oci_os(spec: ConnectorSpec, secrets: dict[str, str], cfg: ConnectorsSettings, cache: Path) -> Connector:
    from backend.connectors.oci_object_storage import OciObjectStorageConnector, oci_auth

    o = spec.typed_options()
    config, signer = oci_auth(f"{spec.kind} connector of knowledge base {spec.knowledge_base!r}", o, secrets)
    return OciObjectStorageConnector(o.namespace, o.bucket, o.prefix, config=config, signer=signer,
                                     endpoint=o.endpoint, readers_metadata=o.readers_metadata,
                                     readers_file=o.readers_file, attempts=cfg.max_attempts, max_wait_s=cfg.max_wait_s)


def _web(spec: ConnectorSpec, secrets: dict[str, str], cfg: ConnectorsSettings, cache: Path) -> Connector:
    from backend.connectors.web import WebConnector

    o = spec.typed_options()
    return WebConnector(o.start_url, max_depth=o.max_depth, max_pages=o.max_pages, user_agent=o.user_agent, include_start=o.include_start,
                        attempts=cfg.max_attempts, max_wait_s=cfg.max_wait_s)


def _sql(spec: ConnectorSpec, secrets: dict[str, str], cfg: ConnectorsSettings, cache: Path) -> Connector:
    from backend.connectors.sql_table import SqlConnector

    o = spec.typed_options()
    return SqlConnector(o.url, o.query, id_column=o.id_column, content_column=o.content_column,
                        change_column=o.change_column, title_column=o.title_column, readers_column=o.readers_column,
                        password=secrets.get("password"))


def _sharepoint(spec: ConnectorSpec, secrets: dict[str, str], cfg: ConnectorsSettings, cache: Path) -> Connector:
    from backend.connectors.sharepoint import SharePointConnector

    o = spec.typed_options()
    if not secrets.get("client_secret"):
        raise ConfigError("sharepoint connector: secrets.client_secret must name the environment variable holding the "
                          "app registration's client secret (client_secret: RAG_SP_SECRET)", field="secrets.client_secret")
    return SharePointConnector(o.tenant_id, o.client_id, secrets["client_secret"], drive_id=o.drive_id,
                               site_id=o.site_id, drive_name=o.drive_name, folder=o.folder, graph_url=o.graph_url,
                               authority=o.authority, ca_bundle=o.ca_bundle, attempts=cfg.max_attempts,
                               max_wait_s=cfg.max_wait_s)


def _confluence(spec: ConnectorSpec, secrets: dict[str, str], cfg: ConnectorsSettings, cache: Path) -> Connector:
    from backend.connectors.confluence import ConfluenceConnector

    o = spec.typed_options()
    return ConfluenceConnector(o.url, o.space, cloud=o.cloud, username=o.username, password=secrets.get("password"),
                               api_token=secrets.get("api_token"), space_readers=o.space_readers,
                               page_size=o.page_size, attempts=cfg.max_attempts, max_wait_s=cfg.max_wait_s)


CONNECTORS: dict[str, Factory] = {"folder": _folder, "git": _git, "s3": _s3, "oci_object_storage": _oci_os,
                                  "web": _web, "sql": _sql, "sharepoint": _sharepoint, "confluence": _confluence}
#: the extra each kind's client library comes in (``pip install 'oracle-rag-runtime[connectors-s3]'``)
EXTRAS = {"s3": "connectors-s3", "oci_object_storage": "connectors-oci", "web": "connectors-web",
          "sql": "connectors-sql", "sharepoint": "connectors-sharepoint", "confluence": "connectors-confluence"}


def build_connector(name: str, spec: ConnectorSpec, settings: ConnectorsSettings, env: Mapping[str, str],
                    cache_dir: Path) -> Connector:
    """``cache_dir``: where a connector keeps what it needs between syncs (a bare clone)."""
    secrets = resolve_secrets(name, spec.secrets, env, settings.vault)
    try:
        return CONNECTORS[spec.kind](spec, secrets, settings, cache_dir)
    except ImportError as exc:
        raise ConfigError(f"connector {name!r} ({spec.kind}) needs the `{EXTRAS.get(spec.kind, spec.kind)}` extra: "
                          f"pip install 'oracle-rag-runtime[{EXTRAS.get(spec.kind, spec.kind)}]' ({exc.name} is "
                          "missing)", field="kind") from exc
