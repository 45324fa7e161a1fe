"""The key that signs ``/assets`` links can never be computed from public facts: derived from
configured secrets when there are some, else a random key kept in a 0600 file (issue 34:
with JWT verified by a public key alone, links were signed with a public constant)."""

from __future__ import annotations

import hashlib
import hmac
import os
import time
from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from backend.api import signed_assets
from backend.common.config import Settings
from backend.common.errors import ConfigError
from tests.conftest import make_settings

REF = "office-floor-plan-evacuation/fig-1.png"


def jwt_alone(tmp_path: Path, **server: Any) -> Settings:
    """Access control by RS256 tokens only: no API key, no shared secret anywhere."""
    private = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    pem = private.public_key().public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    (tmp_path / "issuer.pem").write_bytes(pem)
    return make_settings(tmp_path, access={"enabled": True, "jwt": {
        "enabled": True, "algorithm": "RS256", "public_key_file": str(tmp_path / "issuer.pem"), "audience": "rag-api"}},
        server={"asset_url_secret_file": str(tmp_path / "keys" / "asset-url.key"), **server})


def forged(image_ref: str, expires: int) -> str:
    """What anyone could sign with before: the key derived from an empty key list."""
    public = hashlib.sha256(b"rag-asset-url\n").digest()
    return hmac.new(public, f"{image_ref}\n{expires}".encode(), hashlib.sha256).hexdigest()


def test_with_jwt_alone_a_link_signed_with_the_public_constant_is_refused(tmp_path: Path) -> None:
    settings = jwt_alone(tmp_path)
    assert signed_assets.signing_required(settings)
    expires = int(time.time()) + 10 ** 8  # about three years
    assert not signed_assets.verify(settings, REF, str(expires), forged(REF, expires))
    url = signed_assets.asset_url(settings, REF)
    exp, sig = url.split("?exp=")[1].split("&sig=")
    assert signed_assets.verify(settings, REF, exp, sig)
    key_file = tmp_path / "keys" / "asset-url.key"
    assert key_file.stat().st_mode & 0o777 == 0o600 and len(bytes.fromhex(key_file.read_text())) == 32


def test_every_worker_signs_alike_and_deleting_the_file_rotates_the_key(tmp_path: Path) -> None:
    first, second = jwt_alone(tmp_path), jwt_alone(tmp_path)  # two workers, one file
    url = signed_assets.asset_url(first, REF)
    exp, sig = url.split("?exp=")[1].split("&sig=")
    assert signed_assets.verify(second, REF, exp, sig)
    (tmp_path / "keys" / "asset-url.key").unlink()
    time.sleep(0.01)
    assert not signed_assets.verify(second, REF, exp, sig)  # links issued before the rotation stop working
    exp2, sig2 = signed_assets.asset_url(first, REF).split("?exp=")[1].split("&sig=")
    assert signed_assets.verify(second, REF, exp2, sig2)


@pytest.mark.parametrize("mode", ["api_keys", "principal_keys", "hs256", "explicit"])
def test_with_a_secret_configured_the_key_is_derived_from_it_and_no_file_is_written(tmp_path: Path, mode: str) -> None:
    server: dict[str, Any] = {"asset_url_secret_file": str(tmp_path / "asset-url.key")}
    access: dict[str, Any] = {}
    if mode == "api_keys":
        server["api_keys"] = ["k" * 32]
    elif mode == "principal_keys":
        access = {"enabled": True, "principals": {"alice": {"api_key": "a" * 32}}}
    elif mode == "hs256":
        access = {"enabled": True, "jwt": {"enabled": True, "secret": "s" * 40, "audience": "rag-api"}}
    else:
        server.update(api_keys=["k" * 32], asset_url_secret="e" * 40)
    settings = make_settings(tmp_path, server=server, access=access)
    expires = int(time.time()) + 60
    assert signed_assets.verify(settings, REF, str(expires), signed_assets.signature(settings, REF, expires))
    assert not signed_assets.verify(settings, REF, str(expires), forged(REF, expires))
    assert not (tmp_path / "asset-url.key").exists()


def test_a_key_file_others_can_read_or_that_cannot_be_written_is_a_clear_error(tmp_path: Path) -> None:
    settings = jwt_alone(tmp_path)
    key_file = tmp_path / "keys" / "asset-url.key"
    signed_assets.signing_key(settings)
    os.chmod(key_file, 0o644)
    with pytest.raises(ConfigError, match=r"asset_url_secret_file: .*readable by others \(mode 644\); chmod 600"):
        signed_assets.signing_key(settings)
    blocked = tmp_path / "blocked"
    blocked.write_text("a file where a folder should be")
    with pytest.raises(ConfigError, match="cannot create or read the asset-link key"):
        signed_assets.signing_key(jwt_alone(tmp_path, asset_url_secret_file=str(blocked / "asset-url.key")))
