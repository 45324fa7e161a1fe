"""S3-compatible object storage as a source (``boto3``): AWS S3, OCI Object Storage's
S3-compatible endpoint, MinIO. The objects under ``prefix`` of a loadable type; each token is
the object's ETag; the readers, when ``readers_tag`` is set, are that object tag's value split
on spaces (``group:hr-staff user:dana@corp.example``; S3 tag values allow no comma). A tag change
leaves the ETag alone, so it is a permission-only change. Listing pages through
``list_objects_v2``; 429/5xx and dropped connections are retried (``retry.call``) and then fail
the sync."""

from __future__ import annotations

from typing import Any, Iterator

from backend.common.errors import SourceItemFailed, SourceUnavailable
from backend.connectors.retry import Transient, call, retry_after_seconds
from backend.core.connector import LOADABLE, FetchedItem, SourceItem, suffix_for


class S3Connector:
    kind = "s3"

    def __init__(self, bucket: str, prefix: str = "", *, endpoint_url: str | None = None, region: str = "us-east-1",
                 access_key_id: str | None = None, secret_access_key: str | None = None,
                 readers_tag: str | None = None, attempts: int = 4, max_wait_s: float = 30.0) -> None:
        import boto3
        from botocore.config import Config

        self.bucket, self.prefix, self.readers_tag = bucket, prefix, readers_tag
        self.attempts, self.max_wait_s = attempts, max_wait_s
        self.client: Any = boto3.client(
            "s3", endpoint_url=endpoint_url, region_name=region, aws_access_key_id=access_key_id,
            aws_secret_access_key=secret_access_key,
            config=Config(retries={"max_attempts": 1, "mode": "standard"}, connect_timeout=10, read_timeout=60))

    def _call(self, what: str, fn: Any, **kwargs: Any) -> Any:
        from botocore.exceptions import ClientError, ConnectionError as BotoConnectionError, EndpointConnectionError

        def once() -> Any:
            try:
                return fn(**kwargs)
            except (EndpointConnectionError, BotoConnectionError) as exc:
                raise Transient(str(exc)) from exc
            except ClientError as exc:
                status = int(exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode", 0))
                if status == 429 or status >= 500 or exc.response.get("Error", {}).get("Code") == "SlowDown":
                    headers = exc.response.get("ResponseMetadata", {}).get("HTTPHeaders", {})
                    raise Transient(f"HTTP {status}", retry_after_seconds(headers.get("retry-after"))) from exc
                raise

        return call(f"s3://{self.bucket}/{self.prefix} {what}", once, attempts=self.attempts,
                    max_wait_s=self.max_wait_s)

    def list_items(self) -> Iterator[SourceItem]:
        from botocore.exceptions import ClientError

        token: str | None = None
        while True:
            kwargs = {"Bucket": self.bucket, "Prefix": self.prefix, **({"ContinuationToken": token} if token else {})}
            try:
                page = self._call("list", self.client.list_objects_v2, **kwargs)
            except ClientError as exc:
                raise SourceUnavailable(f"s3://{self.bucket}/{self.prefix}: {exc.response['Error'].get('Code')}: "
                                        f"{exc.response['Error'].get('Message')}") from exc
            for obj in page.get("Contents") or []:
                key = str(obj["Key"])
                if key.endswith("/") or not any(key.lower().endswith(s) for s in LOADABLE):
                    continue
                yield SourceItem(key, str(obj["ETag"]).strip('"'), title=key.rsplit("/", 1)[-1].rsplit(".", 1)[0],
                                 url=f"s3://{self.bucket}/{key}", readers=self._readers(key))
            if not page.get("IsTruncated"):
                return
            token = page.get("NextContinuationToken")
            if not token:
                raise SourceUnavailable(f"s3://{self.bucket}/{self.prefix}: a truncated listing without a "
                                        "continuation token (a malformed answer)")

    def _readers(self, key: str) -> tuple[str, ...] | None:
        if self.readers_tag is None:
            return None
        tags = self._call("tags", self.client.get_object_tagging, Bucket=self.bucket, Key=key)
        value = next((t["Value"] for t in tags.get("TagSet") or [] if t["Key"] == self.readers_tag), None)
        return None if value is None else tuple(value.split())

    def fetch(self, item: SourceItem) -> FetchedItem:
        from botocore.exceptions import ClientError

        try:
            got = self._call("get", self.client.get_object, Bucket=self.bucket, Key=item.item_id)
            body = got["Body"].read()
        except (ClientError, SourceUnavailable) as exc:
            raise SourceItemFailed(f"s3://{self.bucket}/{item.item_id}: {exc}") from exc
        return FetchedItem(item.item_id, body, suffix_for(str(got.get("ContentType") or ""), item.item_id))
