"""A documentation set nobody tuned on: the Markdown READMEs of installed Python packages (issue #34).

A wheel's ``*.dist-info/METADATA`` carries the project's long description (usually its README) as the
message body, with ``Description-Content-Type`` saying its format. This writes the body of every one whose
format is ``text/markdown`` to ``OUT/<package>.md`` (one page per package, the newest version when the
environment holds two), skipping bodies shorter than ``--min-chars`` (a one-line description is no page to
ask of) and the packages named by ``--exclude`` (by default this project, whose README we wrote, and
fastapi, whose docs were read while tuning the styles). The package list is printed, so a results file can give it and the set is fixed before it is read.

    python benchmarks/package_readmes.py OUT                     # from the interpreter's site-packages
    python benchmarks/package_readmes.py OUT --site /path/to/site-packages --min-chars 2000
"""

from __future__ import annotations

import argparse
import sysconfig
from email.parser import Parser
from pathlib import Path


#: Pages that are not unseen here: our own README, and FastAPI's (its docs are the tuning set).
SEEN = ("ragsweep", "fastapi")


def markdown_readmes(site: Path, min_chars: int, exclude: tuple[str, ...] = SEEN) -> dict[str, str]:
    """package name -> its Markdown long description, for the ``*.dist-info`` folders of ``site``."""
    found: dict[str, str] = {}
    for meta in sorted(site.glob("*.dist-info/METADATA")):
        msg = Parser().parsestr(meta.read_text(encoding="utf-8", errors="replace"))
        kind = (msg.get("Description-Content-Type") or "").split(";")[0].strip().lower()
        body = msg.get_payload()
        if not isinstance(body, str) or not body.strip():
            body = msg.get("Description") or ""  # metadata 2.0 and older put it in a header
        name = (msg.get("Name") or meta.parent.name.split("-")[0]).strip().lower().replace("_", "-")
        if kind != "text/markdown" or len(body.strip()) < min_chars or name in exclude:
            continue
        found[name] = body.strip() + "\n"
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path, help="folder to write the pages to (created)")
    parser.add_argument("--site", type=Path, default=Path(sysconfig.get_paths()["purelib"]),
                        help="the site-packages folder to read (default: this interpreter's)")
    parser.add_argument("--min-chars", type=int, default=1500, help="skip long descriptions shorter than this")
    parser.add_argument("--exclude", nargs="*", default=list(SEEN), help="package names to leave out")
    args = parser.parse_args(argv)
    pages = markdown_readmes(args.site, args.min_chars, tuple(args.exclude))
    args.out.mkdir(parents=True, exist_ok=True)
    for name, text in pages.items():
        (args.out / f"{name}.md").write_text(text, encoding="utf-8")
    print(f"{len(pages)} pages from {args.site}:")
    print(" ".join(sorted(pages)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
