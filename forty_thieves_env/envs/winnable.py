"""Winnable-deal sets: training deals the solver proved winnable, with their winning lines.

Each set is ``forty_thieves_env/data/winnable/<variant>.json.gz`` (package data), made by
``forty-thieves solve ... --export-winnable`` (:mod:`agents.evaluation.solving`; the exact command,
the solver budget, the date, the deals searched and the counts of won / lost / unknown
are in its :func:`meta`). A deal is in the set when the perfect-information solver found a
win within its budget; its certificate is that win as move text, which
:meth:`~forty_thieves_env.text.game.GameState.play` replays from the deal's start to a won position.

The sets are a biased subset: the deals the solver found easy, drawn only from the
training range (:data:`forty_thieves_env.engine.deals.TRAIN_RANGE`), never from the test or validation splits.
``FortyThievesEnv(winnable_only=True)`` (and the vector envs) deal only from them; an
agent trained that way is still evaluated on the ordinary splits.

Like the engine, this module imports neither gymnasium nor torch.
"""

from __future__ import annotations

import gzip
import json
from functools import cache
from importlib import resources
from typing import Any

import numpy as np

from ..engine.variants import PRESETS, Variant, get_variant

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


def _preset_name(variant: str | Variant) -> str:
    """The preset a variant is; a modified preset (other options) has no set of its own."""
    v = get_variant(variant)
    preset = PRESETS.get(v.name)
    if preset is None or preset != v:
        raise ValueError(
            f"no winnable set for a custom variant ({v}); sets exist only for the unmodified presets "
            f"{', '.join(available()) or '(none)'}"
        )
    return v.name


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
    return _load(_preset_name(variant))["deals"].copy()


def certificate(variant: str | Variant, deal: int) -> list[str]:
    """The winning line of ``deal`` in ``variant``'s set (move text, from the deal's start).

    Raises:
        ValueError: no set for ``variant``, or ``deal`` is not in it.
    """
    certs = _load(_preset_name(variant))["certificates"]
    d = int(deal)
    if d not in certs:
        raise ValueError(f"deal {d} is not in the {get_variant(variant).name} winnable set")
    return certs[d].split()


def meta(variant: str | Variant = "classic") -> dict[str, Any]:
    """How the set was made: solver budget, command, date, deals searched, won/lost/unknown counts."""
    return dict(_load(_preset_name(variant))["meta"])


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
