"""The contract every vector store passes, one mixin per capability, in two tiers.

Modelled on Haystack 2.x ``haystack/testing/document_store.py``
(``DocumentStoreBaseTests`` / ``DocumentStoreBaseExtendedTests``):

* :class:`VectorStoreBaseTests`: what every store must do (the port docstrings in
  ``backend/core/ports.py`` as tests), plus :class:`StoresTest` (the ``Stores`` bundle) and
  :class:`StoreSpecificTest`, whose tests fail with ``NotImplementedError`` until the store's
  class overrides them (behaviour each store shows its own way).
* :class:`VectorStoreExtendedTests`: opt-in: optional ports (``SeriesLocking``) and slow checks.
* :class:`VectorStoreContract`: both; the built-in stores (SQLite, and Oracle in
  ``tests/providers/test_oracle_vs.py``) run it unchanged. Nothing here knows which backend runs it.

A new adapter's tests, in full::

    class TestMyStore(VectorStoreBaseTests):           # or VectorStoreContract, or + single mixins
        @pytest.fixture
        def store(self, tmp_path: Path) -> Iterator[MyStore]:
            store = MyStore(tmp_path / "db")           # one object answering for every port
            yield store
            store.close()

        @pytest.fixture
        def stores(self, store: MyStore) -> Stores:   # only for a store split by port
            return store.stores()

        def test_an_unreachable_store_says_where_it_is(self, tmp_path: Path) -> None: ...
        def test_finish_load_readies_what_search_uses(self, store, version, embedder) -> None: ...

then add tests for what no other store has beside them.

Vectors of the sample corpus come from the real local model (session fixture
``embedder``), so ranking tests check real semantics; small random float32
vectors appear only where meaning does not matter (dimension guards, another
model). Every test works in freshly named versions and aliases (``names``), so a
persistent database can host the run.
"""

from __future__ import annotations

import dataclasses
import uuid
from typing import Any, Sequence

import numpy as np
import pytest

from backend.common.errors import (
    AliasNotFound,
    EmbeddingModelMismatch,
    SeriesLocked,
    StoreError,
    VersionChanged,
    VersionConflict,
    VersionNotFound,
    VersionServed,
)
from backend.core.ports import (
    ConversationLog,
    EnrichmentCache,
    IndexAdmin,
    InteractionLog,
    Stores,
    VectorStore,
)
from backend.core.types import (
    Chunk,
    ConversationTurn,
    DocumentWrite,
    Feedback,
    FieldFilter,
    HypotheticalQuestion,
    Interaction,
    LockHolder,
    QueryVector,
    ScoredChunk,
    SearchResult,
    Summary,
    VersionSpec,
    Visibility,
    content_hash,
)

#: (doc_id, source, [(text, chunk_type)], metadata) -- a small handbook.
CORPUS: tuple[tuple[str, str, tuple[tuple[str, str], ...], dict[str, Any]], ...] = (
    ("hr-leave", "handbook/hr.md", (
        ("Employees accrue two days of paid vacation leave for every month worked.", "text"),
        ("Unused vacation days can be carried over into the first quarter of the next year.", "text"),
    ), {"tags": ["hr", "leave"], "dept": "hr", "updated_at": "2024-01-15"}),
    ("it-vpn", "handbook/it.md", (
        ("To connect to the corporate VPN, install the client and sign in with your badge number.", "text"),
    ), {"tags": ["it", "network"], "dept": "it", "updated_at": "2024-06-01"}),
    ("fin-expense", "policies/finance.pdf", (
        ("Travel expenses must be submitted within thirty days with the original receipts attached.", "text"),
    ), {"tags": ["finance", "travel"], "dept": "finance", "updated_at": "2023-11-20"}),
    ("it-password", "handbook/security.docx", (
        ("Passwords must be changed every ninety days and may not reuse any of the last five passwords.", "text"),
        ("Figure 2: the password change dialog with its strength meter.", "figure"),
    ), {"tags": ["it", "security"], "dept": "it", "updated_at": "2025-02-10"}),
    ("kitchen", "notices/kitchen.txt", (
        ("The office kitchen is cleaned every Friday afternoon, so please label your food.", "text"),
    ), {"tags": ["facilities"], "dept": "facilities", "updated_at": "2024-03-03"}),
)
ALL_CHUNK_IDS = frozenset(f"{doc}#{i}" for doc, _, parts, _ in CORPUS for i in range(len(parts)))

_VECTORS: dict[tuple[str, str], np.ndarray] = {}


def embed(embedder: Any, texts: Sequence[str], *, query: bool = False) -> np.ndarray:
    """Real vectors, computed once per text for the whole session."""
    kind = "q" if query else "d"
    missing = [t for t in dict.fromkeys(texts) if (kind, t) not in _VECTORS]
    if missing:
        fn = embedder.embed_queries if query else embedder.embed_documents
        for text, vec in zip(missing, fn(missing)):
            _VECTORS[(kind, text)] = vec
    return np.stack([_VECTORS[(kind, t)] for t in texts]) if texts else np.zeros((0, embedder.dimension), np.float32)


def random_vectors(n: int, dim: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal((n, dim)).astype(np.float32)


def make_doc(
    doc_id: str,
    parts: Sequence[tuple[str, str]],
    metadata: dict[str, Any],
    source: str,
    vectors: np.ndarray,
    *,
    id_prefix: str = "",
    doc_hash: str | None = None,
) -> DocumentWrite:
    chunks = [
        Chunk(
            chunk_id=f"{id_prefix}{doc_id}#{i}", doc_id=doc_id, text=text, source=source,
            chunk_index=i, chunk_type=ctype, metadata=metadata,
        )
        for i, (text, ctype) in enumerate(parts)
    ]
    return DocumentWrite(doc_id, doc_hash or content_hash("".join(t for t, _ in parts)), chunks, vectors)


def corpus_docs(embedder: Any, *, id_prefix: str = "") -> list[DocumentWrite]:
    return [
        make_doc(doc, parts, meta, source, embed(embedder, [t for t, _ in parts]), id_prefix=id_prefix)
        for doc, source, parts, meta in CORPUS
    ]


def ids(result: SearchResult) -> list[str]:
    return [h.chunk.chunk_id for h in result.hits]


def stored(chunk: Chunk) -> Chunk:
    """What a store gives back: everything but ``embed_text`` (never stored)."""
    return dataclasses.replace(chunk, embed_text=None)


class Names:
    """Fresh identifiers for one test, so nothing collides in a shared database."""

    def __init__(self) -> None:
        self.tag = uuid.uuid4().hex[:6].upper()

    def __call__(self, label: str) -> str:
        return f"T{self.tag}_{label}"


class _Fixtures:
    @pytest.fixture
    def store(self) -> Any:
        """The store under test as one object answering for every port (``VectorStore`` +
        ``IndexAdmin`` + ``InteractionLog``, and ``ConversationLog`` / ``SeriesLocking`` where the
        mixins need them): a split store passes its facade (``SqliteVectorStore``)."""
        raise NotImplementedError("a store's test class overrides the `store` fixture")

    @pytest.fixture
    def stores(self, store: Any) -> Stores:
        """The store's ports as the ``Stores`` bundle ``providers.registry.build_stores`` returns.
        Default: ``Stores.of(store)`` (one object in every field). A store split by port overrides it
        to return its own bundle over the same connection as ``store`` (e.g. ``store.stores()``), so
        ``StoresTest`` checks the separate port objects."""
        return Stores.of(store)

    @pytest.fixture
    def names(self) -> Names:
        return Names()

    @pytest.fixture
    def model(self, embedder: Any) -> str:
        return str(embedder.model_id)

    @pytest.fixture
    def version(self, store: Any, names: Names, embedder: Any) -> str:
        """A cosine version holding the whole corpus."""
        name = names("KB_V1")
        store.create_version(VersionSpec(name, embedder.model_id, embedder.dimension, "cosine"))
        store.write_documents(name, corpus_docs(embedder))
        return name

    def query(self, embedder: Any, text: str) -> QueryVector:
        return QueryVector(embed(embedder, [text], query=True)[0], embedder.model_id)

    def assert_hits_equal(self, actual: Sequence[ScoredChunk], expected: Sequence[tuple[str, float]]) -> None:
        """The one place where stores may legitimately differ: score precision and the
        order of exact ties. Override to loosen; the default demands the exact order
        and scores equal to 1e-5."""
        assert [h.chunk.chunk_id for h in actual] == [cid for cid, _ in expected]
        assert [h.score for h in actual] == pytest.approx([s for _, s in expected], abs=1e-5)


class UpsertTest(_Fixtures):
    """``write_documents``: upsert by chunk id, the document's old chunks replaced, counts recorded,
    one transaction per call, nothing changed by writing the same chunks again.

    Usage: ``class TestMyStore(UpsertTest)`` with a ``store`` fixture (``create_version`` and the
    ``VectorStore`` writes and searches); every test names its own versions (``names``)."""

    def test_write_returns_chunk_count_and_counts_are_recorded(self, store: Any, names: Names, embedder: Any) -> None:
        name = names("UP")
        store.create_version(VersionSpec(name, embedder.model_id, embedder.dimension, "cosine"))
        assert store.write_documents(name, corpus_docs(embedder)) == len(ALL_CHUNK_IDS)
        v = store.get_version(name)
        assert (v.chunk_count, v.doc_count) == (7, 5)

    def test_max_writers_threads_load_one_version_at_once(self, store: Any, names: Names, embedder: Any) -> None:
        """``max_writers`` threads, each writing its own documents into one version (as the Ray engine's
        ``--ray-writers`` do): every write commits and the version holds every document."""
        from concurrent.futures import ThreadPoolExecutor

        writers = store.max_writers()
        assert isinstance(writers, int) and writers >= 1
        name = names("PAR")
        store.create_version(VersionSpec(name, embedder.model_id, embedder.dimension, "cosine"))
        docs = corpus_docs(embedder)
        with ThreadPoolExecutor(writers) as pool:
            written = list(pool.map(lambda d: store.write_documents(name, [d]), docs))
        assert sum(written) == len(ALL_CHUNK_IDS)
        assert (store.get_version(name).chunk_count, store.get_version(name).doc_count) == (7, 5)

    def test_rewriting_the_same_chunks_changes_nothing(self, store: Any, version: str, embedder: Any) -> None:
        q = self.query(embedder, "How many vacation days do employees get?")
        before = store.search(version, q, k=50)
        lexical_before = store.lexical_search(version, "vacation days receipts", k=50)
        hashes = store.document_hashes(version)

        store.write_documents(version, corpus_docs(embedder))
        store.write_documents(version, corpus_docs(embedder)[:2])

        after = store.search(version, q, k=50)
        v = store.get_version(version)
        assert (v.chunk_count, v.doc_count) == (7, 5)
        assert store.document_hashes(version) == hashes
        assert [h.chunk for h in after.hits] == [h.chunk for h in before.hits]
        self.assert_hits_equal(after.hits, [(h.chunk.chunk_id, h.score) for h in before.hits])
        assert ids(store.lexical_search(version, "vacation days receipts", k=50)) == ids(lexical_before)
        assert len(ids(lexical_before)) == 4

    def test_chunks_come_back_exactly_as_written(self, store: Any, version: str, embedder: Any) -> None:
        written = {c.chunk_id: stored(c) for d in corpus_docs(embedder) for c in d.chunks}
        hits = store.search(version, self.query(embedder, "policy"), k=50).hits
        assert {h.chunk.chunk_id: h.chunk for h in hits} == written

    def test_changed_document_replaces_exactly_its_own_chunks(self, store: Any, version: str, embedder: Any) -> None:
        text = "Employees now accrue three days of paid vacation leave per month."
        new = make_doc("hr-leave", [(text, "text")], {"tags": ["hr"], "dept": "hr", "updated_at": "2025-05-01"},
                       "handbook/hr.md", embed(embedder, [text]))
        others = {c.chunk_id: stored(c) for d in corpus_docs(embedder) if d.doc_id != "hr-leave" for c in d.chunks}
        hashes = store.document_hashes(version)

        store.write_documents(version, [new])

        hits = {h.chunk.chunk_id: h.chunk for h in store.search(version, self.query(embedder, "leave"), k=50).hits}
        assert set(hits) == set(others) | {"hr-leave#0"}
        assert hits["hr-leave#0"].text == text
        assert hits["hr-leave#0"].metadata["updated_at"] == "2025-05-01"
        assert {cid: hits[cid] for cid in others} == others
        new_hashes = store.document_hashes(version)
        assert new_hashes["hr-leave"] == new.doc_hash != hashes["hr-leave"]
        assert {d: h for d, h in new_hashes.items() if d != "hr-leave"} == {
            d: h for d, h in hashes.items() if d != "hr-leave"}
        assert store.get_version(version).chunk_count == 6
        listed = store.document_list(version)
        assert [d.doc_id for d in listed] == sorted(new_hashes)
        assert {d.doc_id: d.doc_hash for d in listed} == new_hashes
        assert sum(d.chunks for d in listed) == 6
        leave = next(d for d in listed if d.doc_id == "hr-leave")
        assert (leave.source, leave.chunks) == ("handbook/hr.md", 1)

    def test_chunk_ids_are_unique_when_a_chunk_moves_to_another_document(
        self, store: Any, names: Names
    ) -> None:
        name = names("MOVE")
        store.create_version(VersionSpec(name, "test/random", 8, "cosine"))
        vec = random_vectors(1, 8)
        first = DocumentWrite("doc-a", "h1", [Chunk("shared#0", "doc-a", "alpha text", "a.txt", 0)], vec)
        second = DocumentWrite("doc-b", "h2", [Chunk("shared#0", "doc-b", "beta text", "b.txt", 0)], vec)
        store.write_documents(name, [first])
        store.write_documents(name, [second])
        hits = store.search(name, QueryVector(vec[0], "test/random"), k=10).hits
        assert [(h.chunk.chunk_id, h.chunk.doc_id, h.chunk.text) for h in hits] == [("shared#0", "doc-b", "beta text")]
        assert store.get_version(name).chunk_count == 1

    def test_a_chunk_id_repeated_in_one_write_is_refused_and_nothing_is_written(
        self, store: Any, version: str, embedder: Any
    ) -> None:
        text = "Sick leave needs a doctor's note after three days."
        doc = DocumentWrite("hr-sick", "h", [Chunk("hr-sick#0", "hr-sick", text, "hr.md", 0),
                                             Chunk("hr-sick#0", "hr-sick", text, "hr.md", 1)],
                            embed(embedder, [text, text]))
        with pytest.raises(StoreError, match="hr-sick#0"):
            store.write_documents(version, [doc])
        assert "hr-sick" not in store.document_hashes(version)
        assert store.get_version(version).chunk_count == 7

    def test_search_never_returns_a_chunk_id_twice(self, store: Any, version: str, embedder: Any) -> None:
        store.write_documents(version, corpus_docs(embedder))
        found = ids(store.search(version, self.query(embedder, "days"), k=50))
        assert sorted(found) == sorted(ALL_CHUNK_IDS)

    def test_write_to_unknown_version_raises(self, store: Any, names: Names, embedder: Any) -> None:
        with pytest.raises(VersionNotFound, match=names("NOPE")):
            store.write_documents(names("NOPE"), corpus_docs(embedder)[:1])

    def test_vectors_of_another_dimension_are_refused(self, store: Any, version: str) -> None:
        doc = make_doc("odd", [("some text", "text")], {}, "odd.txt", random_vectors(1, 8))
        with pytest.raises(EmbeddingModelMismatch, match=r"(?s)\b8\b.*\b384\b|\b384\b.*\b8\b"):
            store.write_documents(version, [doc])
        assert store.get_version(version).chunk_count == 7


class DeleteTest(_Fixtures):
    """``delete_documents``: every chunk of the documents goes, unknown ids count 0.

    Usage: ``class TestMyStore(DeleteTest)`` with a ``store`` fixture."""

    def test_delete_documents_removes_all_their_chunks(self, store: Any, version: str, embedder: Any) -> None:
        assert store.delete_documents(version, ["hr-leave", "kitchen"]) == 3
        remaining = set(ids(store.search(version, self.query(embedder, "vacation"), k=50)))
        assert remaining == ALL_CHUNK_IDS - {"hr-leave#0", "hr-leave#1", "kitchen#0"}
        assert ids(store.lexical_search(version, "vacation kitchen", k=10)) == []
        assert set(store.document_hashes(version)) == {"it-vpn", "fin-expense", "it-password"}
        v = store.get_version(version)
        assert (v.chunk_count, v.doc_count) == (4, 3)

    def test_deleting_unknown_documents_deletes_nothing(self, store: Any, version: str) -> None:
        assert store.delete_documents(version, ["no-such-doc"]) == 0
        assert store.get_version(version).chunk_count == 7


class DenseSearchTest(_Fixtures):
    """``search``: real-model ranking, filters inside the query (``k`` hits whenever ``k`` match),
    aliases and versions as targets.

    Usage: ``class TestMyStore(DenseSearchTest)`` with a ``store`` fixture; override
    ``assert_hits_equal`` only if the store's scores are less precise."""

    @pytest.mark.parametrize(
        ("question", "best"),
        [
            ("How many vacation days do employees get?", "hr-leave#0"),
            ("How do I log in to the VPN from home?", "it-vpn#0"),
            ("Where do I hand in receipts for my travel costs?", "fin-expense#0"),
            ("When is the kitchen cleaned?", "kitchen#0"),
        ],
    )
    def test_most_similar_chunk_ranks_first(self, store: Any, version: str, embedder: Any, question: str, best: str) -> None:
        result = store.search(version, self.query(embedder, question), k=3)
        assert ids(result)[0] == best
        assert [h.rank for h in result.hits] == [1, 2, 3]
        assert (result.version, result.strategy) == (version, "dense")

    def test_order_and_scores_match_cosine_similarity(self, store: Any, version: str, embedder: Any) -> None:
        question = "What happens to vacation days I did not use?"
        texts = {f"{d}#{i}": t for d, _, parts, _ in CORPUS for i, (t, _) in enumerate(parts)}
        matrix = embed(embedder, list(texts.values()))
        q = embed(embedder, [question], query=True)[0]
        sims = matrix @ q / (np.linalg.norm(matrix, axis=1) * np.linalg.norm(q))
        expected = sorted(zip(texts, sims.tolist()), key=lambda p: -p[1])
        result = store.search(version, self.query(embedder, question), k=7)
        assert expected[0][0] == "hr-leave#1"
        self.assert_hits_equal(result.hits, expected)
        assert all(h.distance == "cosine" for h in result.hits)

    def test_k_larger_than_the_table_returns_every_chunk_once(self, store: Any, version: str, embedder: Any) -> None:
        result = store.search(version, self.query(embedder, "office"), k=100)
        assert sorted(ids(result)) == sorted(ALL_CHUNK_IDS)
        scores = [h.score for h in result.hits]
        assert scores == sorted(scores, reverse=True)

    def test_non_positive_k_is_refused(self, store: Any, version: str, embedder: Any) -> None:
        with pytest.raises(StoreError, match="k must be positive"):
            store.search(version, self.query(embedder, "office"), k=0)

    @pytest.mark.parametrize(
        ("filters", "expected"),
        [
            ([FieldFilter("tags", any_of=("it",))], {"it-vpn#0", "it-password#0", "it-password#1"}),
            ([FieldFilter("tags", any_of=("leave", "travel"))], {"hr-leave#0", "hr-leave#1", "fin-expense#0"}),
            ([FieldFilter("tags", all_of=("it", "security"))], {"it-password#0", "it-password#1"}),
            ([FieldFilter("tags", all_of=("it", "finance"))], set()),
            ([FieldFilter("dept", any_of=("hr", "finance"))], {"hr-leave#0", "hr-leave#1", "fin-expense#0"}),
            ([FieldFilter("updated_at", gte="2024-01-01", lte="2024-12-31")],
             {"hr-leave#0", "hr-leave#1", "it-vpn#0", "kitchen#0"}),
            ([FieldFilter("updated_at", gte="2025-01-01")], {"it-password#0", "it-password#1"}),
            ([FieldFilter("updated_at", lte="2023-12-31")], {"fin-expense#0"}),
            ([FieldFilter("doc_id", any_of=("kitchen", "it-vpn"))], {"kitchen#0", "it-vpn#0"}),
            ([FieldFilter("chunk_type", any_of=("figure",))], {"it-password#1"}),
            ([FieldFilter("source", any_of=("policies/finance.pdf",))], {"fin-expense#0"}),
            ([FieldFilter("tags", any_of=("it",)), FieldFilter("updated_at", lte="2024-12-31")], {"it-vpn#0"}),
            ([FieldFilter("tags", any_of=("it",)), FieldFilter("chunk_type", any_of=("text",))],
             {"it-vpn#0", "it-password#0"}),
        ],
        ids=["any_of-list", "any_of-two-values", "all_of", "all_of-none", "any_of-scalar", "date-range",
             "date-gte", "date-lte", "column-doc_id", "column-chunk_type", "column-source", "and-with-date",
             "and-with-column"],
    )
    def test_filters_select_exactly_the_matching_chunks(
        self, store: Any, version: str, embedder: Any, filters: list[FieldFilter], expected: set[str]
    ) -> None:
        result = store.search(version, self.query(embedder, "company policy"), k=50, filters=filters)
        assert set(ids(result)) == expected
        assert len(ids(result)) == len(expected)

    def test_filters_apply_before_ranking_so_k_hits_come_back(self, store: Any, version: str, embedder: Any) -> None:
        """The three IT chunks are the least similar to a kitchen question, yet k=2 filtered hits return."""
        result = store.search(version, self.query(embedder, "When is the kitchen cleaned?"), k=2,
                              filters=[FieldFilter("tags", any_of=("it",))])
        assert len(result.hits) == 2
        assert set(ids(result)) <= {"it-vpn#0", "it-password#0", "it-password#1"}


class LexicalSearchTest(_Fixtures):
    """``lexical_search``: full-text hits, words as words (no query syntax), filters inside the query.

    Usage: ``class TestMyStore(LexicalSearchTest)`` with a ``store`` fixture."""

    @pytest.mark.parametrize(
        ("text", "only"),
        [("receipts", "fin-expense#0"), ("badge", "it-vpn#0"), ("Friday", "kitchen#0"), ("quarter", "hr-leave#1")],
    )
    def test_word_found_in_one_chunk_ranks_it_first(self, store: Any, version: str, text: str, only: str) -> None:
        result = store.lexical_search(version, f"{text} policy", k=5)
        assert ids(result)[0] == only
        assert result.hits[0].rank == 1
        assert (result.version, result.strategy) == (version, "lexical")

    def test_lexical_scores_are_descending(self, store: Any, version: str) -> None:
        result = store.lexical_search(version, "vacation days receipts", k=10)
        assert set(ids(result)) == {"hr-leave#0", "hr-leave#1", "fin-expense#0", "it-password#0"}
        scores = [h.score for h in result.hits]
        assert scores == sorted(scores, reverse=True)

    @pytest.mark.parametrize(
        "text",
        ['"receipts" OR (bar', "receipts AND NOT", "receipts*", "NEAR(receipts, travel", "receipts -travel^2",
         "text:receipts", "receipts'; DROP TABLE x; --", "{receipts}", "receipts & | ~ ? $ %"],
    )
    def test_operators_in_user_text_never_raise(self, store: Any, version: str, text: str) -> None:
        result = store.lexical_search(version, text, k=5)
        assert "fin-expense#0" in ids(result)
        assert set(ids(result)) <= ALL_CHUNK_IDS

    @pytest.mark.parametrize("text", ["", "   ", '"" () * - ^', "?!"])
    def test_text_without_words_finds_nothing(self, store: Any, version: str, text: str) -> None:
        assert store.lexical_search(version, text, k=5).hits == ()

    def test_lexical_filters_apply(self, store: Any, version: str) -> None:
        result = store.lexical_search(version, "badge ninety vacation", k=10,
                                      filters=[FieldFilter("tags", any_of=("it",))])
        assert set(ids(result)) == {"it-password#0", "it-vpn#0"}


class CandidateTest(_Fixtures):
    """Fusion's cheap path: ``(chunk_id, score)`` candidates that rank exactly as the searches that
    return rows, and reads by id for the few hits it shows.

    Usage: ``class TestMyStore(CandidateTest)`` with a ``store`` fixture."""

    FILTERS = ([], [FieldFilter("tags", any_of=("it",))], [FieldFilter("updated_at", gte="2024-01-01")],
               [FieldFilter("dept", any_of=("hr", "finance")), FieldFilter("chunk_type", any_of=("text",))])

    @pytest.mark.parametrize("question", ["How many vacation days do employees get?", "When is the kitchen cleaned?",
                                          "password rules"])
    @pytest.mark.parametrize("k", [1, 3, 50])
    def test_dense_candidates_rank_and_score_exactly_as_search(self, store: Any, version: str, embedder: Any,
                                                                question: str, k: int) -> None:
        q = self.query(embedder, question)
        for filters in self.FILTERS:
            result = store.search(version, q, k, filters)
            found = store.dense_candidates(version, q, k, filters)
            assert (found.version, found.distance) == (version, "cosine")
            self.assert_hits_equal(result.hits, found.hits)

    @pytest.mark.parametrize("text", ["vacation days receipts", "badge ninety vacation", "the office", "?!"])
    def test_lexical_candidates_rank_and_score_exactly_as_lexical_search(self, store: Any, version: str,
                                                                          text: str) -> None:
        for filters in self.FILTERS:
            for k in (1, 2, 10):
                expected = [(h.chunk.chunk_id, h.lexical_score) for h in store.lexical_search(version, text, k,
                                                                                               filters).hits]
                found = store.lexical_candidates(version, text, k, filters)
                assert [c for c, _ in found.hits] == [c for c, _ in expected]
                assert [s for _, s in found.hits] == pytest.approx([s for _, s in expected], abs=1e-6)
                assert found.version == version

    def test_candidates_resolve_an_alias_to_its_version(self, store: Any, version: str, names: Names,
                                                        embedder: Any) -> None:
        alias = names("ACTIVE")
        store.point_alias(alias, version)
        q = self.query(embedder, "vacation")
        dense = store.dense_candidates(alias, q, 3)
        lexical = store.lexical_candidates(alias, "vacation", 3)
        assert (dense.target, dense.version, lexical.target, lexical.version) == (alias, version, alias, version)

    def test_similarities_are_the_dense_scores_of_exactly_the_chunks_asked(self, store: Any, version: str,
                                                                           embedder: Any) -> None:
        q = self.query(embedder, "What happens to vacation days I did not use?")
        every = {h.chunk.chunk_id: h.score for h in store.search(version, q, 50).hits}
        asked = ["kitchen#0", "hr-leave#1", "it-password#1", "no-such#0"]
        sims = store.similarities(version, q, asked)
        assert set(sims) == {"kitchen#0", "hr-leave#1", "it-password#1"}
        for chunk_id, score in sims.items():
            assert score == pytest.approx(every[chunk_id], abs=1e-5)
        assert store.similarities(version, q, []) == {}

    def test_chunk_vectors_are_the_written_vectors_of_exactly_the_chunks_asked(self, store: Any, version: str,
                                                                               embedder: Any) -> None:
        written = {c.chunk_id: v for d in corpus_docs(embedder) for c, v in zip(d.chunks, d.vectors)}
        got = store.chunk_vectors(version, ["hr-leave#1", "no-such#0", "kitchen#0", "hr-leave#1"])
        assert set(got) == {"hr-leave#1", "kitchen#0"}
        for chunk_id, vector in got.items():
            assert vector.dtype == np.float32
            assert np.allclose(vector, written[chunk_id], atol=1e-6)
        assert store.chunk_vectors(version, []) == {}

    def test_fetch_chunks_and_texts_return_the_stored_chunks_by_id(self, store: Any, version: str,
                                                                   embedder: Any) -> None:
        written = {c.chunk_id: stored(c) for d in corpus_docs(embedder) for c in d.chunks}
        asked = ["it-password#1", "hr-leave#0", "no-such#0", "hr-leave#0"]
        assert store.fetch_chunks(version, asked) == {c: written[c] for c in ("it-password#1", "hr-leave#0")}
        assert store.chunk_texts(version, asked) == {c: written[c].text for c in ("it-password#1", "hr-leave#0")}
        assert store.fetch_chunks(version, []) == {} and store.chunk_texts(version, []) == {}
        many = sorted(ALL_CHUNK_IDS) + [f"missing#{i}" for i in range(600)]  # more ids than one statement binds
        assert set(store.fetch_chunks(version, many)) == ALL_CHUNK_IDS

    def test_candidate_methods_check_what_search_checks(self, store: Any, version: str, names: Names,
                                                        embedder: Any) -> None:
        q = self.query(embedder, "office")
        with pytest.raises(StoreError, match="k must be positive"):
            store.dense_candidates(version, q, 0)
        with pytest.raises(StoreError, match="k must be positive"):
            store.lexical_candidates(version, "office", 0)
        with pytest.raises((AliasNotFound, VersionNotFound), match=names("NOWHERE")):
            store.dense_candidates(names("NOWHERE"), q, 1)
        other = QueryVector(q.values, "other/model")
        with pytest.raises(EmbeddingModelMismatch, match="other/model"):
            store.dense_candidates(version, other, 3)
        with pytest.raises(EmbeddingModelMismatch, match="other/model"):
            store.similarities(version, other, ["kitchen#0"])


class VersionTest(_Fixtures):
    """``IndexAdmin`` versions: idempotent create, conflicts, listing, counts, drop.

    Usage: ``class TestMyStore(VersionTest)`` with a ``store`` fixture."""

    def test_create_version_is_idempotent_for_the_same_spec(self, store: Any, names: Names, model: str) -> None:
        spec = VersionSpec(names("V"), model, 384, "cosine", profile="sample")
        first = store.create_version(spec)
        second = store.create_version(spec)
        assert (second.name, second.model, second.dimension, second.distance, second.profile) == (
            spec.name, model, 384, "cosine", "sample")
        assert second.created_at == first.created_at
        assert [v.name for v in store.list_versions()].count(spec.name) == 1

    @pytest.mark.parametrize(
        ("change", "named"),
        [({"model": "other/model"}, "other/model"), ({"dimension": 768}, "768"), ({"distance": "dot"}, "dot")],
    )
    def test_create_version_with_another_spec_conflicts(
        self, store: Any, names: Names, model: str, change: dict[str, Any], named: str
    ) -> None:
        spec = VersionSpec(names("V"), model, 384, "cosine")
        store.create_version(spec)
        with pytest.raises(VersionConflict, match=named):
            store.create_version(dataclasses.replace(spec, **change))
        got = store.get_version(spec.name)
        assert (got.model, got.dimension, got.distance) == (model, 384, "cosine")

    def test_list_get_and_drop_versions(self, store: Any, names: Names, model: str) -> None:
        a, b = names("A"), names("B")
        store.create_version(VersionSpec(a, model, 384, "cosine"))
        store.create_version(VersionSpec(b, "test/random", 8, "dot"))
        listed = {v.name: (v.model, v.dimension, v.distance, v.chunk_count) for v in store.list_versions()}
        assert listed[a] == (model, 384, "cosine", 0)
        assert listed[b] == ("test/random", 8, "dot", 0)
        store.drop_version(a)
        assert a not in {v.name for v in store.list_versions()}
        with pytest.raises(VersionNotFound, match=a):
            store.get_version(a)
        assert store.get_version(b).dimension == 8

    def test_drop_is_refused_while_an_alias_serves_the_version_or_keeps_it_for_rollback(
        self, store: Any, names: Names, model: str
    ) -> None:
        a, b, c, alias = names("A"), names("B"), names("C"), names("ALIAS")
        for name in (a, b, c):
            store.create_version(VersionSpec(name, model, 384, "cosine"))
        store.point_alias(alias, a)
        with pytest.raises(StoreError, match=rf"cannot drop {a}: it is protected \({alias} live\)"):
            store.drop_version(a)
        store.point_alias(alias, b)
        with pytest.raises(StoreError, match=rf"cannot drop {a}: it is protected \({alias} rollback\)"):
            store.drop_version(a)
        assert store.get_version(a).name == a
        store.point_alias(alias, c)
        store.drop_version(a)
        assert {v.name for v in store.list_versions()} >= {b, c}
        assert a not in {v.name for v in store.list_versions()}

    def test_record_evaluation_is_kept_with_the_version(self, store: Any, names: Names, model: str) -> None:
        name = names("V")
        store.create_version(VersionSpec(name, model, 384, "cosine"))
        report = {"recall_at_k": 0.8, "passed": True, "gates": {"min_recall_at_k": 0.6}}
        store.record_evaluation(name, report)
        assert store.get_version(name).evaluation == report

    def test_unknown_version_raises(self, store: Any, names: Names) -> None:
        with pytest.raises(VersionNotFound, match=names("MISSING")):
            store.get_version(names("MISSING"))
        with pytest.raises(VersionNotFound):
            store.drop_version(names("MISSING"))


class AliasTest(_Fixtures):
    """``IndexAdmin`` aliases: atomic rotation, history, model guard, protection of what is served.

    Usage: ``class TestMyStore(AliasTest)`` with a ``store`` fixture."""

    def _two_versions(self, store: Any, names: Names, embedder: Any) -> tuple[str, str]:
        a, b = names("A"), names("B")
        for name in (a, b):
            store.create_version(VersionSpec(name, embedder.model_id, embedder.dimension, "cosine"))
        store.write_documents(a, corpus_docs(embedder)[:2])
        store.write_documents(b, corpus_docs(embedder)[2:])
        return a, b

    def test_point_alias_creates_the_alias(self, store: Any, names: Names, embedder: Any) -> None:
        a, _ = self._two_versions(store, names, embedder)
        alias = names("ACTIVE")
        assert store.resolve_alias(alias) is None
        change = store.point_alias(alias, a, reason="first promotion")
        assert (change.alias, change.version, change.previous, change.forced) == (alias, a, None, False)
        assert store.resolve_alias(alias) == a
        assert store.list_aliases()[alias] == a

    def test_history_is_newest_first_with_previous_and_forced(self, store: Any, names: Names, embedder: Any) -> None:
        a, b = self._two_versions(store, names, embedder)
        c = names("C")
        store.create_version(VersionSpec(c, "other/model", 384, "cosine"))
        alias = names("ACTIVE")
        store.point_alias(alias, a, reason="promote a")
        store.point_alias(alias, b, reason="promote b")
        store.point_alias(alias, c, reason="switch model", forced=True)
        history = [(h.version, h.previous, h.reason, h.forced) for h in store.alias_history(alias)]
        assert history == [(c, b, "switch model", True), (b, a, "promote b", False), (a, None, "promote a", False)]
        assert store.alias_history(names("NEVER")) == []

    @pytest.mark.parametrize(("model", "dim", "named"), [("other/model", 384, "other/model"), (None, 8, r"\b8\b")])
    def test_rotation_to_another_model_or_dimension_is_refused_unless_forced(
        self, store: Any, names: Names, embedder: Any, model: str | None, dim: int, named: str
    ) -> None:
        a, _ = self._two_versions(store, names, embedder)
        other = names("OTHER")
        store.create_version(VersionSpec(other, model or embedder.model_id, dim, "cosine"))
        alias = names("ACTIVE")
        store.point_alias(alias, a)
        with pytest.raises(VersionConflict, match=named):
            store.point_alias(alias, other)
        assert store.resolve_alias(alias) == a
        assert len(store.alias_history(alias)) == 1
        store.point_alias(alias, other, forced=True)
        assert store.resolve_alias(alias) == other

    def test_search_through_alias_equals_search_through_version(self, store: Any, names: Names, embedder: Any) -> None:
        a, b = self._two_versions(store, names, embedder)
        alias = names("ACTIVE")
        store.point_alias(alias, a)
        q = self.query(embedder, "vacation days")
        via_alias, via_version = store.search(alias, q, k=5), store.search(a, q, k=5)
        assert (via_alias.target, via_alias.version) == (alias, a)
        self.assert_hits_equal(via_alias.hits, [(h.chunk.chunk_id, h.score) for h in via_version.hits])
        assert ids(store.lexical_search(alias, "vacation", k=5)) == ids(store.lexical_search(a, "vacation", k=5))

        store.point_alias(alias, b)
        rotated = store.search(alias, q, k=5)
        assert rotated.version == b
        assert {h.chunk.doc_id for h in rotated.hits} <= {"fin-expense", "it-password", "kitchen"}

    def test_a_write_committed_after_the_evaluation_blocks_the_rotation_that_names_its_generation(
        self, store: Any, names: Names, embedder: Any
    ) -> None:
        """C6: promotion reads the generation it evaluates, then rotates. A write that commits in between
        (an ingest that held the version's row while the promotion checked) must refuse the rotation, even
        forced, and leave the alias and its history as they were; the generation read now rotates."""
        a, b = self._two_versions(store, names, embedder)
        alias = names("ACTIVE")
        store.point_alias(alias, a)
        evaluated = store.get_version(b).generation
        store.write_documents(b, corpus_docs(embedder)[:1])  # the late write commits
        for forced in (False, True):
            with pytest.raises(VersionChanged, match=rf"{b} changed since it was evaluated"):
                store.point_alias(alias, b, reason="gates passed", forced=forced, expected_generation=evaluated)
        assert store.resolve_alias(alias) == a
        assert [h.version for h in store.alias_history(alias)] == [a]
        current = store.get_version(b).generation
        assert current > evaluated
        assert store.point_alias(alias, b, expected_generation=current).version == b
        assert store.resolve_alias(alias) == b

    def test_unknown_target_or_version_raises(self, store: Any, names: Names, embedder: Any) -> None:
        with pytest.raises((AliasNotFound, VersionNotFound), match=names("NOWHERE")):
            store.search(names("NOWHERE"), self.query(embedder, "x"), k=1)
        with pytest.raises(VersionNotFound, match=names("MISSING")):
            store.point_alias(names("ACTIVE"), names("MISSING"))


class ModelGuardTest(_Fixtures):
    """A query from another model or dimension is refused, naming both.

    Usage: ``class TestMyStore(ModelGuardTest)`` with a ``store`` fixture."""

    def test_query_of_wrong_dimension_names_both_dimensions(self, store: Any, version: str, model: str) -> None:
        with pytest.raises(EmbeddingModelMismatch, match=r"(?s)128.*384|384.*128") as info:
            store.search(version, QueryVector(random_vectors(1, 128)[0], model), k=3)
        assert model in str(info.value)

    def test_query_from_another_model_names_both_models(self, store: Any, version: str, embedder: Any) -> None:
        vec = embed(embedder, ["vacation days"], query=True)[0]
        with pytest.raises(EmbeddingModelMismatch) as info:
            store.search(version, QueryVector(vec, "intfloat/e5-small-v2"), k=3)
        assert "intfloat/e5-small-v2" in str(info.value)
        assert embedder.model_id in str(info.value)

    def test_model_guard_also_holds_through_an_alias(self, store: Any, version: str, names: Names, embedder: Any) -> None:
        alias = names("ACTIVE")
        store.point_alias(alias, version)
        vec = embed(embedder, ["vacation days"], query=True)[0]
        with pytest.raises(EmbeddingModelMismatch, match="other/model"):
            store.search(alias, QueryVector(vec, "other/model"), k=3)


class InteractionTest(_Fixtures):
    """``InteractionLog`` and ``ConversationLog`` round trips through the store.

    Usage: ``class TestMyStore(InteractionTest)`` with a ``store`` fixture that also implements
    ``ConversationLog``."""

    def test_interactions_round_trip_newest_first(self, store: Any) -> None:
        before = len(store.interactions(limit=10_000))
        for i, mode in enumerate(("rag", "hybrid", "fallback")):
            store.record_interaction(Interaction(
                question=f"question {i}", resp_mode=mode, used_llm="extractive", domain="handbook" if i else None,
                retrieval_target="KB_ACTIVE", latency_ms=12.5 + i,
                decision_explain={"max_similarity": 0.5 + i / 10, "reasons": ["a", "b"]}, conversation_id=f"c{i}",
            ))
        recent = store.interactions(limit=2)
        assert [(r.question, r.resp_mode, r.domain, r.conversation_id) for r in recent] == [
            ("question 2", "fallback", "handbook", "c2"), ("question 1", "hybrid", "handbook", "c1")]
        assert recent[0].decision_explain == {"max_similarity": 0.7, "reasons": ["a", "b"]}
        assert recent[0].latency_ms == pytest.approx(14.5)
        assert recent[0].created_at != ""
        assert len(store.interactions(limit=10_000)) == before + 3

    def test_conversation_turns_and_feedback_round_trip(self, store: Any) -> None:
        """``ConversationLog``: turns per conversation and owner, oldest first; delete; feedback ids."""
        cid, other = f"conv-{uuid.uuid4().hex}", f"conv-{uuid.uuid4().hex}"
        ids = [uuid.uuid4().hex for _ in range(4)]
        for iid, owner, q in zip(ids, (None, "alice", None, None), ("q1?", "qa?", "q2?", "q3?")):
            store.record_turn(ConversationTurn(iid, cid if q != "q3?" else other, q, q.upper(), "rag", "KB_V1",
                                               "handbook", owner, ("doc-a", "doc-b")))
        assert [t.question for t in store.conversation_turns(cid, None)] == ["q1?", "q2?"]
        assert [t.effective_query for t in store.conversation_turns(cid, "alice")] == ["QA?"]
        turn = store.get_turn(ids[0])
        assert turn is not None and (turn.cited_doc_ids, turn.domain, turn.mode) == (("doc-a", "doc-b"), "handbook",
                                                                                      "rag")
        assert store.delete_conversation(cid, None) == 2
        assert store.conversation_turns(cid, None) == [] and store.get_turn(ids[3]) is not None
        first = store.record_feedback(Feedback(ids[0], "up", None, None, "Q1?", "rag", "KB_V1", None, None, ("doc-a",)))
        second = store.record_feedback(Feedback(ids[3], "down", "wrong", "42", "Q3?", "hybrid", "KB_V1", "handbook",
                                                "alice"))
        newest = store.feedback(limit=2)
        assert second > first and [f.feedback_id for f in newest] == [second, first]
        assert (newest[0].comment, newest[0].expected_answer, newest[0].principal) == ("wrong", "42", "alice")
        assert newest[1].cited_doc_ids == ("doc-a",) and newest[1].comment is None


class EmbeddingCacheTest(_Fixtures):
    """``cached_vectors``: what was embedded, by model and embedded-text hash, from any version.

    Usage: ``class TestMyStore(EmbeddingCacheTest)`` with a ``store`` fixture."""

    def test_cached_vectors_returns_what_was_written_under_the_model(self, store: Any, version: str, embedder: Any) -> None:
        docs = corpus_docs(embedder)
        wanted = {content_hash(c.text_to_embed): v for d in docs for c, v in zip(d.chunks, d.vectors)}
        cached = store.cached_vectors(embedder.model_id, [*wanted, content_hash("never embedded")])
        assert set(cached) == set(wanted)
        for h, vec in wanted.items():
            np.testing.assert_allclose(cached[h], vec, rtol=1e-6)

    def test_nothing_is_cached_for_another_model(self, store: Any, version: str, embedder: Any) -> None:
        hashes = [content_hash(c.text) for d in corpus_docs(embedder) for c in d.chunks]
        assert store.cached_vectors("other/model", hashes) == {}

    def test_cache_is_keyed_by_what_was_embedded_not_the_stored_text(self, store: Any, names: Names) -> None:
        name = names("EMBED")  # not "_EMB": a derived suffix (a version's SQLite index)
        store.create_version(VersionSpec(name, "test/random", 8, "cosine"))
        chunk = Chunk("c#0", "c", "stored text", "c.txt", 0, embed_text="passage: stored text")
        vec = random_vectors(1, 8, seed=3)
        store.write_documents(name, [DocumentWrite("c", "h", [chunk], vec)])
        cached = store.cached_vectors("test/random", [content_hash("passage: stored text"), content_hash("stored text")])
        assert list(cached) == [content_hash("passage: stored text")]
        np.testing.assert_allclose(cached[content_hash("passage: stored text")], vec[0], rtol=1e-6)


# --- filters at scale ---------------------------------------------------------------
# A filter is applied inside the search, not after a top-k cut, so a condition that
# matches 3 chunks out of 10,000 returns exactly those 3 whatever ``k`` is. Vectors
# are random (meaning does not matter here); the 3 targets are spread over the
# version so no insertion-order shortcut can find them.
SCALE_DOCS, SCALE_CHUNKS_PER_DOC, SCALE_DIM = 100, 100, 16
SCALE_MODEL = "test/random-16"
#: The only chunks tagged ``legal`` / ``audit`` / dated 2025, spread over the version.
SCALE_TARGETS = ("d000#17", "d042#42", "d099#99")
DEPARTMENTS = ("it", "hr", "finance", "sales")


def scale_metadata(chunk_id: str, n: int) -> dict[str, Any]:
    if chunk_id in SCALE_TARGETS:
        return {"department": "legal", "tags": ["policy", "audit"], "updated_at": f"2025-06-0{SCALE_TARGETS.index(chunk_id) + 1}"}
    return {"department": DEPARTMENTS[n % 4], "tags": ["policy"], "updated_at": f"2024-{n % 12 + 1:02d}-15"}


def scale_documents(vectors: np.ndarray) -> list[DocumentWrite]:
    docs = []
    for d in range(SCALE_DOCS):
        chunks = []
        for i in range(SCALE_CHUNKS_PER_DOC):
            cid, n = f"d{d:03d}#{i}", d * SCALE_CHUNKS_PER_DOC + i
            chunks.append(Chunk(cid, f"d{d:03d}", f"warehouse logistics record {n}", f"scale/d{d:03d}.txt", i,
                                metadata=scale_metadata(cid, n)))
        rows = vectors[d * SCALE_CHUNKS_PER_DOC:(d + 1) * SCALE_CHUNKS_PER_DOC]
        docs.append(DocumentWrite(f"d{d:03d}", content_hash(f"scale-{d}"), chunks, rows))
    return docs


class FilterScaleTest(_Fixtures):
    """Filters at 10,000 chunks: the 3 matching chunks come back whatever ``k`` is (extended tier:
    slow on a remote database).

    Usage: ``class TestMyStore(VectorStoreBaseTests, FilterScaleTest)``."""

    @pytest.fixture
    def scale_version(self, store: Any, names: Names) -> tuple[str, np.ndarray]:
        """10,000 chunks with random vectors; returns the version and the vectors."""
        name = names("SCALE")
        vectors = random_vectors(SCALE_DOCS * SCALE_CHUNKS_PER_DOC, SCALE_DIM, seed=11)
        store.create_version(VersionSpec(name, SCALE_MODEL, SCALE_DIM, "cosine"))
        store.write_documents(name, scale_documents(vectors))
        return name, vectors

    def test_filter_matching_3_of_10000_chunks_returns_exactly_those_3(
        self, store: Any, scale_version: tuple[str, np.ndarray]
    ) -> None:
        name, vectors = scale_version
        query = QueryVector(random_vectors(1, SCALE_DIM, seed=99)[0], SCALE_MODEL)
        conditions = [
            (FieldFilter("department", any_of=("legal",)),),
            (FieldFilter("tags", all_of=("policy", "audit")),),
            (FieldFilter("updated_at", gte="2025-01-01", lte="2025-12-31T23:59:59.999999+00:00"),),
        ]
        for filters in conditions:
            result = store.search(name, query, 10, filters)
            assert sorted(h.chunk.chunk_id for h in result.hits) == sorted(SCALE_TARGETS), filters
            lexical = store.lexical_search(name, "warehouse logistics", 10, filters)
            assert sorted(h.chunk.chunk_id for h in lexical.hits) == sorted(SCALE_TARGETS), filters

    def test_filtered_search_ranks_matches_by_similarity_and_honours_k(
        self, store: Any, scale_version: tuple[str, np.ndarray]
    ) -> None:
        name, vectors = scale_version
        q = random_vectors(1, SCALE_DIM, seed=5)[0]
        result = store.search(name, QueryVector(q, SCALE_MODEL), 2, (FieldFilter("department", any_of=("legal",)),))
        index = {cid: int(cid[1:4]) * SCALE_CHUNKS_PER_DOC + int(cid.split("#")[1]) for cid in SCALE_TARGETS}
        unit = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
        expected = sorted(SCALE_TARGETS, key=lambda c: -float(unit[index[c]] @ (q / np.linalg.norm(q))))[:2]
        assert [h.chunk.chunk_id for h in result.hits] == expected

    def test_broad_filter_still_returns_k_hits_all_matching(
        self, store: Any, scale_version: tuple[str, np.ndarray]
    ) -> None:
        name, _ = scale_version
        query = QueryVector(random_vectors(1, SCALE_DIM, seed=7)[0], SCALE_MODEL)
        result = store.search(name, query, 25, (FieldFilter("department", any_of=("hr",)),
                                                 FieldFilter("tags", any_of=("policy",))))
        assert len(result.hits) == 25
        assert {h.chunk.metadata["department"] for h in result.hits} == {"hr"}


class LifecycleTest(_Fixtures):
    """Served versions are immutable; a new version starts as a copy of its parent.

    Usage: ``class TestMyStore(LifecycleTest)`` with a ``store`` fixture."""

    def _figure_doc(self, embedder: Any, ref: str, doc_id: str = "floor-plan") -> DocumentWrite:
        text = "Figure 1: evacuation route to the assembly point."
        return make_doc(doc_id, [(text, "figure")], {"image_ref": ref, "tags": ["safety"]}, "plans/floor.docx",
                        embed(embedder, [text]))

    def test_live_and_rollback_versions_refuse_writes_and_deletes(self, store: Any, names: Names,
                                                                   embedder: Any) -> None:
        a, b, alias = names("A"), names("B"), names("ALIAS")
        for name in (a, b):
            store.create_version(VersionSpec(name, embedder.model_id, embedder.dimension, "cosine"))
            store.write_documents(name, corpus_docs(embedder))
        store.point_alias(alias, a)
        store.point_alias(alias, b)  # b live, a its rollback target
        assert {a: f"{alias} rollback", b: f"{alias} live"}.items() <= store.protected_versions().items()
        before = {n: (store.get_version(n).generation, store.document_hashes(n)) for n in (a, b)}
        for name in (a, b):
            with pytest.raises(VersionServed, match=rf"{name} is served \({alias} (live|rollback)\)"):
                store.write_documents(name, [self._figure_doc(embedder, "x/img_001.png")])
            with pytest.raises(VersionServed, match=name):
                store.delete_documents(name, ["kitchen"])
        assert {n: (store.get_version(n).generation, store.document_hashes(n)) for n in (a, b)} == before

    def test_allow_served_writes_a_served_version_and_bumps_its_generation(self, store: Any, version: str,
                                                                            names: Names, embedder: Any) -> None:
        store.point_alias(names("ALIAS"), version)
        generation = store.get_version(version).generation
        assert store.delete_documents(version, ["kitchen"], allow_served=True) == 1
        assert store.get_version(version).generation > generation
        assert "kitchen" not in store.document_hashes(version)

    def test_generation_moves_on_change_and_not_on_a_no_op_write(self, store: Any, version: str,
                                                                  embedder: Any) -> None:
        g0 = store.get_version(version).generation
        store.write_documents(version, corpus_docs(embedder))
        assert store.get_version(version).generation == g0
        store.write_documents(version, [self._figure_doc(embedder, "f/img_001_a.png")])
        g1 = store.get_version(version).generation
        assert g1 > g0
        store.delete_documents(version, ["no-such-doc"])
        assert store.get_version(version).generation == g1

    def test_a_version_built_from_a_parent_holds_every_row_and_the_parent_is_only_read(
        self, store: Any, version: str, names: Names, embedder: Any
    ) -> None:
        store.write_documents(version, [self._figure_doc(embedder, "floor/img_001_aaaa.png")])
        alias = names("ALIAS")
        store.point_alias(alias, version)
        parent = store.get_version(version)
        q = self.query(embedder, "How many vacation days do employees get?")
        before = store.search(version, q, k=50)
        child = names("KB_V2")
        created = store.create_version(VersionSpec(child, embedder.model_id, embedder.dimension, "cosine",
                                                   parent=version))
        assert (created.parent, created.chunk_count, created.doc_count) == (version, parent.chunk_count,
                                                                            parent.doc_count)
        assert store.document_hashes(child) == store.document_hashes(version)
        copied = store.search(child, q, k=50)
        assert [h.chunk for h in copied.hits] == [h.chunk for h in before.hits]
        self.assert_hits_equal(copied.hits, [(h.chunk.chunk_id, h.score) for h in before.hits])
        assert ids(store.lexical_search(child, "vacation receipts", k=50)) == ids(
            store.lexical_search(version, "vacation receipts", k=50))
        assert ids(store.search(child, q, k=10, filters=(FieldFilter("dept", any_of=("it",)),))) == ids(
            store.search(version, q, k=10, filters=(FieldFilter("dept", any_of=("it",)),)))
        assert store.asset_refs(child) == store.asset_refs(version) == {"floor/img_001_aaaa.png"}

        store.write_documents(child, [self._figure_doc(embedder, "floor/img_001_bbbb.png")])
        store.delete_documents(child, ["kitchen"])
        assert store.asset_refs(child) == {"floor/img_001_bbbb.png"}
        assert store.asset_refs(version) == {"floor/img_001_aaaa.png"}
        after = store.get_version(version)
        assert (after.generation, after.chunk_count) == (parent.generation, parent.chunk_count)
        assert [h.chunk for h in store.search(alias, q, k=50).hits] == [h.chunk for h in before.hits]

    def test_creating_again_with_the_same_parent_is_idempotent(self, store: Any, version: str, names: Names,
                                                               embedder: Any) -> None:
        spec = VersionSpec(names("KB_V2"), embedder.model_id, embedder.dimension, "cosine", parent=version)
        first = store.create_version(spec)
        store.write_documents(spec.name, [self._figure_doc(embedder, "f/img_001_c.png")])
        second = store.create_version(spec)
        assert second.created_at == first.created_at and second.chunk_count == first.chunk_count + 1

    def test_a_parent_of_another_model_or_dimension_is_refused(self, store: Any, version: str, names: Names,
                                                               embedder: Any) -> None:
        child = names("KB_V2")
        with pytest.raises(VersionConflict, match=f"cannot build {child} from {version}"):
            store.create_version(VersionSpec(child, "other/model", embedder.dimension, "cosine", parent=version))
        assert child not in {v.name for v in store.list_versions()}
        with pytest.raises(VersionNotFound):
            store.create_version(VersionSpec(child, embedder.model_id, embedder.dimension, "cosine",
                                             parent=names("MISSING")))

    def test_finish_load_is_idempotent_and_search_still_answers(self, store: Any, version: str,
                                                                embedder: Any) -> None:
        q = self.query(embedder, "corporate VPN client")
        before = ids(store.search(version, q, k=3))
        store.finish_load(version)
        store.finish_load(version)
        assert ids(store.search(version, q, k=3)) == before

    def test_size_is_reported_and_grows_with_the_rows(self, store: Any, names: Names, embedder: Any) -> None:
        name = names("SIZE")
        store.create_version(VersionSpec(name, embedder.model_id, embedder.dimension, "cosine"))
        empty = store.get_version(name).size_bytes
        store.write_documents(name, corpus_docs(embedder))
        assert store.get_version(name).size_bytes >= empty + 7 * embedder.dimension * 4


# --- access control ------------------------------------------------------------------
# 10,000 chunks (1,000 documents of 10) with random document ACLs, searched by 1,000
# random principals: a hidden chunk must never come back and never take one of the k
# slots, so exactly min(k, visible matches) hits come back, dense and lexical alike.
ACL_DOCS, ACL_CHUNKS_PER_DOC, ACL_DIM = 1000, 10, 16
ACL_MODEL = "test/random-acl-16"
ACL_USERS = tuple(f"u{i}" for i in range(20))
ACL_GROUPS = tuple(f"g{i}" for i in range(6))
#: lexical vocabulary: chunk n holds word n % len, so each word is in 1/len of the chunks
ACL_WORDS = ("anchor", "beacon", "canyon", "delta", "ember", "falcon", "glacier", "harbor", "island", "jungle",
             "kernel", "lantern", "meadow")


def random_acl(rng: np.random.Generator) -> list[str]:
    """A document ACL: sometimes public, sometimes empty (denied to all), else 1-3 users/groups."""
    roll = rng.random()
    if roll < 0.05:
        return ["public"]
    if roll < 0.15:
        return []
    labels = [f"user:{u}" for u in rng.choice(ACL_USERS, size=int(rng.integers(0, 3)), replace=False)]
    labels += [f"group:{g}" for g in rng.choice(ACL_GROUPS, size=int(rng.integers(0, 2)), replace=False)]
    return sorted(labels) or ["user:u0"]


class AccessControlTest(_Fixtures):
    """Deny by default, inside the query: a chunk the reader may not see is never returned and
    never takes one of the ``k`` slots, in every read the access doc names.

    Usage: ``class TestMyStore(AccessControlTest)`` with a ``store`` fixture."""

    @pytest.fixture
    def acl_version(self, store: Any, names: Names) -> tuple[str, np.ndarray, dict[str, set[str]], list[str]]:
        """The version, its vectors (chunk order), ``chunk_id -> ACL labels`` and chunk ids in order."""
        rng = np.random.default_rng(2024)
        name = names("ACL")
        vectors = random_vectors(ACL_DOCS * ACL_CHUNKS_PER_DOC, ACL_DIM, seed=23)
        store.create_version(VersionSpec(name, ACL_MODEL, ACL_DIM, "cosine"))
        acl_of: dict[str, set[str]] = {}
        order: list[str] = []
        docs = []
        for d in range(ACL_DOCS):
            acl = random_acl(rng)
            chunks = []
            for i in range(ACL_CHUNKS_PER_DOC):
                n = d * ACL_CHUNKS_PER_DOC + i
                cid = f"a{d:04d}#{i}"
                chunks.append(Chunk(cid, f"a{d:04d}", f"record {n} about the {ACL_WORDS[n % len(ACL_WORDS)]}",
                                    f"acl/a{d:04d}.txt", i, metadata={"rag_acl": acl, "dept": DEPARTMENTS[n % 4]}))
                acl_of[cid] = set(acl)
                order.append(cid)
            rows = vectors[d * ACL_CHUNKS_PER_DOC:(d + 1) * ACL_CHUNKS_PER_DOC]
            docs.append(DocumentWrite(f"a{d:04d}", content_hash(f"acl-{d}"), chunks, rows))
        for start in range(0, len(docs), 250):
            store.write_documents(name, docs[start:start + 250])
        return name, vectors, acl_of, order

    def test_no_hidden_chunk_ever_returned_and_k_hits_whenever_k_visible_chunks_match(
        self, store: Any, acl_version: tuple[str, np.ndarray, dict[str, set[str]], list[str]]
    ) -> None:
        name, vectors, acl_of, order = acl_version
        rng = np.random.default_rng(7)
        unit = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
        dept_of = {cid: DEPARTMENTS[n % 4] for n, cid in enumerate(order)}
        word_of = {cid: ACL_WORDS[n % len(ACL_WORDS)] for n, cid in enumerate(order)}
        short = exact = lexical_checked = candidates_checked = 0
        for pair in range(1000):
            user = str(rng.choice(ACL_USERS))
            groups = tuple(str(g) for g in rng.choice(ACL_GROUPS, size=int(rng.integers(0, 3)), replace=False))
            visibility = Visibility.of(user, groups)
            labels = set(visibility.labels)
            visible = [cid for cid in order if acl_of[cid] & labels]
            k = int(rng.choice([1, 5, 10, 50, 200]))
            filters: tuple[FieldFilter, ...] = ()
            if pair % 4 == 0:  # the ACL composes with an ordinary filter
                dept = str(rng.choice(DEPARTMENTS))
                filters = (FieldFilter("dept", any_of=(dept,)),)
                visible = [cid for cid in visible if dept_of[cid] == dept]
            q = rng.standard_normal(ACL_DIM).astype(np.float32)
            result = store.search(name, QueryVector(q, ACL_MODEL), k, filters, visibility=visibility)
            got = [h.chunk.chunk_id for h in result.hits]
            if pair % 10 == 0:  # fusion's candidates apply the ACL inside the same query as search
                found = store.dense_candidates(name, QueryVector(q, ACL_MODEL), k, filters, visibility=visibility)
                assert [c for c, _ in found.hits] == got, f"pair {pair}: dense candidates differ from search"
                candidates_checked += 1
            leaked = [cid for cid in got if not acl_of[cid] & labels]
            assert not leaked, f"pair {pair}: {user} {groups} saw hidden chunks {leaked[:5]}"
            assert len(got) == min(k, len(visible)), f"pair {pair}: {len(got)} hits for k={k}, {len(visible)} visible"
            assert len(set(got)) == len(got)
            short += len(visible) < k
            # the hits are the best visible chunks: nothing visible outside them scores higher
            index = {cid: n for n, cid in enumerate(order)}
            sims = unit @ (q / np.linalg.norm(q))
            if got:
                worst_returned = min(float(sims[index[c]]) for c in got)
                best_left_out = max((float(sims[index[c]]) for c in visible if c not in set(got)), default=-2.0)
                exact += best_left_out <= worst_returned + 1e-4
            if pair % 5 == 0:  # the lexical side obeys the same rule
                word = str(rng.choice(ACL_WORDS))
                matching = [cid for cid in visible if word_of[cid] == word]
                lex = store.lexical_search(name, word, k, filters, visibility=visibility)
                lgot = [h.chunk.chunk_id for h in lex.hits]
                assert not [c for c in lgot if not acl_of[c] & labels], f"pair {pair}: lexical leak"
                assert len(lgot) == min(k, len(matching)), f"pair {pair}: lexical {len(lgot)} hits for k={k}"
                assert {word_of[c] for c in lgot} <= {word}
                lex_found = store.lexical_candidates(name, word, k, filters, visibility=visibility)
                assert [c for c, _ in lex_found.hits] == lgot, f"pair {pair}: lexical candidates differ"
                lexical_checked += 1
        assert short > 0 and lexical_checked == 200 and candidates_checked == 100
        self.assert_ranking_exact(exact, 1000)

    def assert_ranking_exact(self, exact: int, pairs: int) -> None:
        """An exact store ranks every search exactly; an approximate one may override this."""
        assert exact == pairs

    def test_a_principal_sees_public_and_its_own_labels_only(self, store: Any, names: Names, embedder: Any) -> None:
        name = names("ACL_SMALL")
        store.create_version(VersionSpec(name, embedder.model_id, embedder.dimension, "cosine"))
        acls = {"hr-leave": ["group:hr"], "it-vpn": ["public"], "fin-expense": ["user:carol"],
                "it-password": [], "kitchen": ["user:alice", "group:facilities"]}
        docs = [make_doc(doc, parts, {**meta, "rag_acl": acls[doc]}, source, embed(embedder, [t for t, _ in parts]))
                for doc, source, parts, meta in CORPUS]
        store.write_documents(name, docs)
        q = self.query(embedder, "How many vacation days do employees get?")
        every = {h.chunk.doc_id for h in store.search(name, q, 50).hits}
        assert every == {d for d, *_ in CORPUS}  # no visibility: no enforcement
        cases = {("alice", ()): {"it-vpn", "kitchen"}, ("bob", ("hr",)): {"hr-leave", "it-vpn"},
                 ("carol", ("facilities",)): {"fin-expense", "it-vpn", "kitchen"}, ("dave", ()): {"it-vpn"}}
        for (user, groups), expected in cases.items():
            vis = Visibility.of(user, groups)
            assert {h.chunk.doc_id for h in store.search(name, q, 50, visibility=vis).hits} == expected, user
            lexical = store.lexical_search(name, "vacation VPN receipts kitchen passwords", 50, visibility=vis)
            assert {h.chunk.doc_id for h in lexical.hits} <= expected, user
            visible = {h.chunk.chunk_id for h in store.search(name, q, 50, visibility=vis).hits}
            dense = store.dense_candidates(name, q, 50, visibility=vis)
            assert {c for c, _ in dense.hits} == visible, user
            lexical_ids = {c for c, _ in store.lexical_candidates(
                name, "vacation VPN receipts kitchen passwords", 50, visibility=vis).hits}
            assert {c.split("#")[0] for c in lexical_ids} <= expected, user
            # reads by id never show a chunk the reader may not see
            every_id = sorted(ALL_CHUNK_IDS)
            assert set(store.fetch_chunks(name, every_id, visibility=vis)) == visible, user
            assert set(store.chunk_texts(name, every_id, visibility=vis)) == visible, user
            assert set(store.similarities(name, q, every_id, visibility=vis)) == visible, user
            assert set(store.chunk_vectors(name, every_id, visibility=vis)) == visible, user
        # "it-password" has an empty ACL: nobody sees it, not even through an id filter
        hidden = store.search(name, q, 5, (FieldFilter("doc_id", any_of=("it-password",)),),
                              visibility=Visibility.of("alice", ("hr", "facilities", "it")))
        assert hidden.hits == ()

    def test_asset_refs_only_names_images_cited_by_visible_chunks(self, store: Any, names: Names,
                                                                   embedder: Any) -> None:
        name = names("ACL_ASSETS")
        store.create_version(VersionSpec(name, embedder.model_id, embedder.dimension, "cosine"))
        text = "Figure 1: evacuation route to the assembly point."
        store.write_documents(name, [
            make_doc("plan-hr", [(text, "figure")], {"image_ref": "hr/img_001.png", "rag_acl": ["group:hr"]},
                     "plans/hr.docx", embed(embedder, [text])),
            make_doc("plan-all", [(text, "figure")], {"image_ref": "all/img_001.png", "rag_acl": ["public"]},
                     "plans/all.docx", embed(embedder, [text])),
        ])
        assert store.asset_refs(name) == {"hr/img_001.png", "all/img_001.png"}
        assert store.asset_refs(name, visibility=Visibility.of("bob", ("hr",))) == {"hr/img_001.png",
                                                                                    "all/img_001.png"}
        assert store.asset_refs(name, visibility=Visibility.of("eve")) == {"all/img_001.png"}

    def test_interactions_record_the_principal(self, store: Any) -> None:
        store.record_interaction(Interaction(
            question="who?", resp_mode="rag", used_llm="extractive", domain=None, retrieval_target="KB_ACTIVE",
            latency_ms=1.0, decision_explain={}, principal="alice"))
        assert store.interactions(limit=1)[0].principal == "alice"


# --- enrichment: hypothetical questions (seed 001) and summaries (seed 002) ---------------
#: chunk_id -> the questions an enricher would say the chunk answers
QUESTIONS: dict[str, tuple[str, ...]] = {
    "hr-leave#0": ("How many vacation days do I earn each month?", "What is the paid leave accrual rate?"),
    "hr-leave#1": ("Can I carry unused vacation days into next year?",),
    "it-vpn#0": ("How do I connect to the VPN from home?", "Which credentials does the VPN client need?"),
    "fin-expense#0": ("What is the deadline for submitting travel expenses?",),
    "it-password#0": ("How often must I change my password?",),
    "kitchen#0": ("When is the office kitchen cleaned?",),
}
#: (summary_id, doc_id, kind, page, text, chunk_ids)
SUMMARIES: tuple[tuple[str, str, str, str | None, str, tuple[str, ...]], ...] = (
    ("hr-leave@doc", "hr-leave", "artifact_summary", None,
     "The HR handbook's leave policy: monthly vacation accrual and carry-over of unused days.",
     ("hr-leave#0", "hr-leave#1")),
    ("hr-leave@p2", "hr-leave", "page_summary", "Leave > Carry-over",
     "Unused vacation may be carried into the first quarter.", ("hr-leave#1",)),
    ("it-vpn@doc", "it-vpn", "artifact_summary", None, "IT guide to remote network access over the VPN.",
     ("it-vpn#0",)),
    ("fin-expense@doc", "fin-expense", "artifact_summary", None,
     "Finance policy on travel expense claims and receipts.", ("fin-expense#0",)),
    ("fin-expense@p1", "fin-expense", "page_summary", "1", "Submit travel expenses within thirty days.",
     ("fin-expense#0",)),
    ("it-password@doc", "it-password", "artifact_summary", None, "Security rules for passwords and their rotation.",
     ("it-password#0", "it-password#1")),
    ("kitchen@doc", "kitchen", "artifact_summary", None, "Facilities notice about the weekly kitchen cleaning.",
     ("kitchen#0",)),
)


def enriched(embedder: Any, doc: DocumentWrite, *, questions: dict[str, tuple[str, ...]] | None = None,
             summaries: Sequence[tuple[str, str, str, str | None, str, tuple[str, ...]]] | None = None
             ) -> DocumentWrite:
    """``doc`` with its questions and summaries (real vectors), as ingestion's enricher would give them."""
    questions = QUESTIONS if questions is None else questions
    summaries = SUMMARIES if summaries is None else summaries
    mine = {c.chunk_id for c in doc.chunks}
    qs = [HypotheticalQuestion(f"{cid}?{i}", cid, text)
          for cid, texts in questions.items() if cid in mine for i, text in enumerate(texts)]
    ss = [Summary(sid, did, kind, text, page, chunk_ids)  # type: ignore[arg-type]
          for sid, did, kind, page, text, chunk_ids in summaries if did == doc.doc_id]
    return dataclasses.replace(
        doc, questions=qs, question_vectors=embed(embedder, [q.text for q in qs]),
        summaries=ss, summary_vectors=embed(embedder, [x.text for x in ss]))


def enriched_corpus(embedder: Any) -> list[DocumentWrite]:
    return [enriched(embedder, d) for d in corpus_docs(embedder)]


class EnrichmentTest(_Fixtures):
    """Questions and summaries live in the version, replaced, copied, deleted and dropped with
    their documents, and are only ever visible when their chunk (or document) is.

    Usage: ``class TestMyStore(EnrichmentTest)`` with a ``store`` fixture."""

    @pytest.fixture
    def enriched_version(self, store: Any, names: Names, embedder: Any) -> str:
        name = names("KB_ENR")
        store.create_version(VersionSpec(name, embedder.model_id, embedder.dimension, "cosine"))
        store.write_documents(name, enriched_corpus(embedder))
        return name

    def rows(self, store: Any, version: str, embedder: Any) -> tuple[list[tuple[str, str]], list[str]]:
        """Every (question_id, chunk_id) and summary_id the version serves, via the port."""
        q = self.query(embedder, "policy")
        qs = store.search_questions(version, q, 100)
        ss = store.search_summaries(version, q, 100)
        return sorted((h.question_id, h.chunk.chunk_id) for h in qs.hits), sorted(h.summary.summary_id for h in ss.hits)

    @pytest.mark.parametrize("question,chunk", [
        ("Is it possible to move leftover holiday days to January?", "hr-leave#1"),
        ("What login do I need for remote access?", "it-vpn#0"),
        ("By when do I have to hand in my travel receipts?", "fin-expense#0"),
    ])
    def test_a_paraphrase_finds_the_parent_chunk_through_its_question(
        self, store: Any, enriched_version: str, embedder: Any, question: str, chunk: str
    ) -> None:
        result = store.search_questions(enriched_version, self.query(embedder, question), 3)
        assert result.version == enriched_version
        top = result.hits[0]
        assert top.chunk.chunk_id == chunk and top.question in QUESTIONS[chunk]
        assert top.chunk == next(stored(c) for d in corpus_docs(embedder) for c in d.chunks if c.chunk_id == chunk)
        # the score is the question's cosine similarity to the query, best first
        expected = float(np.dot(embed(embedder, [top.question])[0], self.query(embedder, question).values) / (
            np.linalg.norm(embed(embedder, [top.question])[0]) * np.linalg.norm(self.query(embedder, question).values)))
        assert top.score == pytest.approx(expected, abs=1e-4)
        assert [h.score for h in result.hits] == sorted((h.score for h in result.hits), reverse=True)
        assert [h.rank for h in result.hits] == [1, 2, 3]

    def test_each_parent_chunk_comes_back_once_and_k_distinct_parents_fill_the_top(
        self, store: Any, names: Names, embedder: Any
    ) -> None:
        name = names("KB_DEDUP")
        store.create_version(VersionSpec(name, embedder.model_id, embedder.dimension, "cosine"))
        many = {**QUESTIONS, "kitchen#0": tuple(f"When is the office kitchen cleaned, case {i}?" for i in range(20))}
        store.write_documents(name, [enriched(embedder, d, questions=many) for d in corpus_docs(embedder)])
        result = store.search_questions(name, self.query(embedder, "kitchen cleaning day"), 4)
        got = [h.chunk.chunk_id for h in result.hits]
        assert got[0] == "kitchen#0" and len(got) == len(set(got)) == 4

    def test_summaries_are_searched_by_kind_with_their_page_and_chunks(
        self, store: Any, enriched_version: str, embedder: Any
    ) -> None:
        q = self.query(embedder, "carrying over unused vacation days")
        both = store.search_summaries(enriched_version, q, 3)
        assert both.hits[0].summary.doc_id == "hr-leave"
        assert [h.score for h in both.hits] == sorted((h.score for h in both.hits), reverse=True)
        pages = store.search_summaries(enriched_version, q, 10, kinds=("page_summary",))
        assert {h.summary.summary_id for h in pages.hits} == {"hr-leave@p2", "fin-expense@p1"}
        top = pages.hits[0].summary
        assert (top.summary_id, top.kind, top.page, top.chunk_ids) == ("hr-leave@p2", "page_summary",
                                                                      "Leave > Carry-over", ("hr-leave#1",))
        docs = store.search_summaries(enriched_version, q, 10, kinds=("artifact_summary",))
        assert len(docs.hits) == 5 and {h.summary.kind for h in docs.hits} == {"artifact_summary"}
        assert {h.summary.page for h in docs.hits} == {None}

    def test_a_version_without_enrichment_finds_nothing(self, store: Any, version: str, embedder: Any) -> None:
        q = self.query(embedder, "vacation")
        assert store.search_questions(version, q, 5).hits == ()
        assert store.search_summaries(version, q, 5).hits == ()

    def test_rewriting_the_same_enrichment_changes_nothing_and_new_enrichment_replaces_the_old(
        self, store: Any, enriched_version: str, embedder: Any
    ) -> None:
        g0 = store.get_version(enriched_version).generation
        before = self.rows(store, enriched_version, embedder)
        store.write_documents(enriched_version, enriched_corpus(embedder))
        assert store.get_version(enriched_version).generation == g0
        assert self.rows(store, enriched_version, embedder) == before
        # same chunks, new questions and no page summary for hr-leave: only the enrichment changes
        hr = next(d for d in corpus_docs(embedder) if d.doc_id == "hr-leave")
        new = enriched(embedder, hr, questions={"hr-leave#0": ("How is vacation accrued?",)},
                       summaries=[s for s in SUMMARIES if s[0] != "hr-leave@p2"])
        store.write_documents(enriched_version, [new])
        assert store.get_version(enriched_version).generation > g0
        questions, summaries = self.rows(store, enriched_version, embedder)
        assert [qid for qid, _ in questions if qid.startswith("hr-leave")] == ["hr-leave#0?0"]
        assert "hr-leave@p2" not in summaries and "hr-leave@doc" in summaries
        top = store.search_questions(enriched_version, self.query(embedder, "How is vacation accrued?"), 1).hits[0]
        assert (top.question, top.chunk.chunk_id) == ("How is vacation accrued?", "hr-leave#0")
        # writing the document without enrichment leaves it none
        store.write_documents(enriched_version, [hr])
        questions, summaries = self.rows(store, enriched_version, embedder)
        assert not [q for q in questions if q[1].startswith("hr-leave")]
        assert not [s for s in summaries if s.startswith("hr-leave")]

    def test_deleting_a_document_deletes_its_questions_and_summaries(
        self, store: Any, enriched_version: str, embedder: Any
    ) -> None:
        assert store.delete_documents(enriched_version, ["kitchen", "it-vpn"]) == 2
        questions, summaries = self.rows(store, enriched_version, embedder)
        assert not [q for q in questions if q[1].startswith(("kitchen", "it-vpn"))]
        assert not [s for s in summaries if s.startswith(("kitchen", "it-vpn"))]
        assert len(questions) == 4 and len(summaries) == 5  # one row per parent chunk with questions

    def test_a_child_version_copies_the_enrichment_and_the_parent_is_only_read(
        self, store: Any, enriched_version: str, names: Names, embedder: Any
    ) -> None:
        before = self.rows(store, enriched_version, embedder)
        child = names("KB_ENR2")
        store.create_version(VersionSpec(child, embedder.model_id, embedder.dimension, "cosine",
                                         parent=enriched_version))
        assert self.rows(store, child, embedder) == before
        q = self.query(embedder, "Can leftover leave move to next year?")
        assert [(h.chunk.chunk_id, h.question) for h in store.search_questions(child, q, 3).hits] == [
            (h.chunk.chunk_id, h.question) for h in store.search_questions(enriched_version, q, 3).hits]
        store.delete_documents(child, ["hr-leave"])
        assert self.rows(store, enriched_version, embedder) == before
        assert len(self.rows(store, child, embedder)[1]) == len(before[1]) - 2

    def test_a_dropped_version_leaves_no_enrichment_behind(self, store: Any, names: Names, embedder: Any) -> None:
        name = names("KB_DROP")
        spec = VersionSpec(name, embedder.model_id, embedder.dimension, "cosine")
        store.create_version(spec)
        store.write_documents(name, enriched_corpus(embedder))
        store.drop_version(name)
        store.create_version(spec)
        assert self.rows(store, name, embedder) == ([], [])

    def test_questions_and_summaries_are_visible_only_with_their_chunk_or_document(
        self, store: Any, names: Names, embedder: Any
    ) -> None:
        name = names("KB_ENR_ACL")
        store.create_version(VersionSpec(name, embedder.model_id, embedder.dimension, "cosine"))
        acls = {"hr-leave": ["group:hr"], "it-vpn": ["public"], "fin-expense": ["user:carol"],
                "it-password": [], "kitchen": ["user:alice"]}
        docs = [enriched(embedder, make_doc(doc, parts, {**meta, "rag_acl": acls[doc]}, source,
                                            embed(embedder, [t for t, _ in parts])))
                for doc, source, parts, meta in CORPUS]
        store.write_documents(name, docs)
        q = self.query(embedder, "Can I carry unused vacation days into next year?")
        cases = {("alice", ()): {"it-vpn", "kitchen"}, ("bob", ("hr",)): {"hr-leave", "it-vpn"},
                 ("dave", ()): {"it-vpn"}}
        for (user, groups), expected in cases.items():
            vis = Visibility.of(user, groups)
            for k in (1, 50):
                questions = store.search_questions(name, q, k, visibility=vis)
                assert {h.chunk.doc_id for h in questions.hits} <= expected, user
                # hidden questions never take a slot: k hits whenever k visible chunks have questions
                visible_chunks = {c for c in QUESTIONS if c.split("#")[0] in expected}
                assert len(questions.hits) == min(k, len(visible_chunks)), (user, k)
                summaries = store.search_summaries(name, q, k, visibility=vis)
                visible_summaries = {s[0] for s in SUMMARIES if s[1] in expected}
                assert {h.summary.doc_id for h in summaries.hits} <= expected, user
                assert len(summaries.hits) == min(k, len(visible_summaries)), (user, k)
        # the top hit for bob is the hr chunk; alice never reaches it, even by naming it
        assert store.search_questions(name, q, 1, visibility=Visibility.of("bob", ("hr",))).hits[0].chunk.chunk_id \
            == "hr-leave#1"
        by_id = (FieldFilter("doc_id", any_of=("hr-leave", "it-password")),)
        assert store.search_questions(name, q, 5, by_id, visibility=Visibility.of("alice")).hits == ()
        assert store.search_summaries(name, q, 5, by_id, visibility=Visibility.of("alice")).hits == ()

    def test_filters_apply_to_the_parent_chunk_and_document(self, store: Any, enriched_version: str,
                                                            embedder: Any) -> None:
        q = self.query(embedder, "How do I change my VPN password?")
        it = (FieldFilter("dept", any_of=("it",)),)
        questions = store.search_questions(enriched_version, q, 10, it)
        assert {h.chunk.doc_id for h in questions.hits} == {"it-vpn", "it-password"}
        summaries = store.search_summaries(enriched_version, q, 10, it)
        assert {h.summary.doc_id for h in summaries.hits} == {"it-vpn", "it-password"}
        figures = (FieldFilter("chunk_type", any_of=("figure",)),)
        assert store.search_questions(enriched_version, q, 10, figures).hits == ()  # no figure has a question

    def test_bad_enrichment_is_refused_and_nothing_is_written(self, store: Any, names: Names, embedder: Any) -> None:
        name = names("KB_BAD")
        store.create_version(VersionSpec(name, embedder.model_id, embedder.dimension, "cosine"))
        docs = enriched_corpus(embedder)
        kitchen = docs[-1]
        stranger = dataclasses.replace(kitchen, questions=[HypotheticalQuestion("x?0", "hr-leave#0", "Who?")],
                                       question_vectors=embed(embedder, ["Who?"]))
        with pytest.raises(StoreError, match=r"document kitchen: question 'x\?0' names chunk 'hr-leave#0'"):
            store.write_documents(name, [*docs[:-1], stranger])
        short = dataclasses.replace(kitchen, question_vectors=None)
        with pytest.raises(StoreError, match="document kitchen: 1 questions but no question vectors"):
            store.write_documents(name, [short])
        other = dataclasses.replace(kitchen, summaries=[Summary("s", "hr-leave", "artifact_summary", "x")],
                                    summary_vectors=embed(embedder, ["x"]))
        with pytest.raises(StoreError, match="summary 's' belongs to document 'hr-leave'"):
            store.write_documents(name, [other])
        wide = dataclasses.replace(kitchen, question_vectors=random_vectors(1, embedder.dimension + 1))
        with pytest.raises(EmbeddingModelMismatch, match="question vectors have"):
            store.write_documents(name, [wide])
        assert store.get_version(name).chunk_count == 0 and self.rows(store, name, embedder) == ([], [])

    def test_model_guard_holds_for_questions_and_summaries(self, store: Any, enriched_version: str,
                                                           embedder: Any) -> None:
        other = QueryVector(embed(embedder, ["vacation"], query=True)[0], "other/model")
        with pytest.raises(EmbeddingModelMismatch, match="other/model"):
            store.search_questions(enriched_version, other, 3)
        with pytest.raises(EmbeddingModelMismatch, match="other/model"):
            store.search_summaries(enriched_version, other, 3)
        with pytest.raises(StoreError):
            store.search_questions(enriched_version, self.query(embedder, "x"), 0)


class SeriesLockTest(_Fixtures):
    """``SeriesLocking``: one holder per series; a second is refused (naming the first) or
    waits; a release lets the next in; series do not block each other. That a crashed
    holder's lock goes with it is each store's own test (a killed process, a killed session).

    Extended tier (``SeriesLocking`` is optional: without it a run is not serialised).
    Usage: ``class TestMyStore(VectorStoreBaseTests, SeriesLockTest)``; the ``store`` implements
    ``lock_series``."""

    @staticmethod
    def holder(command: str) -> LockHolder:
        return LockHolder(command, 4242, "host-a", "2025-06-01T10:00:00+00:00")

    def test_a_second_run_is_refused_naming_the_holder_until_it_releases(self, store: Any, names: Names) -> None:
        series = names("S")
        first = store.lock_series(series, self.holder("rag ingest"))
        with pytest.raises(SeriesLocked) as refused:
            store.lock_series(series, self.holder("rag promote"))
        assert refused.value.context["holder"] == self.holder("rag ingest")
        assert "rag ingest (pid 4242 on host-a, since 2025-06-01T10:00:00+00:00)" in refused.value.user_message
        first.release()
        first.release()  # idempotent
        second = store.lock_series(series, self.holder("rag promote"))
        assert second.holder.command == "rag promote"
        second.release()

    def test_a_waiting_run_gets_the_lock_when_the_holder_releases(self, store: Any, names: Names) -> None:
        import threading
        import time

        series = names("S")
        first = store.lock_series(series, self.holder("rag ingest"))
        timer = threading.Timer(0.4, first.release)
        started = time.monotonic()
        timer.start()
        try:
            second = store.lock_series(series, self.holder("rag ingest"), wait_s=30)
        finally:
            timer.join()
        assert 0.3 <= time.monotonic() - started < 20
        second.release()

    def test_a_wait_that_runs_out_is_refused(self, store: Any, names: Names) -> None:
        import time

        series = names("S")
        first = store.lock_series(series, self.holder("rag ingest"))
        started = time.monotonic()
        with pytest.raises(SeriesLocked):
            store.lock_series(series, self.holder("rag ingest"), wait_s=0.5)
        assert time.monotonic() - started >= 0.45
        first.release()

    def test_series_do_not_block_each_other(self, store: Any, names: Names) -> None:
        a = store.lock_series(names("A"), self.holder("rag ingest"))
        b = store.lock_series(names("B"), self.holder("rag ingest"))
        a.release()
        b.release()


class AdminConcurrencyTest(_Fixtures):
    """Operations that run at the same time (review L3, C6; issue 30): two ingests of one series
    both land, each under the series lock; an ingest racing a promotion either commits first (and
    the rotation is refused) or meets the served version (and is refused), never both through; two
    rotations of one alias each record the version the alias really served before them, so the
    rollback target is right; a reader resolving the alias while gc drops an old version never
    errors and never sees a half-dropped version (a read of the dropped version itself is whole, or
    says it is gone).

    Extended tier (threads hammering one database for seconds). Usage:
    ``class TestMyStore(VectorStoreBaseTests, AdminConcurrencyTest)``; needs ``lock_series``."""

    def test_two_ingests_of_one_series_both_land_and_neither_edit_is_lost(
        self, store: Any, names: Names, embedder: Any
    ) -> None:
        import threading

        version = names("V")
        store.create_version(VersionSpec(version, embedder.model_id, embedder.dimension, "cosine"))
        singles = [d for d in corpus_docs(embedder) if len(d.chunks) == 1][:2]  # two one-chunk documents
        before = store.get_version(version).generation
        start = threading.Barrier(2)
        errors: list[BaseException] = []

        def ingest(doc: DocumentWrite, pid: int) -> None:
            try:
                start.wait(5)
                lease = store.lock_series(version, LockHolder("rag ingest", pid, "host-a", "2025-06-01T10:00:00+00:00"),
                                          wait_s=60)
                try:
                    store.write_documents(version, [doc])
                finally:
                    lease.release()
            except BaseException as exc:  # noqa: BLE001 - reported below
                errors.append(exc)

        threads = [threading.Thread(target=ingest, args=(d, 100 + i)) for i, d in enumerate(singles)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        assert not errors, errors
        after = store.get_version(version)
        assert (after.chunk_count, after.doc_count) == (2, 2)
        assert after.generation == before + 2  # each write moved it once; none was lost or merged away

    def test_an_ingest_racing_a_promotion_is_never_served_unevaluated(
        self, store: Any, names: Names, embedder: Any
    ) -> None:
        """The promotion evaluated the candidate at one generation; an ingest writes it at the same time.
        Either the write commits first and the rotation naming the evaluated generation is refused
        (``VersionChanged``), or the rotation commits first and the write meets a served version
        (``VersionServed``): never both through. Several rounds, so both orders occur."""
        import threading

        docs = corpus_docs(embedder)
        outcomes: set[str] = set()
        for round_ in range(6):
            served, candidate, alias = names(f"S{round_}"), names(f"C{round_}"), names(f"A{round_}")
            for name in (served, candidate):
                store.create_version(VersionSpec(name, embedder.model_id, embedder.dimension, "cosine"))
                store.write_documents(name, docs[:2])
            store.point_alias(alias, served)
            evaluated = store.get_version(candidate).generation
            start = threading.Barrier(2)
            result: dict[str, Any] = {}

            def promote() -> None:
                start.wait(5)
                try:
                    result["rotation"] = store.point_alias(alias, candidate, reason="gates passed",
                                                           expected_generation=evaluated)
                except BaseException as exc:  # noqa: BLE001 - checked below
                    result["rotation"] = exc

            def ingest() -> None:
                start.wait(5)
                try:
                    result["write"] = store.write_documents(candidate, docs[2:3])
                except BaseException as exc:  # noqa: BLE001 - checked below
                    result["write"] = exc

            threads = [threading.Thread(target=promote), threading.Thread(target=ingest)]
            for t in threads:
                t.start()
            for t in threads:
                t.join(60)
            rotated, wrote = result["rotation"], result["write"]
            now = store.get_version(candidate).generation
            if isinstance(rotated, VersionChanged):
                assert not isinstance(wrote, BaseException), wrote
                assert store.resolve_alias(alias) == served and now == evaluated + 1
                outcomes.add("write first")
            else:
                assert not isinstance(rotated, BaseException), rotated
                assert isinstance(wrote, VersionServed), wrote
                assert store.resolve_alias(alias) == candidate and now == evaluated  # what was evaluated
                outcomes.add("rotation first")
        assert outcomes  # (which orders occurred depends on the scheduler)

    def test_two_rotations_of_one_alias_record_each_previous_and_the_rollback_target(
        self, store: Any, names: Names, model: str
    ) -> None:
        import threading

        a, b, c, alias = names("A"), names("B"), names("C"), names("ALIAS")
        for name in (a, b, c):
            store.create_version(VersionSpec(name, model, 384, "cosine"))
        store.point_alias(alias, a, reason="first")
        start = threading.Barrier(2)
        errors: list[BaseException] = []

        def rotate(version: str) -> None:
            try:
                start.wait(5)
                store.point_alias(alias, version, reason=f"to {version}")
            except BaseException as exc:  # noqa: BLE001 - reported below
                errors.append(exc)

        threads = [threading.Thread(target=rotate, args=(v,)) for v in (b, c)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        assert not errors
        newest, older, first = store.alias_history(alias)[:3]
        assert {newest.version, older.version} == {b, c} and first.version == a
        assert older.previous == a and newest.previous == older.version  # each saw what was served before it
        assert store.resolve_alias(alias) == newest.version
        with pytest.raises(StoreError, match=rf"cannot drop {older.version}: it is protected \({alias} rollback\)"):
            store.drop_version(older.version)  # the rollback target is the one really served before
        store.drop_version(a)  # and the first version is no longer protected

    def test_readers_of_the_alias_never_fail_while_gc_drops_an_old_version(
        self, store: Any, names: Names, embedder: Any
    ) -> None:
        import threading

        old, live, alias = names("OLD"), names("LIVE"), names("ALIAS")
        rollback = names("RB")
        for name in (old, rollback, live):
            store.create_version(VersionSpec(name, embedder.model_id, embedder.dimension, "cosine"))
            store.write_documents(name, corpus_docs(embedder))
        for name in (old, rollback, live):
            store.point_alias(alias, name)  # old is neither served nor the rollback target: gc may drop it
        q = self.query(embedder, "vacation days")
        expected = ids(store.search(live, q, k=3))
        whole = ids(store.search(old, q, k=3))
        done = threading.Event()
        problems: list[str] = []
        reads = [0, 0]

        def read_alias() -> None:
            while not done.is_set() or reads[0] < 5:
                try:
                    result = store.search(alias, q, k=3)
                    if (result.version, ids(result)) != (live, expected):
                        problems.append(f"alias read {result.version} {ids(result)}")
                except BaseException as exc:  # noqa: BLE001 - any error is the failure
                    problems.append(f"alias read raised {exc!r}")
                reads[0] += 1

        def read_old() -> None:
            while not done.is_set() or reads[1] < 5:
                try:
                    got = ids(store.search(old, q, k=3))
                    if got != whole:
                        problems.append(f"half-dropped read {got}")
                except (VersionNotFound, AliasNotFound):
                    pass  # gone: said so, never a partial answer
                except BaseException as exc:  # noqa: BLE001
                    problems.append(f"read of the dropped version raised {exc!r}")
                reads[1] += 1

        threads = [threading.Thread(target=read_alias), threading.Thread(target=read_alias),
                   threading.Thread(target=read_old)]
        for t in threads:
            t.start()
        try:
            import time

            deadline = time.monotonic() + 30
            while min(reads) == 0 and time.monotonic() < deadline:  # the readers are under way
                time.sleep(0.01)
            store.drop_version(old)
        finally:
            done.set()
            for t in threads:
                t.join(60)
        assert not problems, problems[:5]
        assert old not in {v.name for v in store.list_versions()}
        assert store.resolve_alias(alias) == live


class StoresTest(_Fixtures):
    """The ``Stores`` bundle: each field implements its port, and the separate port objects share
    one database (what one writes, the others read; closing the bundle does not lose data).

    Usage: ``class TestMyStore(StoresTest)`` with ``store`` and, for a store split by port, a
    ``stores`` fixture returning its bundle (``store.stores()``)."""

    def test_each_field_of_the_bundle_implements_its_port(self, stores: Stores) -> None:
        assert isinstance(stores.vectors, VectorStore)
        assert isinstance(stores.admin, IndexAdmin)
        assert isinstance(stores.interactions, InteractionLog)
        assert stores.conversations is None or isinstance(stores.conversations, ConversationLog)
        assert stores.enrichment_cache is None or isinstance(stores.enrichment_cache, EnrichmentCache)

    def test_the_ports_share_one_database(self, store: Any, stores: Stores, names: Names, embedder: Any) -> None:
        name, alias = names("BUNDLE"), names("BUNDLE_LIVE")
        stores.admin.create_version(VersionSpec(name, embedder.model_id, embedder.dimension, "cosine"))
        assert stores.vectors.write_documents(name, corpus_docs(embedder)) == len(ALL_CHUNK_IDS)
        stores.admin.finish_load(name)
        stores.admin.point_alias(alias, name, reason="bundle")
        assert stores.admin.resolve_alias(alias) == name == store.resolve_alias(alias)
        assert set(ids(stores.vectors.search(alias, self.query(embedder, "vacation"), k=50))) == ALL_CHUNK_IDS
        assert store.get_version(name).chunk_count == len(ALL_CHUNK_IDS)
        question = f"bundle {uuid.uuid4().hex}"
        stores.interactions.record_interaction(Interaction(
            question=question, resp_mode="rag", used_llm="extractive", domain=None, retrieval_target=alias,
            latency_ms=1.0, decision_explain={}))
        assert question in [i.question for i in store.interactions(limit=10_000)]

    def test_the_enrichment_cache_keys_on_hash_prompt_version_and_model(self, stores: Stores) -> None:
        cache = stores.enrichment_cache
        if cache is None:
            pytest.skip("this store keeps no enrichment cache")
        h, other = uuid.uuid4().hex, uuid.uuid4().hex
        cache.put_many("1", "test/model", {h: '{"a": 1}'})
        cache.put_many("1", "test/model", {h: '{"a": 2}'})  # replaced, not duplicated
        assert cache.get_many("1", "test/model", [h, other, h]) == {h: '{"a": 2}'}
        assert cache.get_many("2", "test/model", [h]) == {} and cache.get_many("1", "other/model", [h]) == {}


OVERRIDE = "depends on the store; override this test in your store's test class: "


class StoreSpecificTest(_Fixtures):
    """Behaviour every store has but each shows its own way (Haystack's "Override this test in
    your custom test class"): a store's test class must override each test here, else it fails
    with ``NotImplementedError`` saying what to check.

    Usage::

        class TestMyStore(VectorStoreBaseTests):
            def test_an_unreachable_store_says_where_it_is(self, tmp_path: Path) -> None:
                with pytest.raises(StoreUnavailable, match="my-host:1234"):
                    MyStore.open("my-host:1234")
    """

    def test_an_unreachable_store_says_where_it_is(self, tmp_path: Any) -> None:
        raise NotImplementedError(OVERRIDE + "opening a store that cannot be reached raises StoreUnavailable "
                                  "naming where it is (a file path, a host and port) and never a password")

    def test_finish_load_readies_what_search_uses(self, store: Any, version: str, embedder: Any) -> None:
        raise NotImplementedError(OVERRIDE + "after finish_load(version), search the version and check that it "
                                  "answers from what finish_load built (an ANN index, an exact scan below a size, "
                                  "a database vector index) and that finish_load is idempotent")


class VectorStoreBaseTests(
    StoresTest,
    StoreSpecificTest,
    CandidateTest,
    EnrichmentTest,
    AccessControlTest,
    UpsertTest,
    DeleteTest,
    DenseSearchTest,
    LexicalSearchTest,
    VersionTest,
    AliasTest,
    ModelGuardTest,
    InteractionTest,
    EmbeddingCacheTest,
    LifecycleTest,
):
    """The tier every store passes (Haystack's ``DocumentStoreBaseTests``): the ports' docstrings
    in ``backend/core/ports.py`` as tests. Subclass it, override ``store`` (and ``stores`` for a
    split store) and every ``StoreSpecificTest`` test."""


class VectorStoreExtendedTests(
    AdminConcurrencyTest,
    SeriesLockTest,
    FilterScaleTest,
):
    """The opt-in tier (Haystack's ``DocumentStoreBaseExtendedTests``): optional ports
    (``SeriesLocking``) and slow checks (10,000 chunks, threads racing admin steps). Add it, or
    single mixins of it, next to ``VectorStoreBaseTests`` when the store supports them."""


class VectorStoreContract(VectorStoreBaseTests, VectorStoreExtendedTests):
    """Both tiers: what the built-in stores (SQLite, Oracle) pass."""


__all__ = [
    "VectorStoreContract", "VectorStoreBaseTests", "VectorStoreExtendedTests", "StoresTest", "StoreSpecificTest",
    "FilterScaleTest", "AccessControlTest", "CandidateTest", "UpsertTest", "DeleteTest", "DenseSearchTest", "LexicalSearchTest", "VersionTest",
    "AliasTest", "ModelGuardTest", "InteractionTest", "EmbeddingCacheTest", "LifecycleTest", "CORPUS", "ALL_CHUNK_IDS",
    "Names", "corpus_docs", "embed", "make_doc", "random_vectors", "ids", "EnrichmentTest", "enriched",
    "enriched_corpus", "QUESTIONS", "SUMMARIES", "SeriesLockTest", "AdminConcurrencyTest",
]
