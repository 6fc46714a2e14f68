"""Errors, exit codes and credential scrubbing shared by every stage. ``metrics`` is the leaf package, so they live here."""

from __future__ import annotations

import os
import re
import sys
from typing import Any, NoReturn

#: Exit codes of every command (the CI contract).
EXIT_OK = 0             # done; every threshold holds
EXIT_THRESHOLD = 1      # done; a threshold fails
EXIT_BAD_INPUT = 2      # bad input, refused before any work (one line on stderr)
EXIT_NOT_SCORED = 3     # done, but nothing was measured: every judged score (or every score) is an error,
                        # or every job of a sweep, run or rescore failed
EXIT_SOME_FAILED = 4    # done, but some jobs failed (the board of the others is written)

REDACTED = "<redacted>"

# Things that look like credentials wherever they appear in a message or a server's error body,
# each with what replaces it (the name before a value is kept).
_SECRET_PATTERNS: tuple[tuple[re.Pattern[str], str], ...] = (
    # an Authorization header echoed back, in any quoting
    (re.compile(r"(?i)(\b(?:proxy-)?authorization[\"']?\s*[:=]\s*[\"']?)[^\"'\r\n,}]+"), rf"\1{REDACTED}"),
    # a bearer token: 8+ characters, one of them not a letter (so "bearer instruments" stays)
    (re.compile(r"(?i)\b(bearer\s+)(?=[A-Za-z]*[0-9._~+/=-])[A-Za-z0-9._~+/=-]{8,}"), rf"\1{REDACTED}"),
    # the user and password in a URL (http://user:pw@host/...)
    (re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)[^/?#\s@\"']+@"), rf"\1{REDACTED}@"),
    # key=value and "key": "value" for the usual names of secrets (values of 8+ characters)
    (re.compile(r"(?i)(\b[\w-]*(?:api[_-]?key|apikey|access[_-]?token|auth[_-]?token|secret|password|passwd)"
                r"[\"']?\s*[:=]\s*[\"']?)[^\"'\s&,;}]{8,}"), rf"\1{REDACTED}"),
    # key formats of common providers
    (re.compile(r"\bsk-[A-Za-z0-9_-]{8,}"), REDACTED),                       # OpenAI, Anthropic, most servers
    (re.compile(r"\b(?:gh[pousr]|github_pat)_[A-Za-z0-9_]{16,}"), REDACTED),  # GitHub
    (re.compile(r"\bhf_[A-Za-z0-9]{16,}"), REDACTED),                        # Hugging Face
    (re.compile(r"\bAKIA[0-9A-Z]{16}\b"), REDACTED),                          # AWS access key id
    (re.compile(r"\bAIza[0-9A-Za-z_-]{30,}"), REDACTED),                      # Google
    (re.compile(r"\bxox[abprs]-[A-Za-z0-9-]{10,}"), REDACTED),                # Slack
)
# Per pattern, lower-case words one of which its match must contain: a text without any is not searched
# (a plain substring test is far cheaper than a regex pass, and most texts hold no credential at all).
_TRIGGERS: tuple[tuple[str, ...], ...] = (
    ("authorization",), ("bearer",), ("://",),
    ("api", "key", "token", "secret", "passw"),
    ("sk-",), ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"), ("hf_",), ("akia",), ("aiza",), ("xox",),
)
assert len(_TRIGGERS) == len(_SECRET_PATTERNS)
_KEY_FORMATS = _SECRET_PATTERNS[4:]
_SECRET_ENV_NAME = re.compile(r"(?i)(key|token|secret|passw|credential)")
_secrets: set[str] = set()


class InputError(ValueError):
    """Bad user input: a missing file, row or column, an unknown option.

    The message names the file and, where there is one, the row and column. The command-line
    entry points turn it into a one-line message and exit code 2.
    """


class JudgeError(RuntimeError):
    """A model call failed for good (after retries and one repair), with the raw text kept.

    Message and raw text are scrubbed of credentials (:func:`scrub`) here, where every such error
    is made, so a server that echoes the request's Authorization header cannot put the key into
    explanations, logs or caches.
    """

    def __init__(self, message: str, raw: str | None = None) -> None:
        super().__init__(scrub(message))
        self.raw = scrub(raw) if raw is not None else None


def register_secret(value: str | None) -> None:
    """Remember a credential in use (an API key read from the environment) so :func:`scrub` removes it,
    from every string written and every log record (:func:`install_log_scrubber`)."""
    if value and len(value) >= 8:
        _secrets.add(value)
        install_log_scrubber()


def url_password(value: str) -> bool:
    """Whether ``value`` holds a URL with a literal password (``scheme://user:password@host``); a
    ``${oc.env:...}`` reference in its place is not one."""
    return any(":" in m.group(1) and "${" not in m.group(1)
               for m in re.finditer(r"(?i)\b[a-z][a-z0-9+.-]*://([^/?#\s@\"']+)@", value))


def register_url(url: str | None) -> None:
    """Remember the password of a URL's ``user:password@`` part, and the Basic credentials an HTTP client
    makes of it, so a server that echoes either has it scrubbed (the URL form is scrubbed by pattern)."""
    from urllib.parse import unquote, urlsplit

    try:
        parts = urlsplit(url or "")
    except ValueError:
        return
    if parts.password:
        import base64

        user, password = unquote(parts.username or ""), unquote(parts.password)
        register_secret(password)
        register_secret(base64.b64encode(f"{user}:{password}".encode()).decode())
    install_log_scrubber()


_ENV_REF = re.compile(r"\$\{oc\.env:\s*([A-Za-z_][A-Za-z0-9_]*)")
_USERINFO = re.compile(r"(?i)\b[a-z][a-z0-9+.-]*://([^/?#\s@\"']+)@")


def register_config_secrets(tree: Any) -> None:
    """Register (:func:`register_secret`) the credentials a config points at: the values of the variables
    named by keys such as ``api_key_env`` or ``token_env``, of ``${oc.env:NAME}`` references in a URL's
    ``user:password@`` part or with a NAME that says it holds a secret, and passwords written in URLs.
    ``tree`` is the config as plain dicts and lists, unresolved (so the references are still there).
    Other references (``${oc.env:RAGSWEEP_CACHE_DIR}``) are left alone: a folder is no secret."""
    if isinstance(tree, dict):
        for key, value in tree.items():
            name = str(key)
            if (name.endswith("_env") and _SECRET_ENV_NAME.search(name) and isinstance(value, str)
                    and value in os.environ):
                register_secret(os.environ[value])
            register_config_secrets(value)
    elif isinstance(tree, (list, tuple)):
        for value in tree:
            register_config_secrets(value)
    elif isinstance(tree, str):
        in_userinfo = {n for m in _USERINFO.finditer(tree) for n in _ENV_REF.findall(m.group(1))}
        for name in _ENV_REF.findall(tree):
            if name in in_userinfo or _SECRET_ENV_NAME.search(name):
                register_secret(os.environ.get(name))
        if "://" in tree and "${" not in tree:  # a reference is registered by the value it names, above
            register_url(tree)


class _ScrubbedRecords:
    """A log record factory that scrubs each record's message (and its traceback) when it is made, so
    every handler -- Hydra's console and job log, a user's own -- only ever sees the scrubbed text."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        record = self.inner(*args, **kwargs)
        try:
            message = record.getMessage()
        except Exception:  # noqa: BLE001 - a bad format string is the logging module's to report
            return record
        record.msg, record.args = scrub(message), None
        if record.exc_info and not record.exc_text:
            import logging

            record.exc_text = scrub(logging.Formatter().formatException(record.exc_info))
        return record


def install_log_scrubber() -> None:
    """Scrub every log record of this process from now on (once; later calls do nothing)."""
    import logging

    factory = logging.getLogRecordFactory()
    if not isinstance(factory, _ScrubbedRecords):
        logging.setLogRecordFactory(_ScrubbedRecords(factory))


def _known_secrets() -> list[str]:
    # The registered keys, and the values of variables whose names say they hold one (a key read by
    # code that never registered it: an embedder's, a target's), longest first.
    env = {v for k, v in os.environ.items()
           if _SECRET_ENV_NAME.search(k) and len(v) >= 12 and not v.startswith(("/", "~", "."))
           and not any(c.isspace() for c in v)}
    return sorted(_secrets | env, key=len, reverse=True)


def _scrub(text: str, secrets: list[str]) -> str:
    for secret in secrets:
        if secret in text:
            text = text.replace(secret, REDACTED)
    low = text.lower()
    for (pattern, replacement), triggers in zip(_SECRET_PATTERNS, _TRIGGERS):
        if any(t in low for t in triggers):
            text = pattern.sub(replacement, text)
    return text


def scrub(text: str) -> str:
    """``text`` with anything that looks like a credential replaced by ``<redacted>``.

    Removes the keys in use (see :func:`register_secret`, and the values of variables named like
    ``*KEY*``, ``*TOKEN*``, ``*SECRET*``; a URL's password and its Basic form, see :func:`register_url`),
    Authorization header values, ``Bearer ...`` tokens, the ``user:password@`` of URLs,
    ``api_key=...`` / ``"password": "..."`` values and the usual key formats (``sk-...``, ``ghp_...``,
    ``hf_...``, ``AKIA...``).
    """
    return _scrub(text, _known_secrets()) if text else text


def scrub_all(obj: Any) -> Any:
    """:func:`scrub` applied to every string inside nested dicts, lists and tuples (keys kept)."""
    secrets = _known_secrets()

    def walk(o: Any) -> Any:
        if isinstance(o, str):
            return _scrub(o, secrets) if o else o
        if isinstance(o, dict):
            return {k: walk(v) for k, v in o.items()}
        if isinstance(o, (list, tuple)):
            return type(o)(walk(v) for v in o)
        return o

    return walk(obj)


def holds_key_format(value: str) -> bool:
    """Whether ``value`` holds a string in a known key format (``sk-...``) anywhere."""
    return any(p.search(value) for p, _ in _KEY_FORMATS)


def looks_like_key(value: str) -> bool:
    """Whether a value meant to be a variable NAME (``llm.api_key_env``) looks like a key itself.

    True for the known key formats (``sk-...``) and for long strings (24+ characters) of mixed
    letters and digits without the ``_`` that variable names use.
    """
    value = value.strip()
    if not value:
        return False
    if holds_key_format(value):
        return True
    kinds = sum(bool(re.search(p, value)) for p in ("[a-z]", "[A-Z]", "[0-9]"))
    return len(value) >= 24 and "_" not in value and kinds >= 2


class CommandExit(SystemExit):
    """A command's end: its exit code and the one line it printed. A SystemExit, so it passes through
    Hydra as an exit code; the line is kept so that a caller in another process gets it as data
    (``harness/child.py``), not by reading stderr."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(code)
        self.message = message


def fail(message: str, code: int = EXIT_BAD_INPUT, *, warning: bool = False) -> NoReturn:
    """End a command: one line on stderr (``ragsweep: error: ...``, or ``warning`` when the command did its
    work but not all of it) and the exit code, 2 (bad input) unless given (the CLI contract)."""
    message = scrub(message)
    print(f"ragsweep: {'warning' if warning else 'error'}: {message}", file=sys.stderr)
    raise CommandExit(code, message)
