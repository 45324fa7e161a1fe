"""The sanitizer runs with no network and loads nothing when it is disabled.

Network access is cut by patching the socket layer: every DNS lookup or connect
is counted and refused, so "nothing was attempted" is a count of zero rather
than the absence of an error.
"""

from __future__ import annotations

import logging
import socket
from pathlib import Path
from typing import Any, Iterator

import pytest

from backend.common import sanitizer
from backend.common.config import SanitizeSettings
from backend.common.errors import SanitizerError
from backend.common.sanitizer import sanitize_if_enabled


class NetworkBlocked:
    """Counts and refuses every outbound name lookup and connection."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.attempts: list[str] = []

        def refuse(kind: str) -> Any:
            def _refuse(*args: Any, **kwargs: Any) -> Any:
                self.attempts.append(f"{kind}{args[1:2] if kind == 'connect' else args[:1]}")
                raise OSError(101, "Network is unreachable (blocked by test)")

            return _refuse

        monkeypatch.setattr(socket.socket, "connect", refuse("connect"))
        monkeypatch.setattr(socket.socket, "connect_ex", refuse("connect"))
        monkeypatch.setattr(socket, "create_connection", refuse("create_connection"))
        monkeypatch.setattr(socket, "getaddrinfo", refuse("getaddrinfo"))


@pytest.fixture
def network(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[NetworkBlocked]:
    """Blocks the network and gives tldextract's module-level extractor an empty cache.

    Once any run has fallen back to the snapshot, the default extractor caches the
    list under ~/.cache and stops fetching; a fresh cache makes any use of the
    default (downloading) extractor show up as an attempt, as on a new machine.
    """
    import tldextract.tldextract

    monkeypatch.setattr(tldextract.tldextract, "TLD_EXTRACTOR",
                        tldextract.tldextract.TLDExtract(cache_dir=str(tmp_path / "tld-cache")))
    yield NetworkBlocked(monkeypatch)


def test_blocked_network_is_noticed_by_a_default_tldextract(network: NetworkBlocked, tmp_path: Path) -> None:
    """The detector works: tldextract's default extractor does try to fetch the suffix list."""
    import tldextract

    tldextract.extract("someone@example.com")
    assert len(network.attempts) >= 1


def test_sanitizing_emails_and_urls_offline_attempts_no_connection_and_prints_no_traceback(
    network: NetworkBlocked, capsys: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    sanitizer.clear_engine_cache()  # build the analyzer (spaCy, recognizers, tldextract) under the block
    settings = SanitizeSettings(enabled=True, entities=("EMAIL_ADDRESS", "URL", "PERSON"))
    text = "Mail ana.lopez@example.co.uk or see https://intranet.example.com/hr/forms before Friday."
    outcome = sanitize_if_enabled([text], settings, doc_ids=["offline"])
    assert outcome.texts == ["Mail <EMAIL_ADDRESS> or see <URL> before Friday."]
    assert network.attempts == []
    captured = capsys.readouterr()
    assert "Traceback" not in captured.out + captured.err + caplog.text
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING] == []


def test_email_validation_uses_the_bundled_suffix_snapshot(network: NetworkBlocked) -> None:
    """An unknown top-level domain fails validation offline exactly as it would online."""
    settings = SanitizeSettings(enabled=True, mode="audit", entities=("EMAIL_ADDRESS",))
    text = "Write to ana@example.org, not to ana@example.notarealtld."
    found = [text[f.start:f.end] for f in sanitize_if_enabled([text], settings, doc_ids=["d"]).findings]
    assert found == ["ana@example.org"]
    assert network.attempts == []


def test_disabled_returns_texts_unchanged_and_builds_no_analyzer() -> None:
    texts = ["Maria Gonzalez, maria.gonzalez@example.com, 4111 1111 1111 1111", ""]
    before = sanitizer.engine_cache_info()
    outcome = sanitize_if_enabled(texts, SanitizeSettings(enabled=False), doc_ids=["a", "b"])
    assert outcome.texts == texts
    assert outcome.findings == []
    assert sanitizer.engine_cache_info() == before  # not even a cache lookup: spaCy is not touched


def test_analyzer_is_built_once_per_model_and_reused() -> None:
    settings = SanitizeSettings(enabled=True)
    sanitize_if_enabled(["first call"], settings, doc_ids=["a"])
    before = sanitizer.engine_cache_info()
    sanitize_if_enabled(["second call with other settings"], settings.model_copy(update={"mode": "audit"}),
                        doc_ids=["b"])
    after = sanitizer.engine_cache_info()
    assert (after.misses, after.hits) == (before.misses, before.hits + 1)


def test_missing_spacy_package_names_the_package_and_the_install_hint(
    network: NetworkBlocked, capsys: pytest.CaptureFixture[str]
) -> None:
    settings = SanitizeSettings(enabled=True, spacy_model="en_core_web_missing_pkg")
    with pytest.raises(SanitizerError, match=r"'en_core_web_missing_pkg' is not installed; run `make setup`"):
        sanitize_if_enabled(["Maria Gonzalez"], settings, doc_ids=["a"])
    assert network.attempts == []  # no `spacy download`
    assert "Downloading" not in capsys.readouterr().err
