"""SharePoint Online / OneDrive synced into a knowledge base: the connector's real clients (httpx for
Microsoft Graph, msal for the token) against a local TLS server answering Graph's documented
endpoints (``/drives/{id}/root/delta`` paged by ``@odata.nextLink``, ``/items/{id}/permissions``,
``/items/{id}/content`` redirecting to the download, ``/sites/{id}/drives``) and the identity
platform's (OpenID discovery, the client-credentials token)."""

from __future__ import annotations

import datetime as dt
import ipaddress
import json
import ssl
from pathlib import Path
from typing import Any, Iterator
from urllib.parse import parse_qs, urlsplit

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from backend.common.config import ConnectorsSettings, ConnectorSpec
from backend.common.errors import ConfigError, SourceUnavailable
from backend.connectors.registry import build_connector
from backend.connectors.sharepoint import SharePointConnector
from tests.connectors.helpers import Synced
from tests.connectors.scenario import run_scenario
from tests.local_http import LocalHttpServer

TENANT, CLIENT, SECRET, DRIVE, SITE = "contoso-tenant", "app-123", "s3cret-value", "b!drive-1", "contoso.example,site-1"


def make_certificate(folder: Path) -> tuple[Path, Path]:
    """A self-signed certificate for 127.0.0.1 (msal takes only an https authority)."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = dt.datetime.now(dt.timezone.utc)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(now - dt.timedelta(minutes=5))
            .not_valid_after(now + dt.timedelta(days=1))
            .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), False)
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .sign(key, hashes.SHA256()))
    cert_file, key_file = folder / "graph.pem", folder / "graph.key"
    cert_file.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    return cert_file, key_file


class Graph(LocalHttpServer):
    """One drive: ``items`` id -> Graph driveItem fields (plus ``_content``, ``_type``, ``_perms``),
    a root and folders; the delta listing is ``page_size`` items a page."""

    def __init__(self, cert: Path, key: Path) -> None:
        super().__init__(url_suffix="")
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(cert, key)
        self.server.socket = context.wrap_socket(self.server.socket, server_side=True)
        self.url = self.url.replace("http://", "https://")
        self.page_size = 2
        self.items: dict[str, dict[str, Any]] = {}
        self.throttle: dict[str, int] = {}  # path prefix -> 429 answers left
        self.malformed: dict[str, str] = {}  # path prefix -> raw body answered instead
        self.refused: set[str] = set()  # item ids whose permissions answer 403
        self.hits: list[str] = []
        self.tokens_issued = 0
        self.unauthorized = 0
        self.folder("root", None, "root")
        self.folder("f-handbook", "root", "Handbook")
        self.folder("f-other", "root", "Other")

    # -- the drive, as a test changes it ------------------------------------------------------------
    def folder(self, item_id: str, parent: str | None, name: str) -> None:
        item: dict[str, Any] = {"id": item_id, "name": name, "folder": {"childCount": 0}, "eTag": f'"{item_id},1"',
                                "cTag": f'"c:{item_id},1"', "webUrl": f"https://contoso.sharepoint.com/{name}"}
        if parent is None:
            item["root"] = {}
        else:
            item["parentReference"] = {"driveId": DRIVE, "driveType": "documentLibrary", "id": parent}
        self.items[item_id] = item

    def file(self, item_id: str, parent: str, name: str, content: bytes, readers: list[str],
             content_type: str = "text/plain") -> None:
        old = self.items.get(item_id)
        version = int(old["_version"]) + 1 if old else 1
        self.items[item_id] = {
            "id": item_id, "name": name, "file": {"mimeType": content_type}, "size": len(content),
            "parentReference": {"driveId": DRIVE, "driveType": "documentLibrary", "id": parent},
            "webUrl": f"https://contoso.sharepoint.com/sites/hr/Shared%20Documents/{name}",
            "cTag": f'"c:{{{item_id}}},{version}"', "eTag": f'"{{{item_id}}},{version}"', "_version": version,
            "_content": content, "_type": content_type, "_perms": permissions(readers)}

    def set_permissions(self, item_id: str, readers: list[str]) -> None:
        item = self.items[item_id]
        item["_perms"] = permissions(readers)
        item["eTag"] = f'"{{{item_id}}},{item["_version"]}.{len(self.hits)}"'  # metadata changed, content (cTag) not

    def remove(self, item_id: str) -> None:
        self.items[item_id] = {**self.items[item_id], "deleted": {"state": "deleted"}}  # delta still lists it

    # -- the answers -------------------------------------------------------------------------------
    def respond(self, path: str, headers: dict[str, str], body: bytes) -> tuple[int, str, bytes]:
        if path == f"/{TENANT}/oauth2/v2.0/token":
            form = {k: v[0] for k, v in parse_qs(body.decode()).items()}
            if form.get("grant_type") != "client_credentials" or form.get("client_id") != CLIENT or \
                    form.get("client_secret") != SECRET:
                return 401, "application/json", json.dumps(
                    {"error": "invalid_client", "error_description": "AADSTS7000215: Invalid client secret."}).encode()
            self.tokens_issued += 1
            return 200, "application/json", json.dumps({"token_type": "Bearer", "expires_in": 3599,
                                                        "access_token": f"token-{self.tokens_issued}"}).encode()
        return 404, "application/json", b'{"error": "not found"}'

    def respond_read(self, method: str, path: str, headers: dict[str, str]) -> tuple[int, dict[str, str], bytes]:
        self.hits.append(path)
        for prefix, raw in self.malformed.items():
            if path.startswith(prefix):
                return 200, {"Content-Type": "application/json"}, raw.encode()
        if path == f"/{TENANT}/v2.0/.well-known/openid-configuration":
            return self.json(200, {"issuer": f"{self.url}/{TENANT}/v2.0",
                                   "authorization_endpoint": f"{self.url}/{TENANT}/oauth2/v2.0/authorize",
                                   "token_endpoint": f"{self.url}/{TENANT}/oauth2/v2.0/token"})
        for prefix, left in self.throttle.items():
            if path.startswith(prefix) and left > 0:
                self.throttle[prefix] -= 1
                return 429, {"Retry-After": "0"}, b'{"error": {"code": "TooManyRequests"}}'
        if path.startswith("/download/"):  # the pre-authenticated download URL: no token needed
            item = self.items[path.removeprefix("/download/")]
            return 200, {"Content-Type": item["_type"]}, item["_content"]
        if not (headers.get("Authorization") or "").startswith("Bearer token-"):
            self.unauthorized += 1
            return self.json(401, {"error": {"code": "InvalidAuthenticationToken", "message": "no token"}})
        parts = urlsplit(path)
        route = parts.path.removeprefix("/v1.0")
        if route == f"/sites/{SITE}/drives":
            return self.json(200, {"value": [{"id": "b!other", "name": "Site Assets"}, {"id": DRIVE, "name": "Documents"}]})
        if route == f"/drives/{DRIVE}/root/delta":
            start = int(parse_qs(parts.query).get("skip", ["0"])[0])
            listed = [{k: v for k, v in i.items() if not k.startswith("_")} for i in self.items.values()]
            page: dict[str, Any] = {"value": listed[start:start + self.page_size]}
            if start + self.page_size < len(listed):
                page["@odata.nextLink"] = f"{self.url}/v1.0/drives/{DRIVE}/root/delta?skip={start + self.page_size}"
            else:
                page["@odata.deltaLink"] = f"{self.url}/v1.0/drives/{DRIVE}/root/delta?token=next-{len(self.hits)}"
            return self.json(200, page)
        prefix = f"/drives/{DRIVE}/items/"
        if route.startswith(prefix):
            item_id, _, what = route.removeprefix(prefix).partition("/")
            item = self.items.get(item_id)
            if item is None or "deleted" in item:
                return self.json(404, {"error": {"code": "itemNotFound", "message": "The resource could not be found."}})
            if what == "permissions":
                if item_id in self.refused:
                    return self.json(403, {"error": {"code": "accessDenied", "message": "Access denied"}})
                return self.json(200, {"value": item["_perms"]})
            if what == "content":
                return 302, {"Location": f"{self.url}/download/{item_id}"}, b""
        return self.json(404, {"error": {"code": "itemNotFound", "message": route}})

    @staticmethod
    def json(status: int, payload: Any) -> tuple[int, dict[str, str], bytes]:
        return status, {"Content-Type": "application/json"}, json.dumps(payload).encode()


def permissions(readers: list[str]) -> list[dict[str, Any]]:
    """The scenario's readers as Graph ``permission`` resources (as a SharePoint library answers them)."""
    out: list[dict[str, Any]] = []
    for i, reader in enumerate(readers):
        perm: dict[str, Any] = {"id": f"p{i}", "roles": ["read"]}
        kind, _, name = reader.partition(":")
        if reader == "everyone":
            perm["link"] = {"scope": "organization", "type": "view", "webUrl": "https://contoso.sharepoint.com/:t:/x"}
        elif reader == "public":
            perm["link"] = {"scope": "anonymous", "type": "view", "webUrl": "https://contoso.sharepoint.com/:t:/y"}
        elif kind == "group":
            perm["grantedToV2"] = {"group": {"id": f"g-{name}", "displayName": name, "email": f"{name}@corp.example"},
                                   "siteGroup": {"id": "7", "displayName": f"{name} (site)"}}
        elif kind == "user":
            perm["grantedToV2"] = {"user": {"id": f"u-{name}", "displayName": name, "email": name},
                                   "siteUser": {"id": "9", "loginName": f"i:0#.f|membership|{name}"}}
        out.append(perm)
    return out


@pytest.fixture(scope="module")
def certificate(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    return make_certificate(tmp_path_factory.mktemp("tls"))


@pytest.fixture
def graph(certificate: tuple[Path, Path]) -> Iterator[Graph]:
    with Graph(*certificate).running() as server:
        yield server


def options(graph: Graph, cert: Path, **extra: Any) -> dict[str, Any]:
    return {"tenant_id": TENANT, "client_id": CLIENT, "drive_id": DRIVE, "folder": "Handbook",
            "graph_url": f"{graph.url}/v1.0", "authority": graph.url, "ca_bundle": str(cert), **extra}


def connector(graph: Graph, cert: Path, **kw: Any) -> SharePointConnector:
    o = {**options(graph, cert), **kw}
    return SharePointConnector(o.pop("tenant_id"), o.pop("client_id"), o.pop("secret", SECRET),
                               attempts=o.pop("attempts", 3), max_wait_s=0.01, **o)


class SharePointSource:
    def __init__(self, graph: Graph, synced: Synced, cert: Path, tmp_path: Path) -> None:
        self.graph, self.synced, self.cert, self.tmp_path = graph, synced, cert, tmp_path
        graph.file("x-outside", "f-other", "outside.txt", b"Not under the Handbook folder.\n", ["public"])

    def put(self, name: str, text: str, readers: list[str]) -> None:
        self.graph.file(self.doc_id(name), "f-handbook", f"{name}.txt", text.encode(), readers)

    def delete(self, name: str) -> None:
        self.graph.remove(self.doc_id(name))

    def set_readers(self, name: str, readers: list[str]) -> None:
        self.graph.set_permissions(self.doc_id(name), readers)

    def publish(self) -> None:
        return None

    def doc_id(self, name: str) -> str:
        return f"01HANDBOOK{name.upper()}"

    def connector(self) -> Any:  # through the registry, its secret from the environment
        return build_connector("src", self.synced.spec, ConnectorsSettings(max_attempts=3, max_wait_s=0.01),
                               {"RAG_SP_SECRET": SECRET}, self.tmp_path / "cache")

    def broken(self) -> SharePointConnector:
        dead = "https://127.0.0.1:9"
        return SharePointConnector(TENANT, CLIENT, SECRET, drive_id=DRIVE, graph_url=f"{dead}/v1.0", authority=dead,
                                   ca_bundle=str(self.cert), attempts=2, max_wait_s=0.01)


def test_sharepoint_end_to_end(tmp_path: Path, embedder: Any, graph: Graph, certificate: tuple[Path, Path]) -> None:
    cert = certificate[0]
    synced = Synced(tmp_path, embedder, "sharepoint", options(graph, cert), secrets={"client_secret": "RAG_SP_SECRET"})
    run_scenario(synced, SharePointSource(graph, synced, cert, tmp_path))
    delta = [h for h in graph.hits if "/root/delta" in h]
    assert any("skip=" in h for h in delta)  # the listing followed @odata.nextLink pages
    assert graph.tokens_issued >= 1 and graph.unauthorized == 0
    assert "01HANDBOOKBIKES" not in synced.docs() and "x-outside" not in synced.docs()


def test_paging_throttling_deletions_and_permissions(graph: Graph, certificate: tuple[Path, Path]) -> None:
    cert = certificate[0]
    graph.page_size = 3
    graph.file("a", "f-handbook", "a.md", b"# A\n", ["user:Dana@Corp.example", "group:hr-staff"], "text/markdown")
    graph.file("b", "f-handbook", "b.txt", b"B\n", ["everyone"])
    graph.file("c", "f-handbook", "c.txt", b"C\n", ["public"])
    graph.file("d", "f-handbook", "d.txt", b"D\n", [])
    graph.file("e", "f-handbook", "e.txt", b"E\n", ["group:hr-staff"])
    graph.file("img", "f-handbook", "photo.png", b"\x89PNG", ["public"], "image/png")  # not loadable
    graph.file("out", "f-other", "out.txt", b"O\n", ["public"])  # outside the folder
    graph.folder("f-sub", "f-handbook", "Sub")
    graph.file("s", "f-sub", "deep.docx", b"PK", ["group:hr-staff"], "application/octet-stream")
    graph.file("l", "f-handbook", "link.txt", b"L\n", [])
    graph.items["l"]["_perms"] = [{"id": "p", "roles": ["read"], "link": {"scope": "users", "type": "view"},
                                   "grantedToIdentitiesV2": [{"user": {"id": "u1", "email": "lee@corp.example"}}]}]
    graph.remove("e")
    graph.refused = {"d"}
    graph.throttle = {"/v1.0/drives/b!drive-1/root/delta?skip=3": 2}

    sp = connector(graph, cert)
    items = {i.item_id: i for i in sp.list_items()}
    assert set(items) == {"a", "b", "c", "d", "s", "l"}  # no deleted e, no png, nothing outside Handbook, no folder
    assert graph.hits.count("/v1.0/drives/b!drive-1/root/delta?skip=3") == 3  # two 429s with Retry-After, then the page
    pages = -(-len(graph.items) // graph.page_size)
    assert sum("/root/delta" in h for h in graph.hits) == pages + 2  # every nextLink page, once each (+ the 429s)
    assert sp.delta_link and "token=" in sp.delta_link
    assert items["a"].readers == ("user:dana@corp.example", "group:hr-staff")
    assert items["b"].readers == ("everyone",) and items["c"].readers == ("public",)
    assert items["d"].readers is None  # Graph refused: unknown permissions (admins only)
    assert items["l"].readers == ("user:lee@corp.example",)
    assert items["a"].title == "a.md" and items["a"].url.endswith("/a.md") and items["a"].token == '"c:{a},1"'
    fetched = sp.fetch(items["a"])
    assert fetched.content == b"# A\n" and fetched.suffix == ".md"  # through the 302 to the download URL
    assert sp.fetch(items["s"]).suffix == ".docx"

    before = items["b"].token
    graph.set_permissions("b", ["group:hr-staff"])
    again = {i.item_id: i for i in connector(graph, cert, folder="Handbook/").list_items()}
    assert again["b"].token == before and again["b"].readers == ("group:hr-staff",)  # a permission-only change
    assert set(again) == set(items)


def test_a_site_library_by_name_and_the_options(graph: Graph, certificate: tuple[Path, Path]) -> None:
    cert = certificate[0]
    graph.file("a", "f-handbook", "a.txt", b"A\n", ["everyone"])
    sp = connector(graph, cert, drive_id=None, site_id=SITE, drive_name="Documents", folder="")
    assert [i.item_id for i in sp.list_items()] == ["a"] and sp.drive_id == DRIVE
    with pytest.raises(SourceUnavailable, match=r"sharepoint connector .*no drive named 'Docs'.*Site Assets"):
        list(connector(graph, cert, drive_id=None, site_id=SITE, drive_name="Docs").list_items())
    with pytest.raises(ValueError, match="sharepoint: give options.drive_id, or options.site_id"):
        ConnectorSpec.model_validate({"kind": "sharepoint", "knowledge_base": "kb",
                                      "options": {"tenant_id": TENANT, "client_id": CLIENT}})
    spec = ConnectorSpec.model_validate({"kind": "sharepoint", "knowledge_base": "kb", "options": options(graph, cert)})
    with pytest.raises(ConfigError, match="secrets.client_secret"):
        build_connector("sp", spec, ConnectorsSettings(), {}, Path("."))


def test_malformed_answers_and_a_wrong_secret_fail_naming_the_connector(graph: Graph,
                                                                        certificate: tuple[Path, Path]) -> None:
    cert = certificate[0]
    graph.file("a", "f-handbook", "a.txt", b"A\n", ["everyone"])
    graph.malformed = {"/v1.0/drives/b!drive-1/root/delta": "<html>proxy error</html>"}
    with pytest.raises(SourceUnavailable, match=r"sharepoint connector \(drive b!drive-1\): delta listing \(page 1\): "
                                                r"the answer is not JSON"):
        list(connector(graph, cert).list_items())
    graph.malformed = {"/v1.0/drives/b!drive-1/root/delta": '{"items": []}'}
    with pytest.raises(SourceUnavailable, match=r"sharepoint connector .*malformed answer \(expected a JSON object "
                                                r"with a 'value' list"):
        list(connector(graph, cert).list_items())
    graph.malformed = {"/v1.0/drives/b!drive-1/root/delta": '{"value": []}'}
    with pytest.raises(SourceUnavailable, match=r"neither @odata.nextLink nor @odata.deltaLink"):
        list(connector(graph, cert).list_items())
    graph.malformed = {"/v1.0/drives/b!drive-1/root/delta": '{"value": [], "@odata.nextLink": "https://evil.example/x"}'}
    with pytest.raises(SourceUnavailable, match=r"@odata.nextLink 'https://evil.example/x' is not under"):
        list(connector(graph, cert).list_items())
    graph.malformed = {f"/{TENANT}/v2.0/.well-known/openid-configuration": "<html>sign in</html>"}
    with pytest.raises(SourceUnavailable, match=r"sharepoint connector .*token from .*OpenID discovery answer is not"):
        list(connector(graph, cert).list_items())
    graph.malformed = {}
    with pytest.raises(SourceUnavailable, match=r"sharepoint connector .*no token .*invalid_client: AADSTS7000215: "
                                                r"Invalid client secret\.$") as caught:
        list(connector(graph, cert, secret="wrong").list_items())
    assert "wrong" not in str(caught.value)  # the secret is never in a message
    graph.throttle = {"/v1.0/drives/": 5}
    with pytest.raises(SourceUnavailable, match=r"sharepoint connector .*delta listing \(page 1\): HTTP 429 "
                                                r"\(after 3 attempts\)"):
        list(connector(graph, cert).list_items())


def test_unknown_and_unmapped_permissions_are_reported_never_widened(tmp_path: Path, embedder: Any, graph: Graph,
                                                                    certificate: tuple[Path, Path]) -> None:
    from tests.connectors.scenario import CANTEEN, LEAVE, VPN

    cert = certificate[0]
    graph.file("leave", "f-handbook", "leave.txt", LEAVE.encode(), ["group:board-members"])  # no mapping names it
    graph.file("vpn", "f-handbook", "vpn.txt", VPN.encode(), ["everyone", "user:zed@other.example"])
    graph.file("canteen", "f-handbook", "canteen.txt", CANTEEN.encode(), ["public"])
    graph.refused = {"canteen"}  # Graph will not give its permissions
    synced = Synced(tmp_path, embedder, "sharepoint", options(graph, cert))
    report = synced.sync(connector(graph, cert))
    assert report.status == "ok" and report.counts["new"] == 3, report
    assert report.unmapped_readers == {"group:board-members": 1, "user:zed@other.example": 1}
    assert sorted(report.unknown_permissions) == ["canteen", "leave"]
    assert synced.acl("leave") == ["group:admins"] and synced.acl("canteen") == ["group:admins"]
    assert synced.acl("vpn") == ["group:staff"]
    staff = synced.top("staff canteen lunch annual leave VPN", who="frank", groups=("staff",), k=10)
    assert "canteen" not in staff and "leave" not in staff and "vpn" in staff
