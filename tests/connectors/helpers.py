"""What the connector tests share: a runtime over a real SQLite store and the session's real
embedder, a declared connector, and searches as a principal."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from backend.common.config import ConnectorSpec, Settings
from backend.connectors.sync import SyncReport, sync_connector
from backend.core.connector import Connector
from backend.core.search_request import SearchRequest
from backend.core.types import Visibility
from backend.providers.sqlite_vs.store import SqliteVectorStore
from tests.conftest import kb_runtime, make_settings

PERMISSIONS = {"groups": {"hr-staff": "group:hr", "all-staff": "group:staff"}, "domains": {"corp.example": "group:staff"},
               "users": {"dana@corp.example": "user:dana"}, "everyone": "group:staff"}


class Synced:
    """A knowledge base fed by one connector: sync it, search it as someone."""

    def __init__(self, tmp_path: Path, embedder: Any, kind: str, options: dict[str, Any], *,
                 kb: str = "synced", **spec: Any) -> None:
        self.settings: Settings = make_settings(tmp_path)
        self.store = SqliteVectorStore(tmp_path / "rag.sqlite")
        self.embedder = embedder
        self.kb = kb
        self.spec = ConnectorSpec.model_validate({"kind": kind, "knowledge_base": kb, "options": options,
                                                  "permissions": PERMISSIONS, **spec})

    def runtime(self) -> Any:
        return kb_runtime(self.settings, self.store, self.embedder)

    def sync(self, connector: Connector, **kw: Any) -> SyncReport:
        return sync_connector(self.runtime(), "src", self.spec, connector, **kw)

    @property
    def alias(self) -> str:
        return "KB_" + self.kb.upper().replace("-", "_")

    def served(self) -> str | None:
        return self.store.resolve_alias(self.alias)

    def docs(self, version: str | None = None) -> dict[str, str]:
        return self.store.document_hashes(version or self.served() or "")

    def top(self, question: str, who: str | None = None, groups: tuple[str, ...] = (), k: int = 3) -> list[str]:
        """The doc ids of the served version's best hits for ``question`` as ``who`` (None: unrestricted)."""
        runtime = self.runtime()
        visibility = None if who is None else Visibility.of(who, groups)
        outcome = runtime.search.search(SearchRequest(question, self.alias, k, visibility=visibility))
        return [hit.chunk.doc_id for hit in outcome.hits]

    def acl(self, doc_id: str) -> list[str]:
        """The ACL labels stored on ``doc_id``'s first chunk in the served version."""
        chunk = self.store.fetch_chunks(self.served() or "", [f"{doc_id}::0"])[f"{doc_id}::0"]
        return list(chunk.metadata.get("rag_acl", []))
