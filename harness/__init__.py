"""The front doors (the CLI, the Python API, ragas_once, the pytest plugin) and the commands, with three wings:
``pipeline`` (the reference pipeline), ``app`` (the user's application) and ``board`` (the leaderboard).

The package's face for other packages is :mod:`ragsweep.harness.api` (``__all__``), which the root
``ragsweep`` package re-exports; the command line is ``ragsweep.harness.cli:main``. Every other module is
internal. The API's names (``sweep``, ``run``, ``score``, ...) are also the names of command modules, so
they are not re-exported here: a loaded submodule would shadow them.
"""

__all__ = ["api"]
