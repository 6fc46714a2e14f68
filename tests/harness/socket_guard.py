"""Run ``ragsweep`` with every network connection refused and recorded: ``python socket_guard.py LOG ARGS``.

Each attempt to reach a host (a DNS lookup, an IPv4 or IPv6 connect) appends a line to LOG and
raises ``OSError``, so a test can assert that a command opened no socket at all.
"""

from __future__ import annotations

import runpy
import socket
import sys

LOG = sys.argv.pop(1)
_INET = (socket.AF_INET, socket.AF_INET6)


def _record(what: str) -> OSError:
    with open(LOG, "a", encoding="utf-8") as fh:
        fh.write(what + "\n")
    return OSError(f"socket_guard: {what} refused")


def _connect(self: socket.socket, address: object) -> None:
    if self.family in _INET:
        raise _record(f"connect {address!r}")
    return _real_connect(self, address)


def _getaddrinfo(host: object, *args: object, **kwargs: object) -> list:
    raise _record(f"getaddrinfo {host!r}")


def _create_connection(address: object, *args: object, **kwargs: object) -> socket.socket:
    raise _record(f"create_connection {address!r}")


_real_connect = socket.socket.connect
socket.socket.connect = _connect  # type: ignore[method-assign]
socket.socket.connect_ex = _connect  # type: ignore[method-assign,assignment]
socket.getaddrinfo = _getaddrinfo  # type: ignore[assignment]
socket.create_connection = _create_connection  # type: ignore[assignment]
sys.argv[0] = "ragsweep"
runpy.run_module("ragsweep.harness.cli", run_name="__main__", alter_sys=True)
