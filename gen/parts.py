"""Building the swappable parts (corpus, chunker, embedder, index, llm, answerer) from their configs.

It lives in ``gen`` because ``ragsweep gen`` builds its corpus and model with it and ``gen`` never
imports ``harness``; the harness apps use the same function (re-exported by :mod:`harness.parts`).
"""

from __future__ import annotations

from typing import Any

from omegaconf import DictConfig, OmegaConf

from ragsweep.metrics import InputError, register_config_secrets


def build(node: DictConfig, what: str, **kwargs: Any) -> Any:
    """``hydra.utils.instantiate`` (``kwargs`` passed on) with our own errors unwrapped from Hydra's wrapper."""
    from hydra.errors import InstantiationException
    from hydra.utils import instantiate

    if isinstance(node, DictConfig):  # the keys and passwords it points at are scrubbed from all we write
        register_config_secrets(OmegaConf.to_container(node, resolve=False))
    try:
        return instantiate(node, **kwargs)
    except InstantiationException as exc:
        cause: BaseException | None = exc
        while cause is not None and not isinstance(cause, InputError):
            cause = cause.__cause__ or cause.__context__
        if cause is not None:
            raise cause from None
        raise InputError(f"{what}: {exc}") from exc
