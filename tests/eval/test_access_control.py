"""Access control end to end, on real files, the real model and the real store: manifest
ACLs through ingest, principals from API keys, 401/403/404 over HTTP, visibility inside
every search, the deny default, ACL changes without re-embedding, golden queries run as a
principal, the audit column and the denial counters."""

from __future__ import annotations

import json
import re
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from flask.testing import FlaskClient

from click.testing import CliRunner

from backend.api.app import create_app
from backend.runtime import build_services
from backend.cli.main import cli
from backend.common.errors import EvaluationError, ManifestError
from backend.core.services.evaluation import Evaluator
from backend.core.golden import load_golden_set
from tests.promoting import promote
from backend.core.types import QueryVector
from backend.ingest.manifest import read_manifest
from backend.ingest.pipeline import IngestPipeline
from backend.providers.sqlite_vs.store import SqliteVectorStore
from tests.eval.lifecycle import ALIAS, FIGURE_Q, GOLDEN, LEAVE_Q, VERSION, lifecycle_settings, write_kb
from tests.ingest.helpers import write_config

KEYS = {"alice": "key-alice-7f3a", "bob": "key-bob-19c2", "dave": "key-dave-55e0"}
PRINCIPALS = {
    "alice": {"groups": ["hr"], "domains": ["default"]},  # HR staff: the default alias only
    "bob": {"groups": ["facilities"], "domains": ["*"]},  # facilities: every domain
    "dave": {"groups": [], "domains": ["default"]},  # nobody special: public documents only
}
#: doc_id -> manifest acl (None: no acl on the line, so the default applies)
ACLS: dict[str, list[str] | None] = {"leave": ["group:hr"], "vpn": ["public"], "expenses": ["user:carol", "bob"],
                                     "floor": ["group:facilities"], "secret": None}
SECRET_TEXT = "The merger code name is Bluefin and the board meets on the third floor."
VISIBLE = {"alice": {"leave", "vpn"}, "bob": {"vpn", "expenses", "floor"}, "dave": {"vpn"}}


def write_acl_manifest(root: Path, acls: dict[str, list[str] | None]) -> Path:
    files = {"leave": "leave.md", "vpn": "vpn.txt", "expenses": "expenses.txt", "floor": "floor.docx",
             "secret": "secret.txt"}
    (root / "secret.txt").write_text(SECRET_TEXT + "\n", encoding="utf-8")
    lines = []
    for doc_id, acl in acls.items():
        line: dict[str, Any] = {"path": files[doc_id], "doc_id": doc_id, "tags": ["policy"]}
        if acl is not None:
            line["acl"] = acl
        lines.append(json.dumps(line))
    manifest = root / "manifest.jsonl"
    manifest.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return manifest


class AclKB:
    def __init__(self, tmp_path: Path, embedder: Any, golden: list[dict[str, Any]] | None = None,
                 **overrides: Any) -> None:
        self.root = tmp_path / "kb"
        write_kb(self.root)
        self.manifest = write_acl_manifest(self.root, ACLS)
        principals = {name: {**p, "api_key": KEYS[name]} for name, p in PRINCIPALS.items()}
        self.settings = lifecycle_settings(tmp_path, self.root, access={"enabled": True, "principals": principals},
                                           **overrides)
        if golden is not None:
            path = tmp_path / "golden.jsonl"
            path.write_text("".join(json.dumps(q) + "\n" for q in golden))
        self.db = self.settings.resolve_path(self.settings.store.sqlite.path)
        self.store = SqliteVectorStore(self.db)
        self.embedder = embedder
        self.app = create_app(self.settings, build_services(self.settings, store=self.store, embedder=embedder))
        self.client: FlaskClient = self.app.test_client()

    def ingest(self) -> Any:
        return IngestPipeline.from_settings(self.settings, self.store, self.embedder).run(self.manifest)

    def promote(self, **kw: Any) -> Any:
        return promote(self.settings, self.store, self.embedder, **kw)

    def chat(self, who: str | None, question: str, domain: str | None = None) -> Any:
        headers = {"X-API-Key": KEYS[who]} if who else {}
        if domain:
            headers["X-RAG-Domain"] = domain
        return self.client.post("/chat", json={"question": question}, headers=headers)

    def search(self, who: str, q: str, top_k: int = 50, domain: str | None = None, **params: Any) -> Any:
        headers = {"X-API-Key": KEYS[who], **({"X-RAG-Domain": domain} if domain else {})}
        return self.client.get("/search", query_string={"q": q, "top_k": top_k, **params}, headers=headers)

    def metric(self, reason: str) -> float:
        # with access control on, /metrics needs a credential like the API (issue 34)
        text = self.client.get("/metrics", headers={"X-API-Key": KEYS["alice"]}).get_data(as_text=True)
        m = re.search(rf'^rag_access_denials_total\{{reason="{reason}"\}} ([0-9.]+)$', text, re.M)
        return float(m.group(1)) if m else 0.0


@pytest.fixture
def kb(tmp_path: Path, embedder: Any) -> AclKB:
    kb = AclKB(tmp_path, embedder)
    kb.ingest()
    kb.promote()
    assert kb.store.resolve_alias(ALIAS) == VERSION
    return kb


def test_acls_from_the_manifest_are_stored_with_every_chunk_and_the_default_denies(kb: AclKB) -> None:
    every = kb.store.search(VERSION, QueryVector(kb.embedder.embed_queries(["policy"])[0], kb.embedder.model_id), 100)
    by_doc: dict[str, set[tuple[str, ...]]] = {}
    for h in every.hits:
        by_doc.setdefault(h.chunk.doc_id, set()).add(tuple(h.chunk.metadata["rag_acl"]))
    assert by_doc == {"leave": {("group:hr",)}, "vpn": {("public",)}, "expenses": {("user:bob", "user:carol")},
                      "floor": {("group:facilities",)}, "secret": {()}}
    # the figure chunk of the DOCX carries its document's ACL too
    assert any(h.chunk.chunk_type == "figure" and h.chunk.doc_id == "floor" for h in every.hits)
    # a document without acl is stored (so an ACL can be given later) but nobody may see it
    for who in KEYS:
        body = kb.search(who, "merger code name board meeting").get_json()
        assert "secret" not in {h["doc_id"] for h in body["hits"]}, who


@pytest.mark.parametrize("strategy", ["dense", "lexical", "fusion"])
def test_search_returns_exactly_the_visible_chunks_under_every_strategy(kb: AclKB, strategy: str) -> None:
    for who, visible in VISIBLE.items():
        response = kb.search(who, "annual leave VPN travel expenses evacuation route merger", strategy=strategy)
        assert response.status_code == 200, response.get_json()
        hits = response.get_json()["hits"]
        assert hits and {h["doc_id"] for h in hits} <= visible, (who, strategy)
        assert all("rag_acl" not in h["metadata"] for h in hits)  # who else may read it is not shown
        if strategy == "dense":  # top_k 50 > every chunk: exactly the visible ones, none missing
            assert {h["doc_id"] for h in hits} == visible, who


def test_chat_decides_and_answers_on_visible_chunks_only(kb: AclKB) -> None:
    alice = kb.chat("alice", LEAVE_Q)
    assert alice.status_code == 200
    body = alice.get_json()
    assert body["mode"] == "rag" and "25 days" in body["answer"]
    assert "leave" in {c["doc_id"] for c in body["citations"]}

    dave = kb.chat("dave", LEAVE_Q)
    assert dave.status_code == 200
    body = dave.get_json()
    text = json.dumps(body)
    assert {r["doc_id"] for r in body["retrieved_chunks_metadata"]} <= VISIBLE["dave"]
    assert {c["doc_id"] for c in body["citations"]} <= VISIBLE["dave"]
    assert "25 days" not in text and "leave.md" not in text and "rag_acl" not in text
    assert body["mode"] != "rag"  # the leave chunk that makes alice's answer rag is not dave's to see
    assert body["decision_explain"]["max_similarity"] < alice.get_json()["decision_explain"]["max_similarity"]

    secret = kb.chat("bob", "What is the merger code name?").get_json()
    assert "Bluefin" not in json.dumps(secret)


def test_the_read_only_console_shows_a_non_admin_counts_never_restricted_documents(tmp_path: Path,
                                                                                   embedder: Any) -> None:
    """Issue 49 M1, the leak test extended to the read-only console: a principal who sees only the
    public document reads every console endpoint and learns no restricted document's name, source,
    text, golden question or per-query evaluation; it sees counts."""
    kb = AclKB(tmp_path, embedder, admin={"non_admins": "read_only"})
    kb.ingest()
    kb.promote()
    from backend.api import jobs

    job_id = "e" * 32
    jobs.write_job(jobs.jobs_dir(kb.settings), {
        "id": job_id, "kind": "upload", "key": "default", "state": "succeeded", "stage": "done", "done": 1,
        "total": 1, "message": "KB_LC_V2 is ready (1 file could not be read: see the refused list)",
        "result": {"refused": [{"file": "secret.txt", "reason": "corrupt"}]}, "created_at": "t", "updated_at": "t",
        "principal": "root", "pid": 1, "host": "elsewhere"})
    dave = {"X-API-Key": KEYS["dave"]}
    base = "/admin/knowledge-bases/default"
    pages = {path: kb.client.get(path, headers=dave) for path in (
        "/admin/knowledge-bases", f"{base}/documents", f"{base}/versions", f"{base}/golden", f"{base}/feedback",
        f"{base}/versions/{VERSION}/evaluation", f"/admin/jobs/{job_id}")}
    assert {path: r.status_code for path, r in pages.items()} == dict.fromkeys(pages, 200)
    seen = "\n".join(r.get_data(as_text=True) for r in pages.values())
    hidden = ["leave", "expenses", "floor", "secret", "Bluefin", "merger", "annual leave", "travel expenses",
              "golden.jsonl", str(tmp_path)]
    assert [word for word in hidden if word in seen] == []
    documents = pages[f"{base}/documents"].get_json()
    assert (documents["version"], documents["documents"], documents["hidden"]) == (VERSION, [], 5)
    golden = pages[f"{base}/golden"].get_json()
    assert (golden["queries"], golden["hidden"], golden["path"]) == ([], len(GOLDEN), "(shown to admins)")
    assert {k: pages[f"/admin/jobs/{job_id}"].get_json()[k] for k in ("result", "message")} == {
        "result": None, "message": "upload job succeeded"}
    evaluation = pages[f"{base}/versions/{VERSION}/evaluation"].get_json()
    assert (evaluation["queries"], evaluation["hidden"]) == ([], len(GOLDEN))
    assert evaluation["gates_passed"] is True and evaluation["metrics"]["recall_at_k"] > 0
    # the admin, for comparison, reads the names (so the words above are really there to leak)
    root = make_root_admin(kb)
    full = root.get(f"{base}/documents", headers={"X-API-Key": "key-root-0c41"}).get_json()
    assert {d["doc_id"] for d in full["documents"]} == set(ACLS) and full["hidden"] == 0


def make_root_admin(kb: AclKB) -> FlaskClient:
    """The same store served with one more principal, ``root``, holding the admin role."""
    principals = {name: {**p, "api_key": KEYS[name]} for name, p in PRINCIPALS.items()}
    principals["root"] = {"domains": ["*"], "roles": ["admin"], "api_key": "key-root-0c41"}
    settings = kb.settings.model_copy(update={"access": type(kb.settings.access).model_validate(
        {"enabled": True, "principals": principals})})
    return create_app(settings, build_services(settings, store=kb.store, embedder=kb.embedder)).test_client()


def test_missing_or_wrong_credentials_answer_401_and_are_counted(kb: AclKB) -> None:
    before = kb.metric("unauthenticated")
    assert kb.chat(None, LEAVE_Q).status_code == 401
    wrong = kb.client.post("/chat", json={"question": LEAVE_Q}, headers={"X-API-Key": "not-a-key"})
    assert wrong.status_code == 401 and wrong.get_json()["error"]["code"] == "unauthorized"
    assert "not-a-key" not in wrong.get_data(as_text=True)
    assert kb.client.get("/search", query_string={"q": "leave"}).status_code == 401
    assert kb.client.get("/healthz").status_code == 200  # probes stay open
    assert kb.metric("unauthenticated") == before + 3


def test_a_domain_the_principal_may_not_use_answers_403_on_every_route(kb: AclKB) -> None:
    before = kb.metric("domain")
    chat = kb.chat("alice", LEAVE_Q, domain="handbook")
    assert chat.status_code == 403
    error = chat.get_json()["error"]
    assert (error["code"], error["message"]) == ("forbidden", "principal 'alice' may not use domain handbook")
    assert kb.search("alice", "leave", domain="handbook").status_code == 403
    assert kb.client.get("/assets/x/img.png", headers={"X-API-Key": KEYS["dave"],
                                                       "X-RAG-Domain": "handbook"}).status_code == 403
    assert kb.metric("domain") == before + 3
    # bob may use every domain: the handbook alias is not built here, so the store answers, not access control
    assert kb.chat("bob", LEAVE_Q, domain="handbook").status_code != 403


def test_a_figure_answers_404_to_principals_who_may_not_see_its_document(kb: AclKB) -> None:
    [ref] = kb.store.asset_refs(VERSION)
    url = f"/assets/{ref}"
    ok = kb.client.get(url, headers={"X-API-Key": KEYS["bob"]})
    assert ok.status_code == 200 and ok.mimetype == "image/png" and ok.data[:4] == b"\x89PNG"
    before = kb.metric("asset")
    hidden = kb.client.get(url, headers={"X-API-Key": KEYS["alice"]})
    missing = kb.client.get(f"/assets/{ref.rsplit('/', 1)[0]}/img_999_missing.png",
                            headers={"X-API-Key": KEYS["alice"]})
    assert hidden.status_code == missing.status_code == 404
    assert hidden.get_json()["error"]["code"] == missing.get_json()["error"]["code"] == "asset_not_found"
    assert kb.metric("asset") == before + 2
    assert kb.client.get(url).status_code == 401


def test_a_signed_figure_link_names_its_principal_and_refuses_another_principal_s_key(kb: AclKB) -> None:
    """Issue 49 L4: the link bob's answer carries is signed for bob (``&p=bob``); alice's key with
    it used to load a figure she may not see; a link whose ``p`` is changed is no signature at all."""
    from tests.api.test_stream_api import events

    resp = kb.client.post("/chat/stream", json={"question": FIGURE_Q}, headers={"X-API-Key": KEYS["bob"]})
    [link] = {s["image_url"] for name, data in events(resp) if name == "done" for s in data["sources"]
              if s["image_url"]}
    assert link.endswith("&p=bob") and "?exp=" in link and "&sig=" in link
    assert kb.client.get(link).status_code == 200  # an <img> sends no key: the link stands in for bob's
    assert kb.client.get(link, headers={"X-API-Key": KEYS["bob"]}).status_code == 200
    other = kb.client.get(link, headers={"X-API-Key": KEYS["alice"]})
    assert (other.status_code, other.get_json()["error"]["code"]) == (404, "asset_not_found")
    assert kb.client.get(link.replace("&p=bob", "&p=alice")).status_code == 401
    assert kb.client.get(link.replace("&p=bob", "")).status_code == 401


def test_interactions_record_the_principal_and_never_the_key(kb: AclKB) -> None:
    kb.chat("alice", LEAVE_Q)
    kb.chat("dave", "How do I sign in to the VPN?")
    recent = kb.store.interactions(limit=2)
    assert [r.principal for r in recent] == ["dave", "alice"]
    with sqlite3.connect(kb.db) as con:
        dump = "\n".join(con.iterdump())
    assert not any(key in dump for key in KEYS.values())


def test_an_acl_change_builds_a_new_version_without_embedding_and_only_the_gate_serves_it(kb: AclKB) -> None:
    assert "leave" not in {h["doc_id"] for h in kb.search("dave", LEAVE_Q).get_json()["hits"]}
    write_acl_manifest(kb.root, {**ACLS, "leave": ["public"]})
    report = kb.ingest()
    [build] = report.builds
    assert (build["action"], build["version"], build["parent"], build["written"]) == (
        "new_version", "KB_LC_V2", VERSION, ["leave"])
    assert report.embeddings_computed == 0 and report.embeddings_reused > 0
    # served version untouched until the gate promotes the new one
    assert kb.store.resolve_alias(ALIAS) == VERSION
    assert "leave" not in {h["doc_id"] for h in kb.search("dave", LEAVE_Q).get_json()["hits"]}
    result = kb.promote()
    assert (result.promoted, result.version) == (True, "KB_LC_V2")
    assert "leave" in {h["doc_id"] for h in kb.search("dave", LEAVE_Q).get_json()["hits"]}


def test_golden_queries_run_as_their_principal_and_the_report_splits_by_principal(tmp_path: Path,
                                                                                  embedder: Any) -> None:
    golden: list[dict[str, Any]] = [*GOLDEN,
              {"id": "p1", "query": LEAVE_Q, "expected_sources": {"leave": 3}, "expected_mode": "rag",
               "principal": "alice"},
              {"id": "p2", "query": LEAVE_Q, "expected_mode": "fallback", "principal": "dave"}]
    kb = AclKB(tmp_path, embedder, golden=golden)
    kb.ingest()
    result = kb.promote()
    report = result.report
    by_id = {q.id: q for q in report.queries}
    assert by_id["p1"].decided_mode == "rag" and "leave" in by_id["p1"].ranked_doc_ids
    assert "leave" not in by_id["p2"].ranked_doc_ids and set(by_id["p2"].ranked_doc_ids) <= VISIBLE["dave"]
    assert by_id["p2"].decided_mode == "fallback"
    assert set(report.by_principal) == {"(unrestricted)", "alice", "dave"}
    assert report.by_principal["alice"]["queries"] == 1 and report.by_principal["dave"]["mode_accuracy"] == 1.0

    # rag eval prints the same split (principals come from the config; no key is needed to evaluate)
    config = write_config(tmp_path, kb.root, name="cli.yaml", db="rag.sqlite",
                          access={"enabled": True, "principals": PRINCIPALS},
                          embeddings={"profiles": {"sample": kb.settings.embeddings.profiles["sample"].model_dump(
                              mode="json")}})
    run = CliRunner().invoke(cli, ["--config", str(config), "eval", "--version", VERSION, "--golden",
                                   str(tmp_path / "golden.jsonl"), "--no-answers"])
    assert run.exit_code == 0, run.output
    rows = {line.split()[0]: line.split()[1:] for line in run.stdout.splitlines()
            if line.split() and line.split()[0] in ("alice", "dave", "(unrestricted)")}
    assert rows["alice"][:2] == ["1", "1.0000"] and rows["dave"][0] == "1" and rows["(unrestricted)"][0] == "4"

    # the operator CLI can look as a principal too
    as_dave = CliRunner().invoke(cli, ["--config", str(config), "search", LEAVE_Q, "--top-k", "20", "--json",
                                       "--as", "dave"])
    assert as_dave.exit_code == 0, as_dave.output
    assert {h["doc_id"] for h in json.loads(as_dave.stdout)["hits"]} == VISIBLE["dave"]
    everything = CliRunner().invoke(cli, ["--config", str(config), "search", LEAVE_Q, "--top-k", "20", "--json"])
    assert "leave" in {h["doc_id"] for h in json.loads(everything.stdout)["hits"]}
    denied = CliRunner().invoke(cli, ["--config", str(config), "ask", LEAVE_Q, "--as", "dave", "--domain", "handbook"])
    assert denied.exit_code != 0 and "principal 'dave' may not use domain handbook" in denied.output

    (tmp_path / "bad.jsonl").write_text(json.dumps(
        {"id": "x", "query": LEAVE_Q, "expected_mode": "fallback", "principal": "mallory"}) + "\n")
    evaluator = Evaluator(kb.store, kb.store, embedder, embeddings=kb.settings.embeddings,
                          retrieval=kb.settings.retrieval, evaluation=kb.settings.evaluation,
                          access=kb.settings.access)
    with pytest.raises(EvaluationError, match="golden query x: principal 'mallory' is not configured"):
        evaluator.evaluate(VERSION, load_golden_set(tmp_path / "bad.jsonl"))


def test_bad_acl_entries_and_a_reserved_metadata_key_are_manifest_errors(kb: AclKB) -> None:
    bad = kb.root / "bad.jsonl"
    bad.write_text(json.dumps({"path": "vpn.txt", "acl": ["group:"]}) + "\n"
                   + json.dumps({"path": "vpn.txt", "doc_id": "v2", "acl": ["role:admin"]}) + "\n"
                   + json.dumps({"path": "vpn.txt", "doc_id": "v3", "metadata": {"rag_acl": ["public"]}}) + "\n"
                   + json.dumps({"path": "vpn.txt", "doc_id": "v4", "acl": "public"}) + "\n")
    parsed = read_manifest(bad, kb.settings)
    assert parsed.entries == []
    reasons = [reason for _, reason in parsed.errors]
    assert "acl: invalid entry 'group:'" in reasons[0] and "acl: invalid entry 'role:admin'" in reasons[1]
    assert "'rag_acl' is reserved for access control" in reasons[2]
    assert "acl" in reasons[3]
    with pytest.raises(ManifestError, match="bad.jsonl:1: acl: invalid entry"):
        read_manifest(bad, kb.settings, strict=True)
