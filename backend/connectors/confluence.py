"""A Confluence space as a source (``atlassian-python-api``): Cloud and Data Center / Server.

Which client: ``atlassian.ConfluenceCloud`` (``cloud: true``) or ``atlassian.ConfluenceServer``, the
two classes ``atlassian.Confluence(url, cloud=...)`` itself dispatches to, both speaking the v1 REST
content API that Cloud (under ``/wiki``) and Data Center share. The connector calls that API through
the client's ``get`` (its session, auth and URL joining) with ``advanced_mode=True`` and pages itself,
instead of ``get_all_pages_from_space``: that helper follows ``_links.next`` and ends quietly on an
answer without ``results`` (a malformed answer would read as an empty space, a mass deletion), and
the client's own 429 handling sleeps for whatever ``Retry-After`` says. Here 429/5xx and dropped
connections go through ``retry.call`` (``Retry-After`` honoured up to ``connectors.max_wait_s``),
and an answer of the wrong shape fails the sync naming the connector, the request and the field.

Listing: ``GET rest/api/content?spaceKey=KEY&type=page&status=current&start=N&limit=M&expand=
version,ancestors,restrictions.read.restrictions.user,restrictions.read.restrictions.group``, ``start``
advanced by each answer's ``size`` while ``_links.next`` is present. Per page: id (the stable item
id), ``v<version.number>`` (the change token: a restriction change leaves it alone, so it is a
permission-only change through the readers), title, ``url`` + ``_links.webui``.

Readers (docs/CONNECTORS.md, "Confluence"): a page's view restrictions are its own and its
ancestors'; a reader must pass every restricted level. The readers are those of the one restricted
level (``user:<e-mail, else username, else accountId>``, ``group:<name>``), or, when several levels
are restricted, of the level whose readers are contained in every other's (that set is the
intersection); any other combination, a restriction list the answer truncated, an entry without a
name or an ancestor outside the listing gives ``None``: unknown, admins only, reported, never wider.
A page with no restriction in its chain is read by whoever reads the space: ``space_readers``, else
unknown. (A Confluence declaration takes no ``readers``: the sync gives them to an item whose readers
are ``None``, which here means restrictions no readers can say, so they would widen it.)

Fetch: ``GET rest/api/content/<id>?expand=body.storage,version``; the storage format (XHTML) is
wrapped in an HTML page titled with the page's title, for the HTML loader. The client logs each
answer's body at DEBUG: ``backend/common/logging.py`` keeps its logger at WARNING.
"""

from __future__ import annotations

import html
from typing import Any, Iterator, Sequence

from backend.common.errors import ConfigError, SourceItemFailed, SourceUnavailable
from backend.connectors.retry import Transient, call, retry_after_seconds
from backend.core.connector import FetchedItem, SourceItem

LISTING = "rest/api/content"
EXPAND = "version,ancestors,restrictions.read.restrictions.user,restrictions.read.restrictions.group"


def _field(value: Any, *path: str) -> Any:
    """Pure: ``value[path[0]][path[1]]...``, None where a step is missing or not an object."""
    for key in path:
        value = value.get(key) if isinstance(value, dict) else None
    return value


class _Unknown(Exception):
    """A page's restrictions cannot be read as readers (truncated, nameless, an unlisted ancestor)."""


def _user_reader(user: Any) -> str:
    if not isinstance(user, dict):
        raise _Unknown("a user restriction that is not an object")
    for key in ("email", "username", "accountId", "userKey"):
        if isinstance(user.get(key), str) and user[key].strip():
            return f"user:{user[key].strip()}"
    raise _Unknown("a user restriction without email, username or accountId")


def _group_reader(group: Any) -> str:
    if not isinstance(group, dict) or not isinstance(group.get("name"), str) or not group["name"].strip():
        raise _Unknown("a group restriction without a name")
    return f"group:{group['name'].strip()}"


def own_readers(page: dict[str, Any]) -> frozenset[str] | None:
    """Pure: the readers a page's own view restriction names (None: the page restricts nothing).
    Raises ``_Unknown`` when the answer does not say them all."""
    restrictions = page.get("restrictions")
    if not isinstance(restrictions, dict):
        raise _Unknown("no restrictions in the answer")
    read = _field(restrictions, "read", "restrictions")
    if not isinstance(read, dict):
        raise _Unknown("no read restrictions in the answer")
    readers: set[str] = set()
    for kind, name in (("user", _user_reader), ("group", _group_reader)):
        listed = read.get(kind)
        if not isinstance(listed, dict) or not isinstance(listed.get("results"), list):
            raise _Unknown(f"read restrictions without a list of {kind}s")
        results: list[Any] = listed["results"]
        total = listed.get("totalSize", listed.get("size", len(results)))
        if _field(listed, "_links", "next") or (isinstance(total, int) and total > len(results)):
            raise _Unknown(f"a truncated list of {kind} restrictions")
        readers.update(name(entry) for entry in results)
    return frozenset(readers) or None


def effective_readers(levels: Sequence[frozenset[str] | None], space_readers: Sequence[str] | None
                      ) -> tuple[str, ...] | None:
    """Pure: the readers of a page from its chain's own restrictions (root first, the page last):
    the space's readers when no level restricts, the one restricted level's readers, or the level
    contained in every other's; None (unknown) when the intersection cannot be written as readers."""
    restricted = [level for level in levels if level is not None]
    if not restricted:
        return None if space_readers is None else tuple(space_readers)
    narrowest = min(restricted, key=len)
    if all(narrowest <= level for level in restricted):
        return tuple(sorted(narrowest))
    return None


class ConfluenceConnector:
    kind = "confluence"

    def __init__(self, url: str, space: str, *, cloud: bool = False, username: str | None = None,
                 password: str | None = None, api_token: str | None = None,
                 space_readers: Sequence[str] | None = None, page_size: int = 50, attempts: int = 4,
                 max_wait_s: float = 30.0, timeout_s: int = 60) -> None:
        from atlassian import ConfluenceCloud, ConfluenceServer

        self.url, self.space, self.cloud = url.rstrip("/"), space, cloud
        self.space_readers = None if space_readers is None else tuple(space_readers)
        self.page_size, self.attempts, self.max_wait_s = page_size, attempts, max_wait_s
        self.where = f"confluence connector (space {space} at {self.url})"
        auth: dict[str, Any] = {}
        secret = (api_token or password) if cloud else (password or api_token)
        if username and secret:
            auth = {"username": username, "password": secret}
        elif username:
            raise ConfigError(f"{self.where}: options.username is set but no secret: expected secrets."
                              f"{'api_token' if cloud else 'password'} naming an environment variable",
                              field="secrets")
        elif cloud and secret:
            raise ConfigError(f"{self.where}: Confluence Cloud authenticates with options.username (the account "
                              "e-mail) and secrets.api_token", field="options.username")
        elif api_token:
            auth = {"token": api_token}  # a Data Center personal access token (Bearer)
        elif password:
            raise ConfigError(f"{self.where}: secrets.password needs options.username", field="options.username")
        client_class = ConfluenceCloud if cloud else ConfluenceServer
        self.client: Any = client_class(self.url, cloud=cloud, timeout=timeout_s, retry_with_header=False,
                                        backoff_and_retry=False, **auth)

    def _get(self, path: str, params: dict[str, Any]) -> Any:
        """The ``requests.Response`` of one GET, retried on 429/5xx/connection errors."""
        import requests

        def once() -> Any:
            try:
                response = self.client.get(path, params=params, advanced_mode=True)
            except (requests.ConnectionError, requests.Timeout) as exc:
                raise Transient(f"{type(exc).__name__}: {exc}") from exc
            if response.status_code == 429 or response.status_code >= 500:
                raise Transient(f"HTTP {response.status_code}",
                                retry_after_seconds(response.headers.get("Retry-After")))
            return response

        return call(f"{self.where}: GET /{path}", once, attempts=self.attempts, max_wait_s=self.max_wait_s)

    def _json(self, response: Any, what: str) -> dict[str, Any]:
        try:
            body = response.json()
        except ValueError:
            body = None
        if not isinstance(body, dict):
            raise SourceUnavailable(f"{self.where}: a malformed answer to {what}: expected a JSON object, got "
                                    f"{response.headers.get('Content-Type') or 'no content type'} "
                                    f"({len(response.content)} bytes)")
        return body

    def _malformed(self, what: str, field: str, expected: str) -> SourceUnavailable:
        return SourceUnavailable(f"{self.where}: a malformed answer to {what}: {field}: expected {expected}")

    def _listing(self) -> list[dict[str, Any]]:
        pages: list[dict[str, Any]] = []
        seen: set[str] = set()
        start = 0
        while True:
            what = f"GET /{LISTING}?spaceKey={self.space}&start={start}"
            response = self._get(LISTING, {"spaceKey": self.space, "type": "page", "status": "current",
                                           "start": start, "limit": self.page_size, "expand": EXPAND})
            if response.status_code in (401, 403):
                raise SourceUnavailable(f"{self.where}: HTTP {response.status_code}: the account may not read the "
                                        "space (check options.username and the secret's environment variable)")
            if response.status_code == 404:
                raise SourceUnavailable(f"{self.where}: HTTP 404: no space {self.space!r} this account may read")
            if response.status_code != 200:
                raise SourceUnavailable(f"{self.where}: {what}: HTTP {response.status_code}")
            body = self._json(response, what)
            results, size = body.get("results"), body.get("size")
            if not isinstance(results, list):
                raise self._malformed(what, "results", "a list of pages")
            if not isinstance(size, int) or size != len(results):
                raise self._malformed(what, "size", f"the number of results ({len(results)})")
            for i, page in enumerate(results):
                if not isinstance(page, dict) or not isinstance(page.get("id"), (str, int)) or not str(page["id"]):
                    raise self._malformed(what, f"results[{i}].id", "a page id")
                number = _field(page, "version", "number")
                if not isinstance(number, int) or isinstance(number, bool):
                    raise self._malformed(what, f"results[{i}].version.number", "an integer (expand=version)")
                if str(page["id"]) in seen:  # a site that pages in a circle would never end
                    raise self._malformed(what, f"results[{i}].id", f"a page not listed before ({page['id']})")
                seen.add(str(page["id"]))
                pages.append(page)
            if not _field(body, "_links", "next"):
                return pages
            if size == 0:
                raise self._malformed(what, "_links.next", "no next link after an empty page")
            start += size

    def list_items(self) -> Iterator[SourceItem]:
        pages = self._listing()
        own: dict[str, frozenset[str] | None] = {}
        unknown: set[str] = set()
        for page in pages:
            try:
                own[str(page["id"])] = own_readers(page)
            except _Unknown:
                unknown.add(str(page["id"]))
        for page in pages:
            page_id = str(page["id"])
            ancestors = page.get("ancestors")  # asked for (expand=ancestors): absent, it says nothing
            chain = [*(str(a.get("id")) if isinstance(a, dict) else "" for a in ancestors), page_id] \
                if isinstance(ancestors, list) else [""]
            readers = None if any(level in unknown or level not in own for level in chain) else \
                effective_readers([own[level] for level in chain], self.space_readers)
            webui = _field(page, "_links", "webui")
            url = self.url + webui if isinstance(webui, str) and webui.startswith("/") else \
                f"{self.url}/pages/viewpage.action?pageId={page_id}"
            yield SourceItem(page_id, f"v{page['version']['number']}", title=str(page.get("title") or page_id),
                             url=url, readers=readers, content_type="text/html")

    def fetch(self, item: SourceItem) -> FetchedItem:
        what = f"GET /{LISTING}/{item.item_id}"
        try:
            response = self._get(f"{LISTING}/{item.item_id}", {"expand": "body.storage,version"})
            if response.status_code != 200:
                raise SourceItemFailed(f"{self.where}: page {item.item_id}: HTTP {response.status_code}")
            body = self._json(response, what)
        except SourceUnavailable as exc:
            raise SourceItemFailed(exc.user_message) from exc
        storage = _field(body, "body", "storage", "value")
        if not isinstance(storage, str):
            raise SourceItemFailed(f"{self.where}: a malformed answer to {what}: body.storage.value: expected the "
                                   "page's storage format (expand=body.storage)")
        title = html.escape(str(body.get("title") or item.title))
        page = f"<html><head><title>{title}</title></head><body>{storage}</body></html>"
        return FetchedItem(item.item_id, page.encode("utf-8"), ".html")
