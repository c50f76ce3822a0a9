"""Benchmarks of the workspace app (not tests): run `python -m bench.retrieval` from the repository root."""
