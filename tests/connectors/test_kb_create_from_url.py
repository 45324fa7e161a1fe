"""``rag kb create NAME --from s3://BUCKET/PREFIX`` (issue 46, the new user's path): the knowledge
base registered, a connector named like it declared and synced through the gate, with boto3's
default credential chain against moto's S3 server; a bad URL registers nothing."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterator

import boto3
import pytest
import yaml
from click.testing import CliRunner
from moto.server import ThreadedMotoServer

from backend.cli.kb import connector_for
from backend.cli.main import cli
from backend.common.errors import ConfigError
from tests.connectors.scenario import CANTEEN, LEAVE


def run(*args: str) -> Any:
    return CliRunner().invoke(cli, list(args))


@pytest.mark.parametrize(("url", "declaration"), [
    ("s3://policies/handbook/", {"kind": "s3", "options": {"bucket": "policies", "prefix": "handbook/"}}),
    ("s3://policies", {"kind": "s3", "options": {"bucket": "policies", "prefix": ""}}),
    ("oci://policies@axtenancy/hr/", {"kind": "oci_object_storage",
                                      "options": {"namespace": "axtenancy", "bucket": "policies", "prefix": "hr/"}}),
])
def test_connector_for(url: str, declaration: dict[str, Any]) -> None:
    assert connector_for(url) == declaration


@pytest.mark.parametrize("url", ["ftp://x/y", "s3://", "oci://policies/hr/", "s3://bucket@ns/x", "s3://a b/c"])
def test_connector_for_refuses(url: str) -> None:
    with pytest.raises(ConfigError, match="expected a folder, s3://BUCKET/PREFIX or oci://BUCKET@NAMESPACE/PREFIX"):
        connector_for(url)


@pytest.fixture
def s3(env: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[str, Any]]:
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"):  # boto3's default chain, as on a configured host
        monkeypatch.setenv(name, "testing")
    endpoint = f"http://{host}:{port}"
    client = boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1")
    client.create_bucket(Bucket="policies")
    yield endpoint, client
    server.stop()


def test_kb_create_from_s3_serves_the_prefix_and_later_syncs_pick_up_changes(
        env: Path, s3: tuple[str, Any]) -> None:
    endpoint, client = s3
    client.put_object(Bucket="policies", Key="handbook/leave.md", Body=LEAVE.encode())
    client.put_object(Bucket="policies", Key="elsewhere/other.md", Body=b"# Other\n\nNot under the prefix.\n")
    made = run("kb", "create", "policies", "--from", "s3://policies/handbook/", "--option", f"endpoint_url={endpoint}",
               "--reader", "public", "--json")
    assert made.exit_code == 0, made.output
    body = json.loads(made.stdout)
    assert body["connector"] == "policies" and body["sync"]["status"] == "ok"
    assert body["sync"]["counts"]["new"] == 1 and body["sync"]["served_version"] == "KB_POLICIES_V1"
    declared = yaml.safe_load((env / "connectors.yaml").read_text())["connectors"]["policies"]
    assert declared == {"kind": "s3", "knowledge_base": "policies", "readers": ["public"],
                        "options": {"bucket": "policies", "prefix": "handbook/", "endpoint_url": endpoint}}
    assert "secrets" not in declared or not declared["secrets"]  # the default chain: no secret named anywhere
    asked = run("ask", "--domain", "policies", "How many days of paid annual leave do employees get?", "--json")
    assert asked.exit_code == 0, asked.output
    answer = json.loads(asked.stdout)
    assert answer["mode"] == "rag" and "27 days" in answer["answer"]
    client.put_object(Bucket="policies", Key="handbook/canteen.md", Body=CANTEEN.encode())
    synced = run("connector", "sync", "policies", "--json")
    assert synced.exit_code == 0, synced.output
    assert json.loads(synced.stdout)["counts"]["new"] == 1
    again = run("kb", "create", "policies", "--from", "s3://policies/handbook/")
    assert again.exit_code == 2 and "already declared" in again.stderr


def test_a_bad_source_registers_nothing_and_an_unreachable_one_says_what_stays(env: Path, s3: tuple[str, Any]) -> None:
    endpoint, _ = s3
    bad = run("kb", "create", "docs", "--from", "oci://policies/hr/")
    assert bad.exit_code == 2 and "expected a folder, s3://BUCKET/PREFIX" in bad.stderr
    assert not (env / "kb.yaml").exists() and not (env / "connectors.yaml").exists()
    mixed = run("kb", "create", "docs", "--from", str(env), "--reader", "public")
    assert mixed.exit_code == 2 and "go with an object-store --from" in mixed.stderr
    missing = run("kb", "create", "docs", "--from", "s3://no-such-bucket/x/", "--option", f"endpoint_url={endpoint}")
    assert missing.exit_code == 1
    assert "run `rag connector sync docs`" in missing.stderr and "NoSuchBucket" in missing.stderr
