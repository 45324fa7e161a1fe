"""Ingest on Ray Data (``rag ingest --engine ray``): the stages in actor pools on a Ray cluster,
one writer, the same version as the single-process engine. Importing this package does not
import Ray; building a ``RayEngine`` without the ``ray`` extra raises ``RayNotInstalled``."""

from backend.ingest.ray_engine.cluster import EXTRA, RayNotInstalled, require_ray
from backend.ingest.ray_engine.engine import RayEngine, RayEngineError, enrichment_refusal

__all__ = ["EXTRA", "RayEngine", "RayEngineError", "RayNotInstalled", "enrichment_refusal", "require_ray"]
