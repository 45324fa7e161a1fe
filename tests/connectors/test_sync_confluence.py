"""A Confluence space synced into a knowledge base: the real ``atlassian-python-api`` clients
(``ConfluenceCloud`` under ``/wiki``, ``ConfluenceServer`` at the root) against a local server that
answers the documented v1 REST content API (``GET /rest/api/content`` with ``spaceKey``, ``type``,
``start``, ``limit`` and ``expand``; ``GET /rest/api/content/<id>?expand=body.storage``): paging by
``start``/``size``/``_links.next``, view restrictions (users, groups) and their ancestors', 429 with
``Retry-After``, malformed answers, basic and bearer auth."""

from __future__ import annotations

import base64
import html
import json
import shlex
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator
from urllib.parse import parse_qs, urlsplit

import pytest
import yaml
from click.testing import CliRunner

from backend.cli.main import cli
from backend.common.config import ConnectorSpec, ConnectorsSettings, read_connectors
from backend.common.errors import ConfigError, SourceItemFailed, SourceUnavailable
from backend.connectors.confluence import ConfluenceConnector, effective_readers
from backend.connectors.registry import build_connector
from tests.connectors.helpers import Synced
from tests.connectors.scenario import run_scenario
from tests.local_http import LocalHttpServer


@dataclass
class Page:
    title: str
    storage: str
    version: int = 1
    parent: str | None = None
    users: list[dict[str, str]] = field(default_factory=list)
    groups: list[str] = field(default_factory=list)


class ConfluenceServer(LocalHttpServer):
    """Space ``HR`` of a Confluence site under ``context`` (``/wiki`` for Cloud, ``""`` for Data
    Center). ``max_limit`` caps each listing page as a real site caps ``limit``."""

    def __init__(self, context: str = "", max_limit: int = 2) -> None:
        super().__init__(url_suffix=context)
        self.context, self.max_limit = context, max_limit
        self.pages: dict[str, Page] = {}
        self.next_id = 1001
        self.throttle = 0  # 429 answers left on the listing
        self.retry_after = "0"
        self.listing_override: str | None = None  # a raw body answered instead of the listing
        self.hits: list[tuple[str, dict[str, list[str]]]] = []
        self.auth: list[str | None] = []
        base, owner = self.server.RequestHandlerClass, self

        class Handler(base):  # type: ignore[misc, valid-type]
            def do_GET(self) -> None:  # noqa: N802 - http.server's naming
                owner.auth.append(self.headers.get("Authorization"))
                super().do_GET()

        self.server.RequestHandlerClass = Handler

    def add(self, title: str, text: str, *, parent: str | None = None, users: list[dict[str, str]] | None = None,
            groups: list[str] | None = None) -> str:
        page_id = str(self.next_id)
        self.next_id += 1
        self.pages[page_id] = Page(title, text, parent=parent, users=users or [], groups=groups or [])
        return page_id

    def _ancestors(self, page: Page) -> list[dict[str, Any]]:
        chain: list[dict[str, Any]] = []
        while page.parent is not None:
            chain.insert(0, {"id": page.parent, "type": "page", "title": self.pages[page.parent].title})
            page = self.pages[page.parent]
        return chain

    def _content(self, page_id: str, expand: set[str]) -> dict[str, Any]:
        page = self.pages[page_id]
        out: dict[str, Any] = {"id": page_id, "type": "page", "status": "current", "title": page.title,
                               "_links": {"webui": f"/spaces/HR/pages/{page_id}", "self":
                                          f"{self.url}/rest/api/content/{page_id}"}}
        if "version" in expand:
            out["version"] = {"number": page.version, "when": "2026-12-07T10:00:00.000Z"}
        if "ancestors" in expand:
            out["ancestors"] = self._ancestors(page)
        if "restrictions.read.restrictions.user" in expand and "restrictions.read.restrictions.group" in expand:
            users = {"results": page.users, "start": 0, "limit": 200, "size": len(page.users)}
            groups = [{"type": "group", "name": g} for g in page.groups]
            out["restrictions"] = {"read": {"operation": "read", "restrictions": {
                "user": users, "group": {"results": groups, "start": 0, "limit": 200, "size": len(groups)}}}}
        if "body.storage" in expand:
            out["body"] = {"storage": {"value": page.storage, "representation": "storage"}}
        return out

    def respond_get(self, path: str) -> tuple[int, dict[str, str], bytes]:
        parts = urlsplit(path)
        query = parse_qs(parts.query)
        self.hits.append((parts.path, query))
        route = parts.path.removeprefix(self.context)
        expand = set(",".join(query.get("expand", [])).split(","))
        if route == "/rest/api/content":
            if self.throttle > 0:
                self.throttle -= 1
                return 429, {"Retry-After": self.retry_after, "Content-Type": "application/json"}, \
                    b'{"statusCode": 429, "message": "Rate limit exceeded"}'
            if self.listing_override is not None:
                return 200, {"Content-Type": "application/json"}, self.listing_override.encode()
            if query.get("spaceKey") != ["HR"] or query.get("type") != ["page"]:
                return 404, {"Content-Type": "application/json"}, b'{"statusCode": 404, "message": "No space"}'
            start = int(query.get("start", ["0"])[0])
            limit = min(int(query.get("limit", ["25"])[0]), self.max_limit)
            ids = sorted(self.pages)
            chunk = ids[start:start + limit]
            links: dict[str, str] = {"base": self.url, "context": self.context}
            if start + len(chunk) < len(ids):
                links["next"] = (f"/rest/api/content?spaceKey=HR&type=page&limit={limit}&start={start + limit}"
                                 f"&expand={','.join(sorted(expand))}")
            body = {"results": [self._content(i, expand) for i in chunk], "start": start, "limit": limit,
                    "size": len(chunk), "_links": links}
            return 200, {"Content-Type": "application/json"}, json.dumps(body).encode()
        page_id = route.removeprefix("/rest/api/content/")
        if route.startswith("/rest/api/content/") and page_id in self.pages:
            return 200, {"Content-Type": "application/json"}, json.dumps(self._content(page_id, expand)).encode()
        return 404, {"Content-Type": "application/json"}, b'{"statusCode": 404, "message": "No content found"}'


@pytest.fixture
def wiki() -> Iterator[ConfluenceServer]:
    with ConfluenceServer().running() as server:
        yield server


def storage(text: str) -> str:
    return "".join(f"<p>{html.escape(p)}</p>" for p in text.split("\n") if p.strip())


class ConfluenceSource:
    """The scenario's documents as pages of space HR on a Cloud site (``/wiki``): ``everyone`` is a
    page without restrictions (the space's readers), ``group:x`` a view restriction to group x."""

    def __init__(self, server: ConfluenceServer) -> None:
        self.server = server
        self.ids: dict[str, str] = {}

    @staticmethod
    def _restriction(readers: list[str]) -> tuple[list[dict[str, str]], list[str]]:
        users = [{"type": "known", "accountId": r[5:], "email": r[5:]} for r in readers if r.startswith("user:")]
        return users, [r.removeprefix("group:") for r in readers if r.startswith("group:")]

    def put(self, name: str, text: str, readers: list[str]) -> None:
        users, groups = self._restriction(readers)
        if name in self.ids:
            page = self.server.pages[self.ids[name]]
            page.storage, page.version, page.users, page.groups = storage(text), page.version + 1, users, groups
        else:
            self.ids[name] = self.server.add(name.capitalize(), storage(text), users=users, groups=groups)

    def delete(self, name: str) -> None:
        del self.server.pages[self.ids.pop(name)]

    def set_readers(self, name: str, readers: list[str]) -> None:
        page = self.server.pages[self.ids[name]]
        page.users, page.groups = self._restriction(readers)  # a restriction change keeps the version

    def publish(self) -> None:
        return None

    def doc_id(self, name: str) -> str:
        return self.ids[name]

    def connector(self) -> ConfluenceConnector:
        return ConfluenceConnector(self.server.url, "HR", cloud=True, username="bot@corp.example", api_token="tok",
                                   space_readers=["everyone"], attempts=3, max_wait_s=0.01)

    def broken(self) -> ConfluenceConnector:
        return ConfluenceConnector("http://127.0.0.1:9/wiki", "HR", cloud=True, username="bot@corp.example",
                                   api_token="tok", attempts=2, max_wait_s=0.01)


def test_confluence_cloud_space_end_to_end(tmp_path: Path, embedder: Any) -> None:
    with ConfluenceServer(context="/wiki").running() as server:
        source = ConfluenceSource(server)
        synced = Synced(tmp_path, embedder, "confluence", {"url": server.url, "space": "HR", "cloud": True,
                                                           "username": "bot@corp.example",
                                                           "space_readers": ["everyone"]})
        run_scenario(synced, source)
        listings = [q for p, q in server.hits if p == "/wiki/rest/api/content"]
        assert [q["start"] for q in listings[:2]] == [["0"], ["2"]]  # 4 pages, 2 a page: paged by start/size
        bodies = [p for p, _ in server.hits if p.startswith("/wiki/rest/api/content/")]
        assert sorted(bodies) == sorted([f"/wiki/rest/api/content/{i}" for i in ("1001", "1002", "1003", "1004")]
                                        + [f"/wiki/rest/api/content/{source.doc_id('canteen')}"])  # only the edit
        assert set(server.auth) == {"Basic " + base64.b64encode(b"bot@corp.example:tok").decode()}

        # readers the mapping does not know are reported; a restriction no set of labels can say is admins only
        source.put("payroll", "Payroll\n\nSalaries are paid on the 25th of every month.\n", ["group:hr-staff"])
        payroll = source.doc_id("payroll")
        server.pages[payroll].users = [{"type": "known", "accountId": "557058:f00d"}]  # no e-mail on Cloud
        board = server.add("Board", storage("Board\n\nThe board meets on the first Monday.\n"), parent=payroll,
                           groups=["board-members"])
        report = synced.sync(source.connector())
        assert report.status == "ok" and report.counts["new"] == 2 and report.counts["changed"] == 0, report
        assert report.unmapped_readers == {"user:557058:f00d": 1}
        assert report.unknown_permissions == [board]  # hr-staff + the account, then board-members: no intersection
        assert synced.acl(payroll) == ["group:hr"] and synced.acl(board) == ["group:admins"]


def test_listing_pages_restrictions_and_ancestors(wiki: ConfluenceServer) -> None:
    root = wiki.add("Handbook", "<p>root</p>")
    hr = wiki.add("HR", "<p>hr</p>", parent=root, groups=["hr-staff"])
    payroll = wiki.add("Payroll", "<p>pay</p>", parent=hr)  # inherits HR's restriction
    narrower = wiki.add("Reviews", "<p>r</p>", parent=hr, groups=["hr-staff"],
                        users=[{"type": "known", "username": "dana", "email": "dana@corp.example"}])
    clash = wiki.add("Board", "<p>b</p>", parent=hr, groups=["board-members"])
    named = wiki.add("Lee", "<p>l</p>", users=[{"type": "known", "username": "lee", "userKey": "8a1"}])
    items = {i.item_id: i for i in ConfluenceConnector(wiki.url, "HR", page_size=50).list_items()}
    assert [q["start"] for p, q in wiki.hits] == [["0"], ["2"], ["4"]]  # limit 50 asked, 2 a page answered
    assert items[root].readers is None  # no restriction and no space_readers: unknown
    assert items[hr].readers == ("group:hr-staff",) and items[payroll].readers == ("group:hr-staff",)
    assert items[narrower].readers == ("group:hr-staff",)  # {hr-staff, dana} under {hr-staff}: hr-staff
    assert items[clash].readers is None and items[named].readers == ("user:lee",)
    assert items[hr].token == "v1" and items[hr].title == "HR" and items[hr].content_type == "text/html"
    assert items[hr].url == f"{wiki.url}/spaces/HR/pages/{hr}"
    assert set(wiki.auth) == {None}  # no credentials: anonymous
    opened = ConfluenceConnector(wiki.url, "HR", space_readers=["everyone"])
    assert {i.item_id: i.readers for i in opened.list_items()}[root] == ("everyone",)
    fetched = opened.fetch(items[payroll])
    assert fetched.suffix == ".html" and fetched.content == b"<html><head><title>Payroll</title></head><body>" \
        b"<p>pay</p></body></html>"
    del wiki.pages[payroll]
    with pytest.raises(SourceItemFailed, match=rf"space HR at {wiki.url}\): page {payroll}: HTTP 404"):
        opened.fetch(items[payroll])


@pytest.mark.parametrize(("levels", "space", "readers"), [
    ([None, None], ["everyone"], ("everyone",)),
    ([None, None], None, None),
    ([frozenset({"group:a"}), None], ["everyone"], ("group:a",)),
    ([frozenset({"group:a", "user:b"}), frozenset({"group:a"})], None, ("group:a",)),
    ([frozenset({"group:a"}), frozenset({"group:b"})], ["everyone"], None),
    ([frozenset({"group:a", "group:c"}), frozenset({"group:a", "group:b"})], None, None),
])
def test_effective_readers_never_widen(levels: list[frozenset[str] | None], space: list[str] | None,
                                       readers: tuple[str, ...] | None) -> None:
    assert effective_readers(levels, space) == readers


def test_truncated_or_nameless_restrictions_are_unknown(wiki: ConfluenceServer) -> None:
    many = wiki.add("Many", "<p>m</p>", groups=["a"])
    nameless = wiki.add("Nameless", "<p>n</p>", users=[{"type": "known", "displayName": "Someone"}])
    original = wiki._content

    def truncated(page_id: str, expand: set[str]) -> dict[str, Any]:
        out = original(page_id, expand)
        if page_id == many:
            out["restrictions"]["read"]["restrictions"]["group"]["_links"] = {"next": "/rest/api/..."}
        return out

    wiki._content = truncated  # type: ignore[method-assign]
    items = {i.item_id: i.readers for i in ConfluenceConnector(wiki.url, "HR", space_readers=["everyone"])
             .list_items()}
    assert items == {many: None, nameless: None}


def test_throttled_then_served(wiki: ConfluenceServer) -> None:
    wiki.add("A", "<p>a</p>")
    wiki.throttle, wiki.retry_after = 2, "0.3"
    began = time.perf_counter()
    items = list(ConfluenceConnector(wiki.url, "HR", attempts=3, max_wait_s=5).list_items())
    assert [i.title for i in items] == ["A"] and len(wiki.hits) == 3  # two 429s, then the listing
    assert time.perf_counter() - began >= 0.6  # Retry-After honoured, not the 0.2 s backoff
    wiki.throttle, wiki.retry_after = 5, "0"
    with pytest.raises(SourceUnavailable, match=r"confluence connector \(space HR at .*\): GET /rest/api/content: "
                                                r"HTTP 429 \(after 3 attempts\)"):
        list(ConfluenceConnector(wiki.url, "HR", attempts=3, max_wait_s=0.01).list_items())


@pytest.mark.parametrize(("body", "message"), [
    ("<html><body>Log in</body></html>", r"expected a JSON object, got application/json"),
    ('{"start": 0, "size": 0}', r"results: expected a list of pages"),
    ('{"results": [{"id": "7", "title": "x"}], "size": 1}', r"results\[0\]\.version\.number: expected an integer"),
    ('{"results": [], "size": 3}', r"size: expected the number of results \(0\)"),
    ('{"results": [], "size": 0, "_links": {"next": "/rest/api/content?start=0"}}', r"_links\.next: expected no "),
    ('{"results": [{"id": "7", "version": {"number": 1}}, {"id": "7", "version": {"number": 1}}], "size": 2}',
     r"results\[1\]\.id: expected a page not listed before \(7\)"),
    ('{"results": [{"id": "7", "version": {"number": 1}, "restrictions": {"read": []}}], "size": 1}', None),
])
def test_a_malformed_answer_names_the_connector(wiki: ConfluenceServer, body: str, message: str | None) -> None:
    wiki.listing_override = body
    if message is None:  # restrictions of the wrong shape: the page is admins-only, not the sync failed
        listed = ConfluenceConnector(wiki.url, "HR", space_readers=["everyone"]).list_items()
        assert [(i.item_id, i.readers) for i in listed] == [("7", None)]
        return
    with pytest.raises(SourceUnavailable, match=r"^confluence connector \(space HR at http://127\.0\.0\.1:\d+\): a "
                                                r"malformed answer to GET /rest/api/content\?spaceKey=HR&start=0: "
                                                + message):
        list(ConfluenceConnector(wiki.url, "HR").list_items())


def test_registry_builds_it_with_secrets_from_the_environment(tmp_path: Path, wiki: ConfluenceServer) -> None:
    wiki.add("A", "<p>a</p>")
    spec = ConnectorSpec.model_validate({"kind": "confluence", "knowledge_base": "hr", "options": {
        "url": wiki.url, "space": "HR", "username": "svc"}, "secrets": {"password": "RAG_CONFLUENCE_PASSWORD"}})
    built = build_connector("wiki", spec, ConnectorsSettings(), {"RAG_CONFLUENCE_PASSWORD": "s3cret"}, tmp_path)
    assert isinstance(built, ConfluenceConnector) and [i.title for i in built.list_items()] == ["A"]
    assert wiki.auth == ["Basic " + base64.b64encode(b"svc:s3cret").decode()]
    pat = spec.model_copy(update={"options": {"url": wiki.url, "space": "HR"},
                                  "secrets": {"api_token": "RAG_CONFLUENCE_PAT"}})
    list(build_connector("wiki", pat, ConnectorsSettings(), {"RAG_CONFLUENCE_PAT": "pat-1"}, tmp_path).list_items())
    assert wiki.auth[-1] == "Bearer pat-1"  # a Data Center personal access token
    with pytest.raises(ConfigError, match=r"secrets.password names the environment variable "
                                          r"RAG_CONFLUENCE_PASSWORD, which is not set"):
        build_connector("wiki", spec, ConnectorsSettings(), {}, tmp_path)
    with pytest.raises(ConfigError, match=r"options.username is set but no secret: expected secrets.api_token"):
        ConfluenceConnector(wiki.url, "HR", cloud=True, username="bot@corp.example")
    with pytest.raises(ConfigError, match=r"Confluence Cloud authenticates with options.username"):
        ConfluenceConnector(wiki.url, "HR", cloud=True, api_token="tok")
    with pytest.raises(ValueError, match=r"options\.token: a secret never goes in the file"):
        ConnectorSpec.model_validate({"kind": "confluence", "knowledge_base": "hr",
                                      "options": {"url": wiki.url, "space": "HR", "token": "x"}})
    with pytest.raises(ValueError, match=r"readers: a confluence item's readers come from the source.*give them "
                                         r"as options.space_readers"):
        ConnectorSpec.model_validate({"kind": "confluence", "knowledge_base": "hr", "readers": ["everyone"],
                                      "options": {"url": wiki.url, "space": "HR"}})
    with pytest.raises(ValueError, match=r"space\n.*String should match pattern"):
        ConnectorSpec.model_validate({"kind": "confluence", "knowledge_base": "hr",
                                      "options": {"url": wiki.url, "space": "HR SPACE"}})


def test_the_documented_declaration_loads(tmp_path: Path) -> None:
    doc = (Path(__file__).resolve().parents[2] / "docs" / "CONNECTORS.md").read_text(encoding="utf-8")
    section = doc.split("### A Confluence space", 1)[1]
    declared = tmp_path / "connectors.yaml"
    declared.write_text(section.split("```yaml\n", 1)[1].split("```", 1)[0], encoding="utf-8")
    spec = read_connectors(declared)["hr-wiki"]
    options = spec.typed_options()
    assert (spec.kind, options.space, options.cloud, spec.secrets) == ("confluence", "HR", True,
                                                                      {"api_token": "RAG_CONFLUENCE_TOKEN"})
    assert options.space_readers == ["group:confluence-users"] and spec.permissions.groups["hr-staff"] == "group:hr"

    # the documented `rag connector add` writes the same declaration
    (tmp_path / "perms.yaml").write_text(yaml.safe_dump(spec.permissions.model_dump(exclude_defaults=True)))
    command = section.split("```bash\n", 2)[2].split("```", 1)[0].split("rag connector sync")[0]
    args = shlex.split(command.replace("\\\n", " ").replace("perms.yaml", str(tmp_path / "perms.yaml")))[1:]
    result = CliRunner().invoke(cli, args, env={"RAG_CONNECTORS__FILE": str(tmp_path / "added.yaml")})
    assert result.exit_code == 0, result.output
    assert read_connectors(tmp_path / "added.yaml") == {"hr-wiki": spec}
