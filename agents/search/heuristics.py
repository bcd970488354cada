"""The solver's position score: it orders the searches (best-first, beam, the depth-first
move order) and never prunes."""

from __future__ import annotations

import numpy as np
from numba import njit

from forty_thieves_env.engine.cards import N_RANKS
from forty_thieves_env.engine.layout import Cfg, Slot
from forty_thieves_env.engine.rules import fits

#: Heuristic weights (cards home, empty columns, blocking column cards, column cards not on a
#: card they build on, blocking waste cards, waste length, burial of the next cards needed,
#: stock cards turned: the stock's size at the deal less what is left in it). ``balanced``
#: weighs the tableau; ``waste`` weighs the waste, which a single pass through the stock
#: makes the usual cause of a loss. Each finds wins the other misses. The ``+turns`` pair
#: also rewards turning the stock (twice the waste length's weight, so a turn scores like a
#: waste card played): without it a position that shuffles the columns outscores its
#: sibling that turns, at the same depth. They are neither better nor worse alone (a beam
#: search alone at 3 CPU-s wins 105 and 99 of classic deals 1..200 with and without, 108
#: and 109 of validation deals 1001..1200) but each wins deals the other misses, so the beam
#: searches run all four (``agents/search/beam.py``).
HEURISTICS = {}
for _name, _w in {"balanced": [20, 20, 10, 3, 10, 2, 2], "waste": [10, 10, 3, 1, 20, 5, 1]}.items():
    HEURISTICS[_name] = np.array([*_w, 0], dtype=np.int64)
    HEURISTICS[_name + "+turns"] = np.array([*_w, 2 * _w[5]], dtype=np.int64)


@njit(cache=True, inline="always")
def _pile_terms(s, cfg, base, n, n0, n1, n2, n3, column):
    """The terms of one pile (``n`` cards from ``s[base]`` up, the foundations' lower piles at
    ``n0..n3``): ``(cards above a lower card, cards not on a card they build on (columns only),
    burial of the cards the foundations need next)``."""
    block = 0
    unbuilt = 0
    deep = 0
    low = N_RANKS
    for p in range(n):
        cd = s[base + p]
        r = cd % N_RANKS
        if r > low:
            block += 1
        elif r < low:
            low = r
        if column and p > 0 and not fits(cfg, cd, s[base + p - 1]):
            unbuilt += 1
        su = cd // N_RANKS
        need = n0 if su == 0 else n1 if su == 1 else n2 if su == 2 else n3
        if r <= need + 1:
            deep += n - 1 - p
    return block, unbuilt, deep


@njit(cache=True)
def heuristic(s, cfg, w):
    """Move-ordering score of a position, higher first. It only orders the search; it
    never prunes, so it plays no part in the soundness of a ``lost`` verdict.

    A weighted sum (weights ``w``, see :data:`HEURISTICS`): rewards cards home and empty
    columns; penalises cards lying above a lower card in their column and in the waste (they
    must move before it can go home), column cards not on a card they build on, the
    waste's length, and how deeply the cards the foundations need next (ranks up to one
    above each suit's lower pile) are buried; rewards stock cards turned (``+turns`` only).
    """
    c = cfg[Cfg.COLUMNS]
    d = cfg[Cfg.DEPTH]
    off_len = cfg[Cfg.OFF_LEN]
    off_tab = cfg[Cfg.OFF_TAB]
    off_w = cfg[Cfg.OFF_WASTE]
    home = 0
    for p in range(Slot.FOUND, Slot.FOUND + 8):
        home += s[p]
    n0 = s[Slot.FOUND + 1]
    n1 = s[Slot.FOUND + 3]
    n2 = s[Slot.FOUND + 5]
    n3 = s[Slot.FOUND + 7]
    block = 0
    empties = 0
    unbuilt = 0
    deep = 0
    for i in range(c):
        n = s[off_len + i]
        if n == 0:
            empties += 1
            continue
        b, u, dp = _pile_terms(s, cfg, off_tab + i * d, n, n0, n1, n2, n3, True)
        block += b
        unbuilt += u
        deep += dp
    wl = s[Slot.WASTE_LEN]
    wblock, _, dp = _pile_terms(s, cfg, off_w, wl, n0, n1, n2, n3, False)
    deep += dp
    turned = cfg[Cfg.STOCK] - s[Slot.STOCK_LEN]  # the stock's size at the deal less what is left
    score = w[0] * home + w[1] * empties - w[2] * block - w[3] * unbuilt - w[4] * wblock - w[5] * wl
    return score - w[6] * deep + w[7] * turned
