"""Knowledge bases made at run time (the registry's entries) and the admin console."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, ValidationInfo, field_validator

from backend.common.config.base import _Model, validate_table_name


class KnowledgeBasesSettings(_Model):
    """Knowledge bases made with `rag kb create` (docs/KNOWLEDGE_BASES.md): a registry the runtime writes."""

    registry_file: str = Field(
        "data/knowledge-bases.yaml", description="YAML registry written only by the runtime (`rag kb create`, "
        "uploads); each entry is merged into `embeddings.domains` and its folders into `ingest.allowed_roots`.")
    dir: str = Field("data/kb", description="Per-knowledge-base workspace: `<dir>/<key>/manifests/` (each run's "
                     "manifest), `uploads/`, `golden.generated.jsonl` (the starter golden set).")
    max_upload_bytes: int = Field(20_000_000, ge=1, description="Largest file accepted by an upload from the page.")
    max_files_per_upload: int = Field(20, ge=1, description="Most files one upload from the page may carry.")


class RegisteredKnowledgeBase(_Model):
    """One entry of the knowledge-base registry (`knowledge_bases.registry_file`)."""

    title: str | None = Field(None, max_length=80)
    source_dir: str | None = Field(None, min_length=1, description="Folder the knowledge base was created from.")
    index_name: str
    alias_name: str
    profile: str | None = None
    golden_set: str | None = None
    created_at: str | None = None
    created_by: str | None = None

    @field_validator("title")
    @classmethod
    def _title(cls, v: str | None) -> str | None:
        from backend.common.display_text import spoofing_problem

        problem = spoofing_problem(v) if v else None
        if problem:
            raise ValueError(f"the title {problem}")
        return v

    @field_validator("index_name", "alias_name")
    @classmethod
    def _ident(cls, v: str, info: ValidationInfo) -> str:
        return validate_table_name(v, "alias name" if info.field_name == "alias_name" else "index_name")

    def domain(self) -> dict[str, Any]:
        """The `embeddings.domains.<key>` entry it stands for."""
        return {k: v for k, v in (("index_name", self.index_name), ("alias_name", self.alias_name),
                                  ("profile", self.profile), ("golden_set", self.golden_set),
                                  ("title", self.title)) if v is not None}


class AdminSettings(_Model):
    """The admin console and its /admin endpoints (docs/ADMIN.md): who may use them."""

    enabled: bool = Field(True, description="Serve the /admin endpoints (and the page's admin console); off: 404.")
    non_admins: Literal["hidden", "read_only"] = Field(
        "hidden", description="What a principal without the `admin` role gets: `hidden` (403 on every /admin "
        "endpoint but /admin/me) or `read_only` (it may read knowledge bases, versions, evaluations, feedback and "
        "golden sets of the domains it may use; every write still answers 403).")
    local_admin_without_access: bool = Field(
        True, description="With access control off (the single-user default), a request from 127.0.0.1 or ::1 "
        "that no proxy relayed and that carries the admin token (the cookie set by the link `rag serve` prints, or "
        "the `X-RAG-Admin-Token` header) is the admin; any other caller is a non-admin (`non_admins` decides its "
        "reads; writes answer 403).")
    token_file: str | None = Field(
        None, description="Where the local admin's random token is kept (0600, read by every worker; `rag serve` "
        "writes a new one at each start, so an earlier link stops working). Default: `admin-token` in "
        "`knowledge_bases.dir`.")
