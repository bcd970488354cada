"""Dead-position detection: a position the solver can prove lost is not searched further."""

from __future__ import annotations

import numpy as np
from numba import njit

from forty_thieves_env.engine.cards import N_CODES, N_RANKS
from forty_thieves_env.engine.layout import Cfg, Slot


@njit(cache=True)
def blocked_suits(s, cfg):
    """Whether ``s`` is provably lost by *blocked suits* (see the solver docs, rule 6).

    Only for suit building with single-card moves (classic, limited) and no empty column.
    Computes, as a greatest fixpoint, a set ``P`` of *pinned* cards (column cards, and
    waste cards once no redeal is left) and a set ``T`` of *trapped* cards (both copies
    pinned and each covered by a pinned card above it in its pile). Start with everything
    pinned; unpin an uncovered card that could go home without a trapped card of its suit
    below its rank going home first, or that could go onto a column card (a copy of the
    card one rank up not home, not covered by a pinned card, and not a pinned waste card);
    repeat until nothing changes. Dead when ``T`` is not empty and every column holds a
    pinned card. Returns False whenever it cannot show that.
    """
    if cfg[Cfg.ALTERNATE] != 0 or cfg[Cfg.MAX_RUN] != 1:
        return False
    c = cfg[Cfg.COLUMNS]
    d = cfg[Cfg.DEPTH]
    off_len = cfg[Cfg.OFF_LEN]
    off_tab = cfg[Cfg.OFF_TAB]
    for i in range(c):
        if s[off_len + i] == 0:
            return False
    wl = s[Slot.WASTE_LEN] if s[Slot.REDEALS] == 0 else 0
    n_slots = c * d + wl
    # Slots: column i position p is i*d + p; waste position p is c*d + p (bottom first).
    code = np.full(n_slots, -1, dtype=np.int64)
    where = np.full((N_CODES, 2), -1, dtype=np.int64)  # the slots of each card's copies
    for i in range(c):
        for p in range(s[off_len + i]):
            x = s[off_tab + i * d + p]
            code[i * d + p] = x
            where[x, 0 if where[x, 0] < 0 else 1] = i * d + p
    off_w = cfg[Cfg.OFF_WASTE]
    for p in range(wl):
        x = s[off_w + p]
        code[c * d + p] = x
        where[x, 0 if where[x, 0] < 0 else 1] = c * d + p
    pinned = code >= 0
    covered = np.zeros(n_slots, dtype=np.bool_)
    trapped = np.zeros(N_CODES, dtype=np.bool_)
    changed = True
    while changed:
        changed = False
        # covered: a pinned card lies above, in the same pile
        for i in range(c + 1):
            lo = i * d
            n = s[off_len + i] if i < c else wl
            above = False
            for p in range(n - 1, -1, -1):
                covered[lo + p] = above
                if pinned[lo + p]:
                    above = True
        any_trapped = False
        for x in range(N_CODES):
            a = where[x, 0]
            b = where[x, 1]
            trapped[x] = a >= 0 and b >= 0 and pinned[a] and pinned[b] and covered[a] and covered[b]
            any_trapped |= trapped[x]
        if not any_trapped:
            return False  # T only shrinks
        # Unpin pile by pile from the top, so that a card uncovered in this pass is tested
        # in it too. (Targets use this pass's ``covered``; the last pass changes nothing,
        # so there every test used up-to-date sets.)
        for i in range(c + 1):
            lo = i * d
            n = s[off_len + i] if i < c else wl
            above = False
            for p in range(n - 1, -1, -1):
                q = lo + p
                if not pinned[q]:
                    continue
                if above:
                    continue
                x = code[q]
                su = x // N_RANKS
                r = x % N_RANKS
                keep = False
                for r2 in range(r):
                    if trapped[su * N_RANKS + r2]:
                        keep = True  # it cannot go home first
                        break
                if keep and r < N_RANKS - 1:
                    y = x + 1
                    blocked = 0
                    for f in range(Slot.FOUND + 2 * su, Slot.FOUND + 2 * su + 2):
                        if s[f] > r + 1:
                            blocked += 1
                    for e in range(2):
                        v = where[y, e]
                        if v >= 0 and (covered[v] or (pinned[v] and v >= c * d)):
                            blocked += 1
                    keep = blocked >= 2
                if keep:
                    above = True
                else:
                    pinned[q] = False
                    changed = True
            if i < c and not above:
                return False  # a column without a pinned card: P only shrinks
    return True

