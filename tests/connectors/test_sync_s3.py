"""S3-compatible storage synced into a knowledge base (issue 46): boto3 against moto's S3 server
(``ThreadedMotoServer``, a real HTTP endpoint), readers in an object tag, listings paged."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterator

import boto3
import pytest
from moto.server import ThreadedMotoServer

from backend.common.errors import SourceUnavailable
from backend.connectors.s3 import S3Connector
from tests.connectors.helpers import Synced
from tests.connectors.scenario import run_scenario

CREDS = {"access_key_id": "testing", "secret_access_key": "testing"}


@pytest.fixture(scope="module")
def endpoint() -> Iterator[str]:
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    yield f"http://{host}:{port}"
    server.stop()


class S3Source:
    def __init__(self, endpoint: str, bucket: str) -> None:
        self.endpoint, self.bucket = endpoint, bucket
        self.s3 = boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1", aws_access_key_id="testing",
                               aws_secret_access_key="testing")
        self.s3.create_bucket(Bucket=bucket)
        self.s3.put_object(Bucket=bucket, Key="elsewhere/other.md", Body=b"# Not under the prefix\n\nIgnored.\n")

    def put(self, name: str, text: str, readers: list[str]) -> None:
        self.s3.put_object(Bucket=self.bucket, Key=f"handbook/{name}.txt", Body=text.encode(),
                           ContentType="text/plain", Tagging="rag-readers=" + "+".join(readers))

    def delete(self, name: str) -> None:
        self.s3.delete_object(Bucket=self.bucket, Key=f"handbook/{name}.txt")

    def set_readers(self, name: str, readers: list[str]) -> None:
        self.s3.put_object_tagging(Bucket=self.bucket, Key=f"handbook/{name}.txt",
                                   Tagging={"TagSet": [{"Key": "rag-readers", "Value": " ".join(readers)}]})

    def publish(self) -> None:
        return None

    def doc_id(self, name: str) -> str:
        return f"handbook/{name}.txt"

    def connector(self) -> S3Connector:
        return S3Connector(self.bucket, "handbook/", endpoint_url=self.endpoint, readers_tag="rag-readers",
                           access_key_id="testing", secret_access_key="testing")

    def broken(self) -> S3Connector:
        return S3Connector(self.bucket, "handbook/", endpoint_url="http://127.0.0.1:9", attempts=2, max_wait_s=0.01,
                           access_key_id="testing", secret_access_key="testing")


def test_s3_end_to_end(tmp_path: Path, embedder: Any, endpoint: str) -> None:
    synced = Synced(tmp_path, embedder, "s3", {"bucket": "docs-e2e", "prefix": "handbook/", "endpoint_url": endpoint})
    run_scenario(synced, S3Source(endpoint, "docs-e2e"))


def test_listing_pages_and_a_missing_bucket(endpoint: str) -> None:
    s3 = boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1", aws_access_key_id="testing",
                      aws_secret_access_key="testing")
    s3.create_bucket(Bucket="paged")
    for i in range(1005):  # more than one page of list_objects_v2 (1,000 keys)
        s3.put_object(Bucket="paged", Key=f"p/{i:04d}.md", Body=f"# {i}\n".encode())
    items = list(S3Connector("paged", "p/", endpoint_url=endpoint, access_key_id="testing",
                             secret_access_key="testing").list_items())
    assert len(items) == 1005 and items[0].readers is None and items[-1].item_id == "p/1004.md"
    with pytest.raises(SourceUnavailable, match="NoSuchBucket"):
        list(S3Connector("absent", "", endpoint_url=endpoint, access_key_id="testing",
                         secret_access_key="testing").list_items())
