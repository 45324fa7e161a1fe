"""A connector's secrets, resolved from where the declaration says they are: never from the file.

``secrets`` maps an option to an environment variable name (``RAG_S3_SECRET``) or an OCI vault
secret (``oci-vault:<secret ocid>``, read with the ``oci`` SDK and the default OCI config). A
missing variable is a ``ConfigError`` naming the connector and the variable, never the value.
"""

from __future__ import annotations

import base64
from typing import Mapping

from backend.common.errors import ConfigError


def resolve_secrets(connector: str, refs: Mapping[str, str], env: Mapping[str, str]) -> dict[str, str]:
    out: dict[str, str] = {}
    for option, ref in refs.items():
        if ref.startswith("oci-vault:"):
            out[option] = _vault(connector, option, ref.removeprefix("oci-vault:"))
            continue
        value = env.get(ref)
        if not value:
            raise ConfigError(f"connector {connector!r}: secrets.{option} names the environment variable {ref}, "
                              "which is not set", field=f"secrets.{option}")
        out[option] = value
    return out


def _vault(connector: str, option: str, ocid: str) -> str:  # pragma: no cover - needs an OCI tenancy
    try:
        import oci
    except ImportError as exc:
        raise ConfigError(f"connector {connector!r}: secrets.{option} is an OCI vault reference; install the "
                          "`oci` package and configure ~/.oci/config", field=f"secrets.{option}") from exc
    client = oci.secrets.SecretsClient(oci.config.from_file())
    bundle = client.get_secret_bundle(ocid).data.secret_bundle_content
    return base64.b64decode(bundle.content).decode("utf-8")
