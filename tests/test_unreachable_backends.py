"""With ``store: oracle`` and ``embeddings.provider: oci`` pointing at closed ports on
127.0.0.1, every entry point fails at once with a message naming the endpoint,
not a traceback. The real python-oracledb (thin) and oci SDK do the connecting."""

from __future__ import annotations

import re
import socket
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml
from click.testing import CliRunner

from backend.cli.main import cli
from backend.common.config import load_settings
from backend.common.errors import ProviderUnavailable, StoreUnavailable
from backend.providers.registry import build_embedder, build_store
from tests.providers.oci_fake_service import oci_config_file  # noqa: F401 - fixture

PASSWORD = "s3cret-pw-never-shown"


def closed_port() -> int:
    """A port nothing listens on: bound, read, released."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def ports() -> dict[str, int]:
    return {"oracle": closed_port(), "oci": closed_port()}


def config_dict(tmp_path: Path, ports: dict[str, int], oci_config: Path, store: str = "oracle") -> dict[str, Any]:
    return {
        "store": {"backend": store, "sqlite": {"path": str(tmp_path / "rag.sqlite")},
                  "oracle": {"dsn": f"127.0.0.1:{ports['oracle']}/FREEPDB1", "user": "rag", "connect_timeout_s": 3}},
        "embeddings": {
            "provider": "oci", "model": "cohere.embed-english-light-v3.0", "dimension": 384,
            "retry": {"max_attempts": 4, "initial_wait_s": 0, "max_wait_s": 0},
            "oci": {"endpoint": f"http://127.0.0.1:{ports['oci']}", "compartment_id": "ocid1.compartment.oc1..rag",
                    "config_file": str(oci_config), "connect_timeout_s": 3},
            "profiles": {"default": {"index_name": "KB_DEFAULT_V1"}},
            "default_profile": "default",
        },
        "docx": {"assets_dir": str(tmp_path / "assets")},
        "ingest": {"allowed_roots": [str(tmp_path)], "progress": False},
        "evaluation": {"reports_dir": str(tmp_path / "reports"), "golden_set": None},
        "llm": {"primary": {"provider": "extractive"}, "fallback": {"provider": "none"}},
    }


@pytest.fixture
def config_file(tmp_path: Path, ports: dict[str, int], oci_config_file: Path,  # noqa: F811
                monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("RAG_STORE__ORACLE__PASSWORD", PASSWORD)
    path = tmp_path / "unreachable.yaml"
    path.write_text(yaml.safe_dump(config_dict(tmp_path, ports, oci_config_file)))
    return path


def run(config: Path, *args: str) -> Any:
    return CliRunner().invoke(cli, ["--config", str(config), *args])


def oracle_message(ports: dict[str, int]) -> str:
    return f"Oracle store at 127.0.0.1:{ports['oracle']} is unavailable (connecting): DPY-6005: cannot connect"


@pytest.mark.parametrize("args", [
    ["index", "list"],
    ["ask", "How many vacation days?"],
    ["ingest", "{manifest}"],
    ["eval"],
    ["index", "promote"],
    ["index", "rollback"],
    ["index", "status"],
    ["serve", "--port", "0"],
    ["config", "check"],
], ids=lambda a: " ".join(a[:2]))
def test_every_command_names_the_oracle_endpoint_without_traceback(config_file: Path, ports: dict[str, int],
                                                                   tmp_path: Path, args: list[str]) -> None:
    (tmp_path / "a.txt").write_text("Employees get 25 vacation days.")
    manifest = tmp_path / "m.jsonl"
    manifest.write_text('{"path": "%s"}\n' % (tmp_path / "a.txt"))
    result = run(config_file, *[a.format(manifest=manifest) for a in args])
    assert result.exit_code == 1
    assert result.stderr.startswith(f"error: {oracle_message(ports)}")
    assert "Connection refused" in result.stderr
    assert "Traceback" not in result.output + result.stderr and PASSWORD not in result.output + result.stderr


def test_registry_store_raises_store_unavailable_naming_host_and_port(config_file: Path,
                                                                      ports: dict[str, int]) -> None:
    settings = load_settings(config_file)
    with pytest.raises(StoreUnavailable, match=re.escape(oracle_message(ports))) as info:
        build_store(settings)
    assert PASSWORD not in str(info.value) and info.value.context["endpoint"] == f"127.0.0.1:{ports['oracle']}"


def test_create_app_refuses_to_start_against_an_unreachable_store(config_file: Path, ports: dict[str, int]) -> None:
    from backend.api.app import create_app

    with pytest.raises(StoreUnavailable, match=re.escape(oracle_message(ports))):
        create_app(load_settings(config_file))


def test_oci_embedder_builds_offline_and_fails_at_once_naming_the_endpoint(config_file: Path,
                                                                           ports: dict[str, int]) -> None:
    embedder = build_embedder(load_settings(config_file))
    with pytest.raises(ProviderUnavailable, match=rf"OCI embed_text batch 1/1 \(texts 1-1, SEARCH_QUERY\): cannot "
                                                  rf"reach OCI Generative AI at http://127.0.0.1:{ports['oci']} "
                                                  r"\(ConnectionError\)"):
        embedder.embed_queries(["hello"])
    assert embedder.calls == 0


def test_ask_on_sqlite_names_the_unreachable_oci_endpoint(tmp_path: Path, ports: dict[str, int],
                                                          oci_config_file: Path) -> None:  # noqa: F811
    from backend.core.types import Chunk, DocumentWrite, VersionSpec
    from backend.providers.sqlite_vs.store import SqliteVectorStore

    store = SqliteVectorStore(tmp_path / "rag.sqlite")
    store.create_version(VersionSpec("KB_DEFAULT_V1", "cohere.embed-english-light-v3.0", 384, "cosine"))
    store.write_documents("KB_DEFAULT_V1", [DocumentWrite("d1", "h", [Chunk("c1", "d1", "vacation", "a.txt", 0)],
                                                          np.ones((1, 384), np.float32))])
    store.point_alias("KB_ACTIVE", "KB_DEFAULT_V1")
    store.close()
    path = tmp_path / "sqlite-oci.yaml"
    path.write_text(yaml.safe_dump(config_dict(tmp_path, ports, oci_config_file, store="sqlite")))
    result = run(path, "ask", "How many vacation days?")
    assert result.exit_code == 1
    assert result.stderr.startswith("error: OCI embed_text batch 1/1 (texts 1-1, SEARCH_QUERY): cannot reach OCI "
                                    f"Generative AI at http://127.0.0.1:{ports['oci']}")
    assert "Traceback" not in result.stderr



def test_tns_alias_resolves_through_config_dir_and_failure_names_the_alias(tmp_path: Path,
                                                                           ports: dict[str, int]) -> None:
    """The wallet-style setup: dsn is a TNS alias found in config_dir/tnsnames.ora."""
    from backend.common.config import OracleSettings
    from backend.providers.oracle_vs.store import OracleVectorStore

    (tmp_path / "tnsnames.ora").write_text(
        "ragdb_high = (DESCRIPTION=(ADDRESS=(PROTOCOL=TCP)(HOST=127.0.0.1)"
        f"(PORT={ports['oracle']}))(CONNECT_DATA=(SERVICE_NAME=FREEPDB1)))\n")
    settings = OracleSettings.model_validate({"dsn": "ragdb_high", "user": "rag", "password": PASSWORD,
                                              "config_dir": str(tmp_path), "connect_timeout_s": 3})
    with pytest.raises(StoreUnavailable, match=r"Oracle store at TNS alias ragdb_high is unavailable \(connecting\): "
                                                r"DPY-6005: cannot connect to database.*Connection refused"):
        OracleVectorStore.from_settings(settings)


def test_missing_password_is_a_config_error_naming_the_variable(tmp_path: Path) -> None:
    from backend.common.config import OracleSettings
    from backend.common.errors import ConfigError
    from backend.providers.oracle_vs.store import OracleVectorStore

    with pytest.raises(ConfigError, match="RAG_STORE__ORACLE__PASSWORD"):
        OracleVectorStore.from_settings(OracleSettings(dsn="127.0.0.1:1/X", user="rag"))
