"""leaderboard.html in a real headless browser (Debian chromium), driven over the DevTools protocol.

The page is loaded from a file with the network of the browser unused: every request that is not
``file:`` or ``data:`` fails the test, as does any console error, warning or uncaught exception.
The full-page screenshot is kept in ``outputs/test-artifacts/`` (git-ignored). CI needs
``apt-get install -y chromium``; without it these tests skip and say so.
"""

from __future__ import annotations

import base64
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

from ragsweep.harness.leaderboard import build
from test_compare import BASE, fake_sweep

CHROMIUM = next((p for p in (os.environ.get("CHROMIUM"), shutil.which("chromium"), shutil.which("chromium-browser"),
                             shutil.which("google-chrome")) if p), None)
ARTIFACTS = Path(__file__).resolve().parents[2] / "outputs" / "test-artifacts"
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="no chromium: apt-get install -y chromium")
websockets = pytest.importorskip("websockets.sync.client", reason="needs the websockets package (dev extra)")


class Browser:
    """One headless chromium and a DevTools connection to its first tab."""

    def __init__(self, profile: Path) -> None:
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


def render(page: Path, tmp: Path, shot: Path) -> dict:
    """Load ``page``; return what the browser saw and write a full-page screenshot to ``shot``."""
    b = Browser(tmp / "profile")
    try:
        for domain in ("Page", "Runtime", "Log", "Network"):
            b.call(f"{domain}.enable")
        b.call("Emulation.setDeviceMetricsOverride", width=1400, height=900, deviceScaleFactor=1, mobile=False)
        b.call("Page.navigate", url=page.resolve().as_uri())
        b.wait_for("Page.loadEventFired")
        seen = b.call("Runtime.evaluate", returnByValue=True, expression="""(() => {
            const plots = [...document.querySelectorAll('svg.plot')];
            const th = document.querySelector('table.board th'); th.click();  // the sort script runs (ascending by rank: the order it had)
            return {plots: plots.length, drawn: plots.filter(s => {const r = s.getBoundingClientRect();
                      return r.width > 100 && r.height > 100 && s.querySelectorAll('circle,rect,path').length > 2;}).length,
                    rows: document.querySelectorAll('table.board tbody tr').length,
                    worse: document.querySelectorAll('tbody tr td:nth-child(2).worse').length,
                    ties: document.querySelectorAll('tbody tr td:nth-child(2).tie').length,
                    height: document.documentElement.scrollHeight, text: document.body.innerText.slice(0, 300)};})()""")
        value = seen["result"]["value"]
        b.call("Emulation.setDeviceMetricsOverride", width=1400, height=min(value["height"], 6000),
               deviceScaleFactor=1, mobile=False)
        png = base64.b64decode(b.call("Page.captureScreenshot", format="png")["data"])
        shot.parent.mkdir(parents=True, exist_ok=True)
        shot.write_bytes(png)
        time.sleep(0.2)
        b.call("Runtime.evaluate", expression="1")  # drain events that arrived meanwhile
        value["problems"] = problems(b.events)
        return value
    finally:
        b.close()


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


def test_leaderboard_page_renders_offline_with_plots_and_no_console_errors(tmp_path):
    worse = [v - 0.2 for v in BASE]
    sweep = fake_sweep(tmp_path / "sweep", {
        f"s{s}-k{k}": ({"chunker": "recursive", "chunker.size": s, "top_k": k},
                       {"ndcg@10": worse if s == 256 else BASE, "recall@10": [min(1.0, v + k / 20) for v in BASE]})
        for s in (256, 512) for k in (1, 5)})
    page = build(sweep, "ndcg@10", n_resamples=1000)["html"]
    seen = render(page, tmp_path, ARTIFACTS / "leaderboard-constructed.png")
    assert seen["problems"] == []
    assert seen["rows"] == 4 and seen["worse"] == 2 and seen["ties"] == 1
    # CI + difference forests, per metric (2): vs top_k, vs chunk size, one heatmap; and the cost plot
    assert seen["plots"] == seen["drawn"] == 2 + 2 * 3 + 1
    assert_not_blank((ARTIFACTS / "leaderboard-constructed.png").read_bytes())


@pytest.mark.slow
def test_a_real_sweep_writes_a_page_chromium_renders(tmp_path, ragsweep):
    out = ragsweep("sweep", "progress=false", "chunker.size=256,1024", "retriever.top_k=[1,3,10]", cwd=tmp_path)
    assert out.returncode == 0, out.stderr[-3000:]
    page = next((tmp_path / "outputs" / "sweeps").iterdir()) / "leaderboard.html"
    assert "leaderboard.html" in out.stdout and page.is_file()
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", page.read_text())  # nothing to fetch
    seen = render(page, tmp_path, ARTIFACTS / "leaderboard-shipped-corpus.png")
    assert seen["problems"] == [] and seen["rows"] == 6
    assert seen["plots"] == seen["drawn"] >= 2 + 9 * 3
    assert seen["worse"] >= 1 and "ragsweep leaderboard" in seen["text"]
    assert_not_blank((ARTIFACTS / "leaderboard-shipped-corpus.png").read_bytes())
