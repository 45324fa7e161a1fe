"""A web site synced into a knowledge base (issue 46): httpx against a local ``http.server`` site
with robots.txt, ETags, a readers meta tag, throttling (429 with Retry-After), a failing page and
links off the host."""

from __future__ import annotations

import hashlib
import html
from pathlib import Path
from typing import Any, Iterator

import pytest

from backend.common.errors import SourceUnavailable
from backend.connectors.web import UNAVAILABLE, WebConnector
from tests.connectors.helpers import Synced
from tests.connectors.scenario import run_scenario
from tests.local_http import LocalHttpServer


class Site(LocalHttpServer):
    """A local site: ``pages`` path -> (title, text, readers); ``/`` links to every page."""

    def __init__(self) -> None:
        super().__init__(url_suffix="")
        self.pages: dict[str, tuple[str, str, list[str]]] = {}
        self.extra: dict[str, bytes] = {}
        self.throttle: dict[str, int] = {}  # path -> 429 answers left
        self.failing: set[str] = set()
        self.hits: list[str] = []
        self.robots = "User-agent: *\nDisallow: /private/\n"

    def respond_get(self, path: str) -> tuple[int, dict[str, str], bytes]:
        self.hits.append(path)
        if self.throttle.get(path, 0) > 0:
            self.throttle[path] -= 1
            return 429, {"Retry-After": "0"}, b"slow down"
        if path in self.failing:
            return 503, {}, b"down"
        if path == "/robots.txt":
            return 200, {"Content-Type": "text/plain"}, self.robots.encode()
        if path == "/":
            links = "".join(f'<li><a href="{p}">{html.escape(t)}</a></li>' for p, (t, _, _) in sorted(self.pages.items()))
            links += '<li><a href="/private/salaries">salaries</a></li><li><a href="http://other.invalid/x">x</a></li>'
            links += '<li><a href="/deep1#top">deeper</a></li>' if self.extra else ""
            return 200, {"Content-Type": "text/html; charset=utf-8"}, f"<html><body><ul>{links}</ul></body></html>".encode()
        if path in self.extra:
            return 200, {"Content-Type": "text/html"}, self.extra[path]
        if path not in self.pages:
            return 404, {}, b"not found"
        title, text, readers = self.pages[path]
        paragraphs = "".join(f"<p>{html.escape(p)}</p>" for p in text.split("\n") if p.strip())
        meta = f'<meta name="rag-readers" content="{" ".join(readers)}">' if readers else ""
        body = f"<html><head><title>{title}</title>{meta}</head><body>{paragraphs}</body></html>".encode()
        return 200, {"Content-Type": "text/html", "ETag": '"' + hashlib.sha256(body).hexdigest()[:16] + '"'}, body


@pytest.fixture
def site() -> Iterator[Site]:
    with Site().running() as s:
        yield s


class WebSource:
    readers_in_content = True

    def __init__(self, site: Site) -> None:
        self.site = site

    def put(self, name: str, text: str, readers: list[str]) -> None:
        self.site.pages[f"/{name}"] = (name.capitalize(), text, readers)

    def delete(self, name: str) -> None:
        del self.site.pages[f"/{name}"]

    def set_readers(self, name: str, readers: list[str]) -> None:
        title, text, _ = self.site.pages[f"/{name}"]
        self.site.pages[f"/{name}"] = (title, text, readers)

    def publish(self) -> None:
        return None

    def doc_id(self, name: str) -> str:
        return f"{self.site.url}/{name}"

    def connector(self) -> WebConnector:
        return WebConnector(self.site.url + "/", max_depth=1, attempts=3, max_wait_s=0.01, include_start=False)

    def broken(self) -> WebConnector:
        return WebConnector("http://127.0.0.1:9/", attempts=2, max_wait_s=0.01)


def test_web_site_end_to_end(tmp_path: Path, embedder: Any, site: Site) -> None:
    synced = Synced(tmp_path, embedder, "web", {"start_url": site.url + "/", "include_start": False})
    run_scenario(synced, WebSource(site))
    assert not any(h.startswith("/private/") for h in site.hits)  # robots.txt honoured


def test_crawl_limits_throttling_and_a_failing_page(site: Site) -> None:
    site.pages = {"/a": ("A", "alpha", ["public"]), "/b": ("B", "beta", [])}
    site.extra = {"/deep1": b'<html><body><a href="/deep2">next</a></body></html>',
                  "/deep2": b'<html><body><a href="/deep3">next</a></body></html>',
                  "/deep3": b"<html><body>too deep</body></html>"}
    site.throttle = {"/a": 2}
    site.failing = {"/b"}
    crawl = WebConnector(site.url + "/", max_depth=2, attempts=3, max_wait_s=0.01)
    items = {i.item_id.removeprefix(site.url): i for i in crawl.list_items()}
    assert set(items) == {"/", "/a", "/b", "/deep1", "/deep2"}  # no /deep3 (depth), no /private (robots), no off-host
    assert items["/a"].readers == ("public",) and items["/a"].token.startswith('"')
    assert items["/b"].token == UNAVAILABLE  # 503 after the retries: listed, so not a deletion
    assert site.hits.count("/a") == 3  # two 429s, then the page
    assert items["/"].token.startswith("sha256:")  # no ETag: the body's hash
    limited = WebConnector(site.url + "/", max_pages=2, attempts=3, max_wait_s=0.01)
    assert len(list(limited.list_items())) == 2
    site.failing = {"/"}
    with pytest.raises(SourceUnavailable, match=r"HTTP 503 \(after 2 attempts\)"):
        list(WebConnector(site.url + "/", attempts=2, max_wait_s=0.01).list_items())
