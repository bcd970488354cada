"""A stable-baselines3 ``VecEnv`` over the batch engine, for fast ``MaskablePPO`` rollouts.

``import forty_thieves_env`` does not import this module (nor stable-baselines3); import it
yourself::

    from sb3_contrib import MaskablePPO
    from forty_thieves_env.envs.sb3 import make_sb3_vec_env

    venv = make_sb3_vec_env("FortyThieves-Josephine-v0", num_envs=16, seed=0)
    model = MaskablePPO("MultiInputPolicy", venv).learn(100_000)

:class:`FortyThievesSB3VecEnv` steps all its games in one compiled call (:mod:`.batch`) and
follows SB3's conventions, as ``DummyVecEnv`` of single environments would:

* a finished game is reset within the same step (``AutoresetMode.SAME_STEP``); its last
  observation is in ``infos[i]["terminal_observation"]`` and
  ``infos[i]["TimeLimit.truncated"]`` is true when the time limit ended it (and the game
  was not over anyway). ``dones = terminated | truncated``; rewards are ``float32``.
* ``action_masks()`` and ``env_method("action_masks")`` (what sb3-contrib's
  ``get_action_masks`` calls) return the ``(N, n) bool`` mask array of all games in one
  piece; ``np.stack`` of it is the same array, so no per-game call is ever made.
* infos stay cheap: an empty dict for every game that goes on; a finished game's dict holds
  ``terminal_observation``, ``TimeLimit.truncated``, ``is_success`` (won, which SB3 logs as
  ``rollout/success_rate``), ``episode`` (``{"r": return, "l": length, "t": seconds}``, as
  SB3's ``Monitor`` writes it, so ``rollout/ep_rew_mean`` is logged without a wrapper;
  ``env_is_wrapped(Monitor)`` says so), and ``deal``, ``moves``, ``cards_on_foundations``.
* deals are drawn as in :class:`~.vector.FortyThievesVectorEnv`: ``seed(s)`` (what SB3 calls
  with an algorithm's ``seed``) gives game ``i`` the generator of seed ``s + i``, so a run
  plays the same deals as ``DummyVecEnv`` of ``gym.make`` environments seeded ``s + i``.
* ``set_options({"deal": n})`` before ``reset()`` deals ``n`` to every game
  (``set_options([{"deal": n0}, {"deal": n1}, ...])``: one each) instead of drawing;
  ``{"position": p}`` starts from a position, as the single env's reset option.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces
from gymnasium.error import ResetNeeded

from .extras import missing_extra

try:
    from stable_baselines3.common.monitor import Monitor
    from stable_baselines3.common.vec_env.base_vec_env import VecEnv, VecEnvIndices, VecEnvStepReturn
except ImportError as exc:  # the core install has no SB3
    raise missing_extra("forty_thieves_env.envs.sb3", "stable-baselines3", "train") from exc

from ..engine.checks import check_actions
from ..engine.variants import Variant
from ..text.game import GameState
from ..text.notation import format_move, parse_move
from ..text.position import format_position
from .batch import BatchGames
from .batch_kernels import F_TERMINATED, F_TRUNCATED, F_WON
from .observation import observation_space
from .options import EnvOptions
from .registration import MAX_EPISODE_STEPS, id_kwargs
from .step import G_CARDS, G_DEAL, G_ELAPSED, G_MOVES

__all__ = ["FortyThievesSB3VecEnv", "FortyThievesVecEnv", "make_sb3_vec_env"]

#: Methods that ``env_method`` answers for each game (``action_masks`` for all at once).
_GAME_METHODS = ("position_text", "legal_moves", "describe_action", "action_for")


class FortyThievesSB3VecEnv(VecEnv):
    """``num_envs`` games in one batch, as an SB3 ``VecEnv`` (see the module docstring).

    Args:
        num_envs: Number of games ``N``.
        variant, **options: as :class:`~.env.FortyThievesEnv` (``observation``, ``reward``,
            ``illegal_action``, ``deals``, ``winnable_only``, ``render_mode`` and variant
            options), checked by :meth:`.options.EnvOptions.make`.
        max_episode_steps: Truncate an episode after this many steps (default 1000, as the
            registered ids; ``None``: never).
        num_threads: numba threads for this environment's steps (default: all).
    """

    def __init__(
        self,
        num_envs: int,
        variant: str | Variant | EnvOptions = "classic",
        *,
        max_episode_steps: int | None = MAX_EPISODE_STEPS,
        num_threads: int | None = None,
        **options: Any,
    ) -> None:
        opts = EnvOptions.of(variant, **options)
        b = self.batch = BatchGames(
            num_envs, opts, max_episode_steps=max_episode_steps, autoreset="same_step", num_threads=num_threads
        )
        self.variant = b.variant
        self.n_actions = b.n_actions
        self.observation_mode = b.observation_mode
        self.render_mode = opts.render_mode
        self.max_episode_steps = max_episode_steps
        space = observation_space(b.variant, b.observation_mode, b.mask_in_observation)
        super().__init__(b.num_envs, space, spaces.Discrete(b.n_actions))
        self._actions = np.zeros(b.num_envs, dtype=np.int64)
        self._started = time.time()
        self._vector: Any = None  # a Gymnasium vector view, only built to render

    # ----- the VecEnv API -------------------------------------------------------------
    def reset(self) -> Any:
        seeds = self._seeds if any(s is not None for s in self._seeds) else None
        unknown = {key for opts in self._options for key in opts} - {"deal", "position"}
        if unknown:
            raise ValueError(f"unknown reset option(s) {sorted(unknown)}; options are 'deal' and 'position'")
        given = {}
        for key in ("deal", "position"):
            values = [opts.get(key) for opts in self._options]
            if any(v is not None for v in values):
                if any(v is None for v in values):
                    raise ValueError(f"give options['{key}'] to every game or to none")
                given[key] = values
        self.batch.reset(seed=seeds, **given)
        self._reset_seeds()
        self._reset_options()
        g = self.batch.games
        self.reset_infos = [{"deal": int(g[i, G_DEAL])} for i in range(self.num_envs)]
        return self._observations()

    def step_async(self, actions: np.ndarray) -> None:
        if not self.batch.started:
            raise ResetNeeded("step() before the first reset(): call reset() first")
        self._actions = check_actions(actions, self.num_envs)

    def step_wait(self) -> VecEnvStepReturn:
        b = self.batch
        b.step(self._actions, emit=True)  # the kernel writes fresh observations (out_obs)
        f = b.flags
        terminated, truncated = f[F_TERMINATED], f[F_TRUNCATED]
        dones = terminated | truncated
        infos: list[dict[str, Any]] = [{} for _ in range(self.num_envs)]
        if dones.any():
            idx = np.flatnonzero(dones)
            last = b.final_observations(idx)
            elapsed = round(time.time() - self._started, 6)
            fg, ret = b.final_games, b.final_return
            for k, i in enumerate(idx):
                won = bool(f[F_WON, i])
                infos[i] = {
                    "terminal_observation": last[k],
                    "TimeLimit.truncated": bool(truncated[i] and not terminated[i]),
                    "is_success": won,
                    "episode": {"r": round(float(ret[i]), 6), "l": int(fg[i, G_ELAPSED]), "t": elapsed},
                    "deal": int(fg[i, G_DEAL]),
                    "moves": int(fg[i, G_MOVES]),
                    "cards_on_foundations": int(fg[i, G_CARDS]),
                    "won": won,
                }
        return self._observations(b.out_obs, b.out_masks), b.rewards.astype(np.float32), dones, infos

    def _observations(self, fresh: np.ndarray | None = None, masks: np.ndarray | None = None) -> Any:
        """Batched observations as ``DummyVecEnv`` gives them (an ``OrderedDict`` for dicts):
        copies of the live buffer, or views of ``fresh``, a buffer no one else writes (and of
        ``masks``, the masks that go with it)."""
        obs = self.batch.observations(buffer=fresh, copy=fresh is None, masks=masks)
        return obs if isinstance(obs, np.ndarray) else OrderedDict(obs)

    def close(self) -> None:
        self._vector = None

    # ----- masks and attributes -------------------------------------------------------
    def action_masks(self) -> np.ndarray:
        """``(N, n) bool``: every game's legal actions now (a copy)."""
        return self.batch.masks.copy()

    def _indices(self, indices: VecEnvIndices) -> list[int]:
        return list(self._get_indices(indices))

    def get_attr(self, attr_name: str, indices: VecEnvIndices = None) -> list[Any]:
        """The attribute, shared by all games, once per index (``AttributeError`` if absent)."""
        value = getattr(self, attr_name)
        return [value] * len(self._indices(indices))

    def set_attr(self, attr_name: str, value: Any, indices: VecEnvIndices = None) -> None:
        """Set an attribute for all games (they share one object: ``indices`` must be all)."""
        if indices is not None and sorted(self._indices(indices)) != list(range(self.num_envs)):
            raise ValueError("the games of a FortyThievesSB3VecEnv share their attributes; set them for all")
        setattr(self, attr_name, value)

    def env_method(self, method_name: str, *method_args, indices: VecEnvIndices = None, **method_kwargs) -> Any:
        """``action_masks``: the ``(len(indices), n)`` mask array in one piece (sb3-contrib's
        ``get_action_masks`` stacks it into itself); ``position_text``, ``legal_moves``,
        ``describe_action``, ``action_for``: a list with one answer per game."""
        idx = self._indices(indices)
        if method_name == "action_masks":
            return self.batch.masks[idx] if indices is not None else self.batch.masks.copy()
        if method_name not in _GAME_METHODS:
            raise AttributeError(f"FortyThievesSB3VecEnv games have no method {method_name!r}")
        return [getattr(self, "_game_" + method_name)(i, *method_args, **method_kwargs) for i in idx]

    def has_attr(self, attr_name: str) -> bool:
        return attr_name == "action_masks" or attr_name in _GAME_METHODS or hasattr(self, attr_name)

    def env_is_wrapped(self, wrapper_class: type[gym.Wrapper], indices: VecEnvIndices = None) -> list[bool]:
        """True only for SB3's ``Monitor``, whose ``episode`` infos this environment writes."""
        return [wrapper_class is Monitor] * len(self._indices(indices))

    # ----- per-game helpers -----------------------------------------------------------
    def _game(self, i: int) -> Any:
        return GameState(self.variant, self.batch.states[i], check=False)

    def _game_position_text(self, i: int) -> str:
        return format_position(self._game(i))

    def _game_legal_moves(self, i: int) -> list[str]:
        return [format_move(self.variant, int(a)) for a in np.flatnonzero(self.batch.masks[i])]

    def _game_describe_action(self, i: int, action: int) -> str:
        return format_move(self.variant, int(action))

    def _game_action_for(self, i: int, move: str) -> int:
        return parse_move(self.variant, move)

    def get_images(self) -> Sequence[np.ndarray | None]:
        if self.render_mode != "rgb_array":
            return [None] * self.num_envs
        from . import render

        renderer = render.TableRenderer(self.variant)
        return [renderer.draw(self._game(i)) for i in range(self.num_envs)]

    def render(self, mode: str | None = None) -> Any:
        if (mode or self.render_mode) == "ansi":
            from . import render

            return "\n".join(render.table_text(self._game(i), f"game {i}") for i in range(self.num_envs))
        return super().render(mode=mode)


#: The class's name before it was told apart from Gymnasium's :class:`~.vector.FortyThievesVectorEnv`
#: (``FortyThievesVecEnv`` and ``FortyThievesVectorEnv`` differed by three letters); kept so
#: that code written before still imports it.
FortyThievesVecEnv = FortyThievesSB3VecEnv


def make_sb3_vec_env(
    env_id: str = "FortyThieves-v0",
    num_envs: int | None = None,
    seed: int | None = None,
    *,
    n_envs: int | None = None,
    **kwargs: Any,
) -> FortyThievesSB3VecEnv:
    """A :class:`FortyThievesSB3VecEnv` of ``num_envs`` games (default 8) for a registered id (its
    preset and 1000-step limit).

    ``kwargs`` override as in ``gym.make`` (variant options, ``observation``, ``reward``,
    ``max_episode_steps``, ...). ``seed`` seeds the first reset (game ``i``: ``seed + i``).
    ``n_envs`` (the word of SB3's ``make_vec_env``) is an alias of ``num_envs``, kept for
    code written before; give one of them.
    """
    if n_envs is not None:
        if num_envs is not None:
            raise TypeError("give num_envs or its alias n_envs, not both")
        num_envs = n_envs
    kwargs = {**id_kwargs(env_id), **kwargs}
    venv = FortyThievesSB3VecEnv(8 if num_envs is None else num_envs, **kwargs)
    if seed is not None:
        venv.seed(seed)
    return venv
