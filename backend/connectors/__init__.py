"""Connectors: documents synced from where they live into a knowledge base (docs/CONNECTORS.md)."""
