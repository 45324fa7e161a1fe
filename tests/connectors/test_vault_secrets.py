"""Connector secrets from OCI Vault (``secrets: {option: oci-vault:<secret OCID>}``, issue 46): the
real ``oci`` SDK's ``SecretsClient`` (requests signed with a throwaway API key from an OCI config
file written here) against a local server answering the Secrets service's documented
``GET /20190301/secretbundles/{secretId}`` (a ``SecretBundle`` whose ``secretBundleContent`` is
``{"contentType": "BASE64", "content": ...}``). Every failure is a ``ConfigError`` naming the
connector, the option and the OCID, never a value."""

from __future__ import annotations

import base64
import hashlib
import json
from pathlib import Path
from typing import Any, Iterator

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from backend.common.config import ConnectorsSettings, ConnectorSpec, VaultSettings
from backend.common.errors import ConfigError
from backend.connectors.registry import build_connector
from backend.connectors.secrets import resolve_secrets
from tests.connectors.test_sync_confluence import ConfluenceServer
from tests.local_http import LocalHttpServer

SECRET_ID = "ocid1.vaultsecret.oc1.eu-frankfurt-1.amaaaaaatestsecret"
VALUE = "s3cr3t-apfel-42"
UTF8_ID, UTF8_VALUE = "ocid1.vaultsecret.oc1.eu-frankfurt-1.amaaaaaautf8", "pässwörd-ß"


class SecretsService(LocalHttpServer):
    """The vault's secrets: OCID -> raw bundle content (``None``: the secret is not readable)."""

    def __init__(self) -> None:
        super().__init__(url_suffix="")
        self.secrets: dict[str, Any] = {}
        self.key_ids: set[str] = set()

    def respond_read(self, method: str, path: str, headers: dict[str, str]) -> tuple[int, dict[str, str], bytes]:
        authorization = {k.lower(): v for k, v in headers.items()}.get("authorization", "")
        if not authorization.startswith("Signature "):
            return self._error(401, "NotAuthenticated", "The required information to complete authentication was "
                               "not provided.")
        self.key_ids.add(authorization.split('keyId="', 1)[-1].split('"', 1)[0])
        prefix = "/20190301/secretbundles/"
        ocid = path.split("?", 1)[0].removeprefix(prefix)
        if not path.startswith(prefix) or self.secrets.get(ocid) is None:
            return self._error(404, "NotAuthorizedOrNotFound", "Authorization failed or requested resource not found.")
        content = self.secrets[ocid]
        body = {"secretId": ocid, "versionNumber": 3, "stages": ["CURRENT", "LATEST"],
                "secretBundleContent": content}
        return 200, {"Content-Type": "application/json"}, json.dumps(body).encode()

    @staticmethod
    def _error(status: int, code: str, message: str) -> tuple[int, dict[str, str], bytes]:
        return status, {"Content-Type": "application/json"}, json.dumps({"code": code, "message": message}).encode()


@pytest.fixture
def service() -> Iterator[SecretsService]:
    with SecretsService().running() as s:
        s.secrets[SECRET_ID] = {"contentType": "BASE64", "content": base64.b64encode(VALUE.encode()).decode()}
        yield s


@pytest.fixture
def oci_config(tmp_path: Path) -> dict[str, str]:
    """An OCI config file with a throwaway API key, as ``oci setup config`` writes one."""
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    pem = tmp_path / "oci_api_key.pem"
    pem.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                      serialization.NoEncryption()))
    der = key.public_key().public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)
    digest = hashlib.md5(der).hexdigest()
    fields = {"user": "ocid1.user.oc1..aaaaaaaatestuser", "tenancy": "ocid1.tenancy.oc1..aaaaaaaatesttenancy",
              "fingerprint": ":".join(digest[i:i + 2] for i in range(0, 32, 2)), "region": "eu-frankfurt-1",
              "key_file": str(pem)}
    path = tmp_path / "oci-config"
    path.write_text("[DEFAULT]\n" + "".join(f"{k}={v}\n" for k, v in fields.items()), encoding="utf-8")
    return {**fields, "path": str(path)}


def vault(service: SecretsService, oci_config: dict[str, str], **extra: Any) -> VaultSettings:
    return VaultSettings.model_validate({"config_file": oci_config["path"], "endpoint": service.url, **extra})


def test_a_vault_reference_resolves_to_the_secret_and_an_env_name_to_its_variable(
        service: SecretsService, oci_config: dict[str, str]) -> None:
    service.secrets[UTF8_ID] = {"contentType": "BASE64", "content": base64.b64encode(UTF8_VALUE.encode()).decode()}
    refs = {"secret_access_key": f"oci-vault:{SECRET_ID}", "access_key_id": "RAG_TEST_KEY_ID",
            "password": f"oci-vault:{UTF8_ID}"}
    got = resolve_secrets("policies", refs, {"RAG_TEST_KEY_ID": "AKIA-test"}, vault(service, oci_config))
    assert got == {"secret_access_key": VALUE, "access_key_id": "AKIA-test", "password": UTF8_VALUE}
    # signed with the config file's API key (tenancy/user/fingerprint), as the service requires
    assert service.key_ids == {f"{oci_config['tenancy']}/{oci_config['user']}/{oci_config['fingerprint']}"}


def test_a_declared_connector_signs_in_with_the_secret_from_the_vault(
        service: SecretsService, oci_config: dict[str, str], tmp_path: Path) -> None:
    with ConfluenceServer().running() as wiki:
        wiki.add("Leave", "<p>Every employee receives 25 days of annual leave.</p>")
        spec = ConnectorSpec.model_validate({"kind": "confluence", "knowledge_base": "hr", "options": {
            "url": wiki.url, "space": "HR", "username": "svc"}, "secrets": {"password": f"oci-vault:{SECRET_ID}"}})
        settings = ConnectorsSettings.model_validate({"vault": vault(service, oci_config).model_dump()})
        built = build_connector("wiki", spec, settings, {}, tmp_path)
        assert [i.title for i in built.list_items()] == ["Leave"]
        # the Confluence site saw the vault's secret as the account's password
        assert wiki.auth == ["Basic " + base64.b64encode(f"svc:{VALUE}".encode()).decode()]


@pytest.mark.parametrize(("ref", "content", "message"), [
    ("oci-vault:ocid1.vaultsecret.oc1..absent", None,
     r"the vault refused it: 404 "
     r"NotAuthorizedOrNotFound \(does the connector's principal have `read secret-bundles`"),
    ("oci-vault:ocid1.bucket.oc1..notasecret", None, r"expected oci-vault:ocid1.vaultsecret.<...>"),
    (f"oci-vault:{SECRET_ID}", {"contentType": "BASE64", "content": "!!not base64!!"},
     r"the secret's content is not base64 of UTF-8 text"),
    (f"oci-vault:{SECRET_ID}", {"contentType": "TEXT"}, r"the vault's answer holds no BASE64 secret content"),
])
def test_a_secret_the_vault_does_not_give_names_the_option_and_the_ocid(
        service: SecretsService, oci_config: dict[str, str], ref: str, content: Any, message: str) -> None:
    if content is not None:
        service.secrets[SECRET_ID] = content
    where = r"^connector 'policies': secrets.secret_access_key \(" + ref.replace(".", r"\.") + r"\): "
    with pytest.raises(ConfigError, match=where + message) as raised:
        resolve_secrets("policies", {"secret_access_key": ref}, {}, vault(service, oci_config))
    assert VALUE not in str(raised.value)


def test_an_unusable_oci_config_names_the_setting(service: SecretsService, oci_config: dict[str, str],
                                                  tmp_path: Path) -> None:
    ref = {"password": f"oci-vault:{SECRET_ID}"}
    with pytest.raises(ConfigError, match=r"connectors.vault.config_file .*missing-config not found"):
        resolve_secrets("db", ref, {}, VaultSettings(config_file=str(tmp_path / "missing-config")))
    with pytest.raises(ConfigError, match=r"connectors.vault.config_profile: no profile \[PROD\]"):
        resolve_secrets("db", ref, {}, vault(service, oci_config, config_profile="PROD"))
    with pytest.raises(ConfigError, match=r"connectors.vault.auth=instance_principal: no instance principal is "
                                          r"available on this host"):
        resolve_secrets("db", ref, {}, VaultSettings(auth="instance_principal", endpoint=service.url, timeout_s=1))
