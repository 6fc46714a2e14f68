"""A package's face, loaded on first use: the names other packages may import, each from the module behind it.

``ragsweep.metrics`` and ``ragsweep.gen`` declare their face as a table (name -> ``module`` or
``module:attribute``) and hand :func:`attribute` their ``__getattr__``: importing one name then loads only
its module, so ``from ragsweep.metrics import InputError`` stays as cheap as the module that defines it.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from typing import Any


def attribute(package: str, face: Mapping[str, str], name: str) -> Any:
    """``package``'s face name ``name``: the attribute of the module the face table names for it."""
    if name not in face:
        raise AttributeError(f"module {package!r} has no attribute {name!r}")
    module, _, attr = face[name].partition(":")
    return getattr(importlib.import_module(f"{package}.{module}"), attr or name)
