"""A run folder's ``config.yaml``: the resolved training config, written whole and read back checked.

The file is one section keyed by the run's env id (:func:`~agents.configs.train_config.dump_config`)
and ends with :data:`CONFIG_END`: a file cut short lacks that line, and :func:`check_run_config`
refuses it on one line rather than fill the keys it lost with defaults (which would misdescribe
the run's model). Training writes it (:mod:`agents.training.runs`); the ``ppo`` player reads it
to describe a run's model (:mod:`agents.players.shipped`), so it lives below both.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

from agents.storage.files import damaged, write_text
from agents.storage.yamlfile import yaml_error_line

from .config_file import dump_config, model_for
from .train_config import ConfigError, TrainConfig, validate_section

CONFIG_FILE = "config.yaml"
#: The last line of a run's ``config.yaml``: a file without it was cut short (or predates it).
CONFIG_END = "# end of the resolved config (a file cut short lacks this line)"
CONFIG_ADVICE = (
    "restore it from a copy (a shipped model's NAME.yaml is its run's config): "
    "defaults in its place would misdescribe the run's model"
)


def write_run_config(run_dir: Path, env_id: str, config: TrainConfig) -> Path:
    """Write the run's resolved ``config.yaml`` atomically, ending with :data:`CONFIG_END`."""
    return write_text(run_dir / CONFIG_FILE, dump_config(env_id, config) + CONFIG_END + "\n")


def _keys(tree: Mapping[str, Any], prefix: str = "") -> list[str]:
    """The keys of nested mappings, dotted, in the order YAML writes them (depth first)."""
    out = []
    for key, value in tree.items():
        out.append(prefix + str(key))
        if isinstance(value, Mapping):
            out.extend(_keys(value, f"{prefix}{key}."))
    return out


def check_run_config(path: Path) -> dict[str, Any]:
    """The sections of a run's ``config.yaml`` (one, keyed by its env id), refused when damaged.

    A file that ends with :data:`CONFIG_END` (whole, or cut inside that line) has every key.
    One without it predates that line or was cut short: it is accepted only when its last
    line is whole and it has the config's last key. A cut drops the end of the file, which
    a run folder of an older version keeps (it lacks keys added since, in the middle: those
    take their defaults); the keys a cut drops would otherwise be silently filled with
    defaults, and the run's record would then misdescribe its model.

    Raises:
        ValueError: no such file.
        DamagedFileError: not YAML, not a run's config, or cut short (naming the missing keys).
    """
    if not path.is_file():
        raise ValueError(f"{path.parent} is not a run folder (no {CONFIG_FILE})")
    try:
        text = path.read_bytes().decode("utf-8")
    except UnicodeDecodeError:
        raise damaged(path, "not UTF-8 text", CONFIG_ADVICE) from None
    try:
        raw = yaml.safe_load(text)
    except yaml.YAMLError as err:
        where = yaml_error_line(path, err).removeprefix(f"{path}:")
        raise damaged(path, f"line {where}", CONFIG_ADVICE) from None
    if not isinstance(raw, dict) or len(raw) != 1 or not isinstance(next(iter(raw.values())), dict):
        why = "empty" if not text.strip() else "not one section of keys under an env id"
        raise damaged(path, why, CONFIG_ADVICE)
    last = text.rstrip("\n").rsplit("\n", 1)[-1]
    if last.startswith("#") and CONFIG_END.startswith(last):  # whole, or cut inside the end line only
        return raw
    if not text.endswith("\n"):
        raise damaged(path, f"cut short: its last line {text.splitlines()[-1].strip()!r} is not whole", CONFIG_ADVICE)
    env_id, section = next(iter(raw.items()))
    try:
        full = validate_section(section, f"{path} [{env_id}]", model_for(section)).model_dump(mode="json")
    except ConfigError as err:
        raise damaged(path, str(err).removeprefix(f"{path} "), CONFIG_ADVICE) from None
    have = set(_keys(section))
    order = _keys(full)
    if order[-1] not in have:
        missing = [key for key in order if key not in have]
        more = f" and {len(missing) - 3} more" if len(missing) > 3 else ""
        raise damaged(path, f"cut short: no {', '.join(missing[:3])}{more}", CONFIG_ADVICE)
    return raw
