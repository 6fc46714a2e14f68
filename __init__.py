"""ragsweep: synthetic test sets, retriever sweeps and explained metrics for RAG, offline by default."""

__version__ = "0.1.0"
