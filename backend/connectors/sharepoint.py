"""SharePoint Online and OneDrive as a source, through Microsoft Graph's REST API (``httpx``),
with the app's token from ``msal`` (the client-credentials flow).

Why not ``msgraph-sdk``: it is async only (every call an event loop), brings kiota's middleware
(its own retry handler, which would retry 429s before ``retry.call`` sees them) and authenticates
through ``azure-identity``; ``office365-rest-python-client`` has no documented way to point its
Graph client at another base URL. The four Graph calls this connector makes are small, documented
REST (``GET /drives/{id}/root/delta``, ``/items/{id}/permissions``, ``/items/{id}/content``,
``/sites/{id}/drives``), so ``httpx`` speaks them directly against ``graph_url`` (tests: a local
server), and ``msal`` (Microsoft's own library) gets the token from ``authority`` (msal only takes
an https authority: the tests' local server speaks TLS with a certificate they make).

Listing: the drive's delta query from the root, its ``@odata.nextLink`` pages followed to the
``@odata.deltaLink`` (kept as ``delta_link``, unused: the sync framework keeps no cursor, so every
sync runs a full delta listing, which lists what is in the drive now). Files only, under
``folder`` (paths rebuilt from the parent ids, as delta answers carry no ``parentReference.path``),
of a loadable type; an item with the ``deleted`` facet is absent. Stable id: the item id; token:
the ``cTag`` (changes with the content only, so a sharing change is a permission-only change),
else the ``eTag``; title: the name; URL: ``webUrl``.

Readers (one ``/permissions`` call a file each sync): a user granted access (``grantedToV2`` /
``grantedToIdentitiesV2`` / ``grantedTo``) is ``user:<e-mail>`` (else ``user:<id>``); a group or a
SharePoint site group is ``group:<display name>`` (else ``group:<id>``); a sharing link of scope
``organization`` is ``everyone``, ``anonymous`` is ``public``, ``users`` gives the identities it
was shared with. The declaration's ``permissions`` maps them (docs/CONNECTORS.md). A file whose
permissions Graph refuses to give (403, 404) has readers ``None``: admins only, and the sync report
lists it in ``unknown_permissions``.

429 and 5xx (``Retry-After`` honoured) and dropped connections are retried (``retry.call``), then
fail the sync; an answer that is not the documented JSON fails it naming the connector and the call.
"""

from __future__ import annotations

import functools
import ssl
from typing import Any, Iterator
from urllib.parse import quote, urlsplit

from backend.common.errors import ConfigError, SourceItemFailed, SourceUnavailable
from backend.connectors.retry import Transient, call, retry_after_seconds
from backend.core.connector import LOADABLE, SUFFIXES, FetchedItem, SourceItem, suffix_for


class _Refused(Exception):
    """A Graph answer that is final (403, 404...): not retried."""

    def __init__(self, status: int, reason: str) -> None:
        super().__init__(f"HTTP {status}: {reason}")
        self.status = status


def _seg(value: str) -> str:
    """Pure: an id as one path segment (a drive id's ``b!`` stays as Graph writes it)."""
    return quote(value, safe="!")


def _error_text(response: Any) -> str:
    try:
        error = response.json().get("error") or {}
        return f"{error.get('code', '')}: {error.get('message', '')}".strip(": ")
    except Exception:
        return response.text[:200]


def identity_readers(identities: Any) -> list[str]:
    """Pure: the readers of one Graph ``identitySet`` / ``sharePointIdentitySet``: its user (by e-mail,
    else login name, else id) and its group or SharePoint site group (by display name, else id)."""
    if not isinstance(identities, dict):
        return []
    out: list[str] = []
    user, site_user = identities.get("user") or {}, identities.get("siteUser") or {}
    name = next((str(v) for v in (user.get("email") if isinstance(user, dict) else None,
                                  site_user.get("email") if isinstance(site_user, dict) else None,
                                  site_user.get("loginName") if isinstance(site_user, dict) else None,
                                  user.get("id") if isinstance(user, dict) else None) if v), None)
    if name:
        out.append(f"user:{name.rsplit('|', 1)[-1].lower()}")  # a login name is 'i:0#.f|membership|<upn>'
    for key in ("group", "siteGroup"):
        who = identities.get(key)
        if isinstance(who, dict) and (who.get("displayName") or who.get("id")):
            out.append(f"group:{who.get('displayName') or who.get('id')}")
            break
    return out


def permission_readers(permissions: list[Any]) -> tuple[str, ...]:
    """Pure: the readers a list of Graph ``permission`` resources grants (any role reads)."""
    out: list[str] = []
    for perm in permissions:
        if not isinstance(perm, dict):
            continue
        link = perm.get("link")
        if isinstance(link, dict):
            scope = link.get("scope")
            if scope == "anonymous":
                out.append("public")
            elif scope == "organization":
                out.append("everyone")
            for identities in perm.get("grantedToIdentitiesV2") or perm.get("grantedToIdentities") or []:
                out += identity_readers(identities)
            continue
        out += identity_readers(perm.get("grantedToV2") or perm.get("grantedTo"))
        for identities in perm.get("grantedToIdentitiesV2") or []:
            out += identity_readers(identities)
    return tuple(dict.fromkeys(out))


class SharePointConnector:
    kind = "sharepoint"

    def __init__(self, tenant_id: str, client_id: str, client_secret: str, *, drive_id: str | None = None,
                 site_id: str | None = None, drive_name: str = "Documents", folder: str = "",
                 graph_url: str = "https://graph.microsoft.com/v1.0",
                 authority: str = "https://login.microsoftonline.com", ca_bundle: str | None = None,
                 attempts: int = 4, max_wait_s: float = 30.0, timeout_s: float = 60.0) -> None:
        import httpx
        import msal  # noqa: F401 - fail now, naming the extra, not at the first sync

        if not drive_id and not site_id:
            raise ConfigError("sharepoint connector: give options.drive_id, or options.site_id (with "
                              "options.drive_name)", field="options.drive_id")
        self.tenant_id, self.client_id, self._secret = tenant_id, client_id, client_secret
        self.drive_id, self.site_id, self.drive_name = drive_id, site_id, drive_name
        self.folder = folder.strip("/")
        self.graph_url = graph_url.rstrip("/")
        self.authority = f"{authority.rstrip('/')}/{tenant_id}"
        parts = urlsplit(self.graph_url)
        self.scope = f"{parts.scheme}://{parts.netloc}/.default"
        self.ca_bundle = ca_bundle
        self.attempts, self.max_wait_s = attempts, max_wait_s
        verify: Any = ssl.create_default_context(cafile=ca_bundle) if ca_bundle else True
        self.client = httpx.Client(timeout=timeout_s, follow_redirects=True, verify=verify)
        self._app: Any = None
        #: the last listing's ``@odata.deltaLink`` (the framework keeps no cursor: each sync lists in full)
        self.delta_link: str | None = None

    @property
    def where(self) -> str:
        return f"sharepoint connector (drive {self.drive_id or f'{self.drive_name!r} of site {self.site_id}'})"

    # -- token ------------------------------------------------------------------------------------
    def _token(self) -> str:
        import msal
        import requests

        def once() -> str:
            try:
                if self._app is None:
                    self._app = msal.ConfidentialClientApplication(
                        self.client_id, client_credential=self._secret, authority=self.authority,
                        instance_discovery=False, http_client=self._token_http())
                got = self._app.acquire_token_for_client(scopes=[self.scope])
            except requests.RequestException as exc:
                raise Transient(f"token from {self.authority}: {type(exc).__name__}: {exc}") from exc
            except (ValueError, KeyError) as exc:  # msal: the authority's discovery answer is not what it expects
                raise SourceUnavailable(f"{self.where}: token from {self.authority}: the OpenID discovery answer "
                                        f"is not the documented JSON ({type(exc).__name__}: {str(exc)[:200]})") from exc
            if not isinstance(got, dict) or "access_token" not in got:
                got = got if isinstance(got, dict) else {}
                first = (str(got.get("error_description") or "").splitlines() or [""])[0]
                raise SourceUnavailable(f"{self.where}: no token from {self.authority}: {got.get('error')}: {first}")
            return str(got["access_token"])

        return call(f"{self.where} token", once, attempts=self.attempts, max_wait_s=self.max_wait_s)

    def _token_http(self) -> Any:
        """msal's HTTP session (requests), trusting ``ca_bundle`` when set: passed to each request,
        since requests lets ``REQUESTS_CA_BUNDLE`` win over a session's own ``verify``."""
        import requests

        session = requests.Session()
        if self.ca_bundle:
            session.request = functools.partial(session.request, verify=self.ca_bundle, timeout=30)  # type: ignore[method-assign]
        else:
            session.request = functools.partial(session.request, timeout=30)  # type: ignore[method-assign]
        return session

    # -- Graph calls --------------------------------------------------------------------------------
    def _get(self, url: str, what: str) -> Any:
        """The answer to GET ``url`` (an absolute URL or a path under ``graph_url``): 429/5xx and dropped
        connections retried; 4xx raises ``_Refused``."""
        import httpx

        target = url if url.startswith(("http://", "https://")) else self.graph_url + url
        token = self._token()

        def once() -> Any:
            try:
                response = self.client.get(target, headers={"Authorization": f"Bearer {token}"})
            except httpx.TransportError as exc:
                raise Transient(f"{type(exc).__name__}: {exc}") from exc
            if response.status_code == 429 or response.status_code >= 500:
                raise Transient(f"HTTP {response.status_code}", retry_after_seconds(response.headers.get("retry-after")))
            if response.status_code >= 400:
                raise _Refused(response.status_code, _error_text(response))
            return response

        return call(f"{self.where} {what}", once, attempts=self.attempts, max_wait_s=self.max_wait_s)

    def _json(self, url: str, what: str, key: str = "value") -> dict[str, Any]:
        try:
            response = self._get(url, what)
        except _Refused as exc:
            raise SourceUnavailable(f"{self.where}: {what}: {exc}") from exc
        try:
            data = response.json()
        except ValueError as exc:
            raise SourceUnavailable(f"{self.where}: {what}: the answer is not JSON "
                                    f"(content type {response.headers.get('content-type')!r})") from exc
        if not isinstance(data, dict) or not isinstance(data.get(key), list):
            raise SourceUnavailable(f"{self.where}: {what}: a malformed answer (expected a JSON object with a "
                                    f"{key!r} list, as Graph documents)")
        return data

    def _drive(self) -> str:
        if self.drive_id:
            return self.drive_id
        drives = self._json(f"/sites/{quote(str(self.site_id), safe=',.')}/drives", "drives of the site")["value"]
        found = next((d for d in drives if isinstance(d, dict) and d.get("name") == self.drive_name), None)
        if found is None or not found.get("id"):
            names = sorted(str(d.get("name")) for d in drives if isinstance(d, dict))
            raise SourceUnavailable(f"{self.where}: site {self.site_id} has no drive named {self.drive_name!r} "
                                    f"(it has {names})")
        self.drive_id = str(found["id"])
        return self.drive_id

    def _delta(self, drive: str) -> list[dict[str, Any]]:
        items: list[dict[str, Any]] = []
        url: str | None = f"/drives/{_seg(drive)}/root/delta"
        pages = 0
        self.delta_link = None
        while url:
            pages += 1
            page = self._json(url, f"delta listing (page {pages})")
            items += [i for i in page["value"] if isinstance(i, dict)]
            url = page.get("@odata.nextLink")
            if url is not None and (not isinstance(url, str) or urlsplit(url)[:2] != urlsplit(self.graph_url)[:2]):
                # the token goes with the next page: never to another host
                raise SourceUnavailable(f"{self.where}: delta listing (page {pages}): a malformed answer "
                                        f"(@odata.nextLink {str(url)[:200]!r} is not under {self.graph_url})")
            if url is None:
                self.delta_link = page.get("@odata.deltaLink")
                if not self.delta_link:
                    raise SourceUnavailable(f"{self.where}: delta listing (page {pages}): a malformed answer (neither "
                                            "@odata.nextLink nor @odata.deltaLink)")
        return items

    def _readers(self, drive: str, item_id: str) -> tuple[str, ...] | None:
        try:
            data = self._json(f"/drives/{_seg(drive)}/items/{_seg(item_id)}/permissions",
                              f"permissions of {item_id}")
        except SourceUnavailable as exc:
            if isinstance(exc.__cause__, _Refused) and exc.__cause__.status in (403, 404):
                return None  # Graph will not say: admins only, reported as unknown permissions
            raise
        return permission_readers(data["value"])

    # -- the port -------------------------------------------------------------------------------------
    def list_items(self) -> Iterator[SourceItem]:
        drive = self._drive()
        listed = self._delta(drive)
        live = {str(i["id"]): i for i in listed if i.get("id") and "deleted" not in i}
        paths: dict[str, str | None] = {}

        def path_of(item_id: str, depth: int = 0) -> str | None:
            """``a/b/name`` relative to the drive's root (None: not under the root any more)."""
            if item_id in paths:
                return paths[item_id]
            item = live.get(item_id)
            if item is None or depth > 200:
                return None
            if "root" in item:
                result: str | None = ""
            else:
                parent = (item.get("parentReference") or {}).get("id")
                above = path_of(str(parent), depth + 1) if parent else None
                result = None if above is None else f"{above}/{item.get('name', '')}".lstrip("/")
            paths[item_id] = result
            return result

        prefix = self.folder + "/" if self.folder else ""
        for item_id, item in live.items():
            if "file" not in item:
                continue
            name = str(item.get("name") or "")
            mime = str((item.get("file") or {}).get("mimeType") or "")
            if not any(name.lower().endswith(s) for s in LOADABLE) and mime.split(";")[0] not in SUFFIXES:
                continue
            path = path_of(item_id)
            if path is None or not path.startswith(prefix):
                continue
            token = item.get("cTag") or item.get("eTag")
            if not token:
                raise SourceUnavailable(f"{self.where}: delta listing: item {item_id} has neither cTag nor eTag "
                                        "(a malformed answer)")
            yield SourceItem(item_id, str(token), title=name, url=str(item.get("webUrl") or ""),
                             readers=self._readers(drive, item_id), content_type=mime)

    def fetch(self, item: SourceItem) -> FetchedItem:
        drive = self._drive()
        try:
            response = self._get(f"/drives/{_seg(drive)}/items/{_seg(item.item_id)}/content",
                                 f"content of {item.title}")
        except (_Refused, SourceUnavailable) as exc:
            raise SourceItemFailed(f"{self.where}: {item.title or item.item_id}: {exc}") from exc
        kind = response.headers.get("content-type", "") or item.content_type
        return FetchedItem(item.item_id, response.content, suffix_for(kind, item.title))
