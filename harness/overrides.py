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


def first_job(args: list[str]) -> tuple[list[str], list[str]]:
    """``args`` with every sweep override (``chunker.size=256,512``) set to its first value, and a note
    per sweep. ``--cfg`` and ``--info`` compose one config, where Hydra reads a sweep as an ambiguous
    value (exit 1); shown the first job's config instead, a multirun command answers them."""
    from hydra.core.override_parser.overrides_parser import OverridesParser

    parser = OverridesParser.create()
    out, notes, skip = [], [], False
    for a in args:
        if skip or a.startswith("-"):
            skip = not skip and a in VALUE_FLAGS
            out.append(a)
            continue
        override = parser.parse_override(a)
        if override.is_sweep_override():
            values = list(override.sweep_string_iterator())
            a = f"{override.get_key_element()}={values[0]}"
            notes.append(f"ragsweep: note: showing the first job's config ({a} of {', '.join(values)})")
        out.append(a)
    return out, notes
