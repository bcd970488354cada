"""The difficulty levels of the rule pages: Easy, Normal and Hard, as rules plus a deal pool.

The scored rule page (``shared/rules``) offers three levels of the classic game:

======== ================================ ========== ============================ =========================
level    id                               redeals    runs                         deals
======== ================================ ========== ============================ =========================
easy     ``FortyThieves-Easy-v0``         1          within the ``2**e`` cap      proven winnable only
normal   ``FortyThieves-Normal-v0``       1          within the ``2**e`` cap      any
hard     ``FortyThieves-Hard-v0``         0          one card at a time           any (the classic game)
======== ================================ ========== ============================ =========================

"Runs within the cap" is ``run_moves="supermove"``: a same-suit run moves as one move only
when single-card moves through the empty columns could do it ("with no empty column you can
move one card, with one empty column two cards, with two empty columns four, and half that
when the run itself is going into an empty column"). Easy deals only from the classic
winnable set, which holds for Easy's rules too (:mod:`.winnable`: Easy only relaxes classic).

Like the engine, this module imports neither gymnasium nor torch.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..engine.variants import CLASSIC, Variant

__all__ = ["LEVELS", "Level", "get_level", "level_of"]


@dataclass(frozen=True)
class Level:
    """One difficulty level: the rules in force and whether deals are proven winnable.

    Attributes:
        name: ``"easy"``, ``"normal"`` or ``"hard"``.
        title: The name a player reads (``"Hard (classic)"``).
        env_id: Its registered Gymnasium id.
        variant: The rules (classic with the level's changes; its ``name`` stays ``"classic"``).
        winnable_only: Deal only deals the solver proved winnable.
        description: One line, from the rule page.
    """

    name: str
    title: str
    env_id: str
    variant: Variant
    winnable_only: bool
    description: str

    def env_kwargs(self) -> dict[str, Any]:
        """The ``gym.make`` keyword arguments that give this level's environment."""
        changes = {
            field: getattr(self.variant, field)
            for field in ("redeals", "run_moves")
            if getattr(self.variant, field) != getattr(CLASSIC, field)
        }
        return {"variant": CLASSIC.name, **changes, "winnable_only": self.winnable_only}


_NORMAL_RULES = CLASSIC.replace(redeals=1, run_moves="supermove")

LEVELS: dict[str, Level] = {
    level.name: level
    for level in (
        Level(
            "easy",
            "Easy",
            "FortyThieves-Easy-v0",
            _NORMAL_RULES,
            True,
            "one redeal, and every deal is one the solver has already won",
        ),
        Level(
            "normal",
            "Normal",
            "FortyThieves-Normal-v0",
            _NORMAL_RULES,
            False,
            "a random deal with one redeal",
        ),
        Level(
            "hard",
            "Hard (classic)",
            "FortyThieves-Hard-v0",
            CLASSIC,
            False,
            "the traditional game: a random deal and a single pass through the stock",
        ),
    )
}


def get_level(name: str | Level) -> Level:
    """A level by name (any case).

    Raises:
        ValueError: not a level name.
    """
    if isinstance(name, Level):
        return name
    key = str(name).strip().lower()
    if key not in LEVELS:
        raise ValueError(f"unknown level {name!r}; levels are {', '.join(LEVELS)}")
    return LEVELS[key]


def level_of(variant: Variant, winnable_only: bool) -> Level | None:
    """The level whose rules and deal pool these are, or ``None``."""
    for level in LEVELS.values():
        if level.variant == variant and level.winnable_only == winnable_only:
            return level
    return None
