"""OCI Object Storage's native API synced into a knowledge base: the real ``oci`` SDK
(``ObjectStorageClient``, requests signed with a throwaway RSA key made here) against a local
server answering the documented REST calls it makes: ``GET /n/{ns}/b/{bucket}/o`` (ListObjects:
``prefix``, ``start``, ``fields``; ``{"objects": [...], "nextStartWith": ...}``) and ``GET`` /
``HEAD /n/{ns}/b/{bucket}/o/{name}`` (GetObject, HeadObject: ``ETag``, ``Content-Type``,
``opc-meta-*``). The server refuses an unsigned request (no ``Signature`` authorization header);
it does not verify the signature. Every PUT gets a new ETag, as OCI does (metadata cannot be
edited in place)."""

from __future__ import annotations

import hashlib
import json
import uuid
from pathlib import Path
from typing import Any, Iterator
from urllib.parse import parse_qs, unquote, urlsplit

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from backend.common.config import ConnectorsSettings, ConnectorSpec, read_connectors
from backend.common.errors import ConfigError, SourceItemFailed, SourceUnavailable
from backend.connectors.oci_object_storage import LIST_FIELDS, OciObjectStorageConnector
from backend.connectors.registry import build_connector
from backend.core.connector import SourceItem
from tests.connectors.helpers import Synced
from tests.connectors.scenario import run_scenario
from tests.local_http import LocalHttpServer

NS, BUCKET = "axtenancy", "policies"
KEY_ENV = "RAG_TEST_OCI_KEY"


def _error(status: int, code: str, message: str, **headers: str) -> tuple[int, dict[str, str], bytes]:
    return status, {"Content-Type": "application/json", **headers}, json.dumps({"code": code,
                                                                                 "message": message}).encode()


class ObjectStore(LocalHttpServer):
    """One namespace's buckets in memory: name -> (body, content type, metadata, ETag)."""

    def __init__(self, page_size: int = 1000) -> None:
        super().__init__(url_suffix="")
        self.buckets: dict[str, dict[str, tuple[bytes, str, dict[str, str], str]]] = {BUCKET: {}}
        self.page_size = page_size
        self.requests: list[tuple[str, str, dict[str, list[str]]]] = []  # method, object path, query
        self.throttle: dict[str, int] = {}  # "GET list" / "GET <name>" / "HEAD <name>" -> 429 answers left
        self.malformed: str | None = None  # the raw body of the next listings
        self.key_ids: set[str] = set()  # the keyId of each signed request

    def put(self, name: str, body: bytes, content_type: str = "text/plain", metadata: dict[str, str] | None = None,
            bucket: str = BUCKET) -> None:
        self.buckets[bucket][name] = (body, content_type, dict(metadata or {}), str(uuid.uuid4()))

    def respond_read(self, method: str, path: str, headers: dict[str, str]) -> tuple[int, dict[str, str], bytes]:
        split = urlsplit(path)
        parts = split.path.split("/", 6)  # "", "n", ns, "b", bucket, "o", name
        query = parse_qs(split.query)
        if len(parts) < 6 or parts[1] != "n" or parts[3] != "b" or parts[5] != "o" or unquote(parts[2]) != NS:
            return _error(404, "NamespaceNotFound", f"no route {split.path}")
        authorization = {k.lower(): v for k, v in headers.items()}.get("authorization", "")
        if not authorization.startswith("Signature "):
            return _error(401, "NotAuthenticated", "The required information to complete authentication was "
                          "not provided or was incorrect.")
        objects = self.buckets.get(unquote(parts[4]))
        if objects is None:
            return _error(404, "BucketNotFound", f"Either the bucket named '{unquote(parts[4])}' does not exist in "
                          f"the namespace '{NS}' or you are not authorized to access it")
        name = unquote(parts[6]) if len(parts) == 7 else None
        what = f"{method} {'list' if name is None else name}"
        self.requests.append((method, what, query))
        self.key_ids.add(authorization.split('keyId="', 1)[-1].split('"', 1)[0])
        if self.throttle.get(what, 0) > 0:
            self.throttle[what] -= 1
            return _error(429, "TooManyRequests", "Too many requests for the tenancy", **{"Retry-After": "0"})
        if name is None:
            return self._list(objects, query)
        if name not in objects:
            return _error(404, "ObjectNotFound", f"The object '{name}' was not found in the bucket")
        body, kind, metadata, etag = objects[name]
        answer = {"ETag": etag, "Content-Type": kind, "Content-MD5": hashlib.md5(body).hexdigest(),
                  "last-modified": "Mon, 07 Dec 2026 18:00:00 GMT",
                  **{f"opc-meta-{k}": v for k, v in metadata.items()}}
        return 200, answer, body

    def _list(self, objects: dict[str, tuple[bytes, str, dict[str, str], str]],
              query: dict[str, list[str]]) -> tuple[int, dict[str, str], bytes]:
        if self.malformed is not None:
            return 200, {"Content-Type": "application/json"}, self.malformed.encode()
        prefix, start = query.get("prefix", [""])[0], query.get("start", [""])[0]
        fields = set(query.get("fields", ["name"])[0].split(","))
        names = sorted(n for n in objects if n.startswith(prefix) and n >= start)
        page, rest = names[:self.page_size], names[self.page_size:]
        rows = [{"name": n, "etag": objects[n][3], "size": len(objects[n][0]), "md5": "x",
                 "timeModified": "2026-12-07T18:00:00.000Z"} for n in page]
        listing: dict[str, Any] = {"objects": [{k: v for k, v in r.items() if k == "name" or k in fields}
                                               for r in rows]}
        if rest:
            listing["nextStartWith"] = rest[0]
        return 200, {"Content-Type": "application/json"}, json.dumps(listing).encode()


@pytest.fixture(scope="module")
def api_key() -> dict[str, str]:
    """A throwaway RSA key and the API-key fields the SDK signs with."""
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                            serialization.NoEncryption()).decode()
    der = key.public_key().public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)
    digest = hashlib.md5(der).hexdigest()
    return {"pem": pem, "fingerprint": ":".join(digest[i:i + 2] for i in range(0, 32, 2)),
            "user": "ocid1.user.oc1..aaaaaaaatestuser", "tenancy": "ocid1.tenancy.oc1..aaaaaaaatesttenancy"}


@pytest.fixture
def store() -> Iterator[ObjectStore]:
    with ObjectStore().running() as s:
        yield s


def options(endpoint: str, key: dict[str, str], **extra: Any) -> dict[str, Any]:
    return {"namespace": NS, "bucket": BUCKET, "prefix": "handbook/", "region": "eu-frankfurt-1",
            "endpoint": endpoint, "auth": "api_key", "user": key["user"], "fingerprint": key["fingerprint"],
            "tenancy": key["tenancy"], **extra}


def built(endpoint: str, key: dict[str, str], tmp_path: Path, *, attempts: int = 3,
          **extra: Any) -> OciObjectStorageConnector:
    """The connector as ``rag connector sync`` builds it: from a declaration, the key from the environment."""
    spec = ConnectorSpec.model_validate({"kind": "oci_object_storage", "knowledge_base": "synced",
                                         "options": options(endpoint, key, **extra),
                                         "secrets": {"private_key": KEY_ENV}})
    connector = build_connector("oci-src", spec, ConnectorsSettings(max_attempts=attempts, max_wait_s=0.01),
                                {KEY_ENV: key["pem"]}, tmp_path)
    assert isinstance(connector, OciObjectStorageConnector)
    return connector


class OciSource:
    """The scenario's source: readers in object metadata (``readers_in_content``: a metadata change
    rewrites the object, so its ETag changes) or in a readers file (a permission-only change)."""

    def __init__(self, store: ObjectStore, key: dict[str, str], tmp_path: Path, mode: str) -> None:
        self.store, self.key, self.tmp_path, self.mode = store, key, tmp_path, mode
        self.readers_in_content = mode == "metadata"
        self.rules: dict[str, list[str]] = {}
        store.put("elsewhere/other.md", b"# Not under the prefix\n\nIgnored.\n")
        store.put("handbook/logo.png", b"\x89PNG not a document", "image/png")

    def put(self, name: str, text: str, readers: list[str]) -> None:
        meta = {"rag-readers": " ".join(readers)} if self.mode == "metadata" else {}
        self.store.put(f"handbook/{name}.txt", text.encode(), "text/plain", meta)
        self.rules[f"{name}.txt"] = readers

    def delete(self, name: str) -> None:
        del self.store.buckets[BUCKET][f"handbook/{name}.txt"]
        self.rules.pop(f"{name}.txt")

    def set_readers(self, name: str, readers: list[str]) -> None:
        if self.mode == "metadata":  # OCI edits no metadata in place: the object is written again (copy_object)
            body, kind, meta, _ = self.store.buckets[BUCKET][f"handbook/{name}.txt"]
            self.store.put(f"handbook/{name}.txt", body, kind, {**meta, "rag-readers": " ".join(readers)})
        self.rules[f"{name}.txt"] = readers

    def publish(self) -> None:
        if self.mode == "readers_file":
            self.store.put("handbook/.rag-readers.yaml", json.dumps(self.rules).encode(), "application/yaml")

    def doc_id(self, name: str) -> str:
        return f"handbook/{name}.txt"

    def connector(self) -> OciObjectStorageConnector:
        extra = {"readers_metadata": "rag-readers"} if self.mode == "metadata" else \
            {"readers_file": ".rag-readers.yaml"}
        return built(self.store.url, self.key, self.tmp_path, **extra)

    def broken(self) -> OciObjectStorageConnector:
        return built("http://127.0.0.1:9", self.key, self.tmp_path, attempts=2, readers_metadata="rag-readers")


@pytest.mark.parametrize("mode", ["metadata", "readers_file"])
def test_oci_object_storage_end_to_end(tmp_path: Path, embedder: Any, store: ObjectStore,
                                       api_key: dict[str, str], mode: str) -> None:
    synced = Synced(tmp_path, embedder, "oci_object_storage", options(store.url, api_key))
    run_scenario(synced, OciSource(store, api_key, tmp_path, mode))
    lists = [q for m, what, q in store.requests if what == "GET list"]
    assert lists and all(q["prefix"] == ["handbook/"] and q["fields"] == [LIST_FIELDS] for q in lists)
    assert not any("elsewhere" in what or "logo.png" in what for _, what, _ in store.requests)


def test_paging_throttling_readers_and_urls(tmp_path: Path, store: ObjectStore, api_key: dict[str, str]) -> None:
    store.page_size = 2
    for i in range(5):
        store.put(f"handbook/{i}.md", f"# {i}\n".encode(), "text/markdown", {"rag-readers": f"group:g{i} everyone"})
    store.put("handbook/plain.txt", b"no readers", "text/plain")
    store.throttle = {"GET list": 2, "HEAD handbook/3.md": 1}
    items = list(built(store.url, api_key, tmp_path, readers_metadata="opc-meta-rag-readers").list_items())
    assert [i.item_id for i in items] == [f"handbook/{i}.md" for i in range(5)] + ["handbook/plain.txt"]
    starts = [q.get("start", [""])[0] for m, what, q in store.requests if what == "GET list"]
    assert starts == ["", "", "", "handbook/2.md", "handbook/4.md"]  # two 429s, then three pages by nextStartWith
    assert items[3].readers == ("group:g3", "everyone") and items[5].readers is None  # no metadata: unknown
    assert items[0].token == store.buckets[BUCKET]["handbook/0.md"][3] and items[0].title == "0"
    assert items[0].url == f"{store.url}/n/{NS}/b/{BUCKET}/o/handbook%2F0.md"
    assert [what for _, what, _ in store.requests].count("HEAD handbook/3.md") == 2

    store.throttle = {"GET list": 5}
    with pytest.raises(SourceUnavailable, match=r"oci_object_storage oci://axtenancy/policies/handbook/ list: "
                       r"HTTP 429 TooManyRequests \(after 3 attempts\)"):
        list(built(store.url, api_key, tmp_path).list_items())


def test_fetch_bytes_and_content_type(tmp_path: Path, store: ObjectStore, api_key: dict[str, str]) -> None:
    store.put("handbook/page", b"<html><body><p>Hi</p></body></html>", "text/html; charset=utf-8")
    store.throttle = {"GET handbook/page": 1}
    connector = built(store.url, api_key, tmp_path)
    assert list(connector.list_items()) == []  # "page" has no loadable suffix: not listed
    got = connector.fetch(SourceItem("handbook/page", "e"))
    assert got.content == b"<html><body><p>Hi</p></body></html>" and got.suffix == ".html"  # by its content type
    assert [what for _, what, _ in store.requests].count("GET handbook/page") == 2  # a 429, then the object
    with pytest.raises(SourceItemFailed, match=r"oci://axtenancy/policies/handbook/gone.md: .*ObjectNotFound"):
        connector.fetch(SourceItem("handbook/gone.md", "e"))


def test_a_malformed_answer_and_an_unsigned_request(tmp_path: Path, store: ObjectStore,
                                                    api_key: dict[str, str]) -> None:
    store.put("handbook/a.md", b"# A\n")
    connector = built(store.url, api_key, tmp_path)
    for body in ("<html>proxy error page</html>", '{"items": []}', '{"objects": [{"size": 3}]}'):
        store.malformed = body
        with pytest.raises(SourceUnavailable, match=r"^oci_object_storage oci://axtenancy/policies/handbook/: a "
                           r"malformed listing"):
            list(connector.list_items())
    store.malformed = None
    assert [i.item_id for i in connector.list_items()] == ["handbook/a.md"]
    # every request the SDK made was signed with the declared API key (tenancy/user/fingerprint); a bare one is refused
    assert store.key_ids == {f"{api_key['tenancy']}/{api_key['user']}/{api_key['fingerprint']}"}
    status, _, body = store.respond_read("GET", f"/n/{NS}/b/{BUCKET}/o", {})
    assert status == 401 and json.loads(body)["code"] == "NotAuthenticated"
    with pytest.raises(SourceUnavailable, match=r"oci://axtenancy/absent/handbook/: HTTP 404 BucketNotFound"):
        list(built(store.url, api_key, tmp_path, bucket="absent").list_items())


def test_declaration_errors_name_the_connector_and_the_field(tmp_path: Path, api_key: dict[str, str]) -> None:
    opts = options("http://127.0.0.1:9", api_key)
    with pytest.raises(ValueError, match="auth api_key needs user, fingerprint"):
        ConnectorSpec.model_validate({"kind": "oci_object_storage", "knowledge_base": "synced",
                                      "options": {**opts, "user": None, "fingerprint": None}})
    spec = ConnectorSpec.model_validate({"kind": "oci_object_storage", "knowledge_base": "synced", "options": opts})
    with pytest.raises(ConfigError, match=r"oci_object_storage connector of knowledge base 'synced': auth api_key "
                       r"needs options.key_file .* or secrets.private_key"):
        build_connector("oci-src", spec, ConnectorsSettings(), {}, tmp_path)
    bad = ConnectorSpec.model_validate({"kind": "oci_object_storage", "knowledge_base": "synced",
                                        "options": {**opts, "fingerprint": "not-a-fingerprint"},
                                        "secrets": {"private_key": KEY_ENV}})
    with pytest.raises(ConfigError, match="the API-key fields .* are invalid") as caught:
        build_connector("oci-src", bad, ConnectorsSettings(), {KEY_ENV: api_key["pem"]}, tmp_path)
    assert "PRIVATE KEY" not in str(caught.value) and api_key["pem"][40:80] not in str(caught.value)
    missing = ConnectorSpec.model_validate({"kind": "oci_object_storage", "knowledge_base": "synced",
                                            "options": {**opts, "auth": "config_file",
                                                        "config_file": str(tmp_path / "none")}})
    with pytest.raises(ConfigError, match=r"options.config_file: .*none not found"):
        build_connector("oci-src", missing, ConnectorsSettings(), {}, tmp_path)
    regional = ConnectorSpec.model_validate({"kind": "oci_object_storage", "knowledge_base": "synced",
                                             "options": {**opts, "endpoint": None},
                                             "secrets": {"private_key": KEY_ENV}})
    connector = build_connector("oci-src", regional, ConnectorsSettings(), {KEY_ENV: api_key["pem"]}, tmp_path)
    assert isinstance(connector, OciObjectStorageConnector)  # no endpoint: the region's, as the SDK resolves it
    assert connector.object_url("handbook/a b.md") == \
        f"https://objectstorage.eu-frankfurt-1.oraclecloud.com/n/{NS}/b/{BUCKET}/o/handbook%2Fa%20b.md"


def test_the_documented_declaration_loads(tmp_path: Path) -> None:
    """docs/CONNECTORS.md's copy-paste example is a valid declaration (kept true by this test)."""
    doc = (Path(__file__).resolve().parents[2] / "docs" / "CONNECTORS.md").read_text(encoding="utf-8")
    block = next(b.split("\n", 1)[1] for b in doc.split("```yaml")[1:] if "kind: oci_object_storage" in b)
    (tmp_path / "connectors.yaml").write_text(block.split("```", 1)[0], encoding="utf-8")
    spec = read_connectors(tmp_path / "connectors.yaml")["policies-oci"]
    o = spec.typed_options()
    assert (o.namespace, o.bucket, o.prefix, o.auth, o.readers_metadata, o.readers_file) == \
        ("axabcdefghij", "policies", "published/", "api_key", "rag-readers", ".rag-readers.yaml")
    assert spec.secrets == {"private_key": "RAG_OCI_OS_KEY"}
