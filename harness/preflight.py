"""A command's overrides checked before any work, so that bad input exits 2 with one line.

Three checks, in order, each raising :class:`InputError`:

- A single-run command (``score``, ``gen``, ``rescore``, ``board``, ``convert``) takes no sweep: an
  unquoted comma (``metrics=rouge_l,bleu``) is Hydra's sweep syntax, so the message shows the list
  and the quoted forms instead of Hydra's "Ambiguous value" (exit 1).
- Every key must be one the command's config has, or sit under a mapping that is open by design
  (``target.params``, ``metric_options``, ``thresholds``, ``metrics.options``: empty in the config);
  the keys of the metric-keyed ones must name metrics (aliases allowed). Hydra itself accepts any
  ``+key`` or ``++key``; a misspelt one would otherwise be ignored. The nearest known key is suggested.
- ``ragsweep sweep`` composes every job of the sweep (the sweeper's ``params`` crossed with the
  command line's values, as Hydra's basic sweeper expands them) and runs the job's own config checks
  on each (:func:`harness.sweep.check_config`: no corpus is read, no model loaded), before the sweep
  folder is claimed, so one bad value (``chunker.size=256,0,512``) refuses the whole command.
"""

from __future__ import annotations

import difflib
import importlib.resources
from collections.abc import Iterator, Sequence
from typing import Any

from omegaconf import DictConfig, OmegaConf

from ragsweep.metrics import InputError

#: Commands that run once: a sweep override is a mistake there. ``sweep`` and ``run`` are multiruns.
SINGLE_RUN = frozenset({"score", "gen", "rescore", "board", "convert"})

#: Mappings keyed by metric name (aliases allowed).
METRIC_KEYED = ("metric_options", "thresholds", "metrics.options")


def check(command: str, config_name: str, overrides: Sequence[str], jobs: bool = True) -> None:
    """Run every check on ``overrides`` of ``ragsweep <command>`` (``jobs=False``: all but each sweep job's
    own checks, which look for the files and folders it would read).

    Raises:
        InputError: A sweep on a single-run command, an unknown key, a metric-keyed entry that names
            no metric, a missing mandatory value, or a job of the sweep that its own checks refuse.
        HydraException, OmegaConfBaseException, ValueError: The overrides do not parse or compose.
    """
    from hydra import compose, initialize_config_module
    from hydra.core.override_parser.overrides_parser import OverridesParser

    parsed = OverridesParser.create().parse_overrides(list(overrides))
    if command in SINGLE_RUN:
        refuse_sweeps(command, parsed)
    with initialize_config_module(config_module="ragsweep.conf", version_base="1.3"):
        groups = [o for o in parsed if is_group(o)]
        base = compose(config_name=config_name, overrides=_first_values(groups), return_hydra_config=True)
        check_keys(command, [o for o in parsed if not is_group(o)], base)
        cfg = compose(config_name=config_name, overrides=_first_values(parsed, hydra=False))
        missing = sorted(OmegaConf.missing_keys(cfg))
        if missing:
            raise InputError(f"missing value for {', '.join(missing)}: pass {missing[0]}=...")
        check_metric_keys(cfg)
        if command == "sweep" and jobs:
            check_jobs(compose, config_name, parsed, base)


def _first_values(parsed: Sequence[Any], hydra: bool = True) -> list[str]:
    """The overrides with each sweep replaced by its first value (one config stands for them all)."""
    out = []
    for o in parsed:
        if o.is_hydra_override() and not hydra:
            continue
        if o.is_sweep_override():
            out.append(f"{o.get_key_element()}={next(iter(o.sweep_string_iterator()))}")
        else:
            out.append(o.input_line)
    return out


def refuse_sweeps(command: str, parsed: Sequence[Any]) -> None:
    """A sweep override on a command that runs once: say how to write a list or a text with a comma."""
    for o in parsed:
        if not o.is_sweep_override():
            continue
        key = o.get_key_element()
        try:
            values = list(o.sweep_string_iterator())
        except Exception:  # noqa: BLE001 - range/interval sweeps: no values to show
            values = []
        listed = f"'{key}=[{','.join(values)}]'" if values else f"'{key}=[a,b]'"
        text = f"'{key}=\"{','.join(values)}\"'" if values else f"'{key}=\"a,b\"'"
        raise InputError(f"{o.input_line}: a comma outside brackets or quotes makes Hydra read a sweep, and "
                         f"`ragsweep {command}` runs once. A list: {listed}; one text with a comma: {text}")


def is_group(o: Any) -> bool:
    """Whether an override chooses a config group (``chunker=token``, ``+experiment=grid``, ``hydra/launcher``)."""
    if o.is_hydra_override():
        return True
    key = o.key_or_group
    return "." not in key and importlib.resources.files("ragsweep.conf").joinpath(key).is_dir()


def _paths(node: Any, prefix: str = "") -> Iterator[str]:
    if isinstance(node, DictConfig):
        for key in node:
            path = f"{prefix}.{key}" if prefix else str(key)
            yield path
            yield from _paths(node._get_node(key), path)


def _nearest(word: str, known: Sequence[str]) -> str:
    near = difflib.get_close_matches(word, list(known), n=1, cutoff=0.6)
    return f" (did you mean {near[0]}?)" if near else ""


def check_keys(command: str, parsed: Sequence[Any], base: DictConfig) -> None:
    """Every overridden key exists in ``base``, or is added under an open mapping (empty in the config)."""
    known = [p for p in _paths(base) if p != "hydra" and not p.startswith("hydra.")]
    for o in parsed:
        if o.is_delete():
            continue
        key = o.key_or_group
        parts = key.split(".")
        node: Any = base
        for i, part in enumerate(parts):
            if isinstance(node, DictConfig) and part in node.keys():  # noqa: SIM118 - `in` alone misses a ??? value
                node = node._get_node(part)
                continue
            parent = ".".join(parts[:i])
            if isinstance(node, DictConfig) and parent and len(node) == 0:
                break  # an open mapping: its keys are the user's (metric names are checked on the whole config)
            raise InputError(f"unknown key {key}: `ragsweep {command}` has no such setting{_nearest(key, known)}")


def _metric_names() -> list[str]:
    from ragsweep.metrics import METRIC_ALIASES, metric_catalogue

    return [*metric_catalogue(), *METRIC_ALIASES]


def check_metric_keys(cfg: DictConfig) -> None:
    """The keys of ``metric_options``, ``thresholds`` and ``metrics.options`` name metrics (aliases allowed)."""
    from ragsweep.metrics import canonical, metric_catalogue, parse_name

    table = metric_catalogue()
    for path in METRIC_KEYED:
        head, _, rest = path.partition(".")
        node = cfg.get(head)
        if rest and isinstance(node, DictConfig):  # score's `metrics` is a list, the sweep's a mapping
            node = node.get(rest)
        if not isinstance(node, DictConfig):
            continue
        for name in node:
            try:
                base, _ = parse_name(canonical(str(name)))
            except InputError as exc:
                raise InputError(f"{path}.{name}: {exc}") from None
            if base not in table:
                raise InputError(f"{path}.{name}: {name} is not a metric{_nearest(str(name), _metric_names())}")


def check_jobs(compose: Any, config_name: str, parsed: Sequence[Any], base: DictConfig) -> None:
    """Compose every job of a basic-sweeper sweep and run the job's config checks on each.

    Jobs are expanded as Hydra's basic sweeper does: ``hydra.sweeper.params`` first, then the command
    line's task overrides (a key given on both wins from the command line). A sweeper that draws its
    own values (Optuna) gets its first-value config checked only.
    """
    from hydra._internal.core_plugins.basic_sweeper import BasicSweeper
    from hydra.core.override_parser.overrides_parser import OverridesParser
    from hydra.errors import HydraException

    from ragsweep.harness.sweep import check_config

    hydra_overrides = [o.input_line for o in parsed if o.is_hydra_override()]
    cache: dict[tuple[str, ...], DictConfig] = {}
    task = [o.input_line for o in parsed if not o.is_hydra_override()]
    params: list[str] = []
    if base.hydra.sweeper.get("_target_", "").endswith("BasicSweeper"):
        params = [f"{k}={v}" for k, v in (base.hydra.sweeper.get("params") or {}).items()]
        try:
            jobs = BasicSweeper.split_arguments(OverridesParser.create().parse_overrides(params + task), None)[0]
        except HydraException as exc:
            raise InputError(str(exc)) from None
    else:
        jobs = [_first_values([o for o in parsed if not o.is_hydra_override()])]
    swept = {o.get_key_element() for o in OverridesParser.create().parse_overrides(params + task)
             if o.is_sweep_override()}
    failed: dict[str, list[str]] = {}  # message -> the swept values of the jobs it refuses
    for job in jobs:
        cfg = _job_config(compose, config_name, hydra_overrides, job, cache)
        try:
            check_config(cfg)
        except InputError as exc:
            failed.setdefault(str(exc), []).append(" ".join(j for j in job if j.split("=", 1)[0] in swept))
    if failed:
        message, where = next(iter(failed.items()))
        if len(where) == len(jobs):  # the same for every job: a value the sweep does not vary
            raise InputError(message)
        raise InputError(f"{message} (in {len(where)} of the sweep's {len(jobs)} jobs: {'; '.join(where[:3])}"
                         f"{'; ...' if len(where) > 3 else ''}); nothing was run")


def _job_config(compose: Any, config_name: str, hydra_overrides: list[str], job: list[str],
                cache: dict[tuple[str, ...], DictConfig]) -> DictConfig:
    """A job's config as Hydra composes it: its group choices composed (once per distinct choice of
    groups, the slow part), then its values applied the way Hydra applies them."""
    import copy

    from hydra._internal.config_loader_impl import ConfigLoaderImpl
    from hydra.core.override_parser.overrides_parser import OverridesParser

    parsed = OverridesParser.create().parse_overrides(job)
    groups = tuple(o.input_line for o in parsed if is_group(o))
    if groups not in cache:
        cache[groups] = compose(config_name=config_name, overrides=[*hydra_overrides, *groups])
    cfg = copy.deepcopy(cache[groups])
    ConfigLoaderImpl._apply_overrides_to_config([o for o in parsed if not is_group(o)], cfg)
    return cfg
