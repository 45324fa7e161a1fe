"""The embedding provider: model, batching, local runtime, OCI, profiles, domains and the alias."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator, model_validator

from backend.common.config.base import RetrySettings, _Model, hint, validate_domain_key
from backend.common.config.profiles import AliasSettings, DomainSettings, ProfileSettings


class BatchingSettings(_Model):
    batch_size: int = Field(64, ge=1, le=4096, description="Texts per embedding call (OCI caps at 96).")
    rate_limit_per_min: int = Field(0, ge=0, description="Token-bucket limit of embedding calls per minute; 0 = none.")


class InputTypes(_Model):
    documents: str = Field("SEARCH_DOCUMENT", description="Input type for documents.")
    queries: str = Field("SEARCH_QUERY", description="Input type for queries.")


class LocalEmbeddingSettings(_Model):
    device: str = Field("cpu", description="torch device for the local model.")
    normalize: bool = Field(True, description="L2-normalize vectors (cosine and dot then agree).")
    max_seq_length: int | None = Field(None, ge=8, description="Override the model's max sequence length.")
    runtime: Literal["torch", "onnx"] = Field(
        "onnx", description="torch: sentence-transformers; onnx: ONNX Runtime over a local export of the same weights "
        "(made at first use, never downloaded). Recorded in the version's model stamp (docs/EMBEDDINGS.md). "
        "The default onnx + int8 was picked by `rag bench --section embed` (docs/BENCHMARKS.md).")
    quantization: Literal["none", "int8"] = Field(
        "int8", description="onnx only: int8 applies ONNX Runtime dynamic quantization to the export; none keeps fp32.")
    onnx_cache_dir: str = Field(
        "data/onnx-cache", description="Where ONNX exports are cached, keyed by the weights' sha256 and the export code version.")
    threads: int | None = Field(
        None, ge=1, description="Intra-op threads of torch / ONNX Runtime; empty = the cores this process may use.")
    sort_window: int = Field(
        1024, ge=1, description="Texts sorted by token length together before batching (less padding); order is kept.")
    onnx_batch_size: int = Field(
        8, ge=1, le=1024, description="Texts per ONNX Runtime call at fp32 (measured flat from 4 to 64). int8 always "
        "runs one text per call: its activation scale is per call, so a batch would make a vector depend on its neighbours.")
    compatible_runtimes: list[Literal["torch-fp32", "onnx-fp32", "onnx-int8"]] = Field(
        ["torch-fp32", "onnx-fp32"],
        description="Runtimes whose vectors are interchangeable: a version stamped with one accepts queries embedded "
        "by another in this list. Default from measured cosine agreement (docs/BENCHMARKS.md).")

    @model_validator(mode="after")
    def _int8_needs_onnx(self) -> "LocalEmbeddingSettings":
        if self.quantization != "none" and self.runtime != "onnx":
            raise ValueError(f"quantization {self.quantization!r} needs runtime 'onnx' (torch runs fp32 only)")
        return self


class OciSettings(_Model):
    endpoint: str | None = Field(None, description="Generative AI inference endpoint, e.g. https://inference.generativeai.us-chicago-1.oci.oraclecloud.com")
    compartment_id: str | None = Field(None, description="Compartment OCID.")
    serving_mode: Literal["on_demand", "dedicated"] = Field(
        "on_demand", description="on_demand: OnDemandServingMode(embeddings.model); dedicated: DedicatedServingMode(endpoint_id)."
    )
    endpoint_id: str | None = Field(None, description="Dedicated AI cluster endpoint OCID (serving_mode=dedicated).")
    auth: Literal["config_file", "instance_principal", "resource_principal"] = Field(
        "config_file", description="How requests are signed: API key from the config file, instance principal, resource principal."
    )
    config_file: str = Field("~/.oci/config", description="OCI config file (auth=config_file).")
    config_profile: str = Field("DEFAULT", description="Profile in the OCI config file.")
    truncate: Literal["NONE", "START", "END"] = Field("END", description="What the service does with inputs over the token cap.")
    max_inputs_per_call: int = Field(96, ge=1, le=96, description="Texts per embed_text call (service limit 96).")
    max_chars_per_call: int = Field(
        200_000, ge=1, description="Total characters per embed_text call; a batch is split before it exceeds this."
    )
    timeout_s: float = Field(30.0, gt=0, description="Read timeout of one OCI call.")
    connect_timeout_s: float = Field(5.0, gt=0, description="TCP connect timeout of OCI calls; fail fast when unreachable.")
    chat_model_id: str | None = Field(None, description="Chat model id or OCID for answer generation.")
    chat_format: Literal["cohere", "generic"] = Field("cohere", description="Chat request format.")


class EmbeddingSettings(_Model):
    provider: Literal["local", "oci"] = Field("local", description="Embedding provider.")
    model: str = Field("sentence-transformers/all-MiniLM-L6-v2", description="Embedding model id, recorded per version.")
    dimension: int | None = Field(None, ge=1, description="Expected vector dimension; checked against the model.")
    batching: BatchingSettings = BatchingSettings()
    input_types: InputTypes = InputTypes()
    retry: RetrySettings = RetrySettings()
    local: LocalEmbeddingSettings = LocalEmbeddingSettings()
    oci: OciSettings = OciSettings()
    default_profile: str = Field("default", description="Profile used when none is named.")
    profiles: dict[str, ProfileSettings] = Field(
        default_factory=lambda: {"default": ProfileSettings(index_name="KB_DEFAULT_V1")},
        description="Ingestion profiles by name: the version table, distance, chunker and embedding prefixes.",
    )
    domains: dict[str, DomainSettings] = Field(
        default_factory=dict, description="Domains by key (the X-RAG-Domain header, `--domain-key`), each with its own version and alias."
    )
    alias: AliasSettings = AliasSettings()

    @field_validator("domains")
    @classmethod
    def _domain_keys(cls, v: dict[str, DomainSettings]) -> dict[str, DomainSettings]:
        for key in v:
            validate_domain_key(key)
        return v

    @model_validator(mode="after")
    def _references(self) -> "EmbeddingSettings":
        if self.default_profile not in self.profiles:
            raise ValueError(f"default_profile {self.default_profile!r} is not one of profiles {sorted(self.profiles)}"
                             + hint(self.default_profile, self.profiles))
        for key, dom in self.domains.items():
            if dom.profile is not None and dom.profile not in self.profiles:
                raise ValueError(f"domains.{key}.profile {dom.profile!r} is not one of profiles "
                                 f"{sorted(self.profiles)}{hint(dom.profile, self.profiles)}")
        if self.provider == "oci" and self.batching.batch_size > 96:
            raise ValueError("batching.batch_size must be at most 96 with provider oci (service limit)")
        return self

    def profile_for(self, name: str | None = None) -> ProfileSettings:
        return self.profiles[name or self.default_profile]
