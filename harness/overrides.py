"""Telling Hydra's own command-line flags from the ``key=value`` overrides (no Hydra import needed)."""

from __future__ import annotations

# Hydra flags that take a value: the value is not an override.
VALUE_FLAGS = {"--cfg", "-c", "--package", "-p", "--config-path", "-cp", "--config-name", "-cn",
               "--config-dir", "-cd", "--experimental-rerun"}


def overrides_of(args: list[str]) -> list[str]:
    """The ``key=value`` overrides among Hydra's own flags and their values."""
    out, skip = [], False
    for a in args:
        if skip:
            skip = False
        elif a in VALUE_FLAGS:
            skip = True
        elif not a.startswith("-"):
            out.append(a)
    return out
