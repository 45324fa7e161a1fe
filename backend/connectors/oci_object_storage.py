"""OCI Object Storage through its native API (the ``oci`` SDK's ``ObjectStorageClient``) as a source.

The objects under ``prefix`` of a loadable type, listed with ``list_objects`` (``fields=name,etag,
size,timeModified,md5``) page by page through ``next_start_with``; the id is the object name, the
token its ETag, the URL its native URL (``<endpoint>/n/<namespace>/b/<bucket>/o/<name>``).

Readers, as the S3 connector takes them from an object tag (OCI objects have no tags and no ACL):
with ``readers_metadata``, an object's user metadata ``opc-meta-<readers_metadata>`` (read with
``head_object``) split on spaces (``group:hr-staff user:dana@corp.example``); else, with
``readers_file``, the first matching rule of that YAML object under the prefix (the folder
connector's ``.rag-readers.yaml`` format, patterns relative to the prefix); else none given (the
declaration's ``readers``, else unknown: admins only, reported). OCI cannot edit an object's
metadata in place: changing it rewrites the object and its ETag, so the item is *changed* (fetched
again; its text is the same, so nothing is embedded). A readers-file edit leaves the ETags alone:
permission-only changes.

Retries are ``retry.call``'s (429 with ``Retry-After``, 5xx, dropped connections): the client is
built with ``NoneRetryStrategy`` and no circuit breaker, so the SDK's own default strategy never
runs under ours. A listing the SDK cannot read (no ``objects`` list, an object without a name or
an ETag) fails the sync as a malformed answer.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Iterator, Mapping
from urllib.parse import quote

from backend.common.errors import ConfigError, SourceItemFailed, SourceUnavailable
from backend.connectors.readers_file import Rules, parse_rules, readers_of
from backend.connectors.retry import Transient, call, retry_after_seconds
from backend.core.connector import LOADABLE, FetchedItem, SourceItem, suffix_for

KIND = "oci_object_storage"
LIST_FIELDS = "name,etag,size,timeModified,md5"
METADATA_PREFIX = "opc-meta-"


def oci_auth(where: str, options: Any, secrets: Mapping[str, str]) -> tuple[dict[str, Any], Any]:
    """``(config, signer)`` for the declaration's ``auth`` (a signer of None: the config's API key).
    ``options`` is an ``OciObjectStorageOptions``; ``secrets`` may hold ``private_key`` (PEM) and
    ``pass_phrase``. Errors start with ``where`` (the connector) and name the option, never a secret's value."""
    import oci

    if options.auth == "config_file":
        path = str(Path(options.config_file).expanduser())
        try:
            config = dict(oci.config.from_file(file_location=path, profile_name=options.config_profile))
        except oci.exceptions.ConfigFileNotFound as exc:
            raise ConfigError(f"{where}: options.config_file: {path} not found", field="options.config_file") from exc
        except oci.exceptions.ProfileNotFound as exc:
            raise ConfigError(f"{where}: options.config_profile: no profile [{options.config_profile}] in {path}",
                              field="options.config_profile") from exc
        except (oci.exceptions.InvalidConfig, oci.exceptions.InvalidKeyFilePath) as exc:
            raise ConfigError(f"{where}: options.config_file: {path} [{options.config_profile}] is no valid OCI "
                              f"config: {exc}", field="options.config_file") from exc
        if options.region:
            config["region"] = options.region
        return config, None
    if options.auth == "api_key":
        if not secrets.get("private_key") and not options.key_file:
            raise ConfigError(f"{where}: auth api_key needs options.key_file (a PEM file) or secrets.private_key "
                              "(an environment variable holding the PEM)", field="options.key_file")
        config = {"user": options.user, "fingerprint": options.fingerprint, "tenancy": options.tenancy,
                  "region": options.region}
        if secrets.get("private_key"):
            config["key_content"] = secrets["private_key"]
        else:
            config["key_file"] = str(Path(options.key_file).expanduser())
        if secrets.get("pass_phrase"):
            config["pass_phrase"] = secrets["pass_phrase"]
        try:
            oci.config.validate_config(config)
        except (oci.exceptions.InvalidConfig, oci.exceptions.InvalidKeyFilePath) as exc:
            raise ConfigError(f"{where}: the API-key fields (options.user, fingerprint, tenancy, region) are "
                              f"invalid: {exc}", field="options") from exc
        return config, None
    try:  # pragma: no cover - needs an OCI instance or function
        if options.auth == "instance_principal":
            signer = oci.auth.signers.InstancePrincipalsSecurityTokenSigner()
        else:
            signer = oci.auth.signers.get_resource_principals_signer()
    except Exception as exc:  # pragma: no cover - the SDK raises plain exceptions when no principal is here
        raise SourceUnavailable(f"{where}: options.auth={options.auth}: no {options.auth.replace('_', ' ')} is "
                                f"available on this host ({type(exc).__name__})") from exc
    region = options.region or getattr(signer, "region", None)  # pragma: no cover
    return ({"region": region} if region else {}), signer  # pragma: no cover


class OciObjectStorageConnector:
    kind = KIND

    def __init__(self, namespace: str, bucket: str, prefix: str = "", *, config: Mapping[str, Any],
                 signer: Any = None, endpoint: str | None = None, readers_metadata: str | None = None,
                 readers_file: str | None = None, attempts: int = 4, max_wait_s: float = 30.0,
                 timeout_s: tuple[float, float] = (10.0, 60.0)) -> None:
        import oci

        self.namespace, self.bucket, self.prefix = namespace, bucket, prefix
        self.readers_metadata = readers_metadata.lower().removeprefix(METADATA_PREFIX) if readers_metadata else None
        self.readers_file = readers_file
        self.attempts, self.max_wait_s = attempts, max_wait_s
        kwargs: dict[str, Any] = {"retry_strategy": oci.retry.NoneRetryStrategy(), "timeout": timeout_s,
                                  "circuit_breaker_strategy": oci.circuit_breaker.NoCircuitBreakerStrategy()}
        if endpoint:
            kwargs["service_endpoint"] = endpoint.rstrip("/")
        if signer is not None:
            kwargs["signer"] = signer
        try:
            self.client: Any = oci.object_storage.ObjectStorageClient(dict(config), **kwargs)
        except (oci.exceptions.InvalidConfig, oci.exceptions.ClientError, ValueError) as exc:
            raise ConfigError(f"{self.where}: cannot build the OCI Object Storage client: {exc}",
                              field="options") from exc
        base = self.client.base_client  # the endpoint resolved as requests go (a region's has a dual-stack template)
        self.endpoint = str(base.get_endpoint() if hasattr(base, "get_endpoint") else base.endpoint).rstrip("/")

    @property
    def where(self) -> str:
        return f"{KIND} oci://{self.namespace}/{self.bucket}/{self.prefix}"

    def _call(self, what: str, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        import oci

        def once() -> Any:
            try:
                return fn(*args, **kwargs)
            except (oci.exceptions.RequestException, oci.exceptions.ConnectTimeout) as exc:
                raise Transient(f"{type(exc).__name__}: {exc}") from exc
            except oci.exceptions.ServiceError as exc:
                if exc.status == 429 or exc.status >= 500:
                    headers = exc.headers or {}
                    raise Transient(f"HTTP {exc.status} {exc.code}",
                                    retry_after_seconds(headers.get("retry-after"))) from exc
                raise

        return call(f"{self.where} {what}", once, attempts=self.attempts, max_wait_s=self.max_wait_s)

    def object_url(self, name: str) -> str:
        """The object's native URL (``/n/<namespace>/b/<bucket>/o/<name>`` on the client's endpoint)."""
        return (f"{self.endpoint}/n/{quote(self.namespace, safe='')}"
                f"/b/{quote(self.bucket, safe='')}/o/{quote(name, safe='')}")

    def list_items(self) -> Iterator[SourceItem]:
        import oci

        rules = self._rules()
        start: str | None = None
        while True:
            kwargs: dict[str, Any] = {"prefix": self.prefix or None, "fields": LIST_FIELDS}
            if start:
                kwargs["start"] = start
            try:
                page = self._call("list", self.client.list_objects, self.namespace, self.bucket, **kwargs)
            except oci.exceptions.ServiceError as exc:
                raise SourceUnavailable(f"{self.where}: HTTP {exc.status} {exc.code}: {exc.message}") from exc
            objects = getattr(page.data, "objects", None)
            if not isinstance(objects, list):
                raise SourceUnavailable(f"{self.where}: a malformed listing (expected a JSON object with an "
                                        f"'objects' list, got {type(page.data).__name__})")
            for obj in objects:
                name, etag = getattr(obj, "name", None), getattr(obj, "etag", None)
                if not isinstance(name, str) or not name or not isinstance(etag, str) or not etag:
                    raise SourceUnavailable(f"{self.where}: a malformed listing (an object without a 'name' or an "
                                            "'etag'; the listing asks for fields=" + LIST_FIELDS + ")")
                if name.endswith("/") or not any(name.lower().endswith(s) for s in LOADABLE):
                    continue
                yield SourceItem(name, etag.strip('"'), title=name.rsplit("/", 1)[-1].rsplit(".", 1)[0],
                                 url=self.object_url(name), readers=self._readers(name, rules))
            start = page.data.next_start_with
            if not start:
                return

    def _rules(self) -> Rules | None:
        """The readers file's rules (None: no readers file declared, or no such object)."""
        import oci

        if not self.readers_file:
            return None
        name = self.prefix + self.readers_file
        try:
            got = self._call("readers file", self.client.get_object, self.namespace, self.bucket, name)
        except oci.exceptions.ServiceError as exc:
            if exc.status == 404:
                return None
            raise SourceUnavailable(f"{self.where}: readers file {name}: HTTP {exc.status} {exc.code}") from exc
        return parse_rules(got.data.content.decode("utf-8"), f"{self.where}: readers file {name}")

    def _readers(self, name: str, rules: Rules | None) -> tuple[str, ...] | None:
        import oci

        if self.readers_metadata is not None:
            try:
                head = self._call("head", self.client.head_object, self.namespace, self.bucket, name)
            except oci.exceptions.ServiceError as exc:
                raise SourceUnavailable(f"{self.where}: head {name}: HTTP {exc.status} {exc.code}") from exc
            value = head.headers.get(METADATA_PREFIX + self.readers_metadata)
            if value is not None:
                return tuple(value.split())
        if rules is not None:
            return readers_of(name.removeprefix(self.prefix), rules)
        return None

    def fetch(self, item: SourceItem) -> FetchedItem:
        import oci

        try:
            got = self._call("get", self.client.get_object, self.namespace, self.bucket, item.item_id)
            body = got.data.content
        except (oci.exceptions.ServiceError, SourceUnavailable) as exc:
            raise SourceItemFailed(f"{self.where}{item.item_id.removeprefix(self.prefix)}: {exc}") from exc
        return FetchedItem(item.item_id, body, suffix_for(str(got.headers.get("content-type") or ""), item.item_id))
