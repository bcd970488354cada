"""The native Gymnasium vector environment: N games stepped in one compiled call.

``gym.make_vec("FortyThieves-v0", num_envs=N)`` returns a :class:`FortyThievesVectorEnv`
(every registered id has this ``vector_entry_point``; ``vectorization_mode="sync"`` still
gives Gymnasium's ``SyncVectorEnv`` of single environments). It takes every argument of
:class:`~.env.FortyThievesEnv` and behaves, step for step, exactly like a ``SyncVectorEnv``
of ``N`` ``gym.make`` environments with the same autoreset mode: the same deals for the
same seed, the same observations, rewards, terminations, truncations and infos. The tests
hold it to that. Only the speed differs: one numba kernel, parallel over the cores, steps
all the games (:mod:`.batch`).

* **Autoreset**: ``autoreset_mode=AutoresetMode.NEXT_STEP`` (default, as Gymnasium's own
  vector environments): after an episode ends, that game's next step resets it, ignores
  its action and returns reward 0, ``terminated`` and ``truncated`` false and the new
  deal's observation and info. ``AutoresetMode.SAME_STEP``: the game is reset within the
  step that ended it; ``infos["final_obs"]`` (an object array, ``None`` for the other
  games) and ``infos["final_info"]`` (a dict of arrays with ``_key`` masks) hold the last
  observation and info of the finished episodes, as ``SyncVectorEnv`` gives them.
* **Deals**: game ``i`` has its own random generator, seeded with ``seed + i`` by
  ``reset(seed=seed)`` (or ``seed[i]`` for a list), and draws its deals from it exactly as
  a single environment does: from the training range, or uniformly from ``deals=``. So a
  seed fixes every deal of every game, and game ``i`` plays the same deals as
  ``gym.make(id).reset(seed=seed + i)`` followed by autoresets. ``reset(seed=None)``
  keeps the generators. Each game's next deal number is drawn in advance, so that the
  kernel can reset games by itself. ``reset(options={"deal": n})`` deals ``n`` to every
  game, or ``n[i]`` to game ``i`` for a sequence; ``options={"position": p}`` starts every
  game (or game ``i`` from ``p[i]``) from a position, as the single env's option;
  ``options={"reset_mask": m}`` resets only the games where the ``(N,) bool`` array ``m``
  is true.
* **Infos**: a dict of ``(N,)`` arrays, as ``SyncVectorEnv`` builds it from the single
  environment's info: ``deal``, ``moves``, ``cards_on_foundations`` (``int64``), ``won``,
  ``illegal_action`` (``bool``), ``action_mask`` (``(N, n) bool``), each with its
  ``_key`` mask (all true). :meth:`FortyThievesVectorEnv.action_masks` returns the masks
  without building infos.
* **Time limit**: ``max_episode_steps`` (1000 for the registered ids, like their
  ``TimeLimit``) counts every step of an episode, refused actions included.
* **Actions**: exactly ``N`` integers (a scalar is not broadcast; floats are refused);
  an integer outside the action space (not in ``[0, n)``), however large, is a caller's bug:
  :class:`~forty_thieves_env.text.errors.ActionSpaceError` naming the game, in every illegal-action
  mode, before any game moves (one vectorised check of the batch). A step before
  the first reset raises ``gymnasium.error.ResetNeeded``.
* **Illegal actions**: ``"penalize"`` and ``"terminate"`` per game, as the single
  environment; ``"raise"`` checks the whole batch first and raises
  :class:`~forty_thieves_env.text.errors.IllegalMoveError` (naming the game) before any game moves.
* **Threads**: the kernel runs on numba's threads (``NUMBA_NUM_THREADS``, all cores by
  default); ``num_threads=k`` uses ``k`` of them for this environment's calls. Batches of
  fewer than :data:`.batch.PARALLEL_MIN_GAMES` games run in the calling thread.
* **Fresh arrays**: every step's observations (each ``dict`` field one contiguous array),
  rewards, flags, masks and info arrays are new arrays, never touched again; the kernel
  writes the observations, masks and info counters into them as it steps each game.
  ``copy=False`` returns the environment's own observation buffers instead (overwritten
  by the next step).
* **The mask in the observation** (``mask_in_observation=True``): a ``Dict``'s
  ``"action_mask"`` is ``infos["action_mask"]`` viewed as ``int8`` (the same fresh array);
  the kernel writes each game's mask into the end of its ``flat`` row, and
  ``infos["action_mask"]`` is the ``bool`` view of those row ends (with ``copy=False``, of
  the live rows: overwritten by the next step, as the observation is).
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces
from gymnasium.error import ResetNeeded
from gymnasium.vector import AutoresetMode
from gymnasium.vector.utils import batch_space

from ..engine.checks import check_flag
from ..engine.variants import Variant
from ..text.game import GameState
from ..text.position import format_position
from .batch import BatchGames
from .batch_kernels import F_ILLEGAL, F_TERMINATED, F_TRUNCATED, F_WON
from .observation import observation_space
from .options import RENDER_MODES, EnvOptions, check_position, check_reset_deal
from .step import G_CARDS, G_DEAL, G_MOVES

__all__ = ["FortyThievesVectorEnv", "make_vector_env"]

_AUTORESET = {AutoresetMode.NEXT_STEP: "next_step", AutoresetMode.SAME_STEP: "same_step"}
_INFO_INT_KEYS = (("deal", G_DEAL), ("moves", G_MOVES), ("cards_on_foundations", G_CARDS))


def _autoreset_mode(mode: object) -> AutoresetMode:
    """``autoreset_mode`` as an :class:`AutoresetMode`, checked to be NEXT_STEP or SAME_STEP."""
    accepted = "AutoresetMode.NEXT_STEP or AutoresetMode.SAME_STEP (or 'NextStep', 'SameStep')"
    if not isinstance(mode, (AutoresetMode, str)):
        raise TypeError(f"autoreset_mode must be {accepted}, got {mode!r}")
    values = {m.value: m for m in _AUTORESET}
    if isinstance(mode, AutoresetMode) and mode in _AUTORESET:
        return mode
    if not isinstance(mode, AutoresetMode) and mode in values:
        return values[mode]
    raise ValueError(f"autoreset_mode must be {accepted}, got {mode!r}")


class FortyThievesVectorEnv(gym.vector.VectorEnv):
    """``num_envs`` games of the Forty Thieves family in one batch (see the module docstring).

    Args:
        num_envs: Number of games ``N``.
        variant, **options: as :class:`~.env.FortyThievesEnv` (``observation``, ``reward``,
            ``illegal_action``, ``deals``, ``winnable_only``, ``render_mode`` and variant
            options), checked by :meth:`.options.EnvOptions.make`.
        max_episode_steps: Truncate an episode after this many steps (``None``: never);
            ``gym.make_vec`` passes the id's 1000.
        autoreset_mode: ``AutoresetMode.NEXT_STEP`` (default) or ``SAME_STEP`` (or their
            string values ``"NextStep"``, ``"SameStep"``).
        num_threads: numba threads for this environment's steps (default: all).
        copy: Return copies of the observations (default) or the live buffers.

    ```python
    envs = gym.make_vec("FortyThieves-v0", num_envs=1024)
    obs, infos = envs.reset(seed=0)
    obs, rewards, terminated, truncated, infos = envs.step(envs.random_legal_actions())
    ```
    """

    metadata = {  # noqa: RUF012 (Gymnasium's convention)
        "render_modes": list(RENDER_MODES),
        "render_fps": 4,
        "autoreset_mode": AutoresetMode.NEXT_STEP,
    }

    def __init__(
        self,
        num_envs: int = 1,
        variant: str | Variant | EnvOptions = "classic",
        *,
        max_episode_steps: int | None = None,
        autoreset_mode: AutoresetMode | str = AutoresetMode.NEXT_STEP,
        num_threads: int | None = None,
        copy: bool = True,
        **options: Any,
    ) -> None:
        mode = _autoreset_mode(autoreset_mode)
        check_flag(copy, "copy")
        opts = EnvOptions.of(variant, **options)
        b = self._batch = BatchGames(
            num_envs, opts, max_episode_steps=max_episode_steps, autoreset=_AUTORESET[mode], num_threads=num_threads
        )
        self.num_envs = b.num_envs
        self.variant = b.variant
        self.n_actions = b.n_actions
        self.observation_mode = b.observation_mode
        self.mask_in_observation = b.mask_in_observation
        self.reward = b.reward
        self.illegal_action = b.illegal_action
        self.deals = b.deals
        self.max_episode_steps = max_episode_steps
        self.autoreset_mode = mode
        self.render_mode = opts.render_mode
        self.copy = copy
        self.metadata = {**type(self).metadata, "autoreset_mode": mode}
        self.single_observation_space = observation_space(self.variant, self.observation_mode, b.mask_in_observation)
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.single_action_space = spaces.Discrete(self.n_actions)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self._all = np.ones(self.num_envs, dtype=np.bool_)
        self._renderer: Any = None
        self._action_rng: np.random.Generator | None = None

    # ----- the Gymnasium API ----------------------------------------------------------
    def reset(
        self, *, seed: int | list[int | None] | None = None, options: dict[str, Any] | None = None
    ) -> tuple[Any, dict[str, Any]]:
        """Deal new games to all (or ``options["reset_mask"]``) games; see the module docstring."""
        if options is not None and not isinstance(options, dict):
            raise TypeError(f"options must be a dict or None, got {type(options).__name__}")
        options = dict(options or {})
        # A key given as None is refused as the single env refuses it (None is not "draw one").
        if "deal" in options and options["deal"] is None:
            check_reset_deal(None)
        if "position" in options and options["position"] is None:
            check_position(self.variant, None)
        unknown = set(options) - {"deal", "position", "reset_mask"}
        if unknown:
            raise ValueError(f"unknown reset option(s) {sorted(unknown)}; options are 'deal', 'position', 'reset_mask'")
        mask = options.get("reset_mask")
        if mask is not None:
            if not isinstance(mask, np.ndarray) or mask.dtype != np.bool_ or mask.shape != (self.num_envs,):
                raise ValueError(f"options['reset_mask'] must be a ({self.num_envs},) bool array, got {mask!r}")
            if not mask.any():
                raise ValueError("options['reset_mask'] must be true for at least one game")
        self._batch.reset(seed=seed, deal=options.get("deal"), which=mask, position=options.get("position"))
        which = self._all if mask is None else mask
        return self._observations(), self._infos(which, reset=True)

    def step(self, actions: Any) -> tuple[Any, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        """Step every game (``actions``: ``N`` ints); autoreset as ``autoreset_mode`` says."""
        b = self._batch
        if not b.started:
            raise ResetNeeded("step() before the first reset(): call reset() first")
        # Fresh mask and info arrays (and observations unless copy=False), written by the kernel.
        b.step(actions, emit=True, emit_obs=self.copy)
        f = b.flags
        infos = self._infos(self._all, reset=False)
        if self.autoreset_mode == AutoresetMode.SAME_STEP:
            done = f[F_TERMINATED] | f[F_TRUNCATED]
            if done.any():
                self._add_final(infos, done)
        return (
            b.observations(buffer=b.out_obs, copy=False, masks=b.out_masks) if self.copy else self._observations(),
            b.rewards.copy(),
            f[F_TERMINATED].copy(),
            f[F_TRUNCATED].copy(),
            infos,
        )

    def _observations(self, source: np.ndarray | None = None) -> Any:
        return self._batch.observations(source, copy=self.copy or source is not None)

    def _infos(self, which: np.ndarray, reset: bool) -> dict[str, Any]:
        """The infos dict as ``SyncVectorEnv`` assembles it (games outside ``which`` zeroed)."""
        b = self._batch
        infos: dict[str, Any] = {}
        for row, (key, slot) in enumerate(_INFO_INT_KEYS):
            # After a step the kernel has written these to fresh arrays (BatchGames.out_info).
            infos[key] = b.games[:, slot].copy() if reset else b.out_info[row]
            infos["_" + key] = which.copy()
        if reset:
            infos["won"] = np.zeros(self.num_envs, dtype=np.bool_)
            infos["illegal_action"] = np.zeros(self.num_envs, dtype=np.bool_)
        elif self.autoreset_mode == AutoresetMode.SAME_STEP:
            # A game reset within this step reports its new deal, as the single env's reset.
            fresh = b.flags[F_TERMINATED] | b.flags[F_TRUNCATED]
            infos["won"] = b.flags[F_WON] & ~fresh
            infos["illegal_action"] = b.flags[F_ILLEGAL] & ~fresh
        else:
            infos["won"] = b.flags[F_WON].copy()
            infos["illegal_action"] = b.flags[F_ILLEGAL].copy()
        infos["_won"] = which.copy()
        infos["_illegal_action"] = which.copy()
        infos["action_mask"] = b.masks.copy() if reset else b.out_masks
        infos["_action_mask"] = which.copy()
        if which is not self._all:
            for key in ("deal", "moves", "cards_on_foundations", "won", "illegal_action", "action_mask"):
                infos[key][~which] = 0
        return infos

    def _add_final(self, infos: dict[str, Any], done: np.ndarray) -> None:
        """SAME_STEP: ``final_obs`` and ``final_info`` of the games that finished this step."""
        b = self._batch
        idx = np.flatnonzero(done)
        final_obs = np.full(self.num_envs, None, dtype=object)
        for i, last in zip(idx, b.final_observations(idx), strict=True):
            final_obs[i] = last
        final: dict[str, Any] = {}
        for key, slot in _INFO_INT_KEYS:
            final[key] = np.where(done, b.final_games[:, slot], 0)
            final["_" + key] = done.copy()
        final["won"] = b.flags[F_WON] & done
        final["_won"] = done.copy()
        final["illegal_action"] = b.flags[F_ILLEGAL] & done
        final["_illegal_action"] = done.copy()
        final["action_mask"] = b.final_masks & done[:, None]
        final["_action_mask"] = done.copy()
        infos["final_obs"] = final_obs
        infos["_final_obs"] = done.copy()
        infos["final_info"] = final
        infos["_final_info"] = done.copy()

    # ----- extras ---------------------------------------------------------------------
    def action_masks(self) -> np.ndarray:
        """``(N, n) bool``: every game's legal actions now (a copy), in one call."""
        return self._batch.masks.copy()

    def random_legal_actions(self, rng: np.random.Generator | None = None) -> np.ndarray:
        """``(N,) int64``: a uniformly random legal action per game (0 where none), compiled."""
        if rng is None:
            if self._action_rng is None:
                self._action_rng = np.random.default_rng()
            rng = self._action_rng
        return self._batch.sample_legal(rng)

    @property
    def np_random(self) -> tuple[np.random.Generator, ...]:  # type: ignore[override]
        """The games' deal generators (one per game, as ``SyncVectorEnv`` returns its envs'):
        snapshots of their present states (see :meth:`.batch.BatchGames.generators`)."""
        return self._batch.generators()

    @property
    def np_random_seed(self) -> tuple[int | None, ...]:  # type: ignore[override]
        """Seed of each game's generator (``None`` where it was not seeded)."""
        return tuple(self._batch.seeds)

    def render(self) -> tuple[Any, ...] | None:
        """One frame per game: text (``"ansi"``) or an ``(H, W, 3) uint8`` picture (``"rgb_array"``)."""
        from . import render

        b = self._batch
        games = [GameState(self.variant, b.states[i], check=False) for i in range(self.num_envs)]
        if self.render_mode == "ansi":
            return tuple(
                render.table_text(g, f"{self.variant.name}  deal {b.games[i, G_DEAL]}  move {b.games[i, G_MOVES]}")
                for i, g in enumerate(games)
            )
        if self.render_mode == "rgb_array":
            if self._renderer is None:
                self._renderer = render.TableRenderer(self.variant)
            return tuple(self._renderer.draw(g) for g in games)
        gym.logger.warn("render() called without a render_mode; make the env with render_mode='ansi' or 'rgb_array'")
        return None

    def position_text(self, index: int) -> str:
        """Game ``index``'s position in the position format."""
        return format_position(GameState(self.variant, self._batch.states[index], check=False))

    def close_extras(self, **kwargs: Any) -> None:
        self._renderer = None

    def __repr__(self) -> str:
        return f"FortyThievesVectorEnv({self.variant.name}, num_envs={self.num_envs})"


def make_vector_env(num_envs: int = 1, **kwargs: Any) -> FortyThievesVectorEnv:
    """The ``vector_entry_point`` of every registered id (``gym.make_vec`` calls it)."""
    return FortyThievesVectorEnv(num_envs=num_envs, **kwargs)
