"""The console's Connectors section in a real browser (issue 46): an admin sees a folder connector,
starts a sync with its button, and the row then shows the version the sync built through the gate;
an edit at the source and a second click build the next version with exactly that change."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterator

import pytest

from tests.api.test_admin_ui import new_page
from tests.api.test_web_ui import browser, serving  # noqa: F401 (browser: a fixture)
from tests.connectors.scenario import LEAVE, declared_share


@pytest.fixture(scope="module")
def console(tmp_path_factory: pytest.TempPathFactory, embedder: Any, extractive: Any) -> Iterator[tuple[str, Path]]:
    from backend.api.admin_session import admin_link, read_token
    from backend.providers.sqlite_vs.store import SqliteVectorStore

    settings, share = declared_share(tmp_path_factory.mktemp("connectors-ui"))
    store = SqliteVectorStore(settings.resolve_path(settings.store.sqlite.path))
    with serving(settings, store, embedder, extractive) as url:
        yield admin_link(url, read_token(settings)), share
    store.close()


def test_an_admin_syncs_a_connector_from_the_console(browser: Any, console: tuple[str, Path]) -> None:  # noqa: F811
    from playwright.sync_api import expect

    link, share = console
    page = new_page(browser)
    wait = 240_000  # a sync ingests and evaluates: minutes on a loaded machine
    try:
        page.goto(link)
        page.get_by_role("link", name="Knowledge bases", exact=True).click()
        row = page.locator("table.connectors tr[data-connector='hr-share']")
        expect(row).to_contain_text("folder")
        expect(row).to_contain_text("never synced")
        row.get_by_role("button", name="Sync hr-share now").click()
        expect(row).to_contain_text("2 new", timeout=wait)
        expect(row).to_contain_text("-> KB_HR_V1; gate passed", timeout=wait)
        (share / "leave.md").write_text(LEAVE.replace("27 days", "29 days"), encoding="utf-8")
        row.get_by_role("button", name="Sync hr-share now").click()
        expect(row).to_contain_text("-> KB_HR_V2; gate passed", timeout=wait)
        expect(row).to_contain_text("1 changed")
        expect(row).to_contain_text("1 unchanged")
        assert page.errors == [], page.errors
    finally:
        page.context.close()


@pytest.fixture(scope="module")
def busy_console(tmp_path_factory: pytest.TempPathFactory, embedder: Any, extractive: Any) -> Iterator[str]:
    """A share of 82 files ingested one a group: a sync long enough to be cancelled by hand."""
    from backend.api.admin_session import admin_link, read_token
    from backend.providers.sqlite_vs.store import SqliteVectorStore

    settings, _ = declared_share(tmp_path_factory.mktemp("connectors-cancel-ui"), notes=80,
                                 ingest={"documents_per_transaction": 1})
    store = SqliteVectorStore(settings.resolve_path(settings.store.sqlite.path))
    with serving(settings, store, embedder, extractive) as url:
        yield admin_link(url, read_token(settings))
    store.close()


def test_an_admin_cancels_a_running_sync_and_the_next_one_resumes(browser: Any, busy_console: str,  # noqa: F811
                                                                   tmp_path: Path) -> None:
    from playwright.sync_api import expect

    page = new_page(browser)
    wait = 240_000
    try:
        page.goto(busy_console)
        page.get_by_role("link", name="Knowledge bases", exact=True).click()
        row = page.locator("table.connectors tr[data-connector='hr-share']")
        cancel = row.get_by_role("button", name="Cancel the sync of hr-share")
        expect(cancel).to_be_hidden()
        row.get_by_role("button", name="Sync hr-share now").click()
        expect(cancel).to_be_visible(timeout=wait)
        cancel.click()
        status = page.locator("#connectors-status")
        expect(status).to_contain_text("the sync was cancelled", timeout=wait)
        expect(status).to_contain_text("the served version is unchanged")
        expect(row).to_contain_text("cancelled", timeout=wait)
        expect(cancel).to_be_hidden()
        page.screenshot(path=str(tmp_path / "connector-cancelled.png"), full_page=True)
        row.get_by_role("button", name="Sync hr-share now").click()
        expect(row).to_contain_text("82 new", timeout=wait)
        expect(row).to_contain_text("-> KB_HR_V1; gate passed", timeout=wait)
        assert page.errors == [], page.errors
    finally:
        page.context.close()
