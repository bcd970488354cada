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
from typing import TYPE_CHECKING, Any

import yaml

from agents.storage.yamlfile import YAMLFileError, load_yaml

from .train_config import Config, ConfigError, RunConfig, config_model, validate_section

if TYPE_CHECKING:
    from forty_thieves_env.envs.resolved import ResolvedEnv

DEFAULT_SECTION = "default"
DEFAULT_ENV_ID = "FortyThieves-v0"
#: Keys renamed since run folders were first written: a file's or an override's old name is the new one.
RENAMED = {"n_envs": "num_envs"}


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
    return renamed(deep_merge(default, section))


def renamed(section: Mapping[str, Any]) -> dict[str, Any]:
    """``section`` with the keys of :data:`RENAMED` under their new names (a file written before
    the rename reads as it was meant; ``--set`` of the new name then reaches it)."""
    return {RENAMED.get(key, key): value for key, value in section.items()}


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
        parts[0] = RENAMED.get(parts[0], parts[0])
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
    """The config model a merged section asks for by its ``algo`` (:func:`config_model`)."""
    return config_model(section)


def load_env_config(
    path: str | Path,
    env_id: str | None = None,
    overrides: Sequence[str] | Mapping[str, Any] = (),
    model: type[Config] | None = None,
    smoke: bool = False,
) -> tuple[ResolvedEnv, Config]:
    """Read ``path``, pick the env's section, merge ``default``, apply overrides, check every key;
    resolve the env id with the section's ``env_kwargs`` once.

    Each section is checked against ``model``, else against the model its ``algo`` asks for
    (:func:`config_model`), so one read of the file tells the trainer and checks its keys. Every
    env section of the file is checked (so a typo elsewhere in the file is found now, not on
    the day that section is trained). With ``smoke``, the section's :meth:`RunConfig.smoke`
    overrides go under ``overrides``. Returns ``(env, config)``: the
    :class:`~forty_thieves_env.envs.resolved.ResolvedEnv` every consumer of the run is handed,
    and the config.

    Raises:
        ConfigError: naming the file, the section, the key and the fix.
    """
    raw = read_config_file(path)
    env_id = choose_env(raw, env_id)
    for other in env_sections(raw):
        section = resolve_section(raw, other, str(path))
        validate_section(section, f"{path} [{other}]", model)
    where = f"{path} [{env_id}]"
    section = resolve_section(raw, env_id, str(path))
    if smoke:
        section = apply_overrides(section, validate_section(section, where, model).smoke())
    section = apply_overrides(section, overrides)
    config = validate_section(section, where, model)
    return resolve_env(env_id, config, where), config  # type: ignore[return-value]


def load_config(
    path: str | Path,
    env_id: str | None = None,
    overrides: Sequence[str] | Mapping[str, Any] = (),
    model: type[Config] | None = None,
) -> tuple[str, Config]:
    """:func:`load_env_config` without the resolved env: ``(env_id, config)``."""
    env, config = load_env_config(path, env_id, overrides, model)
    return env.env_id, config


def resolve_env(env_id: str, config: RunConfig, where: str = "config") -> ResolvedEnv:
    """The run's env: ``env_id`` with the config's ``env_kwargs`` (and what its trainer adds), checked
    without building an env (a bad option fails here, naming ``env_kwargs``)."""
    from forty_thieves_env.envs.resolved import ResolvedEnv

    try:
        return ResolvedEnv.resolve(env_id, {**config.env_kwargs, **config.env_options()})
    except (TypeError, ValueError) as err:
        raise ConfigError(f"{where}: {err}") from None


def dump_config(env_id: str, config: RunConfig) -> str:
    """The resolved config as YAML, one section keyed by the env id (``load_config`` reads it back)."""
    return yaml.safe_dump({env_id: config.model_dump(mode="json")}, sort_keys=False)
