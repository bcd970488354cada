"""Winnable-deal sets: training deals the solver proved winnable, with their winning lines.

Each set is ``forty_thieves_env/data/winnable/<variant>.json.gz`` (package data), made by
``forty-thieves solve ... --export-winnable`` (:mod:`agents.solving.sweep`; the exact command,
the solver budget, the date, the deals searched and the counts of won / lost / unknown
are in its :func:`meta`). A deal is in the set when the perfect-information solver found a
win within its budget; its certificate is that win as move text, which
:meth:`~forty_thieves_env.text.game.GameState.play` replays from the deal's start to a won position.

The sets are a biased subset: the deals the solver found easy, drawn only from the
training range (:data:`forty_thieves_env.engine.deals.TRAIN_RANGE`), never from the test or validation splits.
``FortyThievesEnv(winnable_only=True)`` (and the vector envs) deal only from them; an
agent trained that way is still evaluated on the ordinary splits.

A modified preset that only *relaxes* a preset with a set (more redeals, longer run moves: the
Easy level is classic with one redeal and supermoves) takes that preset's set: every winning
line of the preset is still a legal line under the relaxed rules.

Like the engine, this module imports neither gymnasium nor torch.
"""

from __future__ import annotations

import gzip
import json
from functools import cache
from importlib import resources
from typing import Any

import numpy as np

from ..engine.variants import PRESETS, RUN_MOVES, Variant, get_variant

__all__ = ["available", "certificate", "meta", "restrict_deals", "winnable_deals"]

#: Where the sets lie, inside the ``forty_thieves_env`` package (its package data).
_PACKAGE = "forty_thieves_env"
_FOLDER = ("data", "winnable")


def available() -> list[str]:
    """The variants (preset names) that ship a winnable set."""
    folder = resources.files(_PACKAGE).joinpath(*_FOLDER)
    if not folder.is_dir():
        return []
    names = [p.name[: -len(".json.gz")] for p in folder.iterdir() if p.name.endswith(".json.gz")]
    return sorted(n for n in names if n in PRESETS)


def _relaxes(variant: Variant, preset: Variant) -> bool:
    """Whether every line of play of ``preset`` is a line of play of ``variant`` too.

    True when the two differ only in rules that allow *more*: more redeals (the stock move is
    legal in more positions, nothing else changes), or run moves that carry more cards
    (``"none"`` < ``"supermove"`` < ``"free"``; a single-card move is legal in all three).
    A deal won in ``preset`` is then won in ``variant`` by the same moves, so the preset's
    winnable set and certificates hold for it.
    """
    same = ("columns", "cards_per_column", "face_down", "build", "auto_play_safe")
    return (
        all(getattr(variant, f) == getattr(preset, f) for f in same)
        and variant.redeals >= preset.redeals
        and RUN_MOVES.index(variant.run_moves) >= RUN_MOVES.index(preset.run_moves)
    )


def _set_names(variant: str | Variant) -> list[str]:
    """The shipped sets that hold for ``variant``: an unmodified preset's own (shipped or not), or
    for a modified one, the sets of the shipped presets it relaxes (:func:`_relaxes`)."""
    v = get_variant(variant)
    preset = PRESETS.get(v.name)
    if preset is not None and preset == v:
        return [v.name]
    names = [n for n in available() if _relaxes(v, PRESETS[n])]
    if not names:
        raise ValueError(
            f"no winnable set for a custom variant ({v}); sets exist only for the unmodified presets "
            f"{', '.join(available()) or '(none)'} and for variants that only relax them (more redeals, "
            "longer run moves)"
        )
    return names


@cache
def _load(name: str) -> dict[str, Any]:
    path = resources.files(_PACKAGE).joinpath(*_FOLDER, f"{name}.json.gz")
    if not path.is_file():
        raise ValueError(f"no winnable set for variant {name!r}; sets exist for {', '.join(available()) or '(none)'}")
    with path.open("rb") as f:
        doc = json.loads(gzip.decompress(f.read()).decode("utf-8"))
    certs = {int(k): v for k, v in doc["certificates"].items()}
    return {"meta": doc["meta"], "certificates": certs, "deals": np.array(sorted(certs), dtype=np.int64)}


def winnable_deals(variant: str | Variant = "classic") -> np.ndarray:
    """The deal numbers of ``variant``'s set, ascending (``int64``, a copy).

    Raises:
        ValueError: an unknown variant, a modified preset, or a preset without a set.
    """
    names = _set_names(variant)
    if len(names) == 1:
        return _load(names[0])["deals"].copy()
    return np.unique(np.concatenate([_load(n)["deals"] for n in names]))


def certificate(variant: str | Variant, deal: int) -> list[str]:
    """The winning line of ``deal`` in ``variant``'s set (move text, from the deal's start).

    Raises:
        ValueError: no set for ``variant``, or ``deal`` is not in it.
    """
    d = int(deal)
    for name in _set_names(variant):
        certs = _load(name)["certificates"]
        if d in certs:
            return certs[d].split()
    raise ValueError(f"deal {d} is not in the {get_variant(variant).name} winnable set")


def meta(variant: str | Variant = "classic") -> dict[str, Any]:
    """How the set was made: solver budget, command, date, deals searched, won/lost/unknown counts.

    For a variant that relaxes a preset (:func:`_relaxes`), the meta of the first set it takes
    its deals from, with ``inherited_from`` naming every such set.
    """
    names = _set_names(variant)
    out = dict(_load(names[0])["meta"])
    if get_variant(variant) != PRESETS.get(names[0]):
        out["inherited_from"] = names
    return out


def restrict_deals(variant: str | Variant, deals: np.ndarray | None) -> np.ndarray:
    """The winnable deals of ``variant``; with ``deals``, those of ``deals`` in the set (what envs draw from).

    Raises:
        ValueError: no set for ``variant``, or no deal of ``deals`` is in it.
    """
    win = winnable_deals(variant)
    if deals is None:
        return win
    deals = np.asarray(deals, dtype=np.int64)
    both = deals[np.isin(deals, win)]  # keeps the given order and repeats
    if both.size == 0:
        raise ValueError(
            f"winnable_only=True leaves no deal: none of the {len(deals)} given deals is in the "
            f"{get_variant(variant).name} winnable set (training deals {int(win[0])}..{int(win[-1])})"
        )
    return both
