"""The flags of ``ragas_once`` (the seed project's CLI), translated to ``ragsweep score`` overrides.

``python -m ragas_once.cli --apibase=URL --model=NAME --apikey=KEY --dataset=FILE --metrics=a,b
--embeddings=NAME`` keeps working as ``ragsweep score`` with the same flags (``--flag value`` or
``--flag=value``, and the older spellings ``--llm``, ``--embedding``, ``--api_base``,
``--api_key``), mixed freely with ``key=value`` overrides:

==========================  =====================================================================
``--dataset F``             ``input=F``, and ``out=.`` unless ``out=`` is given (ragas_once wrote
                            its CSVs to the current folder)
``--metrics a,b``           ``metrics=[a,b]``, Ragas names translated (:mod:`metrics.aliases`)
``--model M``               ``llm=openai llm.model=M``
``--model none``            ``llm=none``: no judge (``--llm none`` too), as ``llm=none`` means here;
                            ``--apibase``/``--apikey`` then only serve ``--embeddings``
``--apibase URL``           ``llm=openai llm.base_url=URL`` (and ``embedder.base_url`` when the
                            embedder is ``openai``)
``--apikey KEY``            ``llm=openai llm.api_key_env=<private variable holding KEY>``
``--apikey env:NAME``       ``llm=openai llm.api_key_env=NAME`` (NAME must be set)
``--embeddings E``          ``embedder=openai embedder.model=E``
==========================  =====================================================================

Flags left out keep our defaults (``llm.model`` of ``conf/llm/openai.yaml``, the local MiniLM
embedder, the default metrics), not ragas_once's. Any other ``--flag`` goes to Hydra untouched.

The key never becomes an argument or a config value: it is put into this process's environment
under :data:`KEY_ENV`, and only that name reaches the config (and so ``config.yaml``); the
backends read the key from there at their first call and keep it out of logs and cache keys.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from ragsweep.harness.overrides import VALUE_FLAGS
from ragsweep.metrics import InputError, alias_note, canonical, fail

#: Every spelling of a ragas_once flag -> what it sets.
FLAGS: dict[str, str] = {
    "--dataset": "dataset",
    "--metrics": "metrics",
    "--model": "model", "--llm": "model",
    "--apibase": "apibase", "--api_base": "apibase",
    "--apikey": "apikey", "--api_key": "apikey",
    "--embeddings": "embeddings", "--embedding": "embeddings",
}

#: The variable that holds a key given as ``--apikey KEY``, for this process (and its children) only.
KEY_ENV = "RAGSWEEP_KEY_FROM_APIKEY_FLAG"

KEY_WARNING = ("ragsweep: warning: an API key on the command line is visible to other users of this "
               "machine (ps, /proc) and stays in your shell history; use --apikey env:NAME to read "
               "it from the environment variable NAME instead")

_VAR_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


@dataclass(frozen=True)
class Translation:
    """What the flags become.

    Attributes:
        args: The arguments for Hydra: the user's own, in order, then the translated overrides.
        environ: Variables to set in this process (the key of ``--apikey KEY``); never arguments.
        notes: Lines for stderr (the key warning, alias translations, where the files go).
    """

    args: list[str]
    environ: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


def quoted(value: str) -> str:
    """``value`` as a single-quoted Hydra override value, read back exactly.

    Inside quotes Hydra keeps backslashes except before a quote, so a run of backslashes before
    an inner quote or the closing one is doubled; ``${`` is escaped so OmegaConf does not
    interpolate a path or URL that happens to contain it.
    """
    body = re.sub(r"(\\+)(?='|$)", lambda m: m.group(1) * 2, value)
    return "'" + body.replace("'", "\\'").replace("${", "\\${") + "'"


def split_flags(args: Sequence[str]) -> tuple[dict[str, tuple[str, str]], list[str]]:
    """The ragas_once flags (``what -> (spelling, value)``, the last one winning) and the other arguments.

    Raises:
        InputError: A flag without a value.
    """
    flags: dict[str, tuple[str, str]] = {}
    rest: list[str] = []
    i = 0
    while i < len(args):
        arg = args[i]
        name, eq, value = arg.partition("=")
        if name not in FLAGS:
            rest.append(arg)
        else:
            if not eq:
                if i + 1 == len(args) or args[i + 1].startswith("-"):
                    raise InputError(f"{name} needs a value: {name} VALUE or {name}=VALUE")
                i += 1
                value = args[i]
            if not value.strip():
                raise InputError(f"{name} needs a value: {name} VALUE or {name}=VALUE")
            flags[FLAGS[name]] = (name, value)
        i += 1
    return flags, rest


def _user_overrides(args: Sequence[str]) -> dict[str, str]:
    """The user's ``key=value`` overrides by key (``+``/``++``/``~`` prefixes dropped)."""
    out = {}
    for arg in args:
        if not arg.startswith("-") and "=" in arg:
            key, _, value = arg.partition("=")
            out[key.lstrip("+~")] = value
    return out


def _key_env(spelling: str, value: str, environ: Mapping[str, str]) -> tuple[str, dict[str, str], list[str]]:
    """The variable the backends read the key from, the variables to set, and the notes."""
    if not value.startswith("env:"):
        return KEY_ENV, {KEY_ENV: value}, [KEY_WARNING]
    name = value[len("env:"):]
    if not _VAR_NAME.fullmatch(name):
        raise InputError(f"{spelling} env:NAME: {name!r} is not an environment variable name")
    if not environ.get(name):
        raise InputError(f"{spelling} env:{name}: the environment variable {name} is "
                         f"{'empty' if name in environ else 'not set'}")
    return name, {}, []


def no_judge(flags: Mapping[str, tuple[str, str]]) -> bool:
    """``--model none`` (or ``--llm none``): no judge, as ``llm=none`` means on our command line; never
    a model named "none" at api.openai.com."""
    return "model" in flags and flags["model"][1].strip().lower() == "none"


def _refuse_judge_flags(flags: Mapping[str, tuple[str, str]], embeds_online: bool) -> None:
    """With no judge, ``--apibase`` and ``--apikey`` configure only an OpenAI-compatible embedder."""
    stray = [flags[k][0] for k in ("apibase", "apikey") if k in flags]
    if stray and not embeds_online:
        model = flags["model"][0]
        raise InputError(f"{model} none means no judge, so {' and '.join(stray)} would configure nothing: "
                         f"drop {' and '.join(stray)}, or name the judge's model ({model} gpt-4o-mini)")


def _key_of(flags: Mapping[str, tuple[str, str]],
            environ: Mapping[str, str]) -> tuple[str | None, dict[str, str], list[str]]:
    """``--apikey``'s variable name, the variables to set and the notes (None, {}, [] without it)."""
    if "apikey" not in flags:
        return None, {}, []
    spelling, value = flags["apikey"]
    return _key_env(spelling, value, environ)


def _judge_overrides(flags: Mapping[str, tuple[str, str]], key_env: str | None) -> list[tuple[str, str, str, bool]]:
    """``llm=openai`` and its model, base URL and key variable, from ``--model``, ``--apibase``, ``--apikey``."""
    judge = [flags[k] for k in ("model", "apibase", "apikey") if k in flags]
    if not judge:
        return []
    ours = [("llm", "openai", judge[0][0], False)]
    if "model" in flags:
        ours.append(("llm.model", quoted(flags["model"][1]), flags["model"][0], False))
    if "apibase" in flags:
        ours.append(("llm.base_url", quoted(flags["apibase"][1]), flags["apibase"][0], False))
    if key_env is not None:
        ours.append(("llm.api_key_env", key_env, flags["apikey"][0], False))
    return ours


def translate(args: Sequence[str], environ: Mapping[str, str] | None = None) -> Translation:
    """Translate the ragas_once flags among ``args``; arguments without any come back unchanged.

    Args:
        args: The arguments after ``ragsweep score``.
        environ: Where ``--apikey env:NAME`` looks NAME up (default: this process's environment).

    Raises:
        InputError: A flag without a value, an unset ``env:NAME``, a metric name we do not
            compute, or a flag and an override that set one key to different values.
    """
    flags, rest = split_flags(args)
    if not flags:
        return Translation(list(args))
    environ = os.environ if environ is None else environ
    user = _user_overrides(rest)
    notes: list[str] = []
    # (key, override value, flag spelling, derived): a derived setting yields to the user's own.
    ours: list[tuple[str, str, str, bool]] = []

    if "dataset" in flags:
        spelling, path = flags["dataset"]
        ours.append(("input", quoted(path), spelling, False))
        if "out" not in user:
            ours.append(("out", "'.'", spelling, False))
            notes.append("ragsweep: note: result.csv, summary.csv, explanations.jsonl and config.yaml go "
                         "to the current folder, as with ragas_once (out=FOLDER to choose another)")
    if "metrics" in flags:
        spelling, value = flags["metrics"]
        names = [n.strip() for n in value.split(",") if n.strip()]
        if not names:
            raise InputError(f"{spelling} names no metric: {spelling} a,b")
        ours.append(("metrics", "[" + ",".join(quoted(canonical(n)) for n in names) + "]", spelling, False))
        notes += [f"ragsweep: note: {line}" for n in names if (line := alias_note(n))]
    key_env, env, key_notes = _key_of(flags, environ)
    notes = key_notes + notes
    embeds_online = "embeddings" in flags or user.get("embedder") == "openai"
    if no_judge(flags):
        ours.append(("llm", "none", flags["model"][0], False))
        _refuse_judge_flags(flags, embeds_online)
    else:
        ours += _judge_overrides(flags, key_env)
    if "embeddings" in flags:
        spelling, model = flags["embeddings"]
        ours += [("embedder", "openai", spelling, False), ("embedder.model", quoted(model), spelling, False)]
    if embeds_online:
        # ragas_once embedded through the same endpoint, with the same key
        if "apibase" in flags:
            ours.append(("embedder.base_url", quoted(flags["apibase"][1]), flags["apibase"][0], True))
        if key_env is not None:
            ours.append(("embedder.api_key_env", key_env, flags["apikey"][0], True))

    added = []
    for key, value, spelling, derived in ours:
        if key in user:
            if derived or user[key] == value:
                continue
            raise InputError(f"{spelling} and {key}={user[key]} both set {key}; keep one")
        added.append(f"{key}={value}")
    # Hydra's flags first, then every override: argparse takes the overrides as one positional run.
    options, overrides = _split_options(rest)
    return Translation([*options, *overrides, *added], env, notes)


def _split_options(args: Sequence[str]) -> tuple[list[str], list[str]]:
    """Hydra's own flags (with their values) and the overrides, each in the order given."""
    options: list[str] = []
    overrides: list[str] = []
    takes_value = False
    for arg in args:
        if takes_value or arg.startswith("-"):
            options.append(arg)
            takes_value = not takes_value and arg in VALUE_FLAGS
        else:
            overrides.append(arg)
    return options, overrides


def apply(args: list[str]) -> list[str]:
    """Translate the flags for this process: notes on stderr, the key into the environment.

    Returns:
        The arguments for Hydra. Bad flags end the command with exit code 2 (one line on stderr).
    """
    try:
        result = translate(args)
    except InputError as exc:
        fail(str(exc))
    for line in result.notes:
        print(line, file=sys.stderr)
    os.environ.update(result.environ)
    return result.args
