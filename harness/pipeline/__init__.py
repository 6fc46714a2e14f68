"""The reference pipeline, stage by stage: index, retrieval, rerank, rewrite, context, answerers, relevance.

A wing of :mod:`ragsweep.harness`: it imports neither ``app`` nor ``board`` (``tests/test_imports.py``).
"""
