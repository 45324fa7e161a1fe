#!/usr/bin/env python
"""Screenshots of the chat page deciding with the answer reader (docs/WEB_UI.md, issue 42).

Serves the page with ``config/rag.yaml`` (the reader decides) over a store that already holds the sample and
handbook versions (``--store``; ``rag ingest`` them first), asks a question in the asker's own words
and a look-alike in headless Chromium, opens each answer's "why" panel and writes a PNG of each.

    .venv/bin/python scripts/screenshot_reader.py --store /tmp/cal/rag.sqlite --out docs/img
"""

from __future__ import annotations

import argparse
import sys
import threading
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from werkzeug.serving import make_server  # noqa: E402

from backend.api.app import create_app  # noqa: E402
from backend.common.config import REPO_ROOT, load_settings  # noqa: E402
from backend.runtime import build_services  # noqa: E402

QUESTIONS = {
    "answer-reader-paraphrase": "How many days off do full-time staff get each year?",
    "answer-reader-lookalike": "How many days of annual leave do board members get?",
    "answer-reader-refused": "What is the parental leave policy for interns in the Tokyo office?",
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--store", required=True, type=Path)
    parser.add_argument("--out", type=Path, default=REPO_ROOT / "docs" / "img")
    parser.add_argument("--chromium", default="/usr/bin/chromium")
    args = parser.parse_args()
    settings = load_settings(REPO_ROOT / "config" / "rag.yaml", overrides={
        "store": {"sqlite": {"path": str(args.store)}}, "server": {"rate_limit": {"enabled": False}}})
    services = build_services(settings)
    server = make_server("127.0.0.1", 0, create_app(settings, services), threaded=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    from playwright.sync_api import sync_playwright

    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=args.chromium, args=["--no-sandbox"], headless=True)
            for name, question in QUESTIONS.items():
                page = browser.new_page(viewport={"width": 1280, "height": 900})
                page.set_default_timeout(30_000)
                page.goto(f"http://127.0.0.1:{server.server_port}/")
                page.locator("#question").fill(question)
                page.locator("#question").press("Enter")
                turn = page.locator("li.turn[data-done]").first
                turn.wait_for()
                turn.locator("details.why > summary").click()
                turn.locator(".answerability").wait_for()
                page.screenshot(path=str(args.out / f"{name}.png"), full_page=True)
                print(name, turn.locator(".badge").inner_text(), "|", turn.locator(".answerability").inner_text())
                page.close()
            browser.close()
    finally:
        server.shutdown()


if __name__ == "__main__":
    main()
