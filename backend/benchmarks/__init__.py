"""`rag bench`: speed, memory and retrieval-quality figures printed as ratios.

Targets live here and in docs/BENCHMARKS.md, never in timed unit tests.
"""
