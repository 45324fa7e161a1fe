"""The chat page in a real headless Chromium (Debian's ``chromium``, driven by Playwright).

The app runs on a real werkzeug server on 127.0.0.1 with the real SQLite store, the real
local model and documents ingested by the real pipeline: the sample corpus's annual
leave policy and its DOCX floor plan (with figures), and, behind the ``handbook`` domain,
a text file full of HTML/JS payloads. Screenshots of the main states (desktop and
375 px wide) go to ``$RAG_TEST_ARTIFACTS`` (default ``build/ui-screenshots``).

No browser is downloaded: ``make test`` installs Debian's chromium first (``make browser``),
and without it these tests fail, saying so, rather than skip.
"""

from __future__ import annotations

import json
import os
import shutil
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

import pytest
from click.testing import CliRunner
from pydantic import SecretStr

from backend.api.app import create_app
from backend.runtime import build_services
from backend.common.config import Settings
from tests.api import live_server
from tests.conftest import REPO, make_settings

CHROMIUM = os.environ.get("RAG_TEST_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
ARTIFACTS = Path(os.environ.get("RAG_TEST_ARTIFACTS") or REPO / "build" / "ui-screenshots")
API_KEY = "ui-test-key-7f3a"
PAYLOAD = (
    "Quantum teapot calibration handbook.\n\n"
    "The quantum teapot must be calibrated every 14 days by the lab steward. "
    "Calibration notes may contain markup such as <script>window.__xss = 'script'; alert('xss')</script> and "
    "<img src=x onerror=\"window.__xss = 'img'; alert('img')\"> which must be shown as plain text. "
    "The calibration log is kept in <b>bold</b> binders on shelf 3.\n"
)
LEAVE_Q = "How many days of annual leave do employees get?"
FIGURE_Q = "Where is the assembly point for the Amsterdam office during an evacuation?"
PAYLOAD_Q = "How often must the quantum teapot be calibrated?"


def _manifest(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


@pytest.fixture(scope="module")
def ui_env(tmp_path_factory: pytest.TempPathFactory, embedder: Any) -> Iterator[tuple[Settings, Any]]:
    """Settings and a store with the ingested documents behind KB_ACTIVE and KB_HANDBOOK."""
    from backend.ingest.pipeline import IngestPipeline
    from backend.providers.sqlite_vs.store import SqliteVectorStore

    root = tmp_path_factory.mktemp("web-ui")
    settings = make_settings(root, server={"rate_limit": {"enabled": False}})
    store = SqliteVectorStore(settings.resolve_path(settings.store.sqlite.path))
    sample = REPO / "data" / "sample"
    main = _manifest(root / "main.jsonl", [
        {"path": str(sample / "annual-leave.md"), "doc_id": "annual-leave", "lang": "en"},
        {"path": str(sample / "office-floor-plan-evacuation.docx"), "doc_id": "office-floor-plan-evacuation",
         "lang": "en"},
    ])
    (root / "payload.txt").write_text(PAYLOAD)
    payload = _manifest(root / "payload.jsonl", [{"path": str(root / "payload.txt"), "doc_id": "teapot-lab",
                                                  "lang": "en"}])
    for manifest, domain in ((main, None), (payload, "handbook")):
        report = IngestPipeline.from_settings(settings, store, embedder, progress=False).run(manifest, domain_key=domain)
        assert not report.failures and not report.manifest_errors, (report.failures, report.manifest_errors)
    for alias, series in (("KB_ACTIVE", "KB_SAMPLE"), ("KB_HANDBOOK", "KB_HANDBOOK")):
        version = max(v.name for v in store.list_versions() if v.name.startswith(series))
        store.point_alias(alias, version, reason="web ui test")
    yield settings, store
    store.close()


@contextmanager
def serving(settings: Settings, store: Any, embedder: Any, extractive: Any) -> Iterator[str]:
    """The app on a real HTTP server on 127.0.0.1 and a free port."""
    services = build_services(settings, store=store, embedder=embedder, primary=extractive)
    with live_server.serving(create_app(settings, services)) as url:
        yield url


@pytest.fixture(scope="module")
def base_url(ui_env: tuple[Settings, Any], embedder: Any, extractive: Any) -> Iterator[str]:
    with serving(*ui_env, embedder, extractive) as url:
        yield url


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    if not Path(CHROMIUM).is_file():
        pytest.fail(f"the browser tests need Chromium at {CHROMIUM} and found none: run `make browser` "
                    "(apt-get install chromium) or set RAG_TEST_CHROMIUM", pytrace=False)
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.fail("the browser tests need Playwright for Python: make setup-test, or pip install -e '.[test]'", pytrace=False)
    with sync_playwright() as pw:
        chromium = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        yield chromium
        chromium.close()


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    pg = context.new_page()
    pg.set_default_timeout(20_000)
    pg.dialogs = []  # type: ignore[attr-defined]
    pg.on("dialog", lambda d: (pg.dialogs.append(d.message), d.dismiss()))  # type: ignore[attr-defined]
    pg.console_errors = []  # type: ignore[attr-defined]
    pg.on("console", lambda m: pg.console_errors.append(m.text) if m.type == "error" else None)  # type: ignore[attr-defined]
    yield pg
    context.close()


def shoot(page: Any, name: str) -> None:
    """A desktop and a 375 px screenshot of the page as it is now."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    # a full-page capture would paint the sticky question box over the middle of the page
    page.evaluate("document.getElementById('ask-form').style.position = 'static'")
    page.screenshot(path=str(ARTIFACTS / f"{name}-desktop.png"), full_page=True)
    size = page.viewport_size
    page.set_viewport_size({"width": 375, "height": 812})
    assert page.evaluate("document.documentElement.scrollWidth") <= 376, f"{name}: scrolls sideways at 375 px"
    page.screenshot(path=str(ARTIFACTS / f"{name}-375.png"), full_page=True)
    page.set_viewport_size(size)
    page.evaluate("document.getElementById('ask-form').style.position = ''")


def ask(page: Any, question: str) -> Any:
    """Type the question, send it with Enter (keyboard only) and wait for the finished turn."""
    before = page.locator("li.turn").count()
    page.locator("#question").fill(question)
    page.locator("#question").press("Enter")
    turn = page.locator("li.turn").nth(before)
    page.wait_for_selector(f"li.turn:nth-child({before + 1})[data-done]")
    assert turn.get_attribute("data-done") == "true", turn.inner_text()
    return turn


def open_page(page: Any, url: str) -> None:
    page.goto(url)
    page.wait_for_selector("#domain option", state="attached")


AXE = REPO / "tests" / "vendor" / "axe-core" / "axe.min.js"


def assert_accessible(page: Any) -> None:
    """axe-core (vendored under tests/, injected here only) finds no serious or critical
    violation on the page as it is now, with every disclosure open; and no heading skips a level."""
    page.evaluate("document.querySelectorAll('details').forEach(d => { if (!d.hidden) d.open = true; })")
    if not page.evaluate("typeof window.axe === 'object'"):
        page.evaluate(AXE.read_text())
    result = page.evaluate("axe.run(document, {resultTypes: ['violations']})")
    assert result["testEngine"]["name"] == "axe-core" and result["url"].startswith("http")
    bad = [(v["id"], v["impact"], [n["target"] for n in v["nodes"]][:3]) for v in result["violations"]
           if v["impact"] in ("serious", "critical")]
    assert not bad, bad
    levels = page.evaluate("[...document.querySelectorAll('h1,h2,h3,h4,h5,h6')]"
                           ".filter(h => h.closest('[hidden]') === null && !h.closest('dialog:not([open])'))"
                           ".map(h => Number(h.tagName[1]))")
    assert levels[0] == 1 and all(b - a <= 1 for a, b in zip(levels, levels[1:])), levels


def in_view(locator: Any) -> bool:
    return bool(locator.evaluate("e => { const r = e.getBoundingClientRect(); "
                                 "return r.top >= 0 && r.bottom <= innerHeight + 1 && r.height > 0; }"))


def test_a_question_streams_an_answer_with_citations(page: Any, base_url: str) -> None:
    open_page(page, base_url)
    with page.expect_response(f"{base_url}/chat/stream") as resp:
        turn = ask(page, LEAVE_Q)
    assert resp.value.headers["content-type"].startswith("text/event-stream")
    assert turn.locator(".badge").inner_text() == "Mode: rag"
    assert "25 days" in turn.locator(".answer-text").inner_text()
    answer = turn.locator(".answer-text").inner_text()
    assert int(turn.get_attribute("data-deltas")) == answer.count("[") >= 1  # one delta per cited sentence
    cite = turn.locator("button.cite").first
    cite.focus()
    page.keyboard.press("Enter")  # keyboard only: the marker opens its source
    source = turn.locator("details.source[open]").first
    assert "25 days of paid annual leave" in source.inner_text()
    assert "annual-leave.md" in source.locator(".doc").inner_text()
    turn.locator("details.why > summary").click()
    assert "Served by" in turn.locator(".facts").inner_text()
    assert turn.locator(".score-marker").count() == 1 and turn.locator(".tick").count() == 2
    shoot(page, "01-rag-answer")
    assert_accessible(page)
    assert not page.dialogs and not page.console_errors


def test_an_off_topic_question_shows_the_fallback_badge_and_reasons(page: Any, base_url: str) -> None:
    open_page(page, base_url)
    turn = ask(page, "What is the capital city of Australia?")
    assert turn.locator(".badge").inner_text() == "Mode: fallback"
    turn.locator("details.why > summary").focus()
    page.keyboard.press("Enter")
    reasons = turn.locator(".reasons li")
    assert reasons.count() >= 1 and reasons.first.inner_text().strip()
    gates = turn.locator(".gates li")
    assert gates.count() == 4  # the shipped profile's hybrid gates, min_best_similarity included
    # on a refusal a check that held is "met", never a green "passed" (issue 48)
    assert all(s in ("– met", "✗ failed", "– not checked") for s in gates.locator(".gate-state").all_inner_texts())
    shoot(page, "02-fallback-why")


def test_a_figure_thumbnail_loads_and_a_click_opens_its_source(page: Any, base_url: str) -> None:
    open_page(page, base_url)
    turn = ask(page, FIGURE_Q)
    thumb = turn.locator("img.thumb").first
    thumb.wait_for()
    page.wait_for_function("img => img.complete && img.naturalWidth > 0", arg=thumb.element_handle())
    assert thumb.get_attribute("src").startswith("/assets/office-floor-plan-evacuation")
    assert turn.locator("details.sources-panel[open]").count() == 0
    turn.locator("button.thumb-button").first.click()
    source = turn.locator("details.source.highlight")
    assert turn.locator("details.sources-panel[open]").count() == 1
    assert source.count() == 1 and source.get_attribute("open") is not None
    assert source.locator("img.figure-large").count() == 1 and in_view(source.locator("summary"))
    assert source.locator("summary").evaluate("e => e === document.activeElement")
    page.screenshot(path=str(ARTIFACTS / "03-figure-opened-desktop.png"))
    shoot(page, "03-figure")
    assert_accessible(page)


def test_the_newest_answer_scrolls_into_view_and_the_question_box_stays_reachable(browser: Any,
                                                                                  base_url: str) -> None:
    for width, height in ((1280, 800), (375, 700)):
        context = browser.new_context(viewport={"width": width, "height": height})
        page = context.new_page()
        page.set_default_timeout(20_000)
        open_page(page, base_url)
        for question in (LEAVE_Q, FIGURE_Q, "and for part-time staff?"):
            turn = ask(page, question)
        assert page.evaluate("document.documentElement.scrollHeight") > height  # there is something to scroll
        assert in_view(turn.locator(".question")), width
        top = turn.locator(".answer").evaluate("e => e.getBoundingClientRect().top")
        box_top = page.locator("#ask-form").evaluate("e => e.getBoundingClientRect().top")
        at_end = page.evaluate("scrollY + innerHeight >= document.documentElement.scrollHeight - 2")
        # the newest answer starts in the upper half, or (when the page ends sooner) is wholly on screen
        assert 0 <= top < box_top - 64 and (top < height / 2 or at_end), (width, top, box_top)
        assert turn.locator(".answer").evaluate("e => e.getBoundingClientRect().bottom") <= box_top + 1 or top < height / 2
        assert in_view(page.locator("#question")) and in_view(page.locator("#ask")), width
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / f"09-third-answer-{width}.png"))
        context.close()


def test_one_click_records_a_vote_and_a_changed_vote_replaces_it(page: Any, base_url: str,
                                                                  ui_env: tuple[Settings, Any]) -> None:
    from playwright.sync_api import expect

    store = ui_env[1]
    open_page(page, base_url)
    turn = ask(page, LEAVE_Q)
    interaction = turn.locator(".feedback [role=group]").get_attribute("aria-labelledby").removeprefix("fb-")
    turn.get_by_role("button", name="Yes, helpful").click()
    expect(turn.locator(".feedback-result")).to_contain_text("recorded (helpful)")
    assert [f.rating for f in store.feedback() if f.interaction_id == interaction] == ["up"]
    turn.get_by_role("button", name="No, not helpful").click()
    expect(turn.locator(".feedback-result")).to_contain_text("recorded (not helpful)")
    assert [f.rating for f in store.feedback() if f.interaction_id == interaction] == ["down"]  # replaced
    assert turn.get_by_role("button", name="No, not helpful").get_attribute("aria-pressed") == "true"
    assert turn.get_by_role("button", name="Yes, helpful").get_attribute("aria-pressed") == "false"
    page.reload()  # the vote shows again after a reload
    page.wait_for_selector("li.turn[data-done='true']")
    assert page.get_by_role("button", name="No, not helpful").get_attribute("aria-pressed") == "true"


def test_the_picker_shows_names_and_the_empty_page_offers_example_questions(page: Any, base_url: str) -> None:
    open_page(page, base_url)
    options = page.locator("#domain option").all_inner_texts()
    assert options == ["Company policies", "Field engineering handbook"], options
    assert not any("KB_" in o for o in options)
    examples = page.locator("#examples")
    assert examples.is_visible() and examples.get_by_role("button", name=FIGURE_Q).count() == 1
    shoot(page, "10-examples")
    assert_accessible(page)
    page.locator("#domain").select_option("handbook")
    assert examples.get_by_role("button", name="How often must a lone worker confirm they are safe?").count() == 1
    page.locator("#domain").select_option("")
    examples.get_by_role("button", name=FIGURE_Q).click()
    page.wait_for_selector("li.turn[data-done='true']")
    assert FIGURE_Q in page.locator("li.turn .question").inner_text() and examples.is_hidden()


def test_the_why_panel_speaks_plainly_and_its_labels_fit(page: Any, base_url: str) -> None:
    open_page(page, base_url)
    turn = ask(page, "What is the capital city of Australia?")
    turn.locator("details.why > summary").click()
    why = turn.locator(".why-body").inner_text()
    assert "at least 0" not in why and "min_" not in why and "≥" not in why
    assert "no minimum is set" in why or "needs at least" in why
    for width in (1280, 375):
        page.set_viewport_size({"width": width, "height": 900})
        clipped = turn.locator(".legend .zone-label").evaluate_all(
            "els => els.filter(e => e.scrollWidth > e.clientWidth + 1 || e.getBoundingClientRect().right > innerWidth)"
            ".map(e => e.textContent)")
        assert not clipped, (width, clipped)
        labels = turn.locator(".legend .zone-label").all_inner_texts()
        assert [t.split(" (")[0] for t in labels[:3]] == ["Not answered", "Partly answered", "Answered"]
    page.set_viewport_size({"width": 1280, "height": 900})
    page.evaluate("document.getElementById('ask-form').style.position = 'static'")
    turn.locator("details.why").scroll_into_view_if_needed()
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    turn.locator("details.why").screenshot(path=str(ARTIFACTS / "11-why-desktop.png"))
    page.set_viewport_size({"width": 375, "height": 812})
    turn.locator("details.why").screenshot(path=str(ARTIFACTS / "11-why-375.png"))
    assert_accessible(page)


def test_dark_mode_follows_the_system_preference(browser: Any, base_url: str) -> None:
    context = browser.new_context(viewport={"width": 1280, "height": 900}, color_scheme="dark")
    page = context.new_page()
    page.set_default_timeout(20_000)
    open_page(page, base_url)
    turn = ask(page, FIGURE_Q)
    turn.locator("details.why > summary").click()
    background = page.evaluate("getComputedStyle(document.documentElement).backgroundColor")
    channels = [int(c) for c in background[background.index("(") + 1:background.index(")")].split(",")[:3]]
    assert max(channels) < 60, background  # a dark background
    shoot(page, "12-dark")
    assert_accessible(page)
    context.close()


def test_deleting_history_asks_first(page: Any, base_url: str) -> None:
    from playwright.sync_api import expect

    open_page(page, base_url)
    ask(page, LEAVE_Q)
    cid = page.evaluate("sessionStorage.getItem('rag-conversation-id')")
    history = f"{base_url}/conversations/{cid}"
    page.get_by_role("button", name="Delete history").click()
    dialog = page.locator("#confirm-delete")
    assert dialog.is_visible() and page.locator("#confirm-delete-cancel").evaluate("e => e === document.activeElement")
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "13-confirm-delete-desktop.png"))  # the window: a modal covers it
    page.set_viewport_size({"width": 375, "height": 812})
    assert page.evaluate("document.documentElement.scrollWidth") <= 376
    page.screenshot(path=str(ARTIFACTS / "13-confirm-delete-375.png"))
    page.set_viewport_size({"width": 1280, "height": 900})
    page.keyboard.press("Escape")  # cancelling keeps everything
    assert dialog.is_hidden() and page.locator("li.turn").count() == 1
    assert len(page.request.get(history).json()["turns"]) == 1
    page.get_by_role("button", name="Delete history").click()
    dialog.get_by_role("button", name="Delete history").click()
    expect(page.locator("li.turn")).to_have_count(0)
    assert page.request.get(history).json()["turns"] == []
    assert page.evaluate("sessionStorage.getItem('rag-conversation-id')") != cid
    assert not page.dialogs  # an in-page dialog, not window.confirm


def test_a_follow_up_is_rewritten_and_answered(page: Any, base_url: str) -> None:
    open_page(page, base_url)
    ask(page, LEAVE_Q)
    turn = ask(page, "and for part-time staff?")
    turn.locator("details.why > summary").click()
    facts = turn.locator(".facts").inner_text()
    # the constraint replaces the phrase it stands for (wave 3), instead of being appended
    assert "How many days of annual leave do part-time staff get?" in facts and "offline substitution rule" in facts
    assert "pro rata" in turn.locator(".answer-text").inner_text()
    shoot(page, "04-follow-up")


def test_feedback_is_stored_and_exported(page: Any, base_url: str, ui_env: tuple[Settings, Any],
                                         tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from playwright.sync_api import expect

    settings, store = ui_env
    open_page(page, base_url)
    good = ask(page, LEAVE_Q)
    good.get_by_role("button", name="Yes, helpful").click()  # one click records the vote
    expect(good.locator(".feedback-result")).to_contain_text("recorded (helpful)")
    bad = ask(page, "What is the capital city of Australia?")
    bad.get_by_role("button", name="No, not helpful").click()
    expect(bad.locator(".feedback-result")).to_contain_text("recorded (not helpful)")
    bad.get_by_label("Comment (optional)").fill("It should say Canberra, <b>really</b>")
    bad.get_by_label("Expected answer (optional)").fill("Canberra")
    shoot(page, "05-feedback")
    bad.get_by_role("button", name="Send comment").click()
    expect(bad.locator(".feedback-result")).to_contain_text("vote and comment were recorded (not helpful)")

    from backend.cli.main import cli

    monkeypatch.setenv("RAG_STORE__SQLITE__PATH", settings.store.sqlite.path)
    out = tmp_path / "candidates.jsonl"
    result = CliRunner().invoke(cli, ["feedback", "export", "--out", str(out)])
    assert result.exit_code == 0, result.output
    candidates = [json.loads(line) for line in out.read_text().splitlines()]
    assert any(c["query"] == LEAVE_Q and c["expected_mode"] == "rag" and "annual-leave" in c["expected_sources"]
               for c in candidates)
    review = [json.loads(line) for line in (tmp_path / "candidates.review.jsonl").read_text().splitlines()]
    assert any(r["review"]["comment"] == "It should say Canberra, <b>really</b>" for r in review)


def test_the_domain_picker_routes_and_document_markup_renders_inert(page: Any, base_url: str) -> None:
    open_page(page, base_url)
    page.locator("#domain").select_option("handbook")
    turn = ask(page, PAYLOAD_Q)
    turn.locator("details.why > summary").click()
    assert "KB_HANDBOOK" in turn.locator(".facts").inner_text()
    turn.locator("details.sources-panel > summary").click()
    turn.locator("details.source > summary").first.click()
    shown = turn.locator("details.source .chunk-text").first.inner_text()
    assert "<script>window.__xss = 'script'; alert('xss')</script>" in shown
    assert "<img src=x onerror=" in shown and "<b>bold</b>" in shown
    assert turn.locator("script, img[src='x'], b").count() == 0  # no element came from the document
    assert page.evaluate("window.__xss") is None and not page.dialogs
    shoot(page, "06-domain-payload")


def test_a_deep_link_asks_at_once_and_a_reload_restores_instead_of_asking_again(page: Any, base_url: str) -> None:
    asked: list[str] = []
    page.on("request", lambda r: asked.append(r.url) if r.url.endswith("/chat/stream") else None)
    page.goto(f"{base_url}/?q={PAYLOAD_Q.replace(' ', '+')}&domain=handbook")
    page.wait_for_selector("li.turn[data-done='true']")
    assert page.locator("#domain").input_value() == "handbook"
    assert "14 days" in page.locator(".answer-text").inner_text()
    assert "q=" not in page.url and "domain=handbook" in page.url  # the question left the address
    ask(page, "Where are the calibration logs kept?")
    page.reload()
    page.wait_for_selector("li.turn:nth-child(2)[data-done='true']")
    turns = page.locator("li.turn")
    assert turns.count() == 2 and len(asked) == 2  # restored, not asked again
    assert PAYLOAD_Q in turns.nth(0).locator(".question").inner_text()
    assert "14 days" in turns.nth(0).locator(".answer-text").inner_text()
    assert turns.nth(1).locator(".badge").count() == 1
    assert page.locator("#domain").input_value() == "handbook"
    assert_accessible(page)


def test_a_reload_in_another_tab_shows_the_servers_questions(browser: Any, base_url: str) -> None:
    """The answers are this tab's; the questions come from GET /conversations/<id>."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.set_default_timeout(20_000)
    open_page(page, base_url)
    ask(page, LEAVE_Q)
    page.evaluate("sessionStorage.removeItem('rag-answers')")  # as if only the conversation id were left
    page.reload()
    page.wait_for_selector("li.turn[data-done='true']")
    assert LEAVE_Q in page.locator("li.turn .question").inner_text()
    assert "not shown again" in page.locator("li.turn .answer-text").inner_text()
    context.close()


def test_with_api_keys_the_page_asks_for_one_and_figures_still_load(
        browser: Any, ui_env: tuple[Settings, Any], embedder: Any, extractive: Any) -> None:
    from playwright.sync_api import expect

    settings, store = ui_env
    keyed = settings.model_copy(update={"server": settings.server.model_copy(update={"api_keys": (SecretStr(API_KEY),)})})
    with serving(keyed, store, embedder, extractive) as url:
        context = browser.new_context(viewport={"width": 1280, "height": 900})
        page = context.new_page()
        page.set_default_timeout(20_000)
        page.goto(url)
        page.wait_for_selector("#key-panel:not([hidden])")
        assert page.locator("#api-key").evaluate("e => e === document.activeElement")
        shoot(page, "07-api-key-prompt")
        page.locator("#api-key").fill("wrong-key")
        page.keyboard.press("Enter")
        expect(page.locator("#key-error")).to_contain_text("not accepted")
        page.locator("#api-key").fill(API_KEY)
        page.keyboard.press("Enter")
        page.wait_for_selector("#domain option", state="attached")
        assert page.locator("#key-panel").is_hidden()
        assert page.evaluate("sessionStorage.getItem('rag-api-key')") == API_KEY
        turn = ask(page, FIGURE_Q)
        thumb = turn.locator("img.thumb").first
        assert "sig=" in thumb.get_attribute("src")
        page.wait_for_function("img => img.complete && img.naturalWidth > 0", arg=thumb.element_handle())
        context.close()
