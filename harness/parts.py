"""Building the swappable parts from their configs: :func:`gen.parts.build`, for the harness apps.

The function lives in ``gen`` (the lower layer) so that ``ragsweep gen`` builds its parts without
importing ``harness``.
"""

from __future__ import annotations

from ragsweep.gen.parts import build

__all__ = ["build"]
