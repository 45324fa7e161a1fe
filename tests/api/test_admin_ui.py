"""The admin console ("Knowledge bases" view of the chat page) in a real headless Chromium.

Two knowledge bases are made from a folder the way ``rag kb create`` makes them (register,
ingest, gate, serve) on the real SQLite store with the real local model: ``policies`` gets a
golden set of real questions (one of them about a section the first version lacks), and
``facilities`` keeps its generated starter set. The app runs on a real werkzeug server on
127.0.0.1. The tests click as a person does: open the console, read documents, versions and
golden sets, upload a changed file, watch the progress, read the candidate's evaluation,
promote and roll back through the confirmation dialog; a non-admin sees no admin control.
Screenshots (desktop and 375 px) go to ``$RAG_TEST_ARTIFACTS``; with ``RAG_TEST_DOC_IMAGES=1``
they are copied to docs/img/ as well (what docs/ADMIN.md shows).
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any, Iterator

import pytest

from backend.common.config import Settings
from tests.api.admin_corpus import REMOTE_WORK_CHANGED, write_text_files
from tests.api.test_web_ui import ARTIFACTS, assert_accessible, browser, serving  # noqa: F401 (browser: a fixture)
from tests.conftest import REPO, make_settings
from tests.conftest import kb_runtime

KB, TITLE, ALIAS = "policies", "Company policies 2026", "KB_POLICIES"
STARTER_KB, STARTER_TITLE = "facilities", "Facilities"
DOC_IMAGES = REPO / "docs" / "img"
#: read at import: the test session's fixtures drop RAG_* variables from the environment
UPDATE_DOC_IMAGES = bool(os.environ.get("RAG_TEST_DOC_IMAGES"))
BOSS_KEY, READER_KEY = "admin-ui-boss-key-51c2", "admin-ui-reader-key-9d0e"
#: real questions; "abroad" is answered only by the section the uploaded file adds
GOLDEN = [
    {"id": "remote-days", "query": "How many days per week may employees work from home?",
     "expected_sources": ["remote-work.md"], "expected_mode": "rag"},
    {"id": "flights", "query": "Who must approve flights before booking?", "expected_sources": ["travel.txt"],
     "expected_mode": "rag"},
    {"id": "lost-badge", "query": "What must I do when I lose my access badge?",
     "expected_sources": ["security.html"], "expected_mode": "rag"},
    {"id": "abroad", "query": "For how many days per year may I work from another country?",
     "expected_sources": ["remote-work.md"], "expected_mode": "rag"},
    {"id": "peru", "query": "What is the capital of Peru?", "expected_mode": "fallback"},
    {"id": "poem", "query": "Write me a poem about cats", "expected_mode": "fallback"},
]


def create_kb(settings: Settings, store: Any, embedder: Any, key: str, title: str, folder: Path) -> None:
    """What ``rag kb create KEY --from FOLDER`` does, in process (the first hour test runs the CLI)."""
    from backend.ingest.knowledge_bases import ingest_into_candidate, register

    register(settings, key, title=title, source_dir=folder)
    result = ingest_into_candidate(kb_runtime(settings, store, embedder), key, folder, principal=None, promote=True)
    assert result.promoted, result.evaluation


@pytest.fixture(scope="module")
def admin_env(tmp_path_factory: pytest.TempPathFactory, embedder: Any) -> Iterator[tuple[Settings, Any]]:
    from backend.ingest.knowledge_bases import set_golden_set
    from backend.providers.sqlite_vs.store import SqliteVectorStore

    root = tmp_path_factory.mktemp("admin-ui")
    settings = make_settings(root, server={"rate_limit": {"enabled": False}})
    store = SqliteVectorStore(settings.resolve_path(settings.store.sqlite.path))
    create_kb(settings, store, embedder, KB, TITLE, write_text_files(root / "policies"))
    golden = root / "policies-golden.jsonl"
    golden.write_text("".join(json.dumps(row) + "\n" for row in GOLDEN), encoding="utf-8")
    set_golden_set(settings, KB, golden)
    create_kb(settings, store, embedder, STARTER_KB, STARTER_TITLE, write_text_files(root / "facilities"))
    yield settings, store
    store.close()


@pytest.fixture(scope="module")
def base_url(admin_env: tuple[Settings, Any], embedder: Any, extractive: Any) -> Iterator[str]:
    with serving(*admin_env, embedder, extractive) as url:
        yield url


@pytest.fixture(scope="module")
def admin_url(admin_env: tuple[Settings, Any], base_url: str) -> str:
    """The link ``rag serve`` prints: opening it makes the browser the local admin (issue 49 H1)."""
    from backend.api.admin_session import admin_link, read_token

    return admin_link(base_url, read_token(admin_env[0]))


def new_page(browser: Any, *, width: int = 1280, height: int = 900, scheme: str = "light") -> Any:
    context = browser.new_context(viewport={"width": width, "height": height}, color_scheme=scheme)
    page = context.new_page()
    page.set_default_timeout(30_000)
    page.dialogs = []
    page.on("dialog", lambda d: (page.dialogs.append(d.message), d.dismiss()))
    page.errors = []
    page.on("console", lambda m: page.errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: page.errors.append(str(e)))
    return page


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:  # noqa: F811 (browser: the imported fixture)
    pg = new_page(browser)
    yield pg
    pg.context.close()


def shoot(page: Any, name: str, element: str | None = None, *, window: bool = False,
          doc: tuple[str, ...] = ()) -> None:
    """A desktop and a 375 px screenshot: of ``element`` when given, of the window scrolled to
    the top with ``window``, else of the full page. At 375 px the page must not scroll sideways.
    ``doc``: the sizes ("desktop", "375") docs/ADMIN.md shows, copied to docs/img/ when
    ``RAG_TEST_DOC_IMAGES`` is set."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    size = page.viewport_size
    shots = []
    # a full-page capture would paint the sticky question box over the middle of the page
    page.evaluate("document.getElementById('ask-form').style.position = 'static'")
    for width, suffix in ((size["width"], "desktop"), (375, "375")):
        page.set_viewport_size({"width": width, "height": size["height"] if width != 375 else 812})
        if width == 375:
            assert page.evaluate("document.documentElement.scrollWidth") <= 376, f"{name}: scrolls sideways at 375 px"
        path = ARTIFACTS / f"{name}-{suffix}.png"
        if element:
            page.locator(element).screenshot(path=str(path))
        else:
            if window:
                page.evaluate("window.scrollTo(0, 0)")
            page.screenshot(path=str(path), full_page=not window)
        shots.append(path)
    page.set_viewport_size(size)
    page.evaluate("document.getElementById('ask-form').style.position = ''")
    if UPDATE_DOC_IMAGES:
        for path in shots:
            if path.stem.rsplit("-", 1)[1] in doc:
                shutil.copyfile(path, DOC_IMAGES / path.name)


def open_console(page: Any, url: str, kb_title: str) -> None:
    """From the chat page: the "Knowledge bases" link, then the knowledge base's card."""
    page.goto(url)
    page.wait_for_selector("#domain option", state="attached")
    link = page.get_by_role("link", name="Knowledge bases", exact=True)
    link.wait_for()
    link.click()
    page.wait_for_selector("#kb-detail[data-loaded]")
    page.locator("#kb-list").get_by_role("button", name=kb_title).click()
    key = page.locator("#kb-list").get_by_role("button", name=kb_title).get_attribute("data-kb")
    page.wait_for_selector(f"#kb-detail[data-loaded='{key}']")


def live_of(store: Any, alias: str = ALIAS) -> str | None:
    return store.resolve_alias(alias)


def test_the_console_shows_documents_versions_evaluation_and_golden_sets(page: Any, admin_url: str) -> None:
    from playwright.sync_api import expect

    page.goto(admin_url)
    page.wait_for_selector("#domain option", state="attached")
    assert page.locator("#admin-view").is_hidden()
    page.get_by_role("link", name="Knowledge bases", exact=True).click()
    expect(page.locator("#admin-view")).to_be_visible()
    assert page.locator("#chat-view").is_hidden() and page.locator("#chat-controls").is_hidden()
    assert page.locator("#admin-title").evaluate("e => e === document.activeElement")  # focus moved to the view
    assert page.get_by_role("link", name="Knowledge bases", exact=True).get_attribute("aria-current") == "page"
    for title in (TITLE, STARTER_TITLE):  # the list is fetched after the view shows: wait for its cards
        expect(page.locator("#kb-list .kb-open", has_text=title)).to_have_count(1)
    cards = page.locator("#kb-list .kb-open").all_inner_texts()
    assert TITLE in cards and STARTER_TITLE in cards, cards
    page.locator("#kb-list").get_by_role("button", name=TITLE).click()
    page.wait_for_selector(f"#kb-detail[data-loaded='{KB}']")
    assert page.locator("#kb-title").inner_text() == TITLE
    docs = page.locator("table.documents tbody tr")
    assert sorted(docs.evaluate_all("rs => rs.map(r => r.dataset.doc)")) == ["remote-work.md", "security.html",
                                                                             "travel.txt"]
    assert "KB_POLICIES_V1" in docs.first.inner_text()  # the version of the last change
    live = page.locator("table.versions tbody tr[data-role='live']")
    assert live.count() == 1 and "KB_POLICIES_V1" in live.inner_text() and live.locator(".role-live").inner_text() == "Live"
    assert page.locator("#evaluation-title").inner_text() == "Evaluation of KB_POLICIES_V1"
    assert page.locator("#evaluation .admin-gates li").count() >= 3
    golden = page.locator("#golden")
    assert "Generated starter set" not in golden.inner_text() and "6 questions" in golden.inner_text()
    page.get_by_role("link", name="Chat").click()  # and back to the chat, its question box focused
    expect(page.locator("#chat-view")).to_be_visible()
    assert page.locator("#question").evaluate("e => e === document.activeElement")
    page.go_back()  # the view is in the address (#admin): Back returns to the console
    expect(page.locator("#admin-view")).to_be_visible()

    page.locator("#kb-list").get_by_role("button", name=STARTER_TITLE).click()
    page.wait_for_selector(f"#kb-detail[data-loaded='{STARTER_KB}']")
    note = page.locator("#golden .callout")
    expect(note).to_contain_text("Generated starter set — replace it with real questions.")
    expect(note).to_contain_text("rag feedback export")
    page.locator("#golden details > summary").click()
    questions = page.locator("table.golden tbody tr")
    assert questions.count() >= 6 and all(i.startswith("gen-") for i in questions.evaluate_all(
        "rs => rs.map(r => r.dataset.query)"))
    assert not page.dialogs and not page.errors, page.errors


def test_a_changed_file_is_uploaded_evaluated_promoted_and_rolled_back(page: Any, admin_url: str,
                                                                     admin_env: tuple[Settings, Any]) -> None:
    from playwright.sync_api import expect

    store = admin_env[1]
    assert live_of(store) == "KB_POLICIES_V1"
    stages: list[str] = []
    page.on("response", lambda r: stages.append(r.json()["state"] + ":" + r.json()["stage"])
            if "/admin/jobs/" in r.url and r.ok else None)
    open_console(page, admin_url, TITLE)
    hint = page.locator("#upload-hint").inner_text()
    assert "Up to 20 files" in hint and "at most 20 MB each" in hint and ".docx" in hint  # the limits, before sending
    page.set_input_files("#upload-files", [
        {"name": "remote-work.md", "mimeType": "text/markdown", "buffer": REMOTE_WORK_CHANGED.encode()},
        {"name": "setup.exe", "mimeType": "application/octet-stream", "buffer": b"MZ\x90\x00"},
    ])
    chosen = page.locator("#upload-chosen li")
    assert chosen.count() == 2 and "not accepted" in chosen.nth(1).inner_text()  # hinted before sending
    page.get_by_role("button", name="Upload and evaluate").click()
    expect(page.locator("#upload-progress")).to_be_visible()
    refused = page.locator("#upload-refused .refusals")
    expect(refused).to_contain_text("setup.exe")  # the server's own reason, per file
    expect(refused).to_contain_text("unsupported type .exe")
    expect(page.locator("#upload-result h5")).to_have_text("Candidate KB_POLICIES_V2 is ready", timeout=120_000)
    assert any(s.startswith("running:") for s in stages) and stages[-1] == "succeeded:done", stages
    assert page.locator("#upload-progress").is_hidden()
    assert "Nothing is served until you promote" in page.locator("#upload-result").inner_text()
    assert "Every gate passed" in page.locator("#upload-result .verdict").inner_text()
    assert page.locator("#upload-result").evaluate("e => e === document.activeElement")
    assert "KB_POLICIES_V2 is ready" in page.locator("#status").inner_text()  # said to screen readers too
    assert live_of(store) == "KB_POLICIES_V1"  # nothing served before a promotion

    # the candidate's evaluation, question by question against the live version
    assert page.locator("#evaluation-title").inner_text() == "Evaluation of KB_POLICIES_V2"
    abroad = page.locator("table.queries tr[data-query='abroad']")
    assert abroad.get_attribute("data-change") == "win" and abroad.locator(".change").inner_text() == "Better"
    cells = abroad.locator("td").all_inner_texts()
    assert cells[2].startswith("fallback ✗") and cells[3].startswith("rag ✓"), cells  # live, candidate
    assert page.locator("table.queries tr[data-change='same']").count() == len(GOLDEN) - 1
    assert page.locator("#evaluation .summary").inner_text().startswith("1 better, 0 worse, 5 the same")
    shoot(page, "admin-upload", "#upload", doc=("desktop", "375"))
    shoot(page, "admin-evaluation", "#evaluation", doc=("desktop",))
    assert_accessible(page)

    # promote: a real <dialog> asks first; Escape cancels and changes nothing
    promote = page.locator("#evaluation").get_by_role("button", name="Promote KB_POLICIES_V2")
    promote.click()
    dialog = page.locator("#confirm-admin")
    expect(dialog).to_be_visible()
    assert page.locator("#confirm-admin-cancel").evaluate("e => e === document.activeElement")
    assert "recorded as done by “local”" in dialog.inner_text()
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "admin-confirm-promote-desktop.png"))
    page.keyboard.press("Escape")
    expect(dialog).to_be_hidden()
    assert promote.evaluate("e => e === document.activeElement") and live_of(store) == "KB_POLICIES_V1"
    promote.click()
    dialog.get_by_role("button", name="Promote KB_POLICIES_V2").click()
    message = page.locator("#admin-message")
    expect(message).to_contain_text("KB_POLICIES_V2 is live", timeout=60_000)
    expect(message).to_contain_text("recorded as promoted by “local”")
    assert live_of(store) == "KB_POLICIES_V2"
    assert "from the admin console by local" in store.alias_history(ALIAS)[0].reason
    assert page.locator("table.versions tr[data-version='KB_POLICIES_V2']").get_attribute("data-role") == "live"
    assert page.locator("table.versions tr[data-version='KB_POLICIES_V1']").get_attribute("data-role") == "rollback"

    # roll back: asks too, then the previous version serves again
    page.set_viewport_size({"width": 375, "height": 812})  # before the dialog opens (its backdrop)
    page.get_by_role("button", name="Roll back to KB_POLICIES_V1").click()
    expect(dialog).to_be_visible()
    expect(dialog).to_contain_text("No gate is checked")
    page.screenshot(path=str(ARTIFACTS / "admin-confirm-rollback-375.png"))
    if UPDATE_DOC_IMAGES:
        for name in ("admin-confirm-promote-desktop.png", "admin-confirm-rollback-375.png"):
            shutil.copyfile(ARTIFACTS / name, DOC_IMAGES / name)
    page.set_viewport_size({"width": 1280, "height": 900})
    dialog.get_by_role("button", name="Roll back to KB_POLICIES_V1").click()
    expect(message).to_contain_text("Rolled back: KB_POLICIES_V1 is live", timeout=60_000)
    assert live_of(store) == "KB_POLICIES_V1"
    assert "from the admin console by local" in store.alias_history(ALIAS)[0].reason
    page.locator("#versions details > summary").click()
    assert "from the admin console by local" in page.locator("#versions .history").inner_text()
    # the audit trail under the knowledge bases: the upload, the promotion and the rollback, by "local"
    audit = page.locator("#audit table.audit")
    expect(audit.locator("tr[data-action='rollback'][data-outcome='ok']")).to_have_count(1)
    for action in ("upload", "promote"):
        assert audit.locator(f"tr[data-action='{action}'][data-outcome='ok']").count() >= 1, action
    assert audit.locator("tr[data-action='rollback'] td").nth(1).inner_text() == "local"  # When, Who, ...
    with page.expect_download() as download:
        page.get_by_role("button", name="Export as JSONL").click()
    lines = [json.loads(line) for line in Path(download.value.path()).read_text().splitlines()]
    rollback = next(line for line in lines if line["action"] == "rollback")  # newest first; the console's reads after it
    assert (rollback["principal"], rollback["outcome"], rollback["version"]) == ("local", "ok", "KB_POLICIES_V1")
    assert not page.dialogs and not page.errors, page.errors  # in-page dialogs only, never window.confirm


def test_files_dropped_on_the_drop_zone_are_chosen(page: Any, admin_url: str) -> None:
    open_console(page, admin_url, TITLE)
    page.locator("#drop-zone").evaluate("""zone => {
        const data = new DataTransfer();
        data.items.add(new File(['# Parking\\n\\nThe garage opens at 7:00.'], 'parking.md', {type: 'text/markdown'}));
        data.items.add(new File([new Uint8Array(16)], 'huge.pdf', {type: 'application/pdf'}));
        zone.dispatchEvent(new DragEvent('dragover', {dataTransfer: data, bubbles: true, cancelable: true}));
        zone.dispatchEvent(new DragEvent('drop', {dataTransfer: data, bubbles: true, cancelable: true}));
    }""")
    chosen = page.locator("#upload-chosen li").all_inner_texts()
    assert [c.split(" (")[0] for c in chosen] == ["parking.md", "huge.pdf"], chosen
    assert page.get_by_role("button", name="Upload and evaluate").is_enabled()
    assert page.locator("#upload-files").evaluate("e => e.files.length") == 2


def test_the_console_is_accessible_at_375_px_and_in_dark_mode(browser: Any, admin_url: str) -> None:  # noqa: F811
    for scheme in ("light", "dark"):
        page = new_page(browser, scheme=scheme)
        open_console(page, admin_url, TITLE)
        for summary in page.locator("#kb-detail details > summary").all():
            summary.click()
        assert_accessible(page)
        page.set_viewport_size({"width": 375, "height": 812})
        assert page.evaluate("document.documentElement.scrollWidth") <= 376
        assert_accessible(page)
        if scheme == "dark":
            background = page.evaluate("getComputedStyle(document.documentElement).backgroundColor")
            assert max(int(c) for c in background[background.index("(") + 1:-1].split(",")[:3]) < 60, background
        page.set_viewport_size({"width": 1280, "height": 900})
        shoot(page, "admin-console" if scheme == "light" else "admin-console-dark", window=True,
              doc=("desktop", "375") if scheme == "light" else ("desktop",))
        assert not page.errors, page.errors
        page.context.close()


def test_a_non_admin_sees_no_admin_controls(browser: Any, admin_env: tuple[Settings, Any],  # noqa: F811
                                            embedder: Any, extractive: Any, tmp_path: Path) -> None:
    from playwright.sync_api import expect

    settings, store = admin_env
    access = {"enabled": True, "default_acl": "public", "principals": {
        "boss": {"api_key": BOSS_KEY, "roles": ["admin"], "domains": ["*"]},
        "reader": {"api_key": READER_KEY, "domains": ["*"]}}}
    paths = {"store": {"sqlite": {"path": settings.store.sqlite.path}},
             "evaluation": {"reports_dir": settings.evaluation.reports_dir},
             "knowledge_bases": {"registry_file": settings.knowledge_bases.registry_file,
                                 "dir": settings.knowledge_bases.dir},
             "server": {"rate_limit": {"enabled": False}}}

    def sign_in(page: Any, url: str, key: str) -> None:
        page.goto(url)
        page.wait_for_selector("#key-panel:not([hidden])")
        page.locator("#api-key").fill(key)
        page.keyboard.press("Enter")
        page.wait_for_selector("#domain option", state="attached")
        page.errors.clear()  # the first GET /domains answered 401: that is how the page knows to ask

    for mode in ("read_only", "hidden"):
        keyed = make_settings(tmp_path, access=access, admin={"non_admins": mode}, **paths)
        with serving(keyed, store, embedder, extractive) as url:
            reader = new_page(browser)
            sign_in(reader, url, READER_KEY)
            if mode == "hidden":
                reader.wait_for_timeout(300)  # GET /admin/me has answered can_view: false
                assert reader.locator("#views").is_hidden() and reader.locator("#admin-view").is_hidden()
                reader.goto(f"{url}/#admin")  # typing the address shows the chat, not the console
                reader.wait_for_selector("#domain option", state="attached")
                assert reader.locator("#admin-view").is_hidden() and reader.locator("#chat-view").is_visible()
            else:
                reader.get_by_role("link", name="Knowledge bases", exact=True).click()
                reader.wait_for_selector("#kb-detail[data-loaded]")
                reader.locator("#kb-list").get_by_role("button", name=TITLE).click()
                reader.wait_for_selector(f"#kb-detail[data-loaded='{KB}']")
                expect(reader.locator("#admin-who")).to_contain_text("You can look, not change")
                assert reader.locator("table.versions tbody tr").count() >= 1  # it reads
                for control in ("#upload-files", "#rollback-button", "button.promote", "button.evaluate"):
                    assert reader.locator(control).count() == 0, control  # and has nothing to write with
                denied = reader.request.post(f"{url}/admin/knowledge-bases/{KB}/rollback", data={"confirm": True},
                                             headers={"X-API-Key": READER_KEY})
                assert denied.status == 403  # the server refuses anyway
                assert_accessible(reader)
                shoot(reader, "admin-read-only", window=True, doc=("desktop",))
            assert not reader.errors, reader.errors
            reader.context.close()
            boss = new_page(browser)
            sign_in(boss, url, BOSS_KEY)
            boss.get_by_role("link", name="Knowledge bases", exact=True).click()
            boss.wait_for_selector("#kb-detail[data-loaded]")
            boss.locator("#kb-list").get_by_role("button", name=TITLE).click()
            boss.wait_for_selector(f"#kb-detail[data-loaded='{KB}']")
            assert boss.locator("#upload-files").count() == 1 and "“boss”" in boss.locator("#admin-who").inner_text()
            boss.context.close()


def test_feedback_given_on_the_chat_page_shows_in_the_console(page: Any, admin_url: str) -> None:
    from playwright.sync_api import expect

    from tests.api.test_web_ui import ask

    page.goto(admin_url)
    page.wait_for_selector(f"#domain option[value='{STARTER_KB}']", state="attached")
    page.locator("#domain").select_option(STARTER_KB)
    turn = ask(page, "Who may open the server room?")
    turn.get_by_role("button", name="No, not helpful").click()
    expect(turn.locator(".feedback-result")).to_contain_text("recorded (not helpful)")
    turn.get_by_label("Comment (optional)").fill("It should name the deputies, <b>both</b>")
    turn.get_by_role("button", name="Send comment").click()
    expect(turn.locator(".feedback-result")).to_contain_text("vote and comment were recorded")
    page.get_by_role("link", name="Knowledge bases", exact=True).click()
    page.wait_for_selector("#kb-detail[data-loaded]")
    page.locator("#kb-list").get_by_role("button", name=STARTER_TITLE).click()
    page.wait_for_selector(f"#kb-detail[data-loaded='{STARTER_KB}']")
    row = page.locator("table.feedback tbody tr").first
    expect(row).to_be_visible()  # the feedback table renders after the detail's data
    cells = row.locator("td").all_inner_texts()
    assert cells[1:] == ["Not helpful", "Who may open the server room?", "It should name the deputies, <b>both</b>"], cells
    assert page.locator("table.feedback b").count() == 0  # a comment's markup stays text


def test_a_version_never_evaluated_is_evaluated_from_the_page(page: Any, admin_env: tuple[Settings, Any],
                                                            embedder: Any, admin_url: str) -> None:
    """A candidate made by ``rag ingest`` (no gate ran, so no report): "Evaluate now" runs the
    gate's evaluation as a job, and its figures and per-question changes appear."""
    from playwright.sync_api import expect

    from backend.ingest.knowledge_bases import apply_registry
    from backend.ingest.pipeline import IngestPipeline

    settings, store = admin_env
    settings = apply_registry(settings)
    extra = Path(settings.knowledge_bases.dir).parent / "facilities-extra"
    extra.mkdir(exist_ok=True)
    (extra / "parking.md").write_text("# Parking\n\nThe staff garage opens at 7:00 and closes at 21:00. "
                                      "Each employee may park one car there on working days.\n", encoding="utf-8")
    manifest = extra / "manifest.jsonl"
    manifest.write_text(json.dumps({"path": str(extra / "parking.md"), "doc_id": "parking.md"}) + "\n")
    report = IngestPipeline.from_settings(settings, store, embedder, progress=False).run(manifest, domain_key=STARTER_KB)
    assert report.version == "KB_FACILITIES_V2" and not report.failures
    open_console(page, admin_url, STARTER_TITLE)
    assert page.locator("#evaluation-title").inner_text() == "Evaluation of KB_FACILITIES_V2"
    expect(page.locator("#evaluation")).to_contain_text("KB_FACILITIES_V2 has not been evaluated yet.")
    page.get_by_role("button", name="Evaluate KB_FACILITIES_V2 now").click()
    expect(page.locator("#evaluation .verdict")).to_be_visible(timeout=120_000)
    assert page.locator("#evaluation-title").evaluate("e => e === document.activeElement")
    assert page.locator("table.queries tbody tr").count() >= 6
    assert "against KB_FACILITIES_V1" in page.locator("#evaluation .summary").inner_text()
    assert store.resolve_alias("KB_FACILITIES") == "KB_FACILITIES_V1"  # evaluated, not promoted
    assert page.locator("#evaluation").get_by_role("button", name="Promote KB_FACILITIES_V2").count() == 1
