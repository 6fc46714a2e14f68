"""The code blocks of the README and the docs site, and how each is checked (tests/test_docs.py).

A fenced block is read with the HTML comment on the line before it, which says how it is checked:

- no comment: the block runs for real in a fresh folder of its page (a ``bash`` block: each
  ``ragsweep`` command, which must exit 0; a ``python`` block: executed in the page's namespace);
- ``<!-- not run: REASON -->``: it needs a server, real data, a model or a long time; each command is
  still checked cheaply (its overrides compose, its benchmark flags exist, its extras are declared);
- ``<!-- file: NAME -->``: the block is a file the docs' commands use (written into every page's folder);
- ``<!-- tested-by: PATH -->`` (or the walk-through's own marker): a test elsewhere runs it.

Blocks in ``text``, ``yaml``, ``csv`` or ``json`` are not code; a block without a language is refused,
so that no command escapes the checks.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHELL = {"bash", "sh", "shell", "console"}
PYTHON = {"python", "py"}
NOT_CODE = {"text", "yaml", "csv", "json", "jsonl", "toml", "markdown"}
_FENCE = re.compile(r"^(?P<indent>\s*)```(?P<lang>[\w+-]*)\s*$")
_MARKER = re.compile(r"^\s*<!--\s*(?P<kind>not run|file|tested-by|walkthrough:start)\s*:?\s*(?P<arg>.*?)\s*-->\s*$")


@dataclass(frozen=True)
class Block:
    """One fenced block: where it is, its language, its text and how it is checked."""

    page: str
    line: int
    lang: str
    code: str
    kind: str | None = None  # None (run), "not run", "file", "tested-by"
    arg: str = ""

    @property
    def where(self) -> str:
        return f"{self.page}:{self.line}"


def pages() -> list[Path]:
    """The README and every page of the site (the generator scripts under docs/scripts are not pages)."""
    return [ROOT / "README.md", *sorted(p for p in (ROOT / "docs").rglob("*.md") if "scripts" not in p.parts)]


def _marker(lines: list[str], at: int) -> tuple[str | None, str]:
    """The marker comment on the nearest non-blank line before the fence at index ``at``."""
    i = at - 1
    while i >= 0 and not lines[i].strip():
        i -= 1
    found = _MARKER.match(lines[i]) if i >= 0 else None
    if not found:
        return None, ""
    if found["kind"] == "walkthrough:start":
        return "tested-by", "tests/test_api.py"
    return found["kind"], found["arg"]


def blocks(path: Path) -> list[Block]:
    """Every fenced block of a page, in order."""
    lines = path.read_text(encoding="utf-8").splitlines()
    page = path.relative_to(ROOT).as_posix()
    out: list[Block] = []
    i = 0
    while i < len(lines):
        opened = _FENCE.match(lines[i])
        if not opened:
            i += 1
            continue
        indent, body, j = len(opened["indent"]), [], i + 1
        while j < len(lines) and not (_FENCE.match(lines[j]) and not _FENCE.match(lines[j])["lang"]):
            body.append(lines[j][indent:] if lines[j][:indent].strip() == "" else lines[j])
            j += 1
        kind, arg = _marker(lines, i)
        out.append(Block(page, i + 1, opened["lang"], "\n".join(body) + "\n", kind, arg))
        i = j + 1
    return out


def commands(code: str) -> list[list[str]]:
    """The commands of a shell block: continuation lines joined, comments dropped, ``&&`` chains split, and a
    command substitution (``$(date +%F)``) replaced by one word, as the shell would."""
    joined = re.sub(r"\$\([^)]*\)", "x", re.sub(r"\\\n\s*", " ", code))
    out = []
    for line in joined.splitlines():
        words = shlex.split(line, comments=True)
        while words:
            cut = words.index("&&") if "&&" in words else len(words)
            out.append(words[:cut])
            words = words[cut + 1:]
    return [c for c in out if c]


def program(words: list[str]) -> tuple[dict[str, str], list[str]]:
    """Split ``VAR=value cmd args`` into the environment assignments and the command."""
    env = {}
    while words and re.match(r"^[A-Z_][A-Z0-9_]*=", words[0]):
        key, _, value = words[0].partition("=")
        env[key] = value
        words = words[1:]
    return env, words
