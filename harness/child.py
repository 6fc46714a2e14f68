"""A command run in a child process, and its result handed back as data.

``ragsweep.sweep`` and ``ragsweep.run`` (with overrides only) run their command as the CLI does, in a child
process: Hydra's multirun, launchers, logging and working folder then never touch the caller's process.
The child writes its exit code and the one line it ended with (:class:`metrics.errors.CommandExit`) as JSON
into the file named by :data:`RESULT_ENV`; the parent turns that into the API's return or exception.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

from ragsweep.metrics import EXIT_BAD_INPUT, EXIT_SOME_FAILED, InputError

RESULT_ENV = "RAGSWEEP_RESULT_FILE"
"""The environment variable naming the file a command writes its result into (unset: no file)."""


def report(code: int, message: str | None) -> None:
    """Write the command's result where :data:`RESULT_ENV` says (nothing when it is unset)."""
    path = os.environ.get(RESULT_ENV)
    if path:
        Path(path).write_text(json.dumps({"exit_code": code, "message": message}), encoding="utf-8")


def run_command(command: str, args: Sequence[str], *, echo: bool = False) -> None:
    """Run ``ragsweep <command> <args>`` in a child process; return when it ranked something (exit 0, or 4:
    some jobs failed and the board lists them).

    Raises:
        InputError: The command refused its input (exit 2), with the command's message.
        RuntimeError: Any other failure (exit 3: every job failed), with the command's message.
    """
    with tempfile.TemporaryDirectory(prefix="ragsweep-") as tmp:
        result = Path(tmp) / "result.json"
        env = {**os.environ, RESULT_ENV: str(result)}
        proc = subprocess.run([sys.executable, "-m", "ragsweep.harness.cli", command, *args], env=env,
                              capture_output=not echo, text=True)
        data = json.loads(result.read_text(encoding="utf-8")) if result.is_file() else {}
    code = int(data.get("exit_code", proc.returncode))
    if code in (0, EXIT_SOME_FAILED):
        return
    message = " ".join(str(data.get("message") or "").split()) or f"ragsweep {command} exited with {code}"
    if code == EXIT_BAD_INPUT:
        raise InputError(message)
    raise RuntimeError(f"ragsweep {command} failed (exit {code}): {message}")
