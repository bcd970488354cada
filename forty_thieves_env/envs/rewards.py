"""Rewards: small swappable objects, each described by three numbers a kernel can use.

A reward in this family depends on one step's outcome only: how many cards reached the
foundations (auto-play included) and whether the game is now won. Every reward object is a
frozen dataclass with

* ``per_card``: paid for each card that reaches a foundation this step,
* ``win_bonus``: paid once, on the step that wins,
* ``illegal``: paid instead for an action the rules refuse (``illegal_action="penalize"``
  or ``"terminate"``),

and :meth:`Reward.spec` packs them into a ``(3,) float64`` array that the numba kernel
:func:`reward_from_spec` evaluates, so a batched environment computes the same reward
inside a compiled loop. Rewards that cannot be written this way do not belong here.

============== =========================== ========= ========= =================================
name           class                       per_card  win_bonus illegal
============== =========================== ========= ========= =================================
``foundation`` :class:`FoundationReward`   1/104     1.0       -1/104 (one card's worth)
``win``        :class:`WinReward`          0         1.0       -0.01
``score``      :class:`ScoreReward`        10        0         -10 (rule page 004's points per
                                                               card, without its clock)
============== =========================== ========= ========= =================================
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from numba import njit

from ..engine.cards import N_CARDS

# Slots of a reward spec array.
R_PER_CARD = 0
R_WIN_BONUS = 1
R_ILLEGAL = 2
R_LEN = 3


@njit(cache=True)
def reward_from_spec(spec, moved, won):  # spec: (R_LEN,) float64
    """Reward of a legal step that sent ``moved`` cards home and left the game ``won``."""
    r = spec[R_PER_CARD] * moved
    if won:
        r += spec[R_WIN_BONUS]
    return r


@dataclass(frozen=True)
class Reward:
    """``per_card`` for each card sent home, ``win_bonus`` on the winning step, ``illegal``
    for a refused action. Subclasses only change the defaults (and the name)."""

    per_card: float = 0.0
    win_bonus: float = 0.0
    illegal: float = 0.0
    name: ClassVar[str] = "custom"

    def __post_init__(self) -> None:
        for field in ("per_card", "win_bonus", "illegal"):
            value = getattr(self, field)
            real = isinstance(value, (int, float, np.integer, np.floating))
            if not real or isinstance(value, (bool, np.bool_)) or not math.isfinite(value):
                raise ValueError(f"{type(self).__name__}.{field} must be a finite number, got {value!r}")
            object.__setattr__(self, field, float(value))  # numpy numbers too: one type, equal rewards equal

    def __call__(self, moved: int, won: bool) -> float:
        """Reward of a legal step (same arithmetic as :func:`reward_from_spec`)."""
        return self.per_card * moved + (self.win_bonus if won else 0.0)

    def spec(self) -> np.ndarray:
        """``(R_LEN,) float64``: ``[per_card, win_bonus, illegal]``."""
        out = np.empty(R_LEN, dtype=np.float64)
        out[R_PER_CARD] = self.per_card
        out[R_WIN_BONUS] = self.win_bonus
        out[R_ILLEGAL] = self.illegal
        return out


@dataclass(frozen=True)
class FoundationReward(Reward):
    """``1/104`` per card home, so the cards of a win sum to 1, plus ``win_bonus``."""

    per_card: float = 1.0 / N_CARDS
    win_bonus: float = 1.0
    illegal: float = -1.0 / N_CARDS
    name: ClassVar[str] = "foundation"


@dataclass(frozen=True)
class WinReward(Reward):
    """1 on the winning step, 0 otherwise."""

    per_card: float = 0.0
    win_bonus: float = 1.0
    illegal: float = -0.01
    name: ClassVar[str] = "win"


@dataclass(frozen=True)
class ScoreReward(Reward):
    """10 points per card home, as the scored web version of rule page 004 (no clock)."""

    per_card: float = 10.0
    win_bonus: float = 0.0
    illegal: float = -10.0
    name: ClassVar[str] = "score"


REWARDS: dict[str, type[Reward]] = {cls.name: cls for cls in (FoundationReward, WinReward, ScoreReward)}


def make_reward(reward: str | Reward) -> Reward:
    """A reward object from its name (``"foundation"``, ``"win"``, ``"score"``) or as given.

    Raises:
        ValueError: unknown name.
        TypeError: neither a name nor a :class:`Reward`.
    """
    if isinstance(reward, Reward):
        return reward
    if isinstance(reward, str):
        cls = REWARDS.get(reward.strip().lower())
        if cls is None:
            raise ValueError(f"unknown reward {reward!r}; rewards are {', '.join(REWARDS)} or a Reward instance")
        return cls()
    raise TypeError(f"reward must be a name or a Reward instance, got {reward!r}")
