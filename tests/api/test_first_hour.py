"""Acceptance of issue 32: a new user's first hour, end to end, in a real headless Chromium.

One real server (werkzeug on 127.0.0.1, the real SQLite store and local model) is started
once and never restarted. A folder of the user's own mixed files (Markdown, text, HTML, a
DOCX with a figure made with python-docx and Pillow, a PDF made with fpdf2) becomes a
knowledge base with ``rag kb create`` run as a separate process on the same temp store,
registry and workspace (environment variables only point at them). The page then shows the
new knowledge base, its generated starter golden set and the gate's figures; a question
answered by the PDF gets its answer with a citation, one about the DOCX shows its figure; a changed file is uploaded from the
page, its candidate's evaluation is read question by question, promoted (and the new
section is answered), and rolled back. Screenshots at desktop and 375 px go to
``$RAG_TEST_ARTIFACTS`` (and docs/img/ with ``RAG_TEST_DOC_IMAGES=1``).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Iterator

import pytest

from backend.common.config import Settings
from tests.api.admin_corpus import REMOTE_WORK_CHANGED, write_mixed_folder
from tests.api.test_admin_ui import new_page, shoot
from tests.api.test_web_ui import ARTIFACTS, assert_accessible, browser, serving  # noqa: F401 (browser: a fixture)
from tests.conftest import REPO, make_settings

KEY, TITLE, ALIAS = "policies-2026", "Policies 2026", "KB_POLICIES_2026"
BICYCLE_Q = "How much is the bicycle allowance per kilometre?"
ABROAD_Q = "For how many days per year may I work from another country?"
FIGURE_Q = "Where is the emergency eyewash station in the greenhouse lab?"


@pytest.fixture(scope="module")
def first_hour(tmp_path_factory: pytest.TempPathFactory) -> tuple[Settings, Path, dict[str, str]]:
    """Temp settings, the user's folder, and the environment that points the CLI at the same store."""
    root = tmp_path_factory.mktemp("first-hour")
    settings = make_settings(root, server={"rate_limit": {"enabled": False}})
    folder = write_mixed_folder(root / "my-documents")
    env = {**os.environ,
           "RAG_STORE__SQLITE__PATH": settings.store.sqlite.path,
           "RAG_ASSETS_DIR": settings.docx.assets_dir,
           "RAG_EVALUATION__REPORTS_DIR": settings.evaluation.reports_dir,
           "RAG_KNOWLEDGE_BASES__REGISTRY_FILE": settings.knowledge_bases.registry_file,
           "RAG_KNOWLEDGE_BASES__DIR": settings.knowledge_bases.dir}
    return settings, folder, env


@pytest.fixture(scope="module")
def server(first_hour: tuple[Settings, Path, dict[str, str]], embedder: Any, extractive: Any
           ) -> Iterator[tuple[str, Any]]:
    """The one server of the whole hour (its store: the same SQLite file the CLI writes)."""
    from backend.providers.sqlite_vs.store import SqliteVectorStore

    settings = first_hour[0]
    store = SqliteVectorStore(settings.resolve_path(settings.store.sqlite.path))
    with serving(settings, store, embedder, extractive) as url:
        yield url, store
    store.close()


def rag_cli(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """``rag ...`` as the user types it, in its own process."""
    exe = Path(sys.executable).with_name("rag")
    command = [str(exe)] if exe.is_file() else [sys.executable, "-m", "backend.cli.main"]
    return subprocess.run([*command, *args], env=env, cwd=REPO, capture_output=True, text=True, timeout=600)


def ask(page: Any, question: str) -> Any:
    before = page.locator("li.turn").count()
    page.locator("#question").fill(question)
    page.locator("#question").press("Enter")
    page.wait_for_selector(f"li.turn:nth-child({before + 1})[data-done]")
    turn = page.locator("li.turn").nth(before)
    assert turn.get_attribute("data-done") == "true", turn.inner_text()
    return turn


def open_kb(page: Any) -> None:
    page.get_by_role("link", name="Knowledge bases", exact=True).click()
    page.wait_for_selector("#kb-detail[data-loaded]")
    page.locator("#kb-list").get_by_role("button", name=TITLE).click()
    page.wait_for_selector(f"#kb-detail[data-loaded='{KEY}']")


def test_the_first_hour(browser: Any, server: tuple[str, Any],  # noqa: F811 (browser: the imported fixture)
                        first_hour: tuple[Settings, Path, dict[str, str]]) -> None:
    from playwright.sync_api import expect

    url, store = server
    settings, folder, env = first_hour
    started = time.monotonic()
    page = new_page(browser)
    from backend.api.admin_session import admin_link, read_token

    page.goto(admin_link(url, read_token(settings)))  # the link `rag serve` prints (issue 49 H1)
    page.wait_for_selector("#domain option", state="attached")
    assert TITLE not in page.locator("#domain option").all_inner_texts()  # not there yet

    # 1. a knowledge base from the folder, in one command, while the server runs
    created = rag_cli("kb", "create", KEY, "--from", str(folder), "--title", TITLE, env=env)
    assert created.returncode == 0, created.stdout + created.stderr
    assert "GENERATED starter set" in created.stdout and f"{ALIAS} -> {ALIAS}_V1" in created.stdout, created.stdout
    assert store.resolve_alias(ALIAS) == f"{ALIAS}_V1"

    # 2. the open page sees it, without a server restart or a reload: console, generated golden
    #    set, the gate's figures; then the chat's picker
    open_kb(page)
    docs = page.locator("table.documents tbody tr").evaluate_all("rs => rs.map(r => r.dataset.doc)")
    assert sorted(docs) == ["bicycle-allowance.pdf", "greenhouse-lab.docx", "remote-work.md", "security.html",
                            "travel.txt"], docs
    expect(page.locator("#golden .callout")).to_contain_text("Generated starter set — replace it with real questions.")
    assert page.locator("#evaluation-title").inner_text() == f"Evaluation of {ALIAS}_V1"
    gates = page.locator("#evaluation .admin-gates li")
    assert gates.count() >= 4 and gates.locator(".gate-state").all_inner_texts() == ["✓ passed"] * gates.count()
    recall = page.locator("table.metrics tr[data-metric='recall_at_k'] td").last.inner_text()
    assert float(recall) >= 0.85, recall
    assert_accessible(page)
    shoot(page, "first-hour-console", window=True, doc=("desktop", "375"))

    # 3. a question whose answer is in the new PDF, answered with a citation
    page.get_by_role("link", name="Chat").click()
    page.wait_for_selector(f"#domain option[value='{KEY}']", state="attached")
    assert TITLE in page.locator("#domain option").all_inner_texts()
    page.locator("#domain").select_option(KEY)
    turn = ask(page, BICYCLE_Q)
    assert turn.locator(".badge").inner_text() == "Mode: rag"
    assert "25 cents per kilometre" in turn.locator(".answer-text").inner_text()
    turn.locator("button.cite").first.click()
    source = turn.locator("details.source[open]").first
    assert "bicycle-allowance.pdf" in source.locator(".doc").inner_text()
    shoot(page, "first-hour-answer", doc=("375",))
    turn = ask(page, FIGURE_Q)  # the DOCX's figure, extracted by the CLI process, served by the server
    thumb = turn.locator("img.thumb").first
    thumb.wait_for()
    page.wait_for_function("img => img.complete && img.naturalWidth > 0", arg=thumb.element_handle())
    assert "greenhouse-lab.docx" in thumb.get_attribute("alt")

    # 4. a changed file uploaded from the page: progress, then the candidate's evaluation
    open_kb(page)
    page.set_input_files("#upload-files", [{"name": "remote-work.md", "mimeType": "text/markdown",
                                            "buffer": REMOTE_WORK_CHANGED.encode()}])
    page.get_by_role("button", name="Upload and evaluate").click()
    expect(page.locator("#upload-progress")).to_be_visible()
    expect(page.locator("#upload-result h5")).to_have_text(f"Candidate {ALIAS}_V2 is ready", timeout=180_000)
    expect(page.locator("#upload-result")).to_contain_text("Nothing is served until you promote")
    assert store.resolve_alias(ALIAS) == f"{ALIAS}_V1"
    assert page.locator("#evaluation-title").inner_text() == f"Evaluation of {ALIAS}_V2"
    rows = page.locator("table.queries tbody tr")
    assert rows.count() >= 6 and page.locator("table.queries thead").inner_text().split() == [
        "Question", "Expected", "Live", "This", "version", "Change"]
    assert set(rows.evaluate_all("rs => rs.map(r => r.dataset.change)")) <= {"win", "loss", "same", "new"}
    assert "against " + f"{ALIAS}_V1" in page.locator("#evaluation .summary").inner_text()
    shoot(page, "first-hour-upload", "#upload")
    shoot(page, "first-hour-evaluation", "#evaluation", doc=("desktop",))

    # 5. promote it, after the confirmation; the new section is answered
    page.locator("#evaluation").get_by_role("button", name=f"Promote {ALIAS}_V2").click()
    page.locator("#confirm-admin").get_by_role("button", name=f"Promote {ALIAS}_V2").click()
    expect(page.locator("#admin-message")).to_contain_text(f"{ALIAS}_V2 is live", timeout=120_000)
    assert store.resolve_alias(ALIAS) == f"{ALIAS}_V2"
    page.get_by_role("link", name="Chat").click()
    turn = ask(page, ABROAD_Q)
    assert "twenty days" in turn.locator(".answer-text").inner_text()

    # 6. roll it back, after the confirmation
    open_kb(page)
    page.get_by_role("button", name=f"Roll back to {ALIAS}_V1").click()
    page.locator("#confirm-admin").get_by_role("button", name=f"Roll back to {ALIAS}_V1").click()
    expect(page.locator("#admin-message")).to_contain_text(f"Rolled back: {ALIAS}_V1 is live", timeout=60_000)
    assert store.resolve_alias(ALIAS) == f"{ALIAS}_V1"
    assert "from the admin console by local" in store.alias_history(ALIAS)[0].reason
    shoot(page, "first-hour-rolled-back", window=True, doc=("desktop",))
    assert not page.dialogs and not page.errors, page.errors
    page.context.close()
    print(f"first hour: {time.monotonic() - started:.0f} s")
