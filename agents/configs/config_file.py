"""A config file: YAML sections keyed by env id, ``default`` merged under each, ``--set`` overrides.

:func:`load_config` reads a file once and returns the chosen section checked by the model its
``algo`` asks for (:mod:`.train_config`); :func:`dump_config` writes a run's resolved section.
The layout is explained in :mod:`.train_config`'s docstring and in ``configs/ppo.yaml``.
"""

from __future__ import annotations

import copy
import difflib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml

from agents.storage.yamlfile import YAMLFileError, load_yaml

from .train_config import RLLIB_ALGO, Config, ConfigError, RLlibConfig, RunConfig, TrainConfig, validate_section

DEFAULT_SECTION = "default"
DEFAULT_ENV_ID = "FortyThieves-v0"


def deep_merge(base: Mapping[str, Any], over: Mapping[str, Any]) -> dict[str, Any]:
    """``base`` updated by ``over``; nested mappings are merged key by key."""
    out = copy.deepcopy(dict(base))
    for key, value in over.items():
        if isinstance(value, Mapping) and isinstance(out.get(key), Mapping):
            out[key] = deep_merge(out[key], value)
        else:
            out[key] = copy.deepcopy(value)
    return out


def read_config_file(path: str | Path) -> dict[str, Any]:
    """The raw sections of a config file (YAML anchors resolved)."""
    path = Path(path)
    if not path.exists():
        raise ConfigError(f"{path}: no such config file")
    try:
        raw = load_yaml(path)
    except YAMLFileError as err:
        raise ConfigError(str(err)) from None
    if not isinstance(raw, dict) or not raw:
        raise ConfigError(f"{path}: a config file is a mapping of env ids (and 'default') to sections")
    return raw


def env_sections(raw: Mapping[str, Any]) -> list[str]:
    """The env ids a config file has a section for."""
    return [k for k in raw if k != DEFAULT_SECTION and not str(k).startswith(".")]


def resolve_section(raw: Mapping[str, Any], env_id: str, path: str = "config") -> dict[str, Any]:
    """``default`` deep-merged under the env's own section (checked key by key)."""
    from forty_thieves_env.envs.registration import ALL_IDS, is_env_id

    for key in env_sections(raw):
        if not is_env_id(key):
            close = difflib.get_close_matches(str(key), list(ALL_IDS), n=1)
            hint = f"; did you mean {close[0]}?" if close else f"; env ids are {', '.join(ALL_IDS)}"
            raise ConfigError(f"{path}: section {key!r} is not an env id{hint}")
    if not is_env_id(env_id):
        raise ConfigError(f"unknown env id {env_id!r}; env ids are {', '.join(ALL_IDS)}")
    if env_id not in raw:
        raise ConfigError(f"{path}: no section for {env_id}; sections are {', '.join(env_sections(raw)) or 'none'}")
    default = raw.get(DEFAULT_SECTION) or {}
    section = raw[env_id] or {}
    for name, value in ((DEFAULT_SECTION, default), (env_id, section)):
        if not isinstance(value, Mapping):
            raise ConfigError(f"{path} [{name}]: a section must be a mapping, got {type(value).__name__}")
    return deep_merge(default, section)


def parse_override(text: str) -> tuple[list[str], Any]:
    """``--set`` text ``a.b=value`` -> ``(["a", "b"], value)``, the value read as YAML."""
    key, sep, value = text.partition("=")
    if not sep or not key.strip():
        raise ConfigError(f"--set needs key=value, got {text!r}")
    try:
        parsed = yaml.safe_load(value) if value.strip() else None
    except yaml.YAMLError:
        parsed = value
    return [k.strip() for k in key.split(".")], parsed


def apply_overrides(section: dict[str, Any], overrides: Sequence[str] | Mapping[str, Any]) -> dict[str, Any]:
    """``section`` with ``--set`` style overrides applied (dotted keys reach nested sections)."""
    out = copy.deepcopy(section)
    items = overrides.items() if isinstance(overrides, Mapping) else (parse_override(t) for t in overrides)
    for key, value in items:
        parts = key.split(".") if isinstance(key, str) else list(key)
        node = out
        for part in parts[:-1]:
            child = node.get(part)
            if not isinstance(child, dict):
                child = node[part] = {}
            node = child
        node[parts[-1]] = value
    return out


def choose_env(raw: Mapping[str, Any], env_id: str | None) -> str:
    """The env id to train: the one asked for, else the file's only section, else classic."""
    if env_id:
        return env_id
    envs = env_sections(raw)
    if len(envs) == 1:
        return envs[0]
    return DEFAULT_ENV_ID


def model_for(section: Mapping[str, Any]) -> type[RunConfig]:
    """The config model a merged section asks for by its ``algo``: RLlib's or :class:`TrainConfig`."""
    return RLlibConfig if isinstance(section, Mapping) and section.get("algo") == RLLIB_ALGO else TrainConfig


def load_config(
    path: str | Path,
    env_id: str | None = None,
    overrides: Sequence[str] | Mapping[str, Any] = (),
    model: type[Config] | None = None,
) -> tuple[str, Config]:
    """Read ``path``, pick the env's section, merge ``default``, apply overrides, check every key.

    Each section is checked against ``model``, else against the model its ``algo`` asks for
    (:func:`model_for`: ``RLlibPPO`` is an :class:`RLlibConfig`, anything else a
    :class:`TrainConfig`), so one read of the file tells the trainer and checks its keys. Every
    env section of the file is checked (so a typo elsewhere in the file is found now, not on
    the day that section is trained). Returns ``(env_id, config)``.
    """
    raw = read_config_file(path)
    env_id = choose_env(raw, env_id)
    for other in env_sections(raw):
        section = resolve_section(raw, other, str(path))
        validate_section(section, f"{path} [{other}]", model or model_for(section))
    section = apply_overrides(resolve_section(raw, env_id, str(path)), overrides)
    config = validate_section(section, f"{path} [{env_id}]", model or model_for(section))
    if isinstance(config, TrainConfig):  # RLlib builds its env in its runners, flat
        check_env_kwargs(env_id, config, f"{path} [{env_id}]")
    return env_id, config  # type: ignore[return-value]


def check_env_kwargs(env_id: str, config: TrainConfig, where: str = "config") -> None:
    """Build the env once with ``env_kwargs``: a bad option fails here, naming ``env_kwargs``."""
    import gymnasium as gym

    import forty_thieves_env  # noqa: F401  (registers the ids)

    try:
        gym.make(env_id, **config.env_kwargs).close()
    except (TypeError, ValueError) as err:
        raise ConfigError(f"{where}: env_kwargs: {err}") from None
    critic_stock = getattr(config.policy_kwargs.features_extractor_kwargs, "critic_stock", 0)
    if critic_stock and config.env_kwargs.get("observation", "dict") != "oracle":
        raise ConfigError(
            f"{where}: policy_kwargs.features_extractor_kwargs.critic_stock: {critic_stock} needs "
            "env_kwargs.observation: oracle (the critic reads the stock from it)"
        )


def dump_config(env_id: str, config: RunConfig) -> str:
    """The resolved config as YAML, one section keyed by the env id (``load_config`` reads it back)."""
    return yaml.safe_dump({env_id: config.model_dump(mode="json")}, sort_keys=False)
