"""The environment as RLlib sees it: observations in RLlib's action-masking convention.

RLlib's action-masking RL module (``ray.rllib.examples.rl_modules.classes.action_masking_rlm``)
reads a ``Dict`` observation with two keys: ``action_mask``, a ``(n,) float32`` ``Box`` of 0/1
(1: legal), which it turns into ``-inf`` added to the logits of the illegal actions, and
``observations``, what its network reads. :class:`ActionMaskObservation` wraps an env of the
family into that form:

* ``observations``: the ``flat`` observation (:mod:`forty_thieves_env.envs.observation`: the
  tableau, the waste, the foundations and the counts) as ``float32``, each entry divided by its
  largest value, so every input lies in ``[0, 1]`` (RLlib's default encoder is an MLP over a
  ``Box``; it reads no nested ``Dict`` and no ``int8``);
* ``action_mask``: ``info["action_mask"]`` as ``float32``.

The wrapper also counts the actions it is given that its last mask ruled out
(``masked_actions_taken``; each step's ``info["masked_action"]`` says whether that one was), and
:class:`MaskedActionCount`, an RLlib callback, sums those flags into each training result: the
RLlib smoke test checks that the sum stays at zero.

:func:`make_env` is the env creator (``env_config`` holds the Gymnasium id and ``gym.make``
keyword arguments) and :func:`register` registers it with ``ray.tune.register_env`` under
:data:`ENV_NAME`. This module imports RLlib (the ``[rllib]`` extra); the trainer
(:mod:`.rllib`) imports it only to train.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from agents.extras import install_line

try:
    from ray.rllib.callbacks.callbacks import RLlibCallback
    from ray.tune.registry import register_env
except ImportError as err:  # pragma: no cover (the [rllib] extra is part of [dev])
    hint = f"install it with {install_line('rllib')}"
    raise ImportError(f"RLlib is not installed ({err}); {hint}") from err

#: The name :func:`register` gives the env creator (``PPOConfig().environment(ENV_NAME)``).
ENV_NAME = "FortyThieves-RLlib"


class ActionMaskObservation(gym.Wrapper):
    """A ``Dict(action_mask=..., observations=...)`` observation over an env of the family.

    Args:
        env: An env made with ``observation="flat"`` (``gym.make(id, observation="flat")``).

    Raises:
        ValueError: ``env`` does not have the flat observation.
    """

    def __init__(self, env: gym.Env) -> None:
        super().__init__(env)
        flat = env.observation_space
        if not (isinstance(flat, spaces.Box) and len(flat.shape) == 1):
            raise ValueError(f"ActionMaskObservation needs an env with observation='flat', got {flat}")
        assert isinstance(env.action_space, spaces.Discrete)
        self._scale = (1.0 / np.maximum(flat.high.astype(np.float32), 1.0)).astype(np.float32)
        n = int(env.action_space.n)
        self.observation_space = spaces.Dict(
            {
                "action_mask": spaces.Box(0.0, 1.0, shape=(n,), dtype=np.float32),
                "observations": spaces.Box(0.0, 1.0, shape=flat.shape, dtype=np.float32),
            }
        )
        self._mask = np.zeros(n, dtype=bool)
        #: Actions given to :meth:`step` that the last mask ruled out, since the wrapper was made.
        self.masked_actions_taken = 0

    def _observe(self, obs: np.ndarray, info: Mapping[str, Any]) -> dict[str, np.ndarray]:
        self._mask = np.asarray(info["action_mask"], dtype=bool)
        return {
            "action_mask": self._mask.astype(np.float32),
            "observations": obs.astype(np.float32) * self._scale,
        }

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[dict, dict]:
        obs, info = self.env.reset(seed=seed, options=options)
        return self._observe(obs, info), info

    def step(self, action: Any) -> tuple[dict, Any, bool, bool, dict]:
        masked = not self._mask[int(action)]
        self.masked_actions_taken += int(masked)
        obs, reward, terminated, truncated, info = self.env.step(action)
        info["masked_action"] = masked
        return self._observe(obs, info), reward, terminated, truncated, info


def make_env(env_config: Mapping[str, Any] | None = None) -> ActionMaskObservation:
    """The env creator: ``env_config["env_id"]`` (default ``FortyThieves-v0``) made with the
    other keys as ``gym.make`` keyword arguments and the flat observation, wrapped in
    :class:`ActionMaskObservation`.

    Raises:
        ValueError: ``env_config`` asks for another observation.
    """
    import forty_thieves_env  # noqa: F401 (registers the ids)

    kwargs = dict(env_config or {})
    env_id = kwargs.pop("env_id", "FortyThieves-v0")
    if kwargs.setdefault("observation", "flat") != "flat":
        raise ValueError(f"the RLlib env reads the flat observation, not {kwargs['observation']!r}")
    return ActionMaskObservation(gym.make(env_id, **kwargs))


class MaskedActionCount(RLlibCallback):
    """Sums each step's ``info["masked_action"]`` into the training results (lifetime sums under
    ``env_runners``): ``masked_actions_taken``, the actions taken that the mask ruled out, and
    ``actions_checked``, the actions looked at."""

    def on_episode_step(self, *, episode: Any, metrics_logger: Any = None, **kwargs: Any) -> None:
        info = episode.get_infos(-1)
        metrics_logger.log_value("masked_actions_taken", int(bool(info.get("masked_action"))), reduce="lifetime_sum")
        metrics_logger.log_value("actions_checked", int("masked_action" in info), reduce="lifetime_sum")


def register(name: str = ENV_NAME) -> str:
    """Register :func:`make_env` with ``ray.tune.register_env`` under ``name``; return ``name``."""
    register_env(name, make_env)
    return name
