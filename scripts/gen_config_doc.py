"""Write docs/CONFIG.md from the pydantic models in the backend/common/config/ package.

The reference is generated, never edited by hand, so it cannot drift from the
code: ``tests/test_config_doc.py`` fails when the file differs from what this
script writes. Run it after every change to a config model::

    .venv/bin/python scripts/gen_config_doc.py          # rewrite docs/CONFIG.md
    .venv/bin/python scripts/gen_config_doc.py --check  # exit 1 if it is stale
"""

from __future__ import annotations

import argparse
import json
import sys
import types
import typing
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

from pydantic import BaseModel, SecretStr, TypeAdapter
from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from backend.common import config  # noqa: E402

OUTPUT = ROOT / "docs" / "CONFIG.md"
COMMAND = ".venv/bin/python scripts/gen_config_doc.py"

#: What each entry of ``config.SOURCE_ORDER`` means; generation fails on an unknown source.
SOURCE_TEXT = {
    "overrides": "explicit overrides: CLI flags and the `overrides` argument of `load_settings` (tests)",
    "environment": f"environment variables: `{config.ENV_PREFIX}<SECTION>__<FIELD>` and the seed flag names below",
    "yaml": "the YAML profile (`--config PATH`, default `config/rag.yaml`)",
    "defaults": "the defaults written in the models (listed in the tables below)",
}


@dataclass(frozen=True)
class Row:
    path: str
    type: str
    default: str
    env: str
    description: str


@dataclass(frozen=True)
class Section:
    path: str
    doc: str
    rows: tuple[Row, ...]
    model: str = ""
    module: str = ""


# --- types and values -------------------------------------------------------------
def _model_of(annotation: Any) -> type[BaseModel] | None:
    return annotation if isinstance(annotation, type) and issubclass(annotation, BaseModel) else None


def type_name(annotation: Any) -> str:
    """A short, stable spelling of an annotation for readers of YAML."""
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if annotation is type(None):
        return "null"
    if annotation is SecretStr:
        return "secret"
    if origin is typing.Literal:
        return " \\| ".join(json.dumps(a) for a in args)
    if origin in (typing.Union, types.UnionType):
        return " \\| ".join(type_name(a) for a in args)
    if origin is tuple:
        return f"list[{type_name(args[0])}]"
    if origin is dict:
        return f"map[{type_name(args[0])}, {type_name(args[1])}]"
    if _model_of(annotation):
        return "section"
    return getattr(annotation, "__name__", str(annotation))


_NO_VALUE = object()


def default_value(field: FieldInfo) -> Any:
    if field.default is not PydanticUndefined:
        return field.default
    if field.default_factory is not None:
        return field.default_factory()  # type: ignore[call-arg]
    return _NO_VALUE


def render_value(annotation: Any, value: Any) -> str:
    if value is _NO_VALUE:
        return "*required*"
    if value is None:
        return "`null`"
    if isinstance(value, SecretStr) or (isinstance(value, tuple) and any(isinstance(v, SecretStr) for v in value)):
        return "`**********`"
    return code(json.dumps(TypeAdapter(annotation).dump_python(value, mode="json"), ensure_ascii=False))


def code(text: str) -> str:
    text = text.replace("|", "\\|")
    return f"`` {text} ``" if "`" in text else f"`{text}`"


def cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


# --- environment -------------------------------------------------------------------
def env_names(parts: tuple[str, ...], annotation: Any) -> str:
    """How the environment sets this field (``<NAME>`` stands for a map key)."""
    names = [flag for flag, path in config.FLAG_ENV_VARS.items() if path == parts]
    if "[]" in parts:
        return ", ".join(f"`{n}`" for n in names) or "YAML only"
    list_field = tuple in {typing.get_origin(a) for a in (annotation, *typing.get_args(annotation))}
    if list_field and parts not in config.LIST_FIELDS | config.LIST_FIELDS_IN_MAPS:
        return ", ".join(f"`{n}`" for n in names) or "YAML only"
    names.insert(0, config.ENV_PREFIX + "__".join(p.upper() for p in parts))
    text = ", ".join(f"`{n}`" for n in names)
    return text + " (comma separated)" if list_field else text


# --- walking the models ---------------------------------------------------------------
def _doc(model: type[BaseModel]) -> str:
    own = model.__dict__.get("__doc__")
    return " ".join(own.split()) if own else ""


def sections(model: type[BaseModel], parts: tuple[str, ...] = (), instance: BaseModel | None = None) -> Iterator[Section]:
    """One section per model, depth first, in declaration order.

    Defaults come from the parent's default instance when there is one, so a nested
    section shows what it really defaults to there (``llm.fallback.provider`` is
    ``none`` although ``ChatProviderSettings.provider`` defaults to ``extractive``).
    """
    rows: list[Row] = []
    children: list[tuple[type[BaseModel], tuple[str, ...], BaseModel | None]] = []
    for name, field in model.model_fields.items():
        here = (*parts, name)
        annotation = field.annotation
        origin, args = typing.get_origin(annotation), typing.get_args(annotation)
        value = getattr(instance, name) if instance is not None else default_value(field)
        sub = _model_of(annotation)
        if sub is not None:
            children.append((sub, here, value if isinstance(value, BaseModel) else None))
            continue
        env = env_names(here, annotation)
        kind = type_name(annotation)
        if origin is dict and _model_of(args[1]):
            children.append((args[1], (*here, "<NAME>"), None))
            kind, env = "map[str, section]", "per field, see below"
        elif origin is tuple and args and _model_of(args[0]):
            children.append((args[0], (*here, "[]"), None))
            kind = "list[section]"
        elif origin is dict and "[]" not in here:
            env = f"`{config.ENV_PREFIX}{'__'.join(p.upper() for p in here)}__<KEY>`"
        rows.append(Row(dotted(here), kind, render_value(annotation, value), env, cell(field.description or "")))
    yield Section(dotted(parts), _doc(model), tuple(rows), model.__name__, model.__module__.replace(".", "/") + ".py")
    for sub, here, child in children:
        yield from sections(sub, here, child)


def dotted(parts: tuple[str, ...]) -> str:
    return ".".join(parts).replace(".[]", "[]")


def leaf_fields_without_description(model: type[BaseModel] = config.Settings) -> list[str]:
    return [row.path for sec in sections(model) for row in sec.rows if not row.description]


# --- rendering ---------------------------------------------------------------------------
def intro() -> list[str]:
    unknown = set(config.SOURCE_ORDER) - set(SOURCE_TEXT)
    if unknown:
        raise SystemExit(f"gen_config_doc: describe the new config source(s) {sorted(unknown)} in SOURCE_TEXT")
    default = config.DEFAULT_CONFIG.relative_to(config.REPO_ROOT).as_posix()
    lines = [
        "# Configuration reference",
        "",
        f"<!-- Generated by scripts/gen_config_doc.py from backend/common/config/. Do not edit by hand; "
        f"run `{COMMAND}` after changing a config model. -->",
        "",
        "Configuration is read once, by `load_settings()` (`backend/common/config/loading.py`), into frozen",
        "pydantic models; every entry point hands each service only the slice it needs. Each section below",
        "names the model and the module that defines it: add a field there (`backend/common/config/` has one",
        "module per settings area; `sources.py` reads the environment and YAML, `loading.py` holds the",
        "precedence).",
        "",
        "## Where configuration comes from",
        "",
        f"* The YAML profile: `{default}` unless `rag --config PATH` (or `rag config check --config PATH`) names",
        "  another file. Relative paths inside it (database, assets, reports, allowed roots) resolve against",
        "  the repository root.",
        "* `rag config check` validates a file and prints the resolved configuration with secrets masked",
        "  (`**********`); on any problem it prints one line per problem with its dotted YAML path and exits 2.",
        "  A problem an environment variable caused names that variable instead.",
        "",
        "Precedence, highest first (`SOURCE_ORDER`):",
        "",
    ]
    lines += [f"{i}. {SOURCE_TEXT[name]}" for i, name in enumerate(config.SOURCE_ORDER, start=1)]
    lines += [
        "",
        "Sources merge key by key: an environment variable replaces one field, not its whole section.",
        "",
        "## Environment variables",
        "",
        f"* `{config.ENV_PREFIX}` prefix, `__` between nesting levels: `{config.ENV_PREFIX}RETRIEVAL__TOP_K=12` sets",
        "  `retrieval.top_k`. Names are case-insensitive in effect (path parts are lower-cased), so map keys set",
        "  this way (`<NAME>`, `<KEY>`) must be lower case.",
        "* Booleans accept `true/false`, `1/0`, `yes/no`, `on/off`. List fields marked *comma separated* take",
        "  `a,b,c`; other lists can be set in YAML only.",
        "* Secrets (type `secret`) belong in the environment, never in a committed YAML file; they are",
        "  masked in every dump and log.",
        "* The seed's flag names are accepted as well:",
        "",
        "| Flag | Sets |",
        "|---|---|",
    ]
    lines += [f"| `{flag}` | `{'.'.join(path)}` |" for flag, path in config.FLAG_ENV_VARS.items()]
    lines += [
        "",
        "## Validation",
        "",
        "* Unknown keys anywhere are errors, with the nearest known key when one is close",
        "  (`retrieval.thresold_high: unknown key; did you mean 'threshold_high'?`); one set by an environment",
        "  variable is reported as that variable (`environment variable RAG_RETRIEVAL__TOPK: unknown key 'topk'",
        "  in retrieval; did you mean 'top_k'?`). A value outside a fixed set (a strategy, a provider) and an",
        "  unknown profile name get the nearest choice the same way. All problems are reported at once.",
        "* Table, view, alias, index and metadata-field names must be a letter followed by letters, digits or",
        "  underscores (at most 30 characters); domain keys are lower case (`a-z`, digits, `_`, `-`). Anything",
        "  else, such as `kb; DROP TABLE x`, is rejected at load, before any SQL runs.",
        "* Version and alias names (`index_name`, `alias_name`, `alias.name`, `alias.active_index`) become",
        "  tables and views, so they also may not end in a suffix the stores give a version's derived tables and",
        "  indexes (`_QUESTIONS`, `_SUMMARIES`, `_DOC`, `_CHUNK`, `_EMB`, `_VIDX`, `_TIDX`, `_MIDX`, `_FTS`,",
        "  `_FTS_DATA`/`_IDX`/`_CONTENT`/`_DOCSIZE`/`_CONFIG`, `_FACETS`, `_FACETS_RID`), nor be a name the",
        "  database resolves itself (`DUAL`, `SYS`, `SYSTEM`, `CTXSYS`, `MDSYS`, `XDB`, `PUBLIC`, dictionary views",
        "  such as `USER_TABLES` or `ALL_INDEXES`, or starting with `DBMS_`, `UTL_`, `CTX_`, `SYS_`, `SQLITE_`);",
        "  any case. The Oracle",
        "  store also refuses reserved words and its catalog tables (docs/ORACLE.md, *Names*).",
        "* Impossible combinations fail at load with the field's path, for example `score_mode: raw` with",
        "  `distance: euclidean`, or a profile whose `distance` differs from `retrieval.distance`.",
        "",
    ]
    return lines


def render() -> str:
    lines = intro()
    for sec in sections(config.Settings):
        if not sec.path:
            continue
        lines += ["", f"{'#' * min(2 + sec.path.count('.'), 4)} `{sec.path}`", ""]
        if sec.doc:
            lines += [sec.doc, ""]
        lines += [f"Model: `{sec.model}` in `{sec.module}`.", ""]
        if not sec.rows:
            lines.append("Only nested sections.")
            continue
        lines += ["| Key | Type | Default | Environment | Description |", "|---|---|---|---|---|"]
        lines += [f"| `{r.path}` | {r.type} | {r.default} | {r.env} | {r.description} |" for r in sec.rows]
    return "\n".join(lines).rstrip("\n") + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if the file differs instead of writing it")
    parser.add_argument("--output", type=Path, default=OUTPUT)
    args = parser.parse_args(argv)
    text = render()
    if args.check:
        current = args.output.read_text(encoding="utf-8") if args.output.exists() else ""
        if current != text:
            print(f"{args.output} is out of date; run `{COMMAND}`", file=sys.stderr)
            return 1
        return 0
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(text, encoding="utf-8")
    print(f"wrote {args.output}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
