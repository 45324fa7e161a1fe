"""Signing for OCI Generative AI: API key from a config file, instance principal or
resource principal, and the inference client built from it.

The client never retries by itself (``oci.retry.NoneRetryStrategy()``, no circuit breaker):
``backend.providers.oci.calls`` owns retries. ``timeout`` is ``(connect, read)``
so an unreachable endpoint fails within ``connect_timeout_s``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from backend.common.config import OciSettings
from backend.common.errors import ConfigError, ProviderUnavailable


def _import_oci() -> Any:
    try:
        import oci
    except ImportError as exc:  # pragma: no cover - a core dependency
        raise ConfigError("provider 'oci' needs the oci package: pip install oci") from exc
    return oci


def config_and_signer(settings: OciSettings) -> tuple[dict[str, Any], Any]:
    """``(config, signer)`` for the chosen auth; a signer of None means "sign with the config's API key"."""
    oci = _import_oci()
    if settings.auth == "config_file":
        path = str(Path(settings.config_file).expanduser())
        try:
            config = oci.config.from_file(file_location=path, profile_name=settings.config_profile)
        except oci.exceptions.ConfigFileNotFound as exc:
            raise ConfigError(f"embeddings.oci.config_file: {path} not found") from exc
        except oci.exceptions.ProfileNotFound as exc:
            raise ConfigError(f"embeddings.oci.config_profile: no profile [{settings.config_profile}] in {path}") from exc
        except (oci.exceptions.InvalidConfig, oci.exceptions.InvalidKeyFilePath) as exc:
            raise ConfigError(f"{path} [{settings.config_profile}]: invalid OCI config: {exc}") from exc
        return config, None
    try:
        if settings.auth == "instance_principal":
            signer = oci.auth.signers.InstancePrincipalsSecurityTokenSigner()
        else:
            signer = oci.auth.signers.get_resource_principals_signer()
    except Exception as exc:  # the SDK raises plain exceptions when no principal is available here
        raise ProviderUnavailable(
            f"embeddings.oci.auth={settings.auth}: no {settings.auth.replace('_', ' ')} is available on this host "
            f"({type(exc).__name__}: {exc})") from exc
    config = {"region": signer.region} if getattr(signer, "region", None) else {}
    return config, signer


def inference_client(settings: OciSettings) -> Any:
    """A ``GenerativeAiInferenceClient`` for ``settings.endpoint`` (or the config's region)."""
    oci = _import_oci()
    config, signer = config_and_signer(settings)
    kwargs: dict[str, Any] = {
        "retry_strategy": oci.retry.NoneRetryStrategy(),
        "circuit_breaker_strategy": oci.circuit_breaker.NoCircuitBreakerStrategy(),
        "timeout": (settings.connect_timeout_s, settings.timeout_s),
    }
    if settings.endpoint:
        kwargs["service_endpoint"] = settings.endpoint
    if signer is not None:
        kwargs["signer"] = signer
    try:
        return oci.generative_ai_inference.GenerativeAiInferenceClient(config, **kwargs)
    except (oci.exceptions.InvalidConfig, oci.exceptions.ClientError, ValueError) as exc:
        raise ConfigError(f"embeddings.oci: cannot build the OCI client: {exc}") from exc


def chat_model_id(settings: OciSettings, model: str | None, *, user: str, model_field: str) -> str:
    """The chat model ``model`` names, else ``embeddings.oci.chat_model_id``; ``ConfigError`` naming the setting
    when it or the compartment is missing (``user``: who needs them, ``model_field``: the setting that names one)."""
    if not settings.compartment_id:
        raise ConfigError(f"embeddings.oci.compartment_id is required for {user}")
    chosen = model or settings.chat_model_id
    if not chosen:
        raise ConfigError(f"{model_field} or embeddings.oci.chat_model_id must name the OCI chat model")
    return chosen


def endpoint_of(client: Any, settings: OciSettings) -> str:
    """What messages name as "where": the configured endpoint or the client's default."""
    return settings.endpoint or str(getattr(getattr(client, "base_client", None), "endpoint", "OCI"))
