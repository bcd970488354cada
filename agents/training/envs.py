"""The envs of a training run: the training VecEnv (native batched when available) and the
evaluation envs that replay fixed validation deals."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import gymnasium as gym
import numpy as np

from agents.configs.train_config import ConfigError, TrainConfig

#: Most envs an evaluation plays side by side.
EVAL_ENVS = 100  # games side by side: one policy call for up to 100 positions (10 took 130 s for 300 deals)


class FixedDeals(gym.Wrapper):
    """Plays ``deals[0], deals[1], ...`` one per reset; :meth:`rewind` starts the list again.

    Sets ``info["is_success"]`` (= won) at the end of an episode, which SB3's EvalCallback
    turns into ``eval/success_rate``.
    """

    def __init__(self, env: gym.Env, deals: Sequence[int]) -> None:
        super().__init__(env)
        self.deals = [int(d) for d in deals]
        self.index = 0

    def rewind(self) -> None:
        self.index = 0

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict]:
        deal = self.deals[self.index % len(self.deals)]
        self.index += 1
        return self.env.reset(seed=seed, options={"deal": deal})

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict]:
        obs, reward, terminated, truncated, info = self.env.step(action)
        if terminated or truncated:
            info["is_success"] = bool(info.get("won", False))
        return obs, reward, terminated, truncated, info

    def action_masks(self) -> np.ndarray:
        return self.env.get_wrapper_attr("action_masks")()


def _native_vec_env(env_id: str, config: TrainConfig, seed: int) -> Any | None:
    """The project's native batched SB3 VecEnv (:mod:`forty_thieves_env.envs.sb3`), or None without it."""
    try:
        from forty_thieves_env.envs.sb3 import make_sb3_vec_env
    except ImportError:
        return None
    return make_sb3_vec_env(env_id, n_envs=config.n_envs, seed=seed, num_threads=1, **config.env_kwargs)


def make_train_env(env_id: str, config: TrainConfig, seed: int) -> Any:
    """The training VecEnv: native when available (``vec_env: auto|native``), else SB3's."""
    from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv, VecMonitor

    import forty_thieves_env  # noqa: F401  (registers the ids)

    if config.vec_env in ("auto", "native"):
        venv = _native_vec_env(env_id, config, seed)
        if venv is not None:
            return venv
        if config.vec_env == "native":
            raise ConfigError("vec_env: native, but forty_thieves_env.envs.sb3 is not available")
    kwargs = dict(config.env_kwargs)

    def make() -> gym.Env:
        from forty_thieves_env.envs.registration import register_envs

        register_envs()  # in a subprocess too
        return gym.make(env_id, **kwargs)

    cls = SubprocVecEnv if config.vec_env == "subproc" else DummyVecEnv
    venv = cls([make] * config.n_envs)
    venv.seed(seed)
    return VecMonitor(venv)


def eval_chunks(deals: Sequence[int], n_envs: int) -> list[list[int]]:
    """Split ``deals`` between ``n_envs`` envs as SB3's ``evaluate_policy`` splits episodes.

    ``evaluate_policy`` plays ``(n + i) // n_envs`` episodes in env ``i``; env ``i`` gets that
    many deals, so the envs together play every deal once.
    """
    n = len(deals)
    counts = [(n + i) // n_envs for i in range(n_envs)]
    out, start = [], 0
    for c in counts:
        out.append(list(deals[start : start + c]))
        start += c
    return out


def make_eval_env(env_id: str, config: TrainConfig) -> Any:
    """Envs that play the first ``n_eval_episodes`` validation deals, once each (Monitor-wrapped).

    Up to ``EVAL_ENVS`` envs play side by side, so the policy runs on a batch of positions per
    step rather than one.
    """
    from stable_baselines3.common.monitor import Monitor
    from stable_baselines3.common.vec_env import DummyVecEnv

    import forty_thieves_env  # noqa: F401
    from forty_thieves_env.engine.deals import deal_split

    deals = [int(d) for d in deal_split("validation")[: config.n_eval_episodes]]
    kwargs = dict(config.env_kwargs)
    chunks = eval_chunks(deals, min(EVAL_ENVS, len(deals)))
    return DummyVecEnv([lambda c=c: Monitor(FixedDeals(gym.make(env_id, **kwargs), c)) for c in chunks])
