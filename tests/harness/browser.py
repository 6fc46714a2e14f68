"""A headless Debian chromium driven over the DevTools protocol, for the tests of the pages ragsweep writes.

A page is loaded from a file with the browser's network unused: :func:`problems` lists every request
that is not ``file:`` or ``data:``, every console error or warning and every uncaught exception. CI
installs ``chromium`` (Debian's package); without it the browser tests skip and say so.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import time
import urllib.request
import zlib
from pathlib import Path

import pytest

CHROMIUM = next((p for p in (os.environ.get("CHROMIUM"), shutil.which("chromium"), shutil.which("chromium-browser"),
                             shutil.which("google-chrome")) if p), None)
ARTIFACTS = Path(__file__).resolve().parents[2] / "outputs" / "test-artifacts"
needs_chromium = pytest.mark.skipif(CHROMIUM is None, reason="no chromium: apt-get install -y chromium")


class Browser:
    """One headless chromium and a DevTools connection to its first tab."""

    def __init__(self, profile: Path) -> None:
        websockets = pytest.importorskip("websockets.sync.client", reason="needs the websockets package (dev extra)")
        self.proc = subprocess.Popen(
            [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
             "--disable-background-networking", "--disable-component-update", "--disable-sync",
             "--disable-dev-shm-usage", "--remote-debugging-port=0", "--remote-allow-origins=*",
             f"--user-data-dir={profile}", "about:blank"],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, start_new_session=True)
        port = None
        deadline = time.monotonic() + 30
        while port is None and time.monotonic() < deadline:  # chromium prints its DevTools port on stderr
            line = self.proc.stderr.readline()
            if not line and self.proc.poll() is not None:
                raise RuntimeError(f"chromium exited with {self.proc.returncode}")
            if m := re.search(r"DevTools listening on ws://[^:]+:(\d+)/", line):
                port = int(m.group(1))
        assert port, "chromium did not report a DevTools port"
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # localhost, never a proxy
        tabs = json.loads(opener.open(f"http://127.0.0.1:{port}/json/list", timeout=10).read())
        page = next(t for t in tabs if t["type"] == "page")
        self._connection = websockets.connect(page["webSocketDebuggerUrl"], max_size=None, open_timeout=10)
        self.ws = self._connection.__enter__()
        self.next_id, self.events = 0, []

    def call(self, method: str, **params):
        self.next_id += 1
        self.ws.send(json.dumps({"id": self.next_id, "method": method, "params": params}))
        while True:
            msg = json.loads(self.ws.recv(timeout=30))
            if msg.get("id") == self.next_id:
                assert "error" not in msg, msg
                return msg["result"]
            self.events.append(msg)

    def wait_for(self, event: str, timeout: float = 30.0) -> None:
        deadline = time.monotonic() + timeout
        while not any(e.get("method") == event for e in self.events):
            self.events.append(json.loads(self.ws.recv(timeout=max(0.1, deadline - time.monotonic()))))

    def close(self) -> None:
        self._connection.__exit__(None, None, None)
        os.killpg(self.proc.pid, 15)  # only the chromium this test started (its own session)
        self.proc.wait(timeout=10)


def problems(events: list[dict]) -> list[str]:
    """Console errors and warnings, uncaught exceptions, log errors, and requests off this machine."""
    out = []
    for e in events:
        m, p = e.get("method"), e.get("params", {})
        if m == "Runtime.consoleAPICalled" and p["type"] in ("error", "warning", "assert"):
            out.append(f"console.{p['type']}: {[a.get('value') for a in p['args']]}")
        elif m == "Runtime.exceptionThrown":
            out.append(f"exception: {p['exceptionDetails'].get('text')}")
        elif m == "Log.entryAdded" and p["entry"]["level"] in ("error", "warning"):
            out.append(f"log {p['entry']['level']}: {p['entry']['text']}")
        elif m == "Network.requestWillBeSent" and not p["request"]["url"].startswith(("file:", "data:")):
            out.append(f"network request: {p['request']['url']}")
    return out


def assert_not_blank(png: bytes) -> None:
    """A real screenshot: large, and its decompressed pixel rows far from one repeated value."""
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 20_000, len(png)
    idat, i = b"", 8
    while i < len(png):
        n = int.from_bytes(png[i:i + 4], "big")
        if png[i + 4:i + 8] == b"IDAT":
            idat += png[i + 8:i + 8 + n]
        i += 12 + n
    raw = zlib.decompress(idat)
    assert len(set(raw[::7])) > 16
