"""docs/SECURITY.md and docs/ACCESS_CONTROL.md against the code, wherever a claim can be checked
(issue 34): config keys and environment variables exist, table defaults equal the model's,
endpoints and CLI commands exist, quoted log events are emitted, named modules and files exist,
and the stores filter every table family the docs say the ACL covers. A failure names the doc,
the line and the claim, so drift is fixed where it happened."""

from __future__ import annotations

import fnmatch
import importlib
import inspect
import re
import typing
from typing import Any, Iterator

import pytest
from pydantic import BaseModel

from backend.common.config import Settings
from tests.conftest import REPO, make_settings

DOCS = ("docs/SECURITY.md", "docs/ACCESS_CONTROL.md")
TICKS = re.compile(r"`([^`\n]+)`")
SECTIONS = set(Settings.model_fields)
BACKEND_TEXT = "\n".join(p.read_text(encoding="utf-8") for p in (REPO / "backend").rglob("*.py"))
#: Every structlog event name the backend emits (``log.info("ingest.finished", ...)``).
LOG_EVENTS = set(re.findall(r"\blog\.(?:debug|info|warning|error|exception)\(\s*\"([a-z_]+\.[a-z_.]+)\"", BACKEND_TEXT))
LOG_NAMESPACES = {e.split(".")[0] for e in LOG_EVENTS}


def lines(doc: str) -> Iterator[tuple[int, str]]:
    """Numbered lines outside fenced code blocks (the YAML example is checked on its own)."""
    fenced = False
    for number, line in enumerate((REPO / doc).read_text(encoding="utf-8").splitlines(), 1):
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced:
            yield number, line


def ticks(doc: str) -> Iterator[tuple[int, str]]:
    for number, line in lines(doc):
        for token in TICKS.findall(line):
            yield number, token


def _unwrap(annotation: Any) -> Any:
    """The model or dict inside ``X | None``, ``Optional[X]``, ``dict[str, X]``."""
    for arg in typing.get_args(annotation) or ():
        if arg is not type(None) and (_is_model(arg) or typing.get_origin(arg) is dict):
            return arg
    return annotation


def _is_model(kind: Any) -> bool:
    return isinstance(kind, type) and issubclass(kind, BaseModel)


def resolve(key: str) -> tuple[Any, Any] | None:
    """``(model, field name)`` of a dotted config key (``*`` globs a field name, a dict takes any key),
    or None when no such key exists."""
    kind: Any = Settings
    parts = key.split(".")
    for i, part in enumerate(parts):
        kind = _unwrap(kind)
        if typing.get_origin(kind) is dict:
            kind = typing.get_args(kind)[1]
            continue
        if not _is_model(kind):
            return None
        names = fnmatch.filter(kind.model_fields, part) if "*" in part else [part] * (part in kind.model_fields)
        if not names:
            return None
        if i == len(parts) - 1:
            return kind, names[0]
        kind = kind.model_fields[names[0]].annotation
    return None


def is_config_key(token: str) -> bool:
    return bool(re.fullmatch(r"[a-z_]+(\.[a-z_*]+)+", token)) and token.split(".")[0] in SECTIONS


def default_of(key: str) -> Any:
    found = resolve(key)
    assert found is not None
    model, name = found
    return model.model_fields[name].default


def where(doc: str, number: int, claim: str) -> str:
    return f"{doc}:{number}: {claim}"


# --- config keys and environment variables --------------------------------------------------
@pytest.mark.parametrize("doc", DOCS)
def test_every_config_key_named_exists(doc: str) -> None:
    missing = []
    for number, token in ticks(doc):
        key, _, value = token.partition(": ")
        if is_config_key(key) and key not in LOG_EVENTS:
            found = resolve(key)
            if found is None:
                missing.append(where(doc, number, f"`{key}` is not a key of the Settings model"))
            elif value:  # `key: value` must be a value the key accepts
                try:
                    Settings.model_validate(_nested(key, yaml_value(value)))
                except Exception as exc:  # noqa: BLE001 - any validation failure is the drift
                    missing.append(where(doc, number, f"`{token}` is refused: {str(exc).splitlines()[0]}"))
    assert not missing, "\n".join(missing)


def yaml_value(text: str) -> Any:
    import yaml

    return yaml.safe_load(text)


def _nested(key: str, value: Any) -> dict[str, Any]:
    out: Any = value
    for part in reversed(key.split(".")):
        out = {part: out}
    return dict(out)


@pytest.mark.parametrize("doc", DOCS)
def test_every_environment_variable_named_maps_to_a_setting(doc: str) -> None:
    wrong = []
    for number, line in lines(doc):
        for name in re.findall(r"\bRAG_[A-Z0-9_]+\b", line):
            if name == "RAG_TEST_ORACLE_DSN":  # the test suite's switch, not a setting
                ok = any("RAG_TEST_ORACLE_DSN" in p.read_text(encoding="utf-8") for p in (REPO / "tests").rglob("*.py"))
            else:
                ok = "__" in name and resolve(name.removeprefix("RAG_").lower().replace("__", ".")) is not None
            if not ok:
                wrong.append(where(doc, number, f"{name} names no setting"))
    assert not wrong, "\n".join(wrong)


def test_the_access_control_example_config_is_a_valid_configuration() -> None:
    import yaml

    text = (REPO / "docs/ACCESS_CONTROL.md").read_text(encoding="utf-8")
    block = re.search(r"```yaml\n(access:.*?)```", text, re.S)
    assert block, "docs/ACCESS_CONTROL.md: the `access:` YAML example is gone"
    access = Settings.model_validate({"access": yaml.safe_load(block.group(1))["access"]}).access
    assert access.enabled and access.jwt.algorithm == "RS256" and set(access.principals) == {"alice", "bob", "carol", "eval-bot"}
    assert [name for name, p in access.principals.items() if p.sso] == ["carol"]  # issue 49 M2


# --- documented defaults ----------------------------------------------------------------------
SIZE = re.compile(r"^(\d+(?:\.\d+)?)\s*(MiB|KiB|GiB)?$")


def parse_value(text: str) -> Any:
    text = text.strip().strip("`").strip()
    text = re.sub(r"\s*\(.*\)$", "", text)  # `268435456` (256 MiB): the figure, not the gloss
    if text in ("on", "true"):
        return True
    if text in ("off", "false"):
        return False
    if m := SIZE.match(text):
        number = float(m.group(1)) * {"KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30, None: 1}[m.group(2)]
        return number
    return text


def table_defaults(doc: str) -> Iterator[tuple[int, str, str]]:
    """``(line, key, default)`` of every table row whose key column names config keys and whose
    default column gives as many values (``a, b, c`` or ``a / b``)."""
    for number, line in lines(doc):
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) < 3 or not line.lstrip().startswith("|"):
            continue
        keys = [k for k in TICKS.findall(cells[1]) if is_config_key(k)]
        if not keys or re.search(r"\d\s*x\s*`", cells[1]):
            continue
        first = keys[0].rsplit(".", 1)[0]
        keys += [f"{first}.{k}" for k in TICKS.findall(cells[1]) if re.fullmatch(r"[a-z_]+", k)]
        outside = re.sub(r"\([^)]*\)", "", cells[2])
        values = [v for v in re.split(r"\s*,\s*(?![^()]*\))" if "," in outside else r"\s+/\s+", cells[2]) if v]
        if len(values) == len(keys) and values != ["-"]:
            yield from ((number, k, v) for k, v in zip(keys, values))


@pytest.mark.parametrize("doc", DOCS)
def test_table_defaults_equal_the_model_defaults(doc: str) -> None:
    wrong, checked = [], 0
    for number, key, text in table_defaults(doc):
        if resolve(key) is None:
            continue  # reported by test_every_config_key_named_exists
        documented, actual = parse_value(text), default_of(key)
        if isinstance(documented, str) and not isinstance(actual, str):
            continue  # prose, not a figure
        checked += 1
        if documented != actual:
            wrong.append(where(doc, number, f"`{key}` default is documented as {text!r}, the model says {actual!r}"))
        if bound := re.search(r"at most (\d+)", text):
            model, name = resolve(key)  # type: ignore[misc]
            le = [m.le for m in model.model_fields[name].metadata if getattr(m, "le", None) is not None]
            if le != [int(bound.group(1))]:
                wrong.append(where(doc, number, f"`{key}` is documented as at most {bound.group(1)}, the model: {le}"))
    assert not wrong, "\n".join(wrong)
    assert checked >= (15 if doc.endswith("SECURITY.md") else 0), f"{doc}: only {checked} defaults parsed"


def test_prose_defaults_equal_the_model_defaults() -> None:
    claims = [
        ("docs/SECURITY.md", "binds `127.0.0.1` by default", "server.host", "127.0.0.1"),
        ("docs/SECURITY.md", "Open connections per worker | 4 x `server.threads` | 32", "server.threads", 8),
        ("docs/ACCESS_CONTROL.md", "Off by default (`access.enabled: false`)", "access.enabled", False),
        ("docs/ACCESS_CONTROL.md", "`principal_claim` (`sub`)", "access.jwt.principal_claim", "sub"),
        ("docs/ACCESS_CONTROL.md", "the `domains_claim`\n(`rag_domains`)", "access.jwt.domains_claim", "rag_domains"),
        ("docs/ACCESS_CONTROL.md", "a manifest line without `acl` is visible to nobody", "access.default_acl", "deny"),
    ]
    wrong = []
    for doc, phrase, key, value in claims:
        text = (REPO / doc).read_text(encoding="utf-8")
        if phrase not in text:
            wrong.append(f"{doc}: the claim {phrase!r} is gone; update this test with the new wording")
        elif default_of(key) != value:
            line = text[:text.index(phrase)].count("\n") + 1
            wrong.append(where(doc, line, f"{phrase!r}: the model's `{key}` default is {default_of(key)!r}"))
    assert not wrong, "\n".join(wrong)


# --- endpoints, CLI, log events, modules and files ---------------------------------------------
@pytest.fixture(scope="module")
def url_rules(tmp_path_factory: pytest.TempPathFactory, embedder: Any) -> list[tuple[str, set[str]]]:
    from backend.api.app import create_app
    from backend.runtime import build_services
    from backend.providers.local.extractive import ExtractiveChatModel
    from backend.providers.sqlite_vs.store import SqliteVectorStore

    tmp = tmp_path_factory.mktemp("security-docs")
    settings = make_settings(tmp)
    store = SqliteVectorStore(tmp / "rag.sqlite")
    services = build_services(settings, store=store, embedder=embedder, primary=ExtractiveChatModel(embedder))
    app = create_app(settings, services)
    return [(re.sub(r"<[^>]+>", "<>", r.rule), set(r.methods or ())) for r in app.url_map.iter_rules()]


ENDPOINT = re.compile(r"(?:(GET|POST|DELETE|PUT)\s+)?(/[a-z][a-z._/-]*(?:/<[a-z_]+>)?)")


@pytest.mark.parametrize("doc", DOCS)
def test_every_endpoint_named_is_served(doc: str, url_rules: list[tuple[str, set[str]]]) -> None:
    missing = []
    for number, line in lines(doc):
        bold = [t.strip() for b in re.findall(r"\*\*(/[^*]+)\*\*", line) for t in b.split(",")]
        for token in TICKS.findall(line) + [t for t in bold if t.startswith("/")]:
            for method, path in [m.groups() for m in [ENDPOINT.fullmatch(token.split("?")[0])] if m]:
                if "." in path.split("/")[-1] and not path.endswith(".json"):
                    continue  # a file path, not a route
                path = re.sub(r"<[^>]+>", "<>", path.split("?")[0])
                methods = {m for m in re.findall(r"\b(GET|POST|DELETE)\b", line)} & ({method} if method else set())
                rules = [(r, ms) for r, ms in url_rules if r == path or r.startswith(path.rstrip("/") + "/<>")]
                if not rules or any(not any(m in ms for _, ms in rules) for m in methods):
                    missing.append(where(doc, number, f"`{method + ' ' if method else ''}{path}` is not a route"))
    assert not missing, "\n".join(missing)


def test_method_and_route_pairs_named_in_access_control_are_served(url_rules: list[tuple[str, set[str]]]) -> None:
    text = (REPO / "docs/ACCESS_CONTROL.md").read_text(encoding="utf-8")
    pairs = re.findall(r"`(GET|POST|DELETE)`?/?`?(?:(DELETE) )?(/[a-z]+/<[a-z]+>|/[a-z]+)`", text)
    pairs += [("POST", "", p) for p in re.findall(r"`POST (/[a-z]+)`", text)]
    assert pairs, "docs/ACCESS_CONTROL.md names no METHOD /route pair any more"
    for first, second, path in pairs:
        path = re.sub(r"<[^>]+>", "<>", path)
        for method in filter(None, (first, second)):
            assert any(r == path and method in ms for r, ms in url_rules), f"docs/ACCESS_CONTROL.md: {method} {path}"


@pytest.mark.parametrize("doc", DOCS)
def test_every_cli_command_and_option_named_exists(doc: str) -> None:
    import click

    from backend.cli.main import cli

    wrong = []
    for number, line in lines(doc):
        for token in TICKS.findall(line):
            m = re.match(r"rag ([a-z]+)((?: --?[a-z-]+(?: [A-Z]+)?)*)", token)
            if not m:
                continue
            command = cli.commands.get(m.group(1))
            if command is None:
                wrong.append(where(doc, number, f"`rag {m.group(1)}` is not a command"))
                continue
            options = {o for p in command.params if isinstance(p, click.Option) for o in (*p.opts, *p.secondary_opts)}
            wrong += [where(doc, number, f"`rag {m.group(1)}` has no option {o}")
                      for o in re.findall(r"--?[a-z-]+", m.group(2)) if o not in options]
    # options named beside their commands in prose
    for doc_, command_name, option in (("docs/ACCESS_CONTROL.md", "search", "--as"), ("docs/ACCESS_CONTROL.md", "ask", "--as"),
                                       ("docs/SECURITY.md", "serve", "--allow-unauthenticated")):
        if doc_ == doc:
            params = cli.commands[command_name].params
            assert any(option in p.opts for p in params), f"{doc}: `rag {command_name}` has no {option}"
    assert not wrong, "\n".join(wrong)


LOG_EVENT = re.compile(r"[a-z]+\.[a-z_]+")


@pytest.mark.parametrize("doc", DOCS)
def test_every_log_event_named_is_emitted(doc: str) -> None:
    missing = []
    for number, token in ticks(doc):
        if LOG_EVENT.fullmatch(token) and token.split(".")[0] in LOG_NAMESPACES and resolve(token) is None:
            if token not in LOG_EVENTS:
                missing.append(where(doc, number, f"log event `{token}` is emitted nowhere in backend/"))
    assert not missing, "\n".join(missing)


@pytest.mark.parametrize("doc", DOCS)
def test_every_module_file_and_test_named_exists(doc: str) -> None:
    missing = []
    for number, line in lines(doc):
        for token in TICKS.findall(line) + re.findall(r"`python -m ([\w.]+)", line):
            token = token.split()[-1].strip("'")
            if re.fullmatch(r"backend(\.\w+)+(:\w+)?", token):
                module, _, attr = token.partition(":")
                try:
                    found: Any = importlib.import_module(module)
                except ModuleNotFoundError:
                    head, _, name = module.rpartition(".")
                    found = getattr(importlib.import_module(head), name, None)
                if found is None or (attr and not hasattr(found, attr)):
                    missing.append(where(doc, number, f"`{token}` does not exist"))
            elif re.fullmatch(r"(backend|tests|docs)/[\w/.-]+\.(py|md)(::\w+)?", token):
                path, _, name = token.partition("::")
                if not (REPO / path).is_file() or (name and f"class {name}" not in (REPO / path).read_text()):
                    missing.append(where(doc, number, f"`{token}` does not exist"))
            elif re.fullmatch(r"test_\w+\.py", token) and not list((REPO / "tests").rglob(token)):
                missing.append(where(doc, number, f"`{token}` is no test file"))
    assert not missing, "\n".join(missing)


# --- the ACL covers every table family the docs name --------------------------------------------
#: ACCESS_CONTROL.md, "Where it is enforced": chunks (search, lexical, fusion candidates, reads by id),
#: HyDE questions and summaries. Each of these takes the principal's ``visibility`` on both stores.
ACL_METHODS = ("search", "lexical_search", "dense_candidates", "lexical_candidates", "similarities", "fetch_chunks",
               "chunk_texts", "search_questions", "search_summaries")


def test_every_store_read_the_access_doc_names_takes_the_visibility() -> None:
    from backend.providers.oracle_vs.store import OracleVectorStore
    from backend.providers.sqlite_vs.store import SqliteVectorStore

    text = (REPO / "docs/ACCESS_CONTROL.md").read_text(encoding="utf-8")
    named = {t for t in TICKS.findall(text) if t in ACL_METHODS}
    assert named >= {"dense_candidates", "lexical_candidates", "similarities", "fetch_chunks", "chunk_texts"}, named
    assert "HyDE\n  question and summary tables" in text or "HyDE question and summary tables" in text.replace("\n  ", " ")
    for store in (SqliteVectorStore, OracleVectorStore):
        for method in ACL_METHODS:
            assert "visibility" in inspect.signature(getattr(store, method)).parameters, (
                f"docs/ACCESS_CONTROL.md says {method} applies the ACL; {store.__name__}.{method} takes no visibility")


def test_the_enriched_strategies_the_access_doc_names_exist() -> None:
    text = (REPO / "docs/ACCESS_CONTROL.md").read_text(encoding="utf-8")
    strategies = re.search(r"\(enriched strategies: ([^)]*)\)", text.replace("\n  ", " "))
    assert strategies, "docs/ACCESS_CONTROL.md no longer lists the enriched strategies"
    known = set(typing.get_args(_unwrap(resolve("retrieval.strategy")[0].model_fields["strategy"].annotation)))  # type: ignore[index]
    for name in TICKS.findall(strategies.group(1)):
        assert name in known, f"docs/ACCESS_CONTROL.md: strategy `{name}` is not one of {sorted(known)}"


def test_the_relaying_headers_the_security_doc_lists_are_the_code_s() -> None:
    """Issue 49 H2: SECURITY.md lists exactly the headers that drop local trust."""
    from backend.api.admin_session import RELAY_HEADERS

    text = (REPO / "docs/SECURITY.md").read_text(encoding="utf-8")
    listed = re.search(r"without any relaying header, present even empty: (.*?)\. Through a proxy", text, re.S)
    assert listed, "docs/SECURITY.md no longer lists the relaying headers"
    assert tuple(TICKS.findall(listed.group(1))) == RELAY_HEADERS


def test_the_admin_link_the_security_doc_describes_is_the_one_printed_and_set() -> None:
    """Issue 49 H1: the printed line, the cookie and its flags, the header, as the code has them."""
    from backend.api import admin_session, server

    text = (REPO / "docs/SECURITY.md").read_text(encoding="utf-8").replace("\n  ", " ")
    printed = server.ADMIN_LINE.split("{link}")[0].strip()
    assert f"`{printed} http://127.0.0.1:8080/admin/login?token=...`" in text
    assert f"sets the `{admin_session.COOKIE}` cookie (`HttpOnly`" in text and "`SameSite=Strict`" in text
    assert f"`{admin_session.TOKEN_HEADER}`" in text
