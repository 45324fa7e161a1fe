"""The local model as one text-in / vector-out ONNX graph, for ``DBMS_VECTOR.LOAD_ONNX_MODEL``.

Oracle embeds inside SQL (``VECTOR_EMBEDDING(m USING :q AS data)``) only with a model whose
graph holds the whole pipeline: "In-database embedding models must include tokenization and
post-processing" (Oracle, *ONNX Pipeline Models: Text Embedding*). Its default metadata names
one string input ``input`` (mapped to ``DATA``) and one output ``embedding`` (Oracle,
*LOAD_ONNX_MODEL Procedure*). This module builds that graph from installed packages only:

* tokenizer: onnxruntime-extensions' ``BertTokenizer`` op (``gen_processing_models``) with the
  packaged vocabulary. Its attributes come from ``tokenizer.json``'s ``BertNormalizer``, because
  the generator reads ``strip_accents`` from ``init_kwargs`` and leaves it 0 where Hugging Face
  strips accents whenever it lowercases (``strip_accents: null``): accented text then embeds far
  from the local model's vector (docs/ORACLE.md, "In-database query embeddings");
* truncation: the op's ``max_length`` counts ``[CLS]`` and ``[SEP]`` (it keeps ``max_length - 2``
  word pieces and then adds both), like sentence-transformers' ``max_seq_length``;
* the encoder: the same fp32 export the ONNX embedder runs (``onnx_export``), batch of one;
* mean pooling over the attention mask and L2 normalisation, in standard ONNX ops.

Only the export needs onnxruntime-extensions (the ``oracle-onnx`` extra); the database runs
the graph with its own copy of the operators.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np
import structlog

from backend.common.errors import ConfigError
from backend.core.ports import Embedder
from backend.providers.local.onnx_export import OPSET, _atomic_write, cache_key, ensure_export, weights_sha256

log = structlog.get_logger(__name__)

#: Bump when the text graph (tokenizer attributes, glue, pooling) changes.
TEXT_MODEL_VERSION = "1"
INPUT_NAME = "input"
OUTPUT_NAME = "embedding"
#: Oracle's in-database ONNX Runtime (1.15.1 on 23ai) reads IR versions up to 9.
IR_VERSION = 8
CONTRIB_DOMAIN = "ai.onnx.contrib"


@dataclass(frozen=True)
class TextModel:
    """Where the text-in / vector-out graph lives, and the metadata Oracle loads it with."""

    path: Path
    key: str
    max_length: int
    exported: bool


def oracle_metadata() -> dict[str, Any]:
    """Pure: the ``metadata`` JSON for ``DBMS_VECTOR.LOAD_ONNX_MODEL`` (Oracle's documented
    default for an embedding model: one string input mapped to ``DATA``, output ``embedding``)."""
    return {"function": "embedding", "embeddingOutput": OUTPUT_NAME, "input": {INPUT_NAME: ["DATA"]}}


def tokenizer_attributes(tokenizer_json: Mapping[str, Any], max_length: int) -> dict[str, Any]:
    """Pure: the ``BertTokenizer`` op attributes that reproduce ``tokenizer.json``.

    Hugging Face's ``BertNormalizer`` strips accents when ``strip_accents`` is true, or when it
    is null and ``lowercase`` is true; the op needs the resolved flag. Refuses a tokenizer the
    op cannot reproduce (not WordPiece behind a ``BertNormalizer``)."""
    normalizer = tokenizer_json.get("normalizer") or {}
    model = tokenizer_json.get("model") or {}
    if normalizer.get("type") != "BertNormalizer" or model.get("type") != "WordPiece":
        raise ConfigError(f"tokenizer.json: the in-database export needs a BERT WordPiece tokenizer with a "
                          f"BertNormalizer; found normalizer {normalizer.get('type')!r}, model {model.get('type')!r}")
    if max_length < 3:
        raise ConfigError(f"max_seq_length {max_length}: expected at least 3 ([CLS], one token, [SEP])")
    lowercase = bool(normalizer.get("lowercase", True))
    strip = normalizer.get("strip_accents")
    if not lowercase or strip is False:
        # database_text reproduces the uncased normalizer only; a cased model would need its own
        raise ConfigError("tokenizer.json: the in-database export supports uncased BERT tokenizers (lowercase, "
                          f"accents stripped); found lowercase={lowercase}, strip_accents={strip}")
    return {
        "do_lower_case": 1,
        "strip_accents": 1,
        "tokenize_chinese_chars": int(bool(normalizer.get("handle_chinese_chars", True))),
        "unk_token": str(model.get("unk_token", "[UNK]")),
        "suffix_indicator": str(model.get("continuing_subword_prefix", "##")),
        "max_length": int(max_length),
    }


def database_text(text: str) -> str:
    """Pure: ``text`` as the uncased BERT normalizer leaves it (NFD, combining marks dropped, then
    lowercased), bound for ``VECTOR_EMBEDDING`` instead of the raw text.

    The ``BertTokenizer`` op strips accents one character at a time from a fixed table and lowercases
    fewer scripts than Python: Greek capitals, Hangul syllables (NFD splits them into jamo, which is
    what the vocabulary holds) and kana with (semi-)voiced marks come out as other word pieces or
    ``[UNK]`` (cosine 0.30-0.85 against the local model). On text normalised here first, the op has
    nothing left to strip or lowercase, and the graph matches the local model on them too
    (tests/providers/test_onnx_text_model.py). Idempotent."""
    import unicodedata

    decomposed = unicodedata.normalize("NFD", text)
    return "".join(ch for ch in decomposed if unicodedata.category(ch) != "Mn").lower()


def _tokenizer_graph(model_dir: Path, attrs: Mapping[str, Any]) -> Any:
    """The ``BertTokenizer`` graph (string ``[1]`` -> ids, type ids, mask), from installed files."""
    try:
        from onnxruntime_extensions import gen_processing_models
    except ImportError as exc:
        raise ConfigError("the in-database model export needs onnxruntime-extensions; "
                          "pip install -e '.[oracle-onnx]'") from exc
    from transformers import AutoTokenizer

    hf = AutoTokenizer.from_pretrained(str(model_dir), local_files_only=True)
    pre, _ = gen_processing_models(hf, pre_kwargs=dict(attrs))
    return pre


def _build(model_dir: Path, encoder_path: Path, max_length: int, out: Path) -> None:
    import onnx
    from onnx import TensorProto, helper

    attrs = tokenizer_attributes(json.loads((model_dir / "tokenizer.json").read_text(encoding="utf-8")), max_length)
    tok = _tokenizer_graph(model_dir, attrs)
    encoder = onnx.load(str(encoder_path))
    tok_node = next(n for n in tok.graph.node if n.domain == CONTRIB_DOMAIN)
    # the op's outputs are input_ids, token_type_ids, attention_mask(, offset_mapping): renamed
    # so they cannot clash with the encoder's graph inputs of the same names
    ids, types, mask = (f"tok_{name}" for name in ("input_ids", "token_type_ids", "attention_mask"))
    tokenize = helper.make_node(tok_node.op_type, [INPUT_NAME], [ids, types, mask], name="tokenize",
                                domain=CONTRIB_DOMAIN)
    tokenize.attribute.extend(tok_node.attribute)
    zero = helper.make_tensor("axis0", TensorProto.INT64, [1], [0])
    one = helper.make_tensor("axis1", TensorProto.INT64, [1], [1])
    eps_sum = helper.make_tensor("eps_sum", TensorProto.FLOAT, [], [1e-9])
    eps_norm = helper.make_tensor("eps_norm", TensorProto.FLOAT, [], [1e-12])
    glue = [
        helper.make_node("Unsqueeze", [ids, "axis0"], ["input_ids"], name="batch_ids"),
        helper.make_node("Unsqueeze", [types, "axis0"], ["token_type_ids"], name="batch_types"),
        helper.make_node("Unsqueeze", [mask, "axis0"], ["attention_mask"], name="batch_mask"),
    ]
    hidden = encoder.graph.output[0].name
    post = [
        helper.make_node("Cast", ["attention_mask"], ["mask_f"], to=TensorProto.FLOAT, name="mask_float"),
        helper.make_node("Unsqueeze", ["mask_f", "axis2"], ["mask_3d"], name="mask_3d"),
        helper.make_node("Mul", [hidden, "mask_3d"], ["masked"], name="masked"),
        helper.make_node("ReduceSum", ["masked", "axis1"], ["summed"], keepdims=0, name="sum_tokens"),
        helper.make_node("ReduceSum", ["mask_3d", "axis1"], ["counted"], keepdims=0, name="count_tokens"),
        helper.make_node("Max", ["counted", "eps_sum"], ["counted_safe"], name="count_floor"),
        helper.make_node("Div", ["summed", "counted_safe"], ["pooled"], name="mean_pool"),
        helper.make_node("Mul", ["pooled", "pooled"], ["squared"], name="square"),
        helper.make_node("ReduceSum", ["squared", "axis1"], ["sumsq"], keepdims=1, name="sum_squares"),
        helper.make_node("Sqrt", ["sumsq"], ["norm"], name="norm"),
        helper.make_node("Max", ["norm", "eps_norm"], ["norm_safe"], name="norm_floor"),
        helper.make_node("Div", ["pooled", "norm_safe"], [OUTPUT_NAME], name="l2_normalize"),
    ]
    two = helper.make_tensor("axis2", TensorProto.INT64, [1], [2])
    graph = helper.make_graph(
        [tokenize, *glue, *encoder.graph.node, *post], "text_embedding",
        [helper.make_tensor_value_info(INPUT_NAME, TensorProto.STRING, [1])],
        [helper.make_tensor_value_info(OUTPUT_NAME, TensorProto.FLOAT, [1, None])],
        initializer=[*encoder.graph.initializer, zero, one, two, eps_sum, eps_norm],
    )
    model = helper.make_model(graph, producer_name="oracle-rag-runtime", opset_imports=[
        helper.make_opsetid("", OPSET), helper.make_opsetid(CONTRIB_DOMAIN, 1)])
    model.ir_version = IR_VERSION
    onnx.checker.check_model(model)
    with out.open("wb") as fh:
        fh.write(model.SerializeToString())


def ensure_text_model(model_dir: Path, cache_dir: Path, max_length: int) -> TextModel:
    """The text-in / vector-out graph for this model and ``max_length``, built if the cache lacks
    it (beside the fp32 export it reuses, keyed by the weights and ``TEXT_MODEL_VERSION``)."""
    encoder = ensure_export(model_dir, cache_dir, "none")
    key = cache_key(weights_sha256(model_dir), f"text{TEXT_MODEL_VERSION}-{max_length}")
    target = cache_dir / key / "model-text.onnx"
    if target.is_file():
        return TextModel(target, key, max_length, exported=False)
    started = time.perf_counter()
    try:
        _atomic_write(target, lambda tmp: _build(model_dir, encoder.path, max_length, tmp))
    except OSError as exc:
        raise ConfigError(f"embeddings.local.onnx_cache_dir {cache_dir}: cannot write the text model ({exc})") from exc
    log.info("embedder.text_model_exported", path=str(target), key=key, max_length=max_length,
             seconds=round(time.perf_counter() - started, 1))
    return TextModel(target, key, max_length, exported=True)


def text_session(path: Path) -> Any:
    """An ONNX Runtime session over the text graph with onnxruntime-extensions' operators (the
    offline stand-in for the database's runtime)."""
    import onnxruntime as ort

    try:
        from onnxruntime_extensions import get_library_path
    except ImportError as exc:
        raise ConfigError("running the in-database model offline needs onnxruntime-extensions; "
                          "pip install -e '.[oracle-onnx]'") from exc
    opts = ort.SessionOptions()
    opts.register_custom_ops_library(get_library_path())
    opts.log_severity_level = 3
    return ort.InferenceSession(str(path), opts, providers=["CPUExecutionProvider"])


def embed_texts(session: Any, texts: Sequence[str]) -> np.ndarray:
    """Each text through the graph (one string per run, as ``VECTOR_EMBEDDING`` calls it)."""
    rows = [session.run([OUTPUT_NAME], {INPUT_NAME: np.array([t], dtype=object)})[0][0] for t in texts]
    return np.asarray(rows, dtype=np.float32).reshape(len(texts), -1)


#: What ``rag oracle load-model`` proves the graph on before it loads it, and what the tests prove it
#: on: English, accented Latin, non-Latin scripts (Cyrillic, Greek, Arabic, CJK, kana with voiced
#: marks, Hangul), symbols and an over-length text (past ``max_seq_length`` word pieces).
PROOF_TEXTS = (
    "How many days of annual leave do employees get?",
    "Café crème brûlée à la française: naïve résumé from Zürich, Ångström, Straße über Größe",
    "Привет, как дела? Москва и Санкт-Петербург",
    "Ελληνικά κείμενα για τη σοφία",
    "مرحبا بالعالم",
    "東京都の天気は晴れです",
    "カタカナ ガギグ パピプ テスト",
    "한국어 문장입니다",
    "emoji 🙂 and math ∑ x² — “quotes” … ﬁnance ① ＡＢＣ",
    "Field engineers wear safety shoes with steel toe caps on every site visit; " * 40,
)


def offline_parity(session: Any, embedder: Embedder, texts: Sequence[str]) -> np.ndarray:
    """Per text, the cosine between the graph's vector (on ``database_text``, as
    the database is sent it) and ``embedder``'s query vector."""
    graph = embed_texts(session, [database_text(t) for t in texts])
    local = np.asarray(embedder.embed_queries(list(texts)), dtype=np.float32)
    norms = np.linalg.norm(graph, axis=1) * np.linalg.norm(local, axis=1)
    return np.einsum("ij,ij->i", graph, local) / np.where(norms > 0, norms, 1.0)
