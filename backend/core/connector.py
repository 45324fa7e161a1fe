"""The ``Connector`` port: a source of documents a knowledge base is synced from.

Why a port of its own: a folder, a bucket, a git repository, a web site and a table answer the
same two questions, *what is there now* (``list_items``: one ``SourceItem`` per document, with a
change token) and *give me this one* (``fetch``: its bytes). The sync engine
(``backend/connectors/sync.py``) diffs the listing against the knowledge base's sync state
(``backend/core/sync_diff.py``) and fetches only what is new or changed, so a connector never
decides what changed and never talks to the store.

``readers`` are the source's own names for who may read an item (``user:alice@corp.com``,
``group:hr-staff``, ``everyone``, ``public``); ``None`` means the source did not say (unknown
permissions: admins only). They are mapped to the runtime's ACL labels by
``backend/core/permission_map.py``, never taken as labels directly.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Protocol, runtime_checkable


@dataclass(frozen=True)
class SourceItem:
    """One document as the source lists it. ``token`` changes whenever the content does (an ETag,
    ``mtime:size:sha256``, a git blob id, a change column); ``readers`` None: the source gave no
    permissions for it."""

    item_id: str
    token: str
    title: str = ""
    url: str = ""
    readers: tuple[str, ...] | None = ()
    content_type: str = ""


@dataclass(frozen=True)
class FetchedItem:
    """One item's bytes, with the file suffix its content type maps to (``.md``, ``.html``)."""

    item_id: str
    content: bytes
    suffix: str


@runtime_checkable
class Connector(Protocol):
    """A source of documents. ``list_items`` raises ``SourceUnavailable`` when the source cannot be
    listed (nothing is diffed from a partial listing); ``fetch`` raises ``SourceItemFailed`` for
    one item that cannot be read (the sync reports it and goes on)."""

    @property
    def kind(self) -> str: ...

    def list_items(self) -> Iterable[SourceItem]: ...

    def fetch(self, item: SourceItem) -> FetchedItem: ...


#: content type -> the suffix the loaders read it by (``backend/ingest/loaders``)
SUFFIXES = {"text/markdown": ".md", "text/x-markdown": ".md", "text/plain": ".txt", "text/html": ".html",
            "application/xhtml+xml": ".html", "application/pdf": ".pdf",
            "application/vnd.openxmlformats-officedocument.wordprocessingml.document": ".docx"}
LOADABLE = frozenset(SUFFIXES.values()) | {".markdown", ".htm"}


def suffix_for(content_type: str, name: str = "") -> str:
    """Pure: the loader suffix of an item, from its name when that has a loadable one, else from its
    content type (``text/plain`` when neither says)."""
    lowered = name.lower()
    for suffix in sorted(LOADABLE, key=len, reverse=True):
        if lowered.endswith(suffix):
            return suffix
    return SUFFIXES.get(content_type.split(";")[0].strip().lower(), ".txt")
