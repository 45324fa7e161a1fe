"""Rerankers behind the ``Reranker`` port: a ``/rerank`` HTTP endpoint, a local
sentence-transformers ``CrossEncoder``, and best-sentence re-scoring with the
embedding model (OCI's rerank lives with the other OCI calls in ``providers/oci``)."""
