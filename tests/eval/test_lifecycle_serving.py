"""Readers never notice the lifecycle: a client looping on /chat and on /assets for
every cited figure, over real HTTP, while 50 build-evaluate-promote-rollback cycles
run (each with a new figure image, and retention dropping versions and images)."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from werkzeug.serving import make_server

from backend.core.services.promotion import rollback
from tests.eval.lifecycle import ALIAS, FIGURE_Q, LEAVE_Q, VERSION, Edition
from tests.eval.test_lifecycle import KB

pytestmark = pytest.mark.slow
CYCLES = 50


class Reader(threading.Thread):
    """Asks in a loop until told to stop; keeps every failure it sees."""

    def __init__(self, base: str) -> None:
        super().__init__(daemon=True)
        self.base, self.stop = base, threading.Event()
        self.errors: list[str] = []
        self.chats = self.images = 0
        self.versions: set[str] = set()

    def run(self) -> None:
        with httpx.Client(base_url=self.base, timeout=30) as client:
            while not self.stop.is_set():
                for question in (FIGURE_Q, LEAVE_Q):
                    self._ask(client, question)

    def _ask(self, client: httpx.Client, question: str) -> None:
        try:
            response = client.post("/chat", json={"question": question})
            self.chats += 1
            if response.status_code != 200:
                self.errors.append(f"/chat {response.status_code}: {response.text[:200]}")
                return
            body = response.json()
            self.versions.add(body["decision_explain"]["version"])
            for citation in body["citations"]:
                if citation["image_ref"]:
                    image = client.get(f"/assets/{citation['image_ref']}")
                    self.images += 1
                    if image.status_code != 200 or not image.content:
                        self.errors.append(f"/assets/{citation['image_ref']} {image.status_code}")
        except httpx.HTTPError as exc:
            self.errors.append(f"{question[:20]}: {type(exc).__name__}: {exc}")


def test_a_looping_reader_sees_no_error_across_50_lifecycle_cycles(tmp_path: Path, embedder: Any) -> None:
    kb = KB(tmp_path, embedder)
    assert kb.ingest().ok and kb.promote().promoted
    server = make_server("127.0.0.1", 0, kb.client.application, threaded=True)
    serving = threading.Thread(target=server.serve_forever, daemon=True)
    serving.start()
    reader = Reader(f"http://127.0.0.1:{server.server_port}")
    reader.start()
    dropped: list[str] = []
    try:
        for cycle in range(CYCLES):
            color = (40 + cycle * 4, 200 - cycle * 3, (cycle * 37) % 256)
            report = kb.ingest(Edition(days=26 + cycle, color=color))
            assert report.ok and report.builds[0]["action"] == "new_version", report.render()
            result = kb.promote()
            assert result.promoted, [g.describe() for g in result.failed_gates]
            dropped += result.dropped
            time.sleep(0.15)  # let the reader meet the new version and its new figure
            assert rollback(kb.store, ALIAS).version == VERSION
    finally:
        reader.stop.set()
        reader.join(timeout=60)
        server.shutdown()
        kb.store.close()
    assert reader.errors == []
    assert reader.chats >= CYCLES and reader.images >= CYCLES // 2
    assert len(reader.versions) > CYCLES // 2, sorted(reader.versions)  # it read the new versions too
    assert len(dropped) >= CYCLES - 3  # retention ran all along, images included
    remaining = {p.name for p in kb.assets.rglob("img_*")}
    assert len(remaining) <= 4
