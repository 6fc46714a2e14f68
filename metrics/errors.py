"""Errors shared by every stage. ``metrics`` is the leaf package, so they live here."""

import sys
from typing import NoReturn


class InputError(ValueError):
    """Bad user input: a missing file, row or column, an unknown option.

    The message names the file and, where there is one, the row and column. The command-line
    entry points turn it into a one-line message and exit code 2.
    """


class JudgeError(RuntimeError):
    """A model call failed for good (after retries and one repair), with the raw text kept."""

    def __init__(self, message: str, raw: str | None = None) -> None:
        super().__init__(message)
        self.raw = raw


def fail(message: str) -> NoReturn:
    """End a command on bad input: one line on stderr, exit code 2 (the CLI contract)."""
    print(f"ragsweep: error: {message}", file=sys.stderr)
    raise SystemExit(2)
