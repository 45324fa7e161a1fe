"""Fixtures of the HTTP tests: one real corpus per session, a fresh app per test."""

from __future__ import annotations

from typing import Any, Iterator

import pytest
from flask import Flask
from flask.testing import FlaskClient

from backend.api.app import create_app
from backend.runtime import build_services
from backend.providers.local.extractive import ExtractiveChatModel
from tests.api.corpus import Corpus, build_corpus


@pytest.fixture(scope="session")
def corpus(tmp_path_factory: pytest.TempPathFactory, embedder: Any) -> Iterator[Corpus]:
    built = build_corpus(tmp_path_factory.mktemp("chat-corpus"), embedder)
    yield built
    built.store.close()


@pytest.fixture(scope="session")
def extractive(embedder: Any) -> ExtractiveChatModel:
    """Shared so its sentence-vector cache is warm across tests."""
    return ExtractiveChatModel(embedder)


@pytest.fixture
def app(corpus: Corpus, embedder: Any, extractive: ExtractiveChatModel) -> Flask:
    services = build_services(corpus.settings, store=corpus.store, embedder=embedder, primary=extractive)
    return create_app(corpus.settings, services)


@pytest.fixture
def client(app: Flask) -> FlaskClient:
    return app.test_client()
