"""The moves a search tries: safe moves taken without branching, the symmetry and stock-turn
reductions, child generation and replaying a line. Every rule comes from the engine."""

from __future__ import annotations

from numba import njit

from forty_thieves_env.engine.actions import Kind, column_to_foundation, decode
from forty_thieves_env.engine.layout import Cfg, Slot
from forty_thieves_env.engine.rules import apply_action, is_safe, legal_mask


@njit(cache=True)
def auto_safe(s, cfg, path, plen, prune=True):
    """Play every safe foundation move (engine's :func:`~forty_thieves_env.engine.rules.is_safe`).

    Each move is played with the engine's ``apply_action`` and appended to ``path`` at
    ``plen``; returns the new path length. Safe moves lose nothing (see the solver docs),
    so the search takes them without branching.
    """
    if not prune:
        return plen
    c = cfg[Cfg.COLUMNS]
    d = cfg[Cfg.DEPTH]
    off_len = cfg[Cfg.OFF_LEN]
    off_tab = cfg[Cfg.OFF_TAB]
    off_w = cfg[Cfg.OFF_WASTE]
    changed = True
    while changed:
        changed = False
        wl = s[Slot.WASTE_LEN]
        if wl > 0 and is_safe(s, cfg, s[off_w + wl - 1]):
            apply_action(s, cfg, 1)
            path[plen] = 1
            plen += 1
            changed = True
        for i in range(c):
            n = s[off_len + i]
            if n > 0 and is_safe(s, cfg, s[off_tab + i * d + n - 1]):
                a = column_to_foundation(cfg, i)
                apply_action(s, cfg, a)
                path[plen] = a
                plen += 1
                changed = True
    return plen


@njit(cache=True)
def first_empty(s, cfg):
    """The first empty column of ``s``, or -1."""
    off_len = cfg[Cfg.OFF_LEN]
    for i in range(cfg[Cfg.COLUMNS]):
        if s[off_len + i] == 0:
            return i
    return -1


@njit(cache=True)
def keep_move(s, cfg, kind, i, j, k, first_empty, prune=True):
    """Symmetry pruning: of the moves into empty columns keep those into the first one
    (the columns are a multiset, so the others give the same position), and never move
    a whole column into an empty column (the same position again)."""
    if prune and kind in (Kind.WASTE_COLUMN, Kind.COLUMN_COLUMN):
        off_len = cfg[Cfg.OFF_LEN]
        if s[off_len + j] == 0:
            if j != first_empty:
                return False
            if kind == Kind.COLUMN_COLUMN and s[off_len + i] == k:
                return False
    return True


@njit(cache=True)
def stock_only(s, mask, prune):
    """The stock-turn reduction: with the waste empty, turning the stock commutes with
    every other legal move and nothing else can touch the waste, so the turn alone is a
    persistent set (see the solver docs). Returns whether it applied (``mask`` cut)."""
    if prune and mask[0] and s[Slot.WASTE_LEN] == 0:
        mask[:] = False
        mask[0] = True
        return True
    return False


@njit(cache=True)
def search_moves(s, cfg, mask, prune, out):
    """The moves of ``s`` a search tries, in action order, written to ``out``; returns how many.

    The legal moves less the pruned ones (:func:`stock_only`, the :func:`keep_move`
    symmetries); every search generates children from this one list.
    """
    legal_mask(s, cfg, mask)
    stock_only(s, mask, prune)
    first = first_empty(s, cfg)
    m = 0
    for a in range(cfg[Cfg.N_ACTIONS]):
        if mask[a]:
            kind, i, j, k = decode(cfg, a)
            if keep_move(s, cfg, kind, i, j, k, first, prune):
                out[m] = a
                m += 1
    return m


@njit(cache=True, inline="always")
def play_child(child, s, cfg, a, scratch, prune):
    """``child`` becomes ``s`` after move ``a`` and then every safe move."""
    child[:] = s
    apply_action(child, cfg, a)
    auto_safe(child, cfg, scratch, 0, prune)


@njit(cache=True)
def replay_line(root, cfg, actions, out, prune):
    """The full move list from ``root``: the chosen ``actions`` with every safe move the
    search took after each of them (and before the first). Returns its length."""
    s = root.copy()
    n = auto_safe(s, cfg, out, 0, prune)
    for a in actions:
        out[n] = a
        apply_action(s, cfg, a)
        n = auto_safe(s, cfg, out, n + 1, prune)
    return n
