"""The leaderboard: its model, paired comparisons, files, HTML page, plots, explorer, study report, MLflow.

A wing of :mod:`ragsweep.harness`: it reads run records and summaries, never the pipeline (``tests/test_imports.py``).
"""
