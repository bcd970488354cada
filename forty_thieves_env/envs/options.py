"""The constructor options of every environment, validated once.

:class:`~.env.FortyThievesEnv`, the batch engine (:class:`~.batch.BatchGames`), the
Gymnasium vector env (:mod:`.vector`) and the stable-baselines3 adapter (:mod:`.sb3`) all
take the same arguments: a variant (a preset name or a :class:`~forty_thieves_env.engine.variants.Variant`,
with any variant option as a keyword), ``observation``, ``reward``, ``illegal_action``,
``deals``, ``winnable_only`` and ``render_mode``. :meth:`EnvOptions.make` checks them and
turns them into one frozen :class:`EnvOptions`, which each of them keeps; the checks of the
batch's own arguments (:func:`check_batch`) and of a reset's ``position`` option are here too.

Like the engine, this module imports neither gymnasium nor torch.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..engine.config import config_for
from ..engine.deals import deal_split
from ..engine.rules import count_legal
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
    """

    variant: Variant
    observation: str
    reward: Reward
    illegal_action: str
    deals: np.ndarray | None
    winnable_only: bool
    render_mode: str | None

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
        **variant_options: Any,
    ) -> EnvOptions:
        """Check the arguments of an environment (see :class:`~.env.FortyThievesEnv`).

        Raises:
            ValueError: an unknown variant, variant option, observation, reward,
                ``illegal_action`` or ``render_mode``; bad ``deals``; or ``winnable_only``
                without a winnable deal.
            TypeError: a reward that is neither a name nor a :class:`~.rewards.Reward`.
        """
        v = get_variant(variant, **variant_options)
        check_mode(observation)
        rew = make_reward(reward)
        if illegal_action not in ILLEGAL_ACTIONS:
            raise ValueError(f"unknown illegal_action {illegal_action!r}; choose one of {', '.join(ILLEGAL_ACTIONS)}")
        if render_mode is not None and render_mode not in RENDER_MODES:
            raise ValueError(f"unknown render_mode {render_mode!r}; choose one of {list(RENDER_MODES)}")
        pool = check_deals(deals)
        if winnable_only:
            pool = restrict_deals(v, pool)
        return cls(v, observation, rew, illegal_action, pool, bool(winnable_only), render_mode)

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
    """The ``deals=`` argument as an ``int64`` array of deal numbers (``None`` stays ``None``).

    Raises:
        ValueError: empty, not integers, or a number below 1.
    """
    if deals is None:
        return None
    if isinstance(deals, str):
        return deal_split(deals)
    arr = np.asarray(list(deals) if not isinstance(deals, np.ndarray) else deals)
    if arr.ndim != 1 or arr.size == 0 or not np.issubdtype(arr.dtype, np.integer):
        raise ValueError("deals must be a non-empty sequence of deal numbers (ints)")
    if arr.min() < 1:
        raise ValueError(f"deal numbers start at 1, got {int(arr.min())}")
    return arr.astype(np.int64)


def check_batch(num_games: int, max_episode_steps: int | None, autoreset: str, num_threads: int | None) -> None:
    """Check the batch engine's own arguments (see :class:`~.batch.BatchGames`).

    Raises:
        ValueError: a number of games, step limit or thread count below 1, or an unknown
            autoreset mode.
    """
    if isinstance(num_games, bool) or not isinstance(num_games, (int, np.integer)) or num_games < 1:
        raise ValueError(f"num_games must be a positive int, got {num_games!r}")
    if autoreset not in AUTORESETS:
        raise ValueError(f"unknown autoreset {autoreset!r}; choose one of {', '.join(AUTORESETS)}")
    if max_episode_steps is not None and (isinstance(max_episode_steps, bool) or max_episode_steps < 1):
        raise ValueError(f"max_episode_steps must be a positive int or None, got {max_episode_steps!r}")
    if num_threads is not None and num_threads < 1:
        raise ValueError(f"num_threads must be a positive int or None, got {num_threads!r}")


def check_position(variant: Variant, position: object) -> np.ndarray:
    """The state array of a position to start from: position text or a ``GameState`` of ``variant``.

    Raises:
        TypeError: neither text nor a ``GameState``.
        ValueError: another variant's position, or one with no legal move (won or stuck).
    """
    game = parse_position(position) if isinstance(position, str) else position
    if not isinstance(game, GameState):
        raise TypeError(f"options['position'] must be position text or a GameState, got {type(position)}")
    if game.variant != variant:
        raise ValueError(f"the position is a {game.variant} position, this environment plays {variant}")
    if count_legal(game.array, config_for(variant)) == 0:
        raise ValueError("the position has no legal move (won or stuck): there is nothing to play")
    return game.array
