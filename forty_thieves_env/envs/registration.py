"""Gymnasium ids: ``FortyThieves-v0`` (classic) and one id per preset.

==================================  ================
id                                  variant preset
==================================  ================
``FortyThieves-v0``                 ``classic``
``FortyThieves-Josephine-v0``       ``josephine``
``FortyThieves-Streets-v0``         ``streets``
``FortyThieves-Maria-v0``           ``maria``
``FortyThieves-Limited-v0``         ``limited``
``FortyThieves-RankAndFile-v0``     ``rank_and_file``
``FortyThieves-Relaxed-v0``         ``relaxed``
==================================  ================

The difficulty levels of the rule pages have ids too (:mod:`.levels`): ``FortyThieves-Easy-v0``
(one redeal, runs within the ``2**e`` cap, proven-winnable deals only), ``FortyThieves-Normal-v0``
(the same rules, any deal) and ``FortyThieves-Hard-v0`` (classic). :data:`LEVEL_IDS` lists them.

:func:`id_kwargs` is the one place an id becomes its variant and options: registration, the SB3 and
torch vector envs, training and evaluation all ask it, so every id, the level ids included, can be
trained and evaluated by name; :func:`id_variant` gives the rules alone.

Keyword arguments to ``gym.make`` reach :class:`~.env.FortyThievesEnv` (variant options,
``observation``, ``reward``, ``illegal_action``, ``deals``, ``winnable_only``, ``render_mode``).
``gym.make_vec(id, num_envs=N)`` builds :class:`~.vector.FortyThievesVectorEnv` with the same
arguments (``vectorization_mode="sync"`` gives Gymnasium's ``SyncVectorEnv`` instead).
"""

from __future__ import annotations

import dataclasses
from typing import Any

from ..engine.variants import Variant, get_variant
from .levels import LEVELS

ENTRY_POINT = "forty_thieves_env.envs.env:FortyThievesEnv"
#: ``gym.make_vec(id, num_envs=N)`` builds the native batched environment (:mod:`.vector`).
VECTOR_ENTRY_POINT = "forty_thieves_env.envs.vector:FortyThievesVectorEnv"
#: Far beyond any real game (a long one takes a few hundred moves); stops shuffling loops.
MAX_EPISODE_STEPS = 1000

ENV_IDS: dict[str, str] = {
    "FortyThieves-v0": "classic",
    "FortyThieves-Josephine-v0": "josephine",
    "FortyThieves-Streets-v0": "streets",
    "FortyThieves-Maria-v0": "maria",
    "FortyThieves-Limited-v0": "limited",
    "FortyThieves-RankAndFile-v0": "rank_and_file",
    "FortyThieves-Relaxed-v0": "relaxed",
}

#: The level ids (id -> level name; the rules and deal pool are in :data:`.levels.LEVELS`).
LEVEL_IDS: dict[str, str] = {level.env_id: name for name, level in LEVELS.items()}


_VARIANT_FIELDS = frozenset(field.name for field in dataclasses.fields(Variant))

#: Every registered id: the presets' (:data:`ENV_IDS`), then the levels' (:data:`LEVEL_IDS`).
ALL_IDS: tuple[str, ...] = (*ENV_IDS, *LEVEL_IDS)


def is_env_id(name: object) -> bool:
    """Whether ``name`` is a registered id (else it may be a preset name)."""
    return isinstance(name, str) and name in ALL_IDS


def id_kwargs(env_id: str) -> dict[str, Any]:
    """The variant and options an id stands for, as ``gym.make`` passes them to the env.

    ``{"variant": "relaxed"}`` for ``FortyThieves-Relaxed-v0``; ``{"variant": "classic",
    "redeals": 1, "run_moves": "supermove", "winnable_only": True}`` for ``FortyThieves-Easy-v0``.

    Raises:
        ValueError: not a registered id (the message lists them).
    """
    if env_id in ENV_IDS:
        return {"variant": ENV_IDS[env_id]}
    if env_id in LEVEL_IDS:
        return LEVELS[LEVEL_IDS[env_id]].env_kwargs()
    raise ValueError(f"unknown env id {env_id!r}; env ids are {', '.join(ALL_IDS)}")


def id_variant(env_id: str) -> tuple[Variant, dict[str, Any]]:
    """The rules an id plays (its preset with the variant options of :func:`id_kwargs` applied)
    and its other env options (``winnable_only`` for Easy)."""
    kwargs = id_kwargs(env_id)
    preset = kwargs.pop("variant")
    rules = {key: kwargs.pop(key) for key in list(kwargs) if key in _VARIANT_FIELDS}
    return get_variant(preset, **rules), kwargs


def register_envs() -> None:
    """Register every id with Gymnasium (ids already registered are left alone)."""
    import gymnasium as gym

    for env_id in ALL_IDS:
        if env_id not in gym.registry:
            gym.register(
                id=env_id,
                entry_point=ENTRY_POINT,
                vector_entry_point=VECTOR_ENTRY_POINT,
                kwargs=id_kwargs(env_id),
                max_episode_steps=MAX_EPISODE_STEPS,
            )
