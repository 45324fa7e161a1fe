"""Issue 48 in a real headless Chromium, against one server that is never restarted: a knowledge
base whose first version the gate refused is listed "(not served yet)" with the reason and the
command that serves it; a new knowledge base made from a folder offers example questions,
answers them, cites passages without raw ``[FIGURE:...]`` markers, and shows a refusal's checks
as met, not green; the admin console opens on the knowledge base picked in the chat, counts the
PII found per document (never a value) and marks a forced promotion. ``rag kb create`` and
``rag index promote --force`` run as separate processes on the same store."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any, Iterator

import pytest

from backend.common.config import Settings
from tests.api.admin_corpus import write_mixed_folder
from tests.api.test_admin_ui import new_page, shoot
from tests.api.test_first_hour import ask
from tests.api.test_web_ui import browser, serving  # noqa: F401 (browser: a fixture)
from tests.conftest import REPO, make_settings

CONTACTS = ("# Contacts\n\nFor travel bookings, write to Sigrid Aalberg at sigrid.aalberg@fjordline-travel.no or call "
            "+47 55 21 43 10.\nThe travel desk answers booking questions on weekdays.\n")
VALUES = ("Aalberg", "sigrid.aalberg@fjordline-travel.no", "55 21 43 10")
FORCE = "rag index promote --domain-key names --version KB_NAMES_V1 --force"


@pytest.fixture(scope="module")
def setup(tmp_path_factory: pytest.TempPathFactory) -> tuple[Settings, Path, Path, dict[str, str]]:
    import os

    root = tmp_path_factory.mktemp("new-kb-page")
    settings = make_settings(root, server={"rate_limit": {"enabled": False}})
    folder = write_mixed_folder(root / "policies")
    (folder / "contacts.md").write_text(CONTACTS, encoding="utf-8")
    names = root / "names"
    names.mkdir()
    (names / "names.txt").write_text("Alice\nBob\nCarol\nDave\n", encoding="utf-8")
    env = {**os.environ,
           "RAG_STORE__SQLITE__PATH": settings.store.sqlite.path,
           "RAG_ASSETS_DIR": settings.docx.assets_dir,
           "RAG_EVALUATION__REPORTS_DIR": settings.evaluation.reports_dir,
           "RAG_KNOWLEDGE_BASES__REGISTRY_FILE": settings.knowledge_bases.registry_file,
           "RAG_KNOWLEDGE_BASES__DIR": settings.knowledge_bases.dir,
           "RAG_SANITIZE__AUDIT_PATH": str(root / "audit" / "pii.jsonl")}  # the shipped profile: audit on
    return settings, folder, names, env


@pytest.fixture(scope="module")
def server(setup: tuple[Settings, Path, Path, dict[str, str]], embedder: Any, extractive: Any
           ) -> Iterator[tuple[str, Any]]:
    from backend.providers.sqlite_vs.store import SqliteVectorStore

    settings = setup[0]
    store = SqliteVectorStore(settings.resolve_path(settings.store.sqlite.path))
    with serving(settings, store, embedder, extractive) as url:
        yield url, store
    store.close()


def rag_cli(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """``rag ...`` in its own process, from this checkout (``-m``: never another install's entry point)."""
    return subprocess.run([sys.executable, "-m", "backend.cli.main", *args], env=env, cwd=REPO, capture_output=True,
                          text=True, timeout=600)


def to_chat(page: Any) -> None:
    """Back to the chat view: its picker learns the knowledge bases created meanwhile."""
    page.get_by_role("link", name="Chat").click()
    page.wait_for_selector("#chat-view:not([hidden])")


def test_a_new_knowledge_base_on_the_page_and_in_the_console(browser: Any, server: tuple[str, Any],  # noqa: F811
                                                             setup: tuple[Settings, Path, Path, dict[str, str]]
                                                             ) -> None:
    from playwright.sync_api import expect

    from backend.api.admin_session import admin_link, read_token

    url, store = server
    settings, folder, names, env = setup
    page = new_page(browser)
    page.goto(admin_link(url, read_token(settings)))
    page.wait_for_selector("#domain option", state="attached")

    # 1. a first version the gate refuses: the picker and the page say so, with the command
    refused = rag_cli("kb", "create", "names", "--from", str(names), env=env)
    assert refused.returncode == 3, refused.stdout + refused.stderr
    assert FORCE in refused.stderr
    page.get_by_role("link", name="Knowledge bases", exact=True).click()
    page.wait_for_selector("#kb-detail[data-loaded]")
    to_chat(page)
    page.wait_for_selector("#domain option[value='names']", state="attached")
    assert page.locator("#domain option[value='names']").inner_text() == "Names (not served yet)"
    page.locator("#domain").select_option("names")
    expect(page.locator("#not-served")).to_be_visible()
    expect(page.locator("#not-served-reason")).to_contain_text("The gate refused KB_NAMES_V1")
    expect(page.locator("#not-served-reason code")).to_have_text(FORCE)
    assert page.locator("#examples").is_hidden()
    shoot(page, "new-kb-not-served")

    # 2. a folder of ordinary documents: served, PII counted, example questions on the page
    created = rag_cli("kb", "create", "policies", "--from", str(folder), "--title", "Policies", env=env)
    assert created.returncode == 0, created.stdout + created.stderr
    assert "PII (audit):" in created.stdout and "EMAIL_ADDRESS 1" in created.stdout
    assert "[info" not in created.stdout + created.stderr
    page.get_by_role("link", name="Knowledge bases", exact=True).click()
    page.wait_for_selector("#kb-detail[data-loaded]")
    to_chat(page)
    page.wait_for_selector("#domain option[value='policies']", state="attached")
    page.locator("#domain").select_option("policies")
    assert page.locator("#not-served").is_hidden()
    examples = page.locator("#example-list button")
    expect(examples.first).to_be_visible()
    questions = examples.all_inner_texts()
    assert len(questions) >= 2 and not any(v in " ".join(questions) for v in VALUES), questions
    shoot(page, "new-kb-examples")
    examples.first.click()
    page.wait_for_selector("li.turn[data-done]")
    assert page.locator("li.turn").first.get_attribute("data-done") == "true"

    # 3. a figure's passage is cited as text, not as a raw marker; a refusal's checks are not green
    turn = ask(page, "Where is the emergency eyewash station in the greenhouse lab?")
    texts = turn.locator(".chunk-text").all_text_contents()
    assert texts and not any("[FIGURE:" in t for t in texts), texts
    turn = ask(page, "What is the boiling point of mercury at sea level?")
    assert turn.locator(".badge").inner_text() == "Mode: fallback"
    turn.locator("details.why summary").click()
    states = turn.locator("li.gate .gate-state").all_inner_texts()
    assert states and "✓ passed" not in states, states
    shoot(page, "new-kb-refusal")

    # 4. the console opens on the knowledge base picked in the chat; PII per document, no value
    page.get_by_role("link", name="Knowledge bases", exact=True).click()
    page.wait_for_selector("#kb-detail[data-loaded='policies']")
    row = page.locator("table.documents tbody tr[data-doc='contacts.md']")
    expect(row).to_contain_text("EMAIL_ADDRESS 1")
    detail = page.locator("#kb-detail").inner_text()
    assert not any(v in detail for v in VALUES)
    shoot(page, "new-kb-console", window=True)

    # 5. an edit, no worse than what is served, is promoted without --force while the server runs
    travel = folder / "travel.txt"
    travel.write_text(travel.read_text(encoding="utf-8").replace("150 euros", "180 euros"), encoding="utf-8")
    edited = rag_cli("ingest", str(folder), "--domain-key", "policies", "--update-alias", env=env)
    assert edited.returncode == 0, edited.stdout + edited.stderr
    assert "promoted: KB_POLICIES -> KB_POLICIES_V2" in edited.stdout and "[forced]" not in edited.stdout
    assert store.resolve_alias("KB_POLICIES") == "KB_POLICIES_V2"
    to_chat(page)
    page.locator("#domain").select_option("policies")
    turn = ask(page, "Up to how much are hotel costs reimbursed per night in European capitals?")
    assert "180 euros" in turn.locator(".answer-text").inner_text()

    # 6. a forced promotion is marked on the live version
    forced = rag_cli("index", "promote", "--domain-key", "names", "--version", "KB_NAMES_V1", "--force", env=env)
    assert forced.returncode == 0, forced.stdout + forced.stderr
    to_chat(page)
    page.locator("#domain").select_option("names")
    page.get_by_role("link", name="Knowledge bases", exact=True).click()
    page.wait_for_selector("#kb-detail[data-loaded='names']")
    live = page.locator("table.versions tbody tr[data-role='live']")
    expect(live).to_contain_text("promoted by force")
    shoot(page, "new-kb-forced", "#kb-detail")
    assert not page.dialogs and not page.errors, page.errors
    page.context.close()
