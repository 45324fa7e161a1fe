"""The small ports every outside system hides behind.

Services and the ingest pipeline depend on these Protocols only; adapters in
``backend/providers`` implement them. The docstrings are the contract that the
shared suites in ``tests/contracts`` check for every adapter.

Why one module over 500 lines: it is the whole contract between the services and the outside, read
in one place (as Haystack keeps its document-store protocol in one file); each Protocol is small,
the length is their docstrings, and splitting them by port would scatter what the suites check.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterator, Mapping, Protocol, Sequence, runtime_checkable

from backend.core.enrichment import ChunkEnrichment, EnrichmentInput
from backend.core.sync_diff import SyncedItem

from backend.core.types import (
    AliasChange,
    AuditEvent,
    Candidates,
    ChatRequest,
    Chunk,
    ConversationTurn,
    DocumentWrite,
    Feedback,
    FieldFilter,
    IndexVersion,
    Interaction,
    LockHolder,
    QueryVector,
    QuestionResult,
    SearchResult,
    StoredDocument,
    SummaryKind,
    SummaryResult,
    Vector,
    VersionSpec,
    Visibility,
)


@runtime_checkable
class VectorStore(Protocol):
    """Chunks and their vectors in versioned tables, read through alias views.

    ``target`` arguments name an alias or a version; an alias is resolved inside
    the same read so a concurrent rotation never yields a mix of two versions.
    """

    def max_writers(self) -> int:
        """How many threads may call ``write_documents`` on one version at once (each call whole
        documents, one transaction): 1 for a store with a single writer (SQLite)."""
        ...

    def write_documents(self, version: str, documents: Sequence[DocumentWrite], *,
                        allow_served: bool = False) -> int:
        """Atomically replace each document's chunks (upsert by ``chunk_id``; chunks of
        the document not in the new set are deleted), and with them its hypothetical questions
        and summaries (``DocumentWrite.questions`` / ``summaries``: what the write carries is what
        the document has afterwards; a question must name a chunk of its own document, else
        ``StoreError``). All documents of one call commit
        together or not at all. Writing the same chunks again changes nothing.
        Returns the number of chunks written. Raises ``VersionNotFound``, and
        ``EmbeddingModelMismatch`` when a vector's dimension differs from the version's.

        A version that ``protected_versions`` names is immutable: the write raises
        ``VersionServed`` (checked inside the write transaction, so a rotation that
        lands first wins) unless ``allow_served`` is given. Every write that changes
        rows bumps the version's ``generation``."""
        ...

    def delete_documents(self, version: str, doc_ids: Sequence[str], *, allow_served: bool = False) -> int:
        """Delete every chunk of these documents, with their questions and summaries; returns
        chunks deleted (0 for unknown ids).
        Same ``VersionServed`` guard and ``generation`` bump as ``write_documents``."""
        ...

    def asset_refs(self, version: str, *, visibility: Visibility | None = None) -> set[str]:
        """Every ``image_ref`` the version's chunks cite in their metadata (figure images
        under the assets dir); what garbage collection must keep while the version exists.
        With ``visibility``, only those cited by a chunk that reader may see (``/assets``)."""
        ...

    def document_hashes(self, version: str) -> dict[str, str]:
        """``doc_id -> doc_hash`` for every document fully written to the version."""
        ...

    def document_list(self, version: str) -> list[StoredDocument]:
        """Every document of the version with its hash (as ``document_hashes``), its source and
        its chunk count, ordered by ``doc_id``; the admin console's list. ``VersionNotFound``."""
        ...

    def search(
        self, target: str, query: QueryVector, k: int, filters: Sequence[FieldFilter] = (), *,
        visibility: Visibility | None = None,
    ) -> SearchResult:
        """Top-``k`` chunks by similarity, best first, metadata filters applied inside the
        search so that ``k`` hits come back whenever ``k`` matching chunks exist.

        ``visibility`` (access control) is applied in the same query as the filters, before
        the top-``k``: a chunk whose ``rag_acl`` shares no label with it is never returned
        and never counts toward ``k``, so ``k`` hits come back whenever ``k`` visible
        matching chunks exist. ``None`` means no enforcement; services pass ``None`` only
        when ``access.enabled`` is false. Raises
        ``EmbeddingModelMismatch`` (naming both models/dimensions) if the query vector was
        made by another model or has another dimension than the version; ``AliasNotFound``
        / ``VersionNotFound`` for an unknown target."""
        ...

    def lexical_search(
        self, target: str, text: str, k: int, filters: Sequence[FieldFilter] = (), *,
        visibility: Visibility | None = None,
    ) -> SearchResult:
        """Top-``k`` chunks by a BM25-style full-text score (higher is better); filters and
        ``visibility`` apply inside the query exactly as in ``search``."""
        ...

    def dense_candidates(
        self, target: str, query: QueryVector, k: int, filters: Sequence[FieldFilter] = (), *,
        visibility: Visibility | None = None,
    ) -> Candidates:
        """``search`` without the rows: the same top-``k`` ``(chunk_id, similarity)`` pairs in the
        same order with the same scores, filters and ``visibility`` applied inside the query the
        same way, same errors. What fusion ranks before it knows which few chunks it will show."""
        ...

    def lexical_candidates(
        self, target: str, text: str, k: int, filters: Sequence[FieldFilter] = (), *,
        visibility: Visibility | None = None,
    ) -> Candidates:
        """``lexical_search`` without the rows: the same ``(chunk_id, lexical score)`` pairs, same
        order, filters and ``visibility`` inside the query."""
        ...

    def similarities(
        self, version: str, query: QueryVector, chunk_ids: Sequence[str], *, visibility: Visibility | None = None,
    ) -> dict[str, float]:
        """``chunk_id -> dense similarity`` (as ``search`` scores it) for exactly these chunks of
        ``version``; unknown ids, and chunks ``visibility`` hides, are absent. Same
        ``EmbeddingModelMismatch`` as ``search``."""
        ...

    def fetch_chunks(
        self, version: str, chunk_ids: Sequence[str], *, visibility: Visibility | None = None,
    ) -> dict[str, Chunk]:
        """``chunk_id -> Chunk`` (as ``search`` returns it) for these chunks of ``version``; unknown
        ids, and chunks ``visibility`` hides, are absent."""
        ...

    def chunk_vectors(
        self, version: str, chunk_ids: Sequence[str], *, visibility: Visibility | None = None,
    ) -> dict[str, Vector]:
        """``chunk_id -> stored vector`` (float32, as embedded) for these chunks of ``version``, same
        rules as ``fetch_chunks``: what lexical-to-dense feedback averages (a few vectors a query)."""
        ...

    def chunk_texts(
        self, version: str, chunk_ids: Sequence[str], *, visibility: Visibility | None = None,
    ) -> dict[str, str]:
        """``chunk_id -> text`` only (no metadata decoding), same rules as ``fetch_chunks``: what
        lexical feedback reads from its candidates."""
        ...

    def resolve_retrieval(self, target: str) -> tuple[str, Mapping[str, Any] | None]:
        """The version an alias (or a version name) resolves to and the retrieval settings
        stamped on it (``IndexVersion.retrieval``; None for a version made before stamps),
        in one cheap read. Raises ``AliasNotFound`` / ``VersionNotFound`` for an unknown target."""
        ...

    def cached_vectors(self, model: str, text_hashes: Sequence[str]) -> dict[str, Vector]:
        """Vectors already computed by ``model`` for these embedded-text hashes, from any
        version; lets ingestion never embed the same content twice."""
        ...

    def search_questions(
        self, target: str, query: QueryVector, k: int, filters: Sequence[FieldFilter] = (), *,
        visibility: Visibility | None = None,
    ) -> QuestionResult:
        """HyDE (seed 001): the top-``k`` distinct parent chunks by the similarity of their best
        hypothetical question to ``query`` (``DocumentWrite.questions``), best first, each chunk
        once with the question that matched. ``filters`` and ``visibility`` apply to the parent
        chunk inside the query exactly as in ``search``: a question of a chunk the reader may not
        see is never matched and never counts toward ``k``. A version without questions returns
        no hits. Same ``EmbeddingModelMismatch`` / ``AliasNotFound`` / ``VersionNotFound`` as ``search``."""
        ...

    def search_summaries(
        self, target: str, query: QueryVector, k: int, filters: Sequence[FieldFilter] = (), *,
        kinds: Sequence[SummaryKind] = ("page_summary", "artifact_summary"),
        visibility: Visibility | None = None,
    ) -> SummaryResult:
        """Seed 002: the top-``k`` page and document summaries of ``kinds`` by similarity to
        ``query``, best first. A summary is visible (and passes ``filters``) only when a chunk of
        its document does, checked inside the query; hidden summaries never count toward ``k``."""
        ...


@runtime_checkable
class IndexAdmin(Protocol):
    """Versions, aliases and their history (seed 004's ``index_admin``)."""

    def create_version(self, spec: VersionSpec) -> IndexVersion:
        """Create the physical table; idempotent for an identical spec. Raises
        ``VersionConflict`` if the name exists with another model, dimension or distance.

        With ``spec.parent`` a new version starts as a copy of every row of the parent
        (chunks, hypothetical questions and summaries, vectors included; same model and
        dimension, else ``VersionConflict``): either the version is
        registered with all of them or it is not registered at all, and calling again
        after a crash completes it. The parent is only read."""
        ...

    def protected_versions(self) -> dict[str, str]:
        """``version -> why`` for every version that must not change or be dropped: the
        one each alias serves, and the ``previous`` of each alias's latest change (its
        rollback target)."""
        ...

    def finish_load(self, version: str) -> None:
        """An ingest into ``version`` has ended: build (or rebuild) whatever index the
        version will serve with, so it is evaluated as it will be served. Idempotent."""
        ...

    def get_version(self, name: str) -> IndexVersion:
        """Raises ``VersionNotFound``."""
        ...

    def list_versions(self) -> list[IndexVersion]: ...

    def drop_version(self, name: str) -> None:
        """Drop a version: its table first, then its registry row, so a failed drop
        leaves a registered (and retryable) version, never an orphan table. Raises
        ``StoreError`` if the version is protected (``protected_versions``: an alias
        serves it or keeps it as its rollback target)."""
        ...

    def point_alias(self, alias: str, version: str, *, reason: str = "", forced: bool = False,
                    expected_generation: int | None = None) -> AliasChange:
        """Atomically (re)create the alias view over ``version`` and record the change.
        Readers see either the old or the new version, never an error or a mix.
        Raises ``VersionConflict`` if the alias already serves a version with another
        model or dimension (unless ``forced``). With ``expected_generation`` (the generation
        that was evaluated), the version's generation is read again under the lock that orders
        the rotation against writes (in the same transaction that records the alias), and
        ``VersionChanged`` is raised, the alias untouched, if a write moved it; ``forced``
        does not skip this check."""
        ...

    def resolve_alias(self, alias: str) -> str | None:
        """The version the alias serves now, or None if it does not exist."""
        ...

    def list_aliases(self) -> dict[str, str]:
        """``alias -> version`` for every alias."""
        ...

    def alias_history(self, alias: str) -> list[AliasChange]:
        """Changes, newest first."""
        ...

    def record_evaluation(self, version: str, report: Mapping[str, Any]) -> None: ...


class SeriesLease(Protocol):
    """A held writer lock of one series; ``release`` is idempotent."""

    series: str
    holder: LockHolder

    def release(self) -> None: ...


@runtime_checkable
class SeriesLocking(Protocol):
    """One writer per index series (every version of one ``index_name`` stem) at a time: an
    ingest, the gate's promotion and a rollback of the series hold it for their whole run, so
    two runs never write one candidate and a promotion never interleaves with an ingest.

    The lock dies with its holder (an OS file lock, a database session's row lock): a crashed
    run never keeps it. The holder's ``LockHolder`` is readable by the runs it refuses."""

    def lock_series(self, series: str, holder: LockHolder, *, wait_s: float = 0.0) -> SeriesLease:
        """Take the lock of ``series`` (a validated identifier, upper case), waiting at most
        ``wait_s`` seconds (0: not at all). Raises ``SeriesLocked`` with ``context["holder"]``
        (the ``LockHolder`` in the way, or None when it has not said yet) if it stays taken.
        Exclusive also between two callers of one process."""
        ...


@runtime_checkable
class InteractionLog(Protocol):
    def record_interaction(self, interaction: Interaction) -> None: ...

    def interactions(self, limit: int = 100) -> list[Interaction]: ...


@runtime_checkable
class AuditLog(Protocol):
    """The audit trail (admin actions, MCP tool calls, denied requests), append-only, in the store
    so it is shared by every worker and survives a restart. Nothing here deletes a line."""

    def append_audit(self, event: AuditEvent) -> None:
        """Append one event (its ``created_at`` as given; ``id`` is assigned by the store)."""
        ...

    def audit_events(self, limit: int = 1000, before_id: int | None = None) -> list[AuditEvent]:
        """The newest ``limit`` events with ``id < before_id`` (all when None), newest first, ``id`` set."""
        ...


@runtime_checkable
class QuotaCounter(Protocol):
    """Request counters per subject and window, in the store so that every worker counts against one
    budget (``core/services/quotas.py``)."""

    def count_request(self, subject: str, window_kind: str, window_start: str) -> int:
        """Add one to the counter of ``subject`` in the window (``minute`` or ``day``) that starts at
        ``window_start``, atomically (two workers never both read the same count), and return it."""
        ...

    def prune_quota_counters(self, before: str) -> int:
        """Delete counters of windows that started before ``before``; returns how many."""
        ...


@runtime_checkable
class ConversationLog(Protocol):
    """Conversation history and answer feedback. A conversation belongs to the principal
    that asked (None without access control): reads and deletes name it, so nobody sees or
    deletes another principal's history."""

    def record_turn(self, turn: ConversationTurn) -> None: ...

    def conversation_turns(self, conversation_id: str, principal: str | None, limit: int = 50
                           ) -> list[ConversationTurn]:
        """The conversation's last ``limit`` turns, oldest first."""
        ...

    def get_turn(self, interaction_id: str) -> ConversationTurn | None: ...

    def delete_conversation(self, conversation_id: str, principal: str | None) -> int:
        """Delete the conversation's turns; returns how many. Feedback already given stays
        (it was submitted for evaluation on purpose)."""
        ...

    def record_feedback(self, feedback: Feedback) -> int:
        """Store one verdict, replacing the answer's earlier one (one verdict per answer); returns its id."""
        ...

    def feedback(self, limit: int = 1000) -> list[Feedback]:
        """Newest first."""
        ...


@runtime_checkable
class Embedder(Protocol):
    """Turns text into vectors. Documents and queries are embedded separately
    because some models (and OCI's input types) treat them differently."""

    model_id: str
    dimension: int

    def embed_documents(self, texts: Sequence[str]) -> Vector:
        """One row per text, float32, in input order. Batching and rate limits are the
        adapter's; transient provider errors are retried, permanent ones raise ``ProviderError``."""
        ...

    def embed_queries(self, texts: Sequence[str]) -> Vector: ...


# What a model can do beyond its port is declared by these capability protocols (as ``SeriesLocking``
# is for a store), checked with ``isinstance`` where it is used, never probed by attribute name.


@runtime_checkable
class CompatibleEmbedder(Embedder, Protocol):
    """An embedder whose queries may also search vectors stamped with other model ids: the same
    weights on another runtime, parity-checked (``embeddings.local.compatible_runtimes``)."""

    compatible_models: frozenset[str]


@runtime_checkable
class TokenizingEmbedder(Embedder, Protocol):
    """An embedder that lends its tokenizer (a Hugging Face fast tokenizer) to the token chunker
    (``chunker.kind: tokens``), so chunks are cut in the model's own tokens."""

    @property
    def tokenizer(self) -> object: ...


def accepted_models(embedder: Embedder) -> frozenset[str]:
    """The other model ids whose vectors ``embedder``'s queries may search (none unless it is a
    ``CompatibleEmbedder``)."""
    return embedder.compatible_models if isinstance(embedder, CompatibleEmbedder) else frozenset()


@runtime_checkable
class AnswerReader(Protocol):
    """Reads a question against sentences: the probability that each answers it (the answer
    decision's model, ``retrieval.answerability.reader``)."""

    def score(self, question: str, texts: Sequence[str]) -> Any:
        """One probability in [0, 1] per text (a numpy array), in input order. A text is
        ``heading | sentence`` when the sentence stands under a heading."""
        ...


@runtime_checkable
class Reranker(Protocol):
    """Scores (query, passage) pairs for a second-stage ordering of the top candidates."""

    name: str

    def rerank(self, query: str, texts: Sequence[str]) -> list[float]:
        """One relevance score per text, in input order; higher is more relevant. The
        scale is the adapter's own: only the order it induces is used. Transient provider
        errors are retried; permanent ones raise ``ProviderError``."""
        ...


@runtime_checkable
class ChatModel(Protocol):
    """Composes an answer. Returns the answer text; an empty or blank string means
    "no answer" and makes the chat service fall back."""

    name: str

    def generate(self, request: ChatRequest) -> str: ...


@runtime_checkable
class StreamingChatModel(ChatModel, Protocol):
    """A chat model that streams its answer (the LLM adapters): ``ChatService.stream`` sends the
    pieces as they come; any other model answers first and its text is sent sentence by sentence."""

    def stream(self, request: ChatRequest) -> Iterator[str]: ...


@runtime_checkable
class ExplainingChatModel(ChatModel, Protocol):
    """A chat model that says why it answered as it did (the extractive answerer: the sentences it
    chose and their scores), carried into the answer's explanation."""

    def generate_explained(self, request: ChatRequest) -> tuple[str, dict[str, Any] | None]: ...


@runtime_checkable
class Enricher(Protocol):
    """Proposes a chunk's summary, content type, typed metadata and hypothetical questions
    (seeds 000/001), and page / document summaries (seed 002). The pipeline validates what it
    proposes against the schema (``backend.core.enrichment.accept``) and caches it by
    ``(input content hash, prompt_version, model_id)``, so an adapter is only asked about inputs
    no earlier run has seen. ``calls`` counts the generative requests made (0 for a rule-based
    enricher); transient provider errors are retried inside, permanent ones raise ``ProviderError``."""

    #: provider and model, e.g. ``extractive/1`` or ``openai_compat/qwen2.5-7b``: part of the cache key
    model_id: str
    calls: int

    def enrich(self, items: Sequence[EnrichmentInput]) -> list[ChunkEnrichment]:
        """One proposal per input, in order."""
        ...

    def summarize(self, title: str, texts: Sequence[str]) -> str:
        """A short summary of a page or a document from its chunk texts (in reading order)."""
        ...


@runtime_checkable
class EnrichmentCache(Protocol):
    """Enrichment results by ``(content_hash, prompt_version, model_id)``, shared by every
    version in the store's database; values are the JSON the pipeline stored."""

    def get_many(self, prompt_version: str, model_id: str, content_hashes: Sequence[str]) -> dict[str, str]:
        """``content_hash -> payload`` for the hashes held; unknown hashes are absent."""
        ...

    def put_many(self, prompt_version: str, model_id: str, payloads: Mapping[str, str]) -> None:
        """Store (or replace) ``content_hash -> payload``; one transaction."""
        ...


@runtime_checkable
class SyncState(Protocol):
    """What each connector's last sync left (``backend/connectors``): its items and its runs, in
    the store, so any worker can resume a sync another one started."""

    def sync_items(self, connector: str) -> dict[str, SyncedItem]:
        """``item_id -> SyncedItem`` as the last successful sync of ``connector`` left them."""
        ...

    def save_sync(self, connector: str, upsert: Sequence[SyncedItem], delete: Sequence[str],
                  run: Mapping[str, Any]) -> None:
        """Write the items a sync ingested, drop the ones it deleted and record its run: one transaction."""
        ...

    def record_sync_run(self, connector: str, run: Mapping[str, Any]) -> None:
        """Record a run that changed no item (refused, failed, up to date)."""
        ...

    def sync_runs(self, connector: str | None = None, limit: int = 20) -> list[dict[str, Any]]:
        """The newest runs first (``connector`` None: every connector's)."""
        ...

    def forget_sync(self, connector: str) -> int:
        """Drop a connector's items and runs (``rag connector remove``); the items dropped."""
        ...


@runtime_checkable
class Closeable(Protocol):
    """Something holding connections or files until ``close``; ``close`` is idempotent."""

    def close(self) -> None: ...


class CombinedStore(VectorStore, IndexAdmin, InteractionLog, Protocol):
    """One object answering for the vector, admin and interaction ports at once (the SQLite
    facade, Oracle's store): what ``Stores.of`` wraps."""


@dataclass(frozen=True)
class Stores:
    """The store ports one configured backend provides, each its own object, so a caller asks
    for the port it uses (``stores.admin``, ``stores.vectors``) instead of handing one store in
    two or three times. ``conversations`` and ``enrichment_cache`` are None where the backend
    keeps none. ``owner`` is what holds the shared connection(s): ``close`` closes it alone;
    without one, ``close`` closes each distinct port object that is ``Closeable``, once."""

    vectors: VectorStore
    admin: IndexAdmin
    interactions: InteractionLog
    conversations: ConversationLog | None = None
    enrichment_cache: EnrichmentCache | None = None
    owner: Closeable | None = None
    audit: AuditLog | None = None
    quotas: QuotaCounter | None = None
    sync_state: SyncState | None = None

    @classmethod
    def of(cls, store: CombinedStore, *, enrichment_cache: EnrichmentCache | None = None) -> Stores:
        """Every port served by one object (tests, and adapters not split by port);
        ``conversations`` / ``enrichment_cache`` are the object itself only when it implements
        that port (else None, or the ``enrichment_cache`` given)."""
        conversations = store if isinstance(store, ConversationLog) else None
        if enrichment_cache is None and isinstance(store, EnrichmentCache):
            enrichment_cache = store
        return cls(vectors=store, admin=store, interactions=store, conversations=conversations,
                   enrichment_cache=enrichment_cache, owner=store if isinstance(store, Closeable) else None,
                   audit=store if isinstance(store, AuditLog) else None,
                   quotas=store if isinstance(store, QuotaCounter) else None,
                   sync_state=store if isinstance(store, SyncState) else None)

    def close(self) -> None:
        if self.owner is not None:
            self.owner.close()
            return
        seen: set[int] = set()
        for port in (self.vectors, self.admin, self.interactions, self.conversations, self.enrichment_cache,
                     self.audit, self.quotas, self.sync_state):
            if port is not None and id(port) not in seen and isinstance(port, Closeable):
                seen.add(id(port))
                port.close()
