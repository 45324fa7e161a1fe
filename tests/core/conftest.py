from __future__ import annotations

from typing import Any, Iterator

import pytest

from tests.api.corpus import Corpus, build_corpus


@pytest.fixture(scope="session")
def corpus(tmp_path_factory: pytest.TempPathFactory, embedder: Any) -> Iterator[Corpus]:
    built = build_corpus(tmp_path_factory.mktemp("chat-corpus"), embedder)
    yield built
    built.store.close()
