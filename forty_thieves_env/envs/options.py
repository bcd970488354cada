"""The constructor options of every environment, validated once.

:class:`~.env.FortyThievesEnv`, the batch engine (:class:`~.batch.BatchGames`), the
Gymnasium vector env (:mod:`.vector`) and the stable-baselines3 adapter (:mod:`.sb3`) all
take the same arguments: a variant (a preset name or a :class:`~forty_thieves_env.engine.variants.Variant`,
with any variant option as a keyword), ``observation``, ``mask_in_observation``, ``reward``,
``illegal_action``, ``deals``, ``winnable_only`` and ``render_mode``. :meth:`EnvOptions.make`
checks them and turns them into one frozen :class:`EnvOptions`, which each of them keeps; the
checks of the batch's own arguments (:func:`check_batch`) and of a reset's ``position``
option are here too.

Like the engine, this module imports neither gymnasium nor torch.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..engine.checks import check_choice, check_flag, check_int, is_integer
from ..engine.config import config_for
from ..engine.deals import MAX_ENV_DEAL, check_deal_number, check_deal_numbers, deal_split
from ..engine.rules import count_legal
from ..engine.state_check import check_state
from ..engine.variants import Variant, get_variant
from ..text.game import GameState, parse_position
from .observation import check_mode
from .rewards import Reward, make_reward
from .winnable import restrict_deals

#: What an action outside the mask does (see :class:`~.env.FortyThievesEnv`).
ILLEGAL_ACTIONS: tuple[str, ...] = ("penalize", "raise", "terminate")
#: The render modes of every environment (``None`` renders nothing).
RENDER_MODES: tuple[str, ...] = ("ansi", "rgb_array")
#: The batch engine's autoreset modes (see :mod:`.batch`), in the order of their kernel codes.
AUTORESETS: tuple[str, ...] = ("next_step", "same_step")


@dataclass(frozen=True, eq=False)  # eq=False: ``deals`` is an array
class EnvOptions:
    """The checked constructor options of an environment (make one with :meth:`make`).

    Attributes:
        variant: The rules in force (the preset with the keyword options applied).
        observation: ``"dict"``, ``"flat"`` or ``"oracle"``.
        reward: The reward object.
        illegal_action: One of :data:`ILLEGAL_ACTIONS`.
        deals: ``int64`` deal numbers a reset draws from, or ``None`` for the training range;
            with ``winnable_only``, already restricted to the variant's winnable set.
        winnable_only: Whether ``deals`` was restricted to the winnable set.
        render_mode: ``None`` or one of :data:`RENDER_MODES`.
        mask_in_observation: Whether the observation carries the action mask too (the
            ``action_mask`` key of a ``Dict``, or the tail of a ``flat`` row: see
            :func:`~.observation.observation_space`).
    """

    variant: Variant
    observation: str
    reward: Reward
    illegal_action: str
    deals: np.ndarray | None
    winnable_only: bool
    render_mode: str | None
    mask_in_observation: bool = False

    @classmethod
    def make(
        cls,
        variant: str | Variant = "classic",
        *,
        observation: str = "dict",
        reward: str | Reward = "foundation",
        illegal_action: str = "penalize",
        deals: str | Iterable[int] | np.ndarray | None = None,
        winnable_only: bool = False,
        render_mode: str | None = None,
        mask_in_observation: bool = False,
        **variant_options: Any,
    ) -> EnvOptions:
        """Check the arguments of an environment (see :class:`~.env.FortyThievesEnv`).

        Raises:
            ValueError: an unknown variant, variant option, observation, reward,
                ``illegal_action`` or ``render_mode``; a number out of range; bad ``deals``;
                or ``winnable_only`` without a winnable deal.
            TypeError: an argument of the wrong kind (:mod:`forty_thieves_env.engine.checks`:
                a flag (``winnable_only``, ``mask_in_observation``) that is not a bool, a
                number that is not an integer, a choice that is not a string); a reward that
                is neither a name nor a :class:`~.rewards.Reward`.
        """
        v = get_variant(variant, "FortyThievesEnv.__init__", **variant_options)
        check_mode(observation)
        in_obs = check_flag(mask_in_observation, "mask_in_observation")
        rew = make_reward(reward)
        check_choice(illegal_action, "illegal_action", ILLEGAL_ACTIONS)
        if render_mode is not None:
            check_choice(render_mode, "render_mode", RENDER_MODES)
        pool = check_deals(deals)
        winnable = check_flag(winnable_only, "winnable_only")
        if winnable:
            pool = restrict_deals(v, pool)
        return cls(v, observation, rew, illegal_action, pool, winnable, render_mode, in_obs)

    @classmethod
    def of(cls, variant: str | Variant | EnvOptions = "classic", **options: Any) -> EnvOptions:
        """``variant`` itself when it is an :class:`EnvOptions` (then no other option may be
        given), else :meth:`make` of the arguments."""
        if isinstance(variant, EnvOptions):
            if options:
                raise TypeError(f"give either an EnvOptions or options, not both: {sorted(options)}")
            return variant
        return cls.make(variant, **options)


def check_deals(deals: str | Iterable[int] | np.ndarray | None) -> np.ndarray | None:
    """The ``deals=`` argument as an ``int64`` array of deal numbers (``None`` stays ``None``):
    a split name, or a non-empty sequence of deal numbers 1..:data:`~forty_thieves_env.engine.deals.MAX_ENV_DEAL`.

    Raises:
        TypeError: neither a split name nor a sequence of integers.
        ValueError: an unknown split, an empty sequence, or a number out of range.
    """
    if deals is None:
        return None
    if isinstance(deals, str):
        return deal_split(deals)
    return check_deal_numbers(deals, "deals", MAX_ENV_DEAL)


def check_reset_deal(number: object, name: str = "options['deal']") -> int:
    """A reset's ``options["deal"]``: one deal number 1..:data:`~forty_thieves_env.engine.deals.MAX_ENV_DEAL`
    (the same rule as ``deals=``), as a Python ``int``.

    Raises:
        TypeError: not an integer.
        ValueError: out of range.
    """
    return check_deal_number(number, name, MAX_ENV_DEAL)


def check_batch(num_envs: int, max_episode_steps: int | None, autoreset: str, num_threads: int | None) -> None:
    """Check the batch engine's own arguments (see :class:`~.batch.BatchGames`).

    Raises:
        TypeError: a number that is not an integer, an autoreset mode that is not a string.
        ValueError: a number of games, step limit or thread count below 1, or an unknown
            autoreset mode.
    """
    check_int(num_envs, "num_envs", 1)
    check_choice(autoreset, "autoreset", AUTORESETS)
    if max_episode_steps is not None:
        check_int(max_episode_steps, "max_episode_steps", 1)
    if num_threads is not None:
        check_int(num_threads, "num_threads", 1)


def check_seeds(seed: object, n: int) -> list[int | None]:
    """The seed of each of ``n`` games for a batch's ``seed`` argument, checked before anything
    changes: ``None`` (each game keeps its generator), one integer (``seed + i`` for game ``i``)
    or a sequence of ``n`` integers or ``None``.

    Raises:
        TypeError: a seed that is not an integer (nor ``None``), or not one seed nor a sequence.
        ValueError: a negative seed, or a sequence of other than ``n`` seeds.
    """
    if seed is None:
        return [None] * n
    if is_integer(seed):
        first = check_int(seed, "seed", 0)
        return [first + i for i in range(n)]
    if isinstance(seed, (str, bytes)) or not isinstance(seed, (Sequence, np.ndarray)):
        raise TypeError(f"seed must be None, an integer >= 0 or a sequence of {n} of them, got {seed!r}")
    seeds = [None if x is None else check_int(x, f"seed[{k}]", 0) for k, x in enumerate(seed)]
    if len(seeds) != n:
        raise ValueError(f"a sequence of seeds must have num_envs={n} entries, got {len(seeds)}")
    return seeds


def check_position(variant: Variant, position: object) -> np.ndarray:
    """The state array of a position to start from: position text or a ``GameState`` of ``variant``.

    Raises:
        TypeError: neither text nor a ``GameState``.
        ValueError: another variant's position, an invalid state array, or a position with no
            legal move (won or stuck).
    """
    game = parse_position(position) if isinstance(position, str) else position
    if not isinstance(game, GameState):
        raise TypeError(f"options['position'] must be position text or a GameState, got {type(position)}")
    if game.variant != variant:
        raise ValueError(f"the position is a {game.variant} position, this environment plays {variant}")
    # A GameState's array may have been written to since it was made.
    check_state(variant, game.array, "options['position']")
    if count_legal(game.array, config_for(variant)) == 0:
        raise ValueError("the position has no legal move (won or stuck): there is nothing to play")
    return game.array
