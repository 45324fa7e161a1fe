"""The runtime's own value types; ports speak these, never driver types."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any, Literal, Mapping, Sequence

import numpy as np
import numpy.typing as npt

Vector = npt.NDArray[np.float32]
Distance = Literal["cosine", "dot", "euclidean"]


def content_hash(text: str) -> str:
    """Stable hash of a text: what decides whether something must be embedded again."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class Chunk:
    """One retrievable unit of text.

    ``text`` is what is stored and returned. ``embed_text`` (if set) is what is
    embedded instead, e.g. with a content-type template or a figure description;
    it is never stored. ``metadata`` holds ``tags``, ``lang``, figure links,
    ``updated_at`` and the manifest's free metadata, all JSON-serialisable.
    """

    chunk_id: str
    doc_id: str
    text: str
    source: str
    chunk_index: int
    chunk_type: str = "text"
    metadata: Mapping[str, Any] = field(default_factory=dict)
    content_hash: str = ""
    embed_text: str | None = None

    def __post_init__(self) -> None:
        if not self.content_hash:
            object.__setattr__(self, "content_hash", content_hash(self.text))

    @property
    def text_to_embed(self) -> str:
        return self.embed_text if self.embed_text is not None else self.text


@dataclass(frozen=True)
class HypotheticalQuestion:
    """A question an enricher says its parent chunk answers (seed 001, HyDE). Embedded
    with the chunk model into the version's question table; search matches the user's
    question against these and returns the parent chunk."""

    question_id: str
    chunk_id: str
    text: str


SummaryKind = Literal["page_summary", "artifact_summary"]


@dataclass(frozen=True)
class Summary:
    """A page or whole-document ("artifact") summary (seed 002), embedded with the chunk
    model into the version's summary table. ``page`` is the PDF page number or the
    heading path ("Leave > Carry-over") for a page summary, None for an artifact summary;
    ``chunk_ids`` are the chunks it covers."""

    summary_id: str
    doc_id: str
    kind: SummaryKind
    text: str
    page: str | None = None
    chunk_ids: tuple[str, ...] = ()


@dataclass(frozen=True)
class DocumentWrite:
    """All chunks of one document, written atomically: they replace whatever the
    version held for ``doc_id``. ``doc_hash`` is the source's content hash, used to
    skip unchanged documents on the next run.

    Enrichment (optional) travels with the document and is replaced with it in the
    same transaction: ``questions`` with ``question_vectors`` (one row each) and
    ``summaries`` with ``summary_vectors``."""

    doc_id: str
    doc_hash: str
    chunks: Sequence[Chunk]
    vectors: Vector  # shape (len(chunks), dimension)
    questions: Sequence[HypotheticalQuestion] = ()
    question_vectors: Vector | None = None
    summaries: Sequence[Summary] = ()
    summary_vectors: Vector | None = None


@dataclass(frozen=True)
class QuestionHit:
    """A parent chunk found through its best-matching hypothetical question (HyDE).
    ``score`` is the question's similarity to the query (the version's distance, higher
    is better), not the chunk's: search services look the chunk's own similarity up."""

    chunk: Chunk
    score: float
    rank: int
    question_id: str
    question: str


@dataclass(frozen=True)
class SummaryHit:
    """A page or document summary and its similarity to the query (higher is better)."""

    summary: Summary
    score: float
    rank: int


@dataclass(frozen=True)
class QuestionResult:
    target: str
    version: str
    hits: tuple[QuestionHit, ...]


@dataclass(frozen=True)
class SummaryResult:
    target: str
    version: str
    hits: tuple[SummaryHit, ...]


@dataclass(frozen=True)
class ScoredChunk:
    """A search hit. ``score`` is the store's raw similarity for the version's
    distance: cosine similarity (1 - cosine distance), dot product, or negative
    euclidean distance for ``euclidean``; higher is always better. ``rank`` is 1-based."""

    chunk: Chunk
    score: float
    rank: int
    distance: Distance = "cosine"
    lexical_score: float | None = None
    fused_score: float | None = None
    #: set when a reranker re-scored the hit (its own scale; only the order uses it)
    rerank_score: float | None = None
    rank_before_rerank: int | None = None
    #: HyDE: the hypothetical question of the chunk that matched the query best
    matched_question: str | None = None


@dataclass(frozen=True)
class SearchResult:
    """Hits plus where they came from (``target`` as asked, ``version`` resolved)."""

    target: str
    version: str
    hits: tuple[ScoredChunk, ...]
    strategy: str = "dense"
    #: how the dense side was searched (embedded store: ``{"kind": "hnsw"|"exact", "reason": ...}``)
    dense_index: Mapping[str, Any] | None = None


@dataclass(frozen=True)
class Candidates:
    """A search's ``(chunk_id, score)`` pairs, best first, without the chunks themselves:
    fusion ranks a few hundred candidates per side but shows only its final few, so it
    fetches rows (``VectorStore.fetch_chunks``) for those alone. ``score`` is what the search
    ordered by (dense similarity, or the lexical score); ``distance`` is the version's."""

    target: str
    version: str
    hits: tuple[tuple[str, float], ...]
    distance: Distance = "cosine"
    #: how the dense side was searched (embedded store: ``{"kind": "hnsw"|"exact", "reason": ...}``)
    dense_index: Mapping[str, Any] | None = None


class QueryVector:
    """A query embedding and the model stamp that made it; stores refuse a mismatch.

    ``accepts``: other stamps declared interchangeable with ``model``
    (``embeddings.local.compatible_runtimes``, see ``backend.core.model_stamp``).

    The vector may be **deferred** (``QueryVector.deferred``): made by ``compute`` the first time
    ``values`` is read, at most once. A store that embeds the question itself (Oracle's
    ``VECTOR_EMBEDDING`` for a version whose parity check passed, ``store.oracle.query_embedding``)
    reads ``text`` instead and never ``values``, so the question is embedded once, on the database,
    not also here (review 4, N5). ``dimension`` is known without computing."""

    __slots__ = ("_values", "_compute", "_lock", "_dimension", "model", "accepts", "text")

    def __init__(self, values: Vector | None, model: str, accepts: frozenset[str] = frozenset(),
                 text: str | None = None) -> None:
        self._values = values
        self._compute: Any = None
        self._lock: Any = None
        self._dimension: int | None = None
        self.model = model
        self.accepts = accepts
        #: the text that was embedded (prefix applied), for a store that can embed it itself
        #: (Oracle's ``VECTOR_EMBEDDING``, ``store.oracle.query_embedding``); None when unknown
        self.text = text

    @classmethod
    def deferred(cls, compute: Any, model: str, dimension: int, accepts: frozenset[str] = frozenset(),
                 text: str | None = None) -> QueryVector:
        """A query vector ``compute()`` makes when ``values`` is first read (thread-safe, once)."""
        import threading

        query = cls(None, model, accepts, text)
        query._compute, query._lock, query._dimension = compute, threading.Lock(), int(dimension)
        return query

    @property
    def values(self) -> Vector:
        if self._values is None:
            with self._lock:
                if self._values is None:
                    self._values = self._compute()
        assert self._values is not None
        return self._values

    @property
    def computed(self) -> bool:
        """Whether the vector was made here (a deferred one that a store embedded itself was not)."""
        return self._values is not None

    def moved(self, values: Vector) -> QueryVector:
        """Another vector for the same stamp, no longer the embedding of ``text`` (dense feedback):
        a store must bind it, never re-embed the text."""
        return QueryVector(values, self.model, self.accepts)

    @property
    def dimension(self) -> int:
        if self._values is None and self._dimension is not None:
            return self._dimension
        return int(self.values.shape[-1])

    def fits(self, model: str, dimension: int) -> bool:
        """Whether a version stamped ``model`` with ``dimension`` may be searched with this vector."""
        return (self.model == model or model in self.accepts) and self.dimension == dimension

    def __repr__(self) -> str:
        return f"QueryVector(model={self.model!r}, dimension={self.dimension}, computed={self.computed})"


@dataclass(frozen=True)
class FieldFilter:
    """One metadata condition; a list of them is ANDed.

    ``any_of``: the field (scalar or list) holds at least one of the values.
    ``all_of``: the field (a list) holds every value. ``gte``/``lte``: ISO date
    strings compared lexically (ISO-8601 sorts correctly).
    """

    field: str
    any_of: tuple[str, ...] = ()
    all_of: tuple[str, ...] = ()
    gte: str | None = None
    lte: str | None = None


#: The metadata list every chunk of an access-controlled document carries: its ACL as
#: labels (``public``, ``user:<name>``, ``group:<name>``). Reserved: a manifest's free
#: metadata may not use it. Stores index it with every other metadata list.
ACL_FIELD = "rag_acl"
PUBLIC_LABEL = "public"


@dataclass(frozen=True)
class Visibility:
    """What one reader may see, as ACL labels; stores apply it inside the search query.

    A chunk is visible iff its ``rag_acl`` list shares a label with ``labels``. A
    chunk with no ``rag_acl`` (or an empty one) is visible to nobody, so a document
    ingested without an ACL is denied unless ingest stamped the configured default.
    ``public`` is always among the labels. ``principal`` is the name for logs and
    audit only; it takes no part in matching."""

    principal: str
    labels: tuple[str, ...]

    def __post_init__(self) -> None:
        labels = tuple(dict.fromkeys((PUBLIC_LABEL, *self.labels)))
        object.__setattr__(self, "labels", labels)

    @classmethod
    def of(cls, principal: str, groups: Sequence[str] = ()) -> "Visibility":
        """The labels a principal holds: ``public``, ``user:<principal>``, ``group:<g>`` per group."""
        return cls(principal, (f"user:{principal}", *(f"group:{g}" for g in groups)))

    def as_filter(self) -> FieldFilter:
        """The visibility as a metadata condition (``rag_acl`` holds any of the labels);
        never empty, because ``public`` is always a label."""
        return FieldFilter(ACL_FIELD, any_of=self.labels)


@dataclass(frozen=True)
class LockHolder:
    """Who holds the writer lock of a series: what the refusal of a second run names, so
    an operator can find the run (or see that it is gone) without guessing."""

    command: str
    pid: int
    host: str
    #: UTC ISO time the lock was taken
    since: str

    def describe(self) -> str:
        return f"{self.command} (pid {self.pid} on {self.host}, since {self.since})"

    def to_json(self) -> str:
        import json

        return json.dumps({"command": self.command, "pid": self.pid, "host": self.host, "since": self.since})

    @classmethod
    def from_json(cls, text: str | None) -> "LockHolder | None":
        """None for an empty or unreadable record (a holder that has not written it yet)."""
        import json

        try:
            data = json.loads(text or "")
            return cls(str(data["command"]), int(data["pid"]), str(data["host"]), str(data["since"]))
        except (ValueError, KeyError, TypeError):
            return None


@dataclass(frozen=True)
class VersionSpec:
    """What a new version is built with. ``parent`` names the version it starts
    from: creating the version copies every row of ``parent`` (chunks, vectors,
    document hashes) in the same step, so unchanged documents are carried forward
    without re-embedding and the next ingest only rewrites what changed."""

    name: str
    model: str
    dimension: int
    distance: Distance
    profile: str | None = None
    parent: str | None = None
    #: the retrieval settings the version is served with (``retrieval_stamp``); None: the live config
    retrieval: Mapping[str, Any] | None = None


@dataclass(frozen=True)
class IndexVersion:
    """A physical table and its provenance."""

    name: str
    model: str
    dimension: int
    distance: Distance
    created_at: str
    chunk_count: int = 0
    doc_count: int = 0
    profile: str | None = None
    evaluation: Mapping[str, Any] | None = None
    #: bumped by every write that changes the version's rows; an evaluation records
    #: the generation it saw, so a later change makes it stale
    generation: int = 0
    parent: str | None = None
    #: approximate bytes of the version's rows (text, metadata, vectors)
    size_bytes: int = 0
    #: the retrieval settings stamped at ingest (``retrieval_stamp``); None for a version made
    #: before stamps existed, which is served with the live configuration
    retrieval: Mapping[str, Any] | None = None

    @property
    def evaluation_current(self) -> bool:
        """True when the recorded evaluation was made on the version's present content."""
        return bool(self.evaluation) and (self.evaluation or {}).get("generation") == self.generation


@dataclass(frozen=True)
class StoredDocument:
    """One document as a version holds it: what the admin console lists (no text)."""

    doc_id: str
    doc_hash: str
    source: str
    chunks: int


@dataclass(frozen=True)
class AliasChange:
    alias: str
    version: str
    previous: str | None
    changed_at: str
    reason: str = ""
    forced: bool = False


@dataclass(frozen=True)
class Interaction:
    """One /chat request as recorded for usage analytics (no raw chunk text)."""

    question: str
    resp_mode: str
    used_llm: str
    domain: str | None
    retrieval_target: str
    latency_ms: float
    decision_explain: Mapping[str, Any]
    conversation_id: str | None = None
    created_at: str = ""
    #: who asked (the principal's name, never the API key or token); None without access control
    principal: str | None = None


@dataclass(frozen=True)
class AuditEvent:
    """One line of the audit trail: who did what, to which knowledge base and version, when, with
    what outcome, under which request id. ``detail`` is small JSON (status, tool arguments such as
    ``top_k``); never a credential, and a user's question only where ``audit.include_questions``."""

    action: str
    outcome: str
    principal: str | None = None
    knowledge_base: str | None = None
    version: str | None = None
    request_id: str | None = None
    #: where it came in: ``http``, ``mcp-stdio``, ``mcp-http``
    surface: str = "http"
    detail: Mapping[str, Any] = field(default_factory=dict)
    created_at: str = ""
    #: the store's sequence number (set when read back)
    id: int | None = None


@dataclass(frozen=True)
class ConversationTurn:
    """One answered question of a conversation, as stored (question and effective query
    sanitized like interaction questions). ``interaction_id`` is what feedback refers to."""

    interaction_id: str
    conversation_id: str | None
    question: str
    effective_query: str
    mode: str
    version: str
    domain: str | None
    principal: str | None
    cited_doc_ids: tuple[str, ...] = ()
    created_at: str = ""


@dataclass(frozen=True)
class Feedback:
    """A reader's verdict on one answer, with what evaluation needs to turn it into a
    candidate golden query (the standalone query, the mode and version served, the cited documents)."""

    interaction_id: str
    rating: Literal["up", "down"]
    comment: str | None
    expected_answer: str | None
    query: str
    mode: str
    version: str
    domain: str | None
    principal: str | None
    cited_doc_ids: tuple[str, ...] = ()
    created_at: str = ""
    feedback_id: int | None = None


@dataclass(frozen=True)
class ChatMessage:
    role: Literal["system", "user", "assistant"]
    content: str


@dataclass(frozen=True)
class ChatRequest:
    """What an answer provider receives: the mode's instructions, the question and
    the numbered context passages (already filtered and budgeted)."""

    mode: Literal["rag", "hybrid", "fallback"]
    system_prompt: str
    question: str
    context: tuple[Chunk, ...] = ()
    #: the retrieval similarity of each context passage (same order), when the caller knows it
    similarities: tuple[float, ...] = ()
    #: the question's words the knowledge base never uses (an answerability feature), when known
    unknown_words: tuple[str, ...] = ()
