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

Keyword arguments to ``gym.make`` reach :class:`~.env.FortyThievesEnv` (variant options,
``observation``, ``reward``, ``illegal_action``, ``deals``, ``winnable_only``, ``render_mode``).
``gym.make_vec(id, num_envs=N)`` builds :class:`~.vector.FortyThievesVectorEnv` with the same
arguments (``vectorization_mode="sync"`` gives Gymnasium's ``SyncVectorEnv`` instead).
"""

from __future__ import annotations

from typing import Any

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


def register_envs() -> None:
    """Register every id with Gymnasium (ids already registered are left alone)."""
    import gymnasium as gym

    kwargs: dict[str, dict[str, Any]] = {env_id: {"variant": preset} for env_id, preset in ENV_IDS.items()}
    kwargs.update({env_id: LEVELS[name].env_kwargs() for env_id, name in LEVEL_IDS.items()})
    for env_id, env_kwargs in kwargs.items():
        if env_id not in gym.registry:
            gym.register(
                id=env_id,
                entry_point=ENTRY_POINT,
                vector_entry_point=VECTOR_ENTRY_POINT,
                kwargs=env_kwargs,
                max_episode_steps=MAX_EPISODE_STEPS,
            )
