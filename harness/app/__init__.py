"""The user's application: targets (HTTP, Python, OpenAI-compatible, frameworks), calls, and locating its contexts.

A wing of :mod:`ragsweep.harness`: it never imports ``board`` (``tests/test_imports.py``).
"""
