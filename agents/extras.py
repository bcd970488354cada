"""Optional extras: which modules each ``pip install "forty-thieves-env[EXTRA]"`` brings, and the check.

The core install (numpy, numba, gymnasium, pillow) runs the envs and the ``deal``, ``moves``,
``replay`` and ``bench`` commands; the other commands need an extra. :func:`require_extra` looks the
extra's modules up (without importing them) before a command does any work, so a core install says
in one line what to install instead of failing halfway with a traceback.
"""

from __future__ import annotations

import importlib.util

from forty_thieves_env.envs.extras import install_line  # the one spelling, which the envs' errors print too

#: Extra -> the top-level modules it installs that the commands import (one per requirement of the
#: extra in pyproject.toml, its extras included; tests/test_extras.py checks the two agree).
EXTRA_MODULES: dict[str, tuple[str, ...]] = {
    "eval": ("tqdm", "scipy"),
    "train": ("tqdm", "scipy", "torch", "stable_baselines3", "sb3_contrib", "tensorboard", "yaml", "pydantic"),
    "play": ("textual", "rich"),
    "ray": ("tqdm", "scipy", "ray"),
}

#: Module -> the extra that brings it, for an import that fails after the up-front check (e.g.
#: ``evaluate --agent ppo`` needs torch, which only the train extra installs).
MODULE_EXTRA: dict[str, str] = {m: e for e in ("ray", "play", "train", "eval") for m in EXTRA_MODULES[e]}


class MissingExtraError(ImportError):
    """An extra's module is not installed; the message says what to install."""


def missing_modules(extra: str) -> list[str]:
    """The modules of ``extra`` that cannot be found (none are imported)."""
    missing = []
    for name in EXTRA_MODULES[extra]:
        try:
            found = importlib.util.find_spec(name) is not None
        except (ImportError, ValueError):  # a broken or half-removed install counts as missing
            found = False
        if not found:
            missing.append(name)
    return missing


def require_extra(extra: str | None, command: str, alternative: str | None = None) -> None:
    """Raise :class:`MissingExtraError` unless every module of ``extra`` is installed (``None``: core).

    ``alternative``: a command that runs without the extra, named in the message.

    Raises:
        MissingExtraError: naming the missing modules and the pip line that installs them.
    """
    if extra is None:
        return
    missing = missing_modules(extra)
    if missing:
        also = f" (or: {alternative})" if alternative else ""
        raise MissingExtraError(
            f"forty-thieves {command} needs the [{extra}] extra ({', '.join(missing)} missing): "
            f"{install_line(extra)}{also}"
        )


def missing_extra_message(err: ModuleNotFoundError, command: str) -> str | None:
    """The one-line advice for a module that an extra would have installed, else ``None``."""
    top = (err.name or "").partition(".")[0]
    extra = MODULE_EXTRA.get(top)
    if extra is None:
        return None
    return f"forty-thieves {command} needs the [{extra}] extra ({top} missing): {install_line(extra)}"
