"""A web site as a source (``httpx``): pages reached from a start URL on the same host.

The crawl honours ``robots.txt`` (``urllib.robotparser``, for the connector's user agent), stays
on the start URL's scheme and host, goes ``max_depth`` links deep and reads at most ``max_pages``
pages. Every page is read (its links are what the crawl follows); its token is its ``ETag``, else
its ``Last-Modified``, else the sha256 of its body. The readers are a page's
``<meta name="rag-readers" content="group:a user:b">`` (else the declaration's ``readers``).

A page that answers 429/5xx or drops the connection is retried (``Retry-After`` honoured); one that
still fails is listed with a token that never matches and fails its fetch, so the sync reports it
and keeps what it had (never a deletion). A 404 or a page robots.txt forbids is not listed: it is
gone. A start page that cannot be read fails the whole sync; ``include_start`` false makes the
start page a hub (its links followed, itself not a document), as a sitemap page is.
"""

from __future__ import annotations

import hashlib
from collections import deque
from typing import Any, Iterator
from urllib.parse import urldefrag, urljoin, urlsplit
from urllib.robotparser import RobotFileParser

from backend.common.errors import SourceItemFailed, SourceUnavailable
from backend.connectors.retry import Transient, call, retry_after_seconds
from backend.core.connector import FetchedItem, SourceItem, suffix_for

_DOCUMENT_TYPES = ("text/html", "application/xhtml+xml", "text/plain", "text/markdown", "application/pdf")
UNAVAILABLE = "unavailable"


class WebConnector:
    kind = "web"

    def __init__(self, start_url: str, *, max_depth: int = 2, max_pages: int = 200, user_agent: str = "rag-connector",
                 attempts: int = 4, max_wait_s: float = 30.0, timeout_s: float = 30.0,
                 include_start: bool = True) -> None:
        import httpx

        self.start_url = urldefrag(start_url)[0]
        self.max_depth, self.max_pages, self.user_agent = max_depth, max_pages, user_agent
        self.attempts, self.max_wait_s, self.include_start = attempts, max_wait_s, include_start
        self.client = httpx.Client(timeout=timeout_s, follow_redirects=True, headers={"User-Agent": user_agent})
        self._pages: dict[str, tuple[bytes, str]] = {}
        self._failed: dict[str, str] = {}

    def _get(self, url: str) -> Any:
        import httpx

        def once() -> Any:
            try:
                response = self.client.get(url)
            except httpx.TransportError as exc:
                raise Transient(f"{type(exc).__name__}: {exc}") from exc
            if response.status_code == 429 or response.status_code >= 500:
                raise Transient(f"HTTP {response.status_code}", retry_after_seconds(response.headers.get("retry-after")))
            return response

        return call(url, once, attempts=self.attempts, max_wait_s=self.max_wait_s)

    def _robots(self) -> RobotFileParser:
        parts = urlsplit(self.start_url)
        robots = RobotFileParser()
        response = self._get(f"{parts.scheme}://{parts.netloc}/robots.txt")
        robots.parse(response.text.splitlines() if response.status_code == 200 else [])
        return robots

    def _same_site(self, url: str) -> bool:
        a, b = urlsplit(url), urlsplit(self.start_url)
        return (a.scheme, a.netloc) == (b.scheme, b.netloc)

    def list_items(self) -> Iterator[SourceItem]:
        from bs4 import BeautifulSoup

        robots = self._robots()
        queue: deque[tuple[str, int]] = deque([(self.start_url, 0)])
        seen = {self.start_url}
        while queue and len(self._pages) + len(self._failed) < self.max_pages:
            url, depth = queue.popleft()
            if not robots.can_fetch(self.user_agent, url):
                continue
            try:
                response = self._get(url)
            except SourceUnavailable as exc:
                if url == self.start_url:
                    raise
                self._failed[url] = exc.user_message
                yield SourceItem(url, UNAVAILABLE, url=url)
                continue
            if response.status_code != 200:
                if url == self.start_url:
                    raise SourceUnavailable(f"{url}: HTTP {response.status_code}")
                continue
            final = urldefrag(str(response.url))[0]
            kind = response.headers.get("content-type", "").split(";")[0].strip().lower()
            if not self._same_site(final) or kind not in _DOCUMENT_TYPES:
                continue
            body = response.content
            self._pages[url] = (body, kind)
            readers: tuple[str, ...] | None = None
            title = url
            if kind in ("text/html", "application/xhtml+xml"):
                soup = BeautifulSoup(body, "html.parser")
                meta = soup.find("meta", attrs={"name": "rag-readers"})
                if meta is not None and meta.get("content") is not None:
                    readers = tuple(str(meta.get("content")).split())
                if soup.title and soup.title.string:
                    title = soup.title.string.strip()
                if depth < self.max_depth:
                    for link in soup.find_all("a", href=True):
                        target = urldefrag(urljoin(final, str(link["href"])))[0]
                        if target not in seen and self._same_site(target) and target.startswith(("http://", "https://")):
                            seen.add(target)
                            queue.append((target, depth + 1))
            if url == self.start_url and not self.include_start:
                continue  # a hub page (a sitemap, a list of links): followed, not a document
            token = response.headers.get("etag") or response.headers.get("last-modified") or \
                "sha256:" + hashlib.sha256(body).hexdigest()
            yield SourceItem(url, token, title=title, url=url, readers=readers, content_type=kind)

    def fetch(self, item: SourceItem) -> FetchedItem:
        if item.item_id in self._failed:
            raise SourceItemFailed(self._failed[item.item_id])
        if item.item_id not in self._pages:
            raise SourceItemFailed(f"{item.item_id}: not read by this crawl")
        body, kind = self._pages[item.item_id]
        return FetchedItem(item.item_id, body, suffix_for(kind, urlsplit(item.item_id).path))
