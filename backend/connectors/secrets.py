"""A connector's secrets, resolved from where the declaration says they are: never from the file.

``secrets`` maps an option to an environment variable name (``RAG_S3_SECRET``) or an OCI vault
secret (``oci-vault:<secret OCID>``): the current version of that secret, read with the ``oci``
SDK's ``SecretsClient.get_secret_bundle`` and signed as ``connectors.vault`` says (an OCI config
file's API key, the instance or the resource principal). A missing variable, an unreadable config
or a secret the vault does not give is a ``ConfigError`` naming the connector, the option and the
variable or OCID, never the value.
"""

from __future__ import annotations

import base64
import binascii
from pathlib import Path
from typing import Any, Mapping

from backend.common.config import VaultSettings
from backend.common.errors import ConfigError

VAULT_PREFIX = "oci-vault:"


def resolve_secrets(connector: str, refs: Mapping[str, str], env: Mapping[str, str],
                    vault: VaultSettings | None = None) -> dict[str, str]:
    out: dict[str, str] = {}
    client: Any = None
    for option, ref in refs.items():
        if ref.startswith(VAULT_PREFIX):
            where = f"connector {connector!r}: secrets.{option} ({ref})"
            if client is None:
                client = vault_client(vault or VaultSettings(), where)
            out[option] = read_vault_secret(client, ref.removeprefix(VAULT_PREFIX), where)
            continue
        value = env.get(ref)
        if not value:
            raise ConfigError(f"connector {connector!r}: secrets.{option} names the environment variable {ref}, "
                              "which is not set", field=f"secrets.{option}")
        out[option] = value
    return out


def vault_client(vault: VaultSettings, where: str) -> Any:
    """The Secrets service client ``vault`` describes; ``ConfigError`` naming ``connectors.vault``."""
    try:
        import oci
    except ImportError as exc:  # pragma: no cover - a core dependency
        raise ConfigError(f"{where}: an OCI vault reference needs the `oci` package", field="connectors.vault") from exc
    kwargs: dict[str, Any] = {"timeout": (5.0, vault.timeout_s)}
    if vault.endpoint:
        kwargs["service_endpoint"] = vault.endpoint
    if vault.auth == "config_file":
        path = str(Path(vault.config_file).expanduser())
        try:
            config = oci.config.from_file(file_location=path, profile_name=vault.config_profile)
        except oci.exceptions.ConfigFileNotFound as exc:
            raise ConfigError(f"{where}: connectors.vault.config_file {path} not found",
                              field="connectors.vault.config_file") from exc
        except oci.exceptions.ProfileNotFound as exc:
            raise ConfigError(f"{where}: connectors.vault.config_profile: no profile [{vault.config_profile}] in {path}",
                              field="connectors.vault.config_profile") from exc
        except (oci.exceptions.InvalidConfig, oci.exceptions.InvalidKeyFilePath) as exc:
            raise ConfigError(f"{where}: {path} [{vault.config_profile}] is not a valid OCI config: {exc}",
                              field="connectors.vault.config_file") from exc
    else:
        try:
            signer = (oci.auth.signers.InstancePrincipalsSecurityTokenSigner() if vault.auth == "instance_principal"
                      else oci.auth.signers.get_resource_principals_signer())
        except Exception as exc:  # the SDK raises plain exceptions when no principal is available here
            raise ConfigError(f"{where}: connectors.vault.auth={vault.auth}: no {vault.auth.replace('_', ' ')} is "
                              f"available on this host ({type(exc).__name__})", field="connectors.vault.auth") from exc
        config, kwargs["signer"] = {"region": getattr(signer, "region", None) or ""}, signer
    try:
        return oci.secrets.SecretsClient(config, **kwargs)
    except (oci.exceptions.InvalidConfig, oci.exceptions.ClientError, ValueError) as exc:
        raise ConfigError(f"{where}: cannot build the OCI Secrets client: {exc}", field="connectors.vault") from exc


def read_vault_secret(client: Any, ocid: str, where: str) -> str:
    """The current version of secret ``ocid`` as text (its bundle is base64)."""
    import oci

    if not ocid.startswith("ocid1.vaultsecret."):
        raise ConfigError(f"{where}: expected oci-vault:ocid1.vaultsecret.<...>, the OCID of a vault secret",
                          field="secrets")
    try:
        bundle = client.get_secret_bundle(ocid).data
    except oci.exceptions.ServiceError as exc:
        raise ConfigError(f"{where}: the vault refused it: {exc.status} {exc.code} (does the connector's principal "
                          "have `read secret-bundles` on it, and is the secret ACTIVE?)", field="secrets") from exc
    except (oci.exceptions.RequestException, oci.exceptions.ConnectTimeout) as exc:
        raise ConfigError(f"{where}: the Secrets service cannot be reached ({type(exc).__name__})",
                          field="connectors.vault.endpoint") from exc
    content = getattr(bundle, "secret_bundle_content", None)
    text = getattr(content, "content", None)
    if getattr(content, "content_type", None) != "BASE64" or not isinstance(text, str):
        raise ConfigError(f"{where}: the vault's answer holds no BASE64 secret content", field="secrets")
    try:
        return base64.b64decode(text, validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError) as exc:
        raise ConfigError(f"{where}: the secret's content is not base64 of UTF-8 text", field="secrets") from exc
