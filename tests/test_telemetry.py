"""The telemetry settings and helpers without a model: secrets from the environment only, bad
values named, attributes held to the declared list, and docs/OBSERVABILITY.md naming every
attribute and span the code can emit."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from backend.common import telemetry
from backend.common.config import ChatProviderSettings, load_settings
from backend.common.errors import ConfigError
from backend.core.services.chat_service import _generate_explained
from backend.core.types import ChatRequest, Chunk
from backend.providers.openai_compat.chat import OpenAICompatChatModel
from tests.local_http import LocalHttpServer, json_reply
from tests.telemetry_checks import assert_no_text, in_memory_telemetry

REPO = Path(__file__).resolve().parents[1]
DOC = REPO / "docs" / "OBSERVABILITY.md"


def _config(tmp_path: Path, telemetry_section: dict[str, object]) -> Path:
    path = tmp_path / "rag.yaml"
    path.write_text(yaml.safe_dump({"telemetry": telemetry_section}), encoding="utf-8")
    return path


def test_off_by_default_and_on_from_the_environment(tmp_path: Path) -> None:
    assert load_settings(_config(tmp_path, {}), env={}).telemetry.enabled is False
    settings = load_settings(_config(tmp_path, {}), env={
        "RAG_TELEMETRY__ENABLED": "true", "RAG_TELEMETRY__ENDPOINT": "https://otel.example.net:4318/",
        "RAG_TELEMETRY__HEADERS": "api-key=s%2Cecret,x-team=rag", "RAG_TELEMETRY__SAMPLE_RATIO": "0.25"})
    t = settings.telemetry
    assert (t.enabled, t.endpoint, t.sample_ratio) == (True, "https://otel.example.net:4318", 0.25)
    assert t.header_map() == {"api-key": "s,ecret", "x-team": "rag"}
    assert "s%2Cecret" not in repr(t)


def test_headers_in_a_config_file_are_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="telemetry.headers: secrets come from the environment only") as info:
        load_settings(_config(tmp_path, {"headers": "api-key=committed"}), env={})
    assert "committed" not in info.value.user_message


@pytest.mark.parametrize(("env", "field", "expected"), [
    ({"RAG_TELEMETRY__ENDPOINT": "collector:4318"}, "telemetry.endpoint", "expected an http(s) URL"),
    ({"RAG_TELEMETRY__SAMPLE_RATIO": "1.5"}, "telemetry.sample_ratio", "less than or equal to 1"),
    ({"RAG_TELEMETRY__PROTOCOL": "grpc"}, "telemetry.protocol", "http/protobuf"),
    ({"RAG_TELEMETRY__HEADERS": "api-key-without-value"}, "telemetry.headers", "pair 1 is not key=value"),
])
def test_bad_values_name_the_field_and_what_was_expected(tmp_path: Path, env: dict[str, str], field: str,
                                                         expected: str) -> None:
    with pytest.raises(ConfigError) as info:
        load_settings(_config(tmp_path, {}), env=env)
    message = info.value.user_message
    assert field in message and expected in message
    assert "api-key-without-value" not in message  # a malformed secret is never quoted


def test_attributes_outside_the_declared_list_or_too_long_are_dropped() -> None:
    cleaned = telemetry.clean({"rag.k": 5, "rag.mode": None, "question": "annual leave?", "rag.version": "V" * 201,
                               "rag.strategy": "dense"})
    assert cleaned == {"rag.k": 5, "rag.strategy": "dense"}


def test_traced_calls_through_when_off_and_records_when_on() -> None:
    calls: list[int] = []

    @telemetry.traced("rag.write", attributes=lambda n: {"rag.documents": n}, result=lambda n: {"rag.chunks": n * 2})
    def stage(n: int) -> int:
        calls.append(n)
        return n * 2

    assert stage(3) == 6
    with in_memory_telemetry() as (exporter, _):
        assert stage(4) == 8
        with pytest.raises(KeyError):
            with telemetry.span("rag.decide"):
                raise KeyError("the question text would be here")
    first, failed = exporter.get_finished_spans()
    assert calls == [3, 4]
    assert (first.name, dict(first.attributes or {})) == ("rag.write", {"rag.documents": 4, "rag.chunks": 16})
    assert (failed.status.description, failed.attributes["error.type"], failed.events) == ("KeyError", "KeyError", ())


def test_the_guide_names_every_attribute_and_every_span_the_code_emits() -> None:
    text = DOC.read_text(encoding="utf-8")
    missing = [key for key in telemetry.ATTRIBUTES if key not in text]
    assert not missing, f"docs/OBSERVABILITY.md does not name {missing}"
    names = set()
    for path in (REPO / "backend").rglob("*.py"):
        names |= set(re.findall(r"(?:span|traced)\(\s*\"(rag\.[a-z_.]+)\"", path.read_text(encoding="utf-8")))
        names |= set(re.findall(r"_dense_span\(", path.read_text(encoding="utf-8")) and {"rag.dense"})
    assert {"rag.chat", "rag.search", "rag.embed", "rag.lexical", "rag.dense", "rag.fuse", "rag.rerank", "rag.decide",
            "rag.answer", "rag.ingest", "rag.load", "rag.sanitize", "rag.chunk", "rag.write", "rag.evaluate",
            "rag.promote"} <= names
    assert not [n for n in names if n not in text], "docs/OBSERVABILITY.md misses a span name"


class _Completions(LocalHttpServer):
    """An OpenAI-compatible endpoint on 127.0.0.1 that reports token usage."""

    def respond(self, path: str, headers: dict[str, str], body: bytes) -> tuple[int, str, bytes]:
        return json_reply(200, {"id": "c1", "model": "served-model-7b", "usage": {"prompt_tokens": 42,
                                                                                 "completion_tokens": 7},
                                "choices": [{"index": 0, "message": {"role": "assistant",
                                                                     "content": "Twenty-five days [1]."}}]})


def test_an_llm_answer_span_carries_the_genai_model_and_token_usage_not_the_prompt() -> None:
    passage = Chunk("hr#0", "hr", "Full-time employees receive twenty-five days of paid annual leave.", "hr.md", 0)
    question = "How many days of annual leave do full-time employees get?"
    with _Completions().running() as server, in_memory_telemetry() as (exporter, _):
        model = OpenAICompatChatModel(ChatProviderSettings.model_validate(
            {"provider": "openai_compat", "base_url": server.url, "model": "local-llm", "timeout_s": 5}))
        text, _ = _generate_explained(model, ChatRequest("rag", "Answer from the passages.", question, (passage,)))
        [span] = exporter.get_finished_spans()
    assert text == "Twenty-five days [1]."
    assert dict(span.attributes or {}) == {
        "gen_ai.operation.name": "chat", "gen_ai.provider.name": "openai_compat", "gen_ai.system": "openai_compat",
        "gen_ai.request.model": "local-llm", "gen_ai.response.model": "served-model-7b",
        "gen_ai.usage.input_tokens": 42, "gen_ai.usage.output_tokens": 7, "rag.mode": "rag", "rag.context_chunks": 1}
    assert_no_text([span], [question, passage.text, text])


def test_a_trace_the_sampler_drops_records_none_of_its_stages() -> None:
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    from backend.common.config import TelemetrySettings
    from backend.common.telemetry_setup import configure, shutdown

    exporter = InMemorySpanExporter()
    configure(TelemetrySettings(enabled=True, sample_ratio=0.0), span_exporter=exporter, batch=False, force=True)
    try:
        with telemetry.server_span("POST /chat") as root:
            assert not root.is_recording()
            with telemetry.span("rag.dense", {"rag.k": 5}) as stage:
                assert stage is None  # skipped: no SDK span made under a dropped trace
    finally:
        shutdown()
    assert exporter.get_finished_spans() == ()
