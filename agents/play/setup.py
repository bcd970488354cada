"""What is being played: the rules and the deals dealt, its statistics key and its command line.

A :class:`Setup` is a variant plus whether only proven-winnable deals are dealt. The level of
the rule pages follows from it (:func:`~forty_thieves_env.envs.levels.level_of`), whichever way
it was asked for: ``--variant classic`` is Hard, ``--level normal --winnable-only`` is Easy, and
Hard with winnable deals only is no level (its statistics are kept apart, as
``classic+winnable``).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

import numpy as np

from forty_thieves_env.engine.variants import PRESETS, Variant, get_variant
from forty_thieves_env.envs.levels import Level, get_level, level_of
from forty_thieves_env.envs.winnable import winnable_deals

__all__ = ["Setup", "changes"]


def changes(variant: Variant) -> list[tuple[str, Any]]:
    """The options in which ``variant`` differs from the preset of its name (classic's, for a
    custom name), as ``(field, value)`` pairs."""
    base = PRESETS.get(variant.name, PRESETS["classic"])
    return [
        (f.name, getattr(variant, f.name))
        for f in dataclasses.fields(Variant)
        if f.name != "name" and getattr(variant, f.name) != getattr(base, f.name)
    ]


@dataclass(frozen=True)
class Setup:
    """The rules in force and whether only proven-winnable deals are dealt.

    Attributes:
        variant: The rules.
        winnable_only: Deal only deals of the variant's winnable set.
    """

    variant: Variant
    winnable_only: bool

    @classmethod
    def of(
        cls, level: str | Level | None = None, variant: str | Variant | None = None, winnable_only: bool = False
    ) -> Setup:
        """A level's setup (``winnable_only`` may narrow its deals), or a variant's.

        Raises:
            ValueError: both a level and a variant, or an unknown one.
        """
        if level is not None and variant is not None:
            raise ValueError("give a level or a variant, not both")
        if level is not None:
            lv = get_level(level)
            return cls(lv.variant, lv.winnable_only or bool(winnable_only))
        return cls(get_variant(variant if variant is not None else "classic"), bool(winnable_only))

    @property
    def level(self) -> Level | None:
        """The rule pages' level these rules and deals are, if any."""
        return level_of(self.variant, self.winnable_only)

    @property
    def label(self) -> str:
        """The statistics key: the level name, else the variant and its changed options."""
        if self.level is not None:
            return self.level.name
        name = " ".join([self.variant.name, *(f"{k}={v}" for k, v in changes(self.variant))])
        return name + ("+winnable" if self.winnable_only else "")

    def pool(self) -> np.ndarray | None:
        """The deal numbers dealt from (``None``: any)."""
        return winnable_deals(self.variant) if self.winnable_only else None

    def command_line(self, deal: int) -> str:
        """The ``forty-thieves play`` command that lays deal ``deal`` out with these rules."""
        words = ["forty-thieves", "play"]
        if self.level is not None:
            words += ["--level", self.level.name]
        else:
            words += ["--variant", self.variant.name]
            for key, value in changes(self.variant):
                words += ["--rule", f"{key}={value}"]
            if self.winnable_only:
                words.append("--winnable-only")
        return " ".join([*words, "--deal", str(deal)])

    def to_json(self) -> dict[str, Any]:
        return {"variant": dataclasses.asdict(self.variant), "winnable_only": self.winnable_only}

    @classmethod
    def from_json(cls, doc: dict[str, Any]) -> Setup:
        """The setup :meth:`to_json` wrote.

        Raises:
            ValueError, TypeError, KeyError: not such a document.
        """
        return cls(Variant(**doc["variant"]), bool(doc["winnable_only"]))
