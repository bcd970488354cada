"""The incremental legal mask: after a move, rewrite only the entries the move can change.

A step of the batch engine would spend most of its time rebuilding the whole legal mask
(:func:`.rules.legal_mask`); :func:`refresh_legal_mask` instead rewrites the entries between
the columns the move touched and every other column, the waste moves when the waste top
changed and the foundation moves when the foundations changed, and returns the change in the
number of legal actions, so that the caller keeps the count without scanning the mask. The
tests hold it equal to :func:`.rules.legal_mask` after every step of random play in every
variant.
"""

from __future__ import annotations

import numpy as np
from numba import njit
from numba import uint64 as u64

from .actions import ACTION_STOCK, ACTION_WASTE_FOUNDATION, column_to_foundation, run_row, waste_to_column
from .bits import SPREAD, byte_sum, load_u64, store_u64
from .cards import N_RANKS
from .layout import Cfg, Slot
from .rules import (
    count_bits,
    empty_columns,
    fits,
    foundation_pile,
    neighbours,
    run_length,
    run_limits,
    stock_playable,
    targets,
)


@njit(cache=True, inline="always")
def _put(out, a, legal):
    """``out[a] = legal``; return the change in the number of legal actions (-1, 0 or 1)."""
    before = out[a]
    out[a] = legal
    return np.int64(legal) - np.int64(before)


@njit(cache=True, inline="always")
def _put_runs(out, a0, k_card, k_empty):
    """Set the 13 entries from ``a0`` (run lengths 1..13 of one source and destination; a
    variant that moves runs at all has ``max_run`` 13): legal are length ``k_card`` (0: none)
    and lengths ``1..k_empty``. Return the change.

    The 13 entries are read and written as two overlapping 8-byte words (bytes 0-7 and
    5-12), both inside the 13."""
    bits = (1 << k_empty) - 1
    if k_card > 0:
        bits |= 1 << (k_card - 1)
    p = out.ctypes.data + a0
    before = byte_sum(load_u64(p)) + byte_sum(load_u64(p + 5) >> u64(24))
    store_u64(p, SPREAD[bits & 0xFF])
    store_u64(p + 5, SPREAD[(bits >> 5) & 0xFF])
    return count_bits(u64(bits)) - before


@njit(cache=True, inline="always")
def _onto_card(s, cfg, src, li, run, target, lim_card):
    """The one run length (0 if none) that may move from column ``src`` (``li`` cards, a run
    of ``run`` at its end, or -1 when not yet measured) onto the card ``target``: the run whose
    leading card is one rank below ``target`` and builds on it."""
    base = cfg[Cfg.OFF_TAB] + src * cfg[Cfg.DEPTH]
    k = target % N_RANKS - s[base + li - 1] % N_RANKS
    if k < 1 or k > lim_card:
        return 0
    if k > 1 and k > (run if run >= 0 else run_length(s, cfg, src)):
        return 0
    return k if fits(cfg, s[base + li - k], target) else 0


@njit(cache=True)
def _pair_moves(s, cfg, out, x, cols, lim_card, lim_empty):
    """Set every column-to-column entry between column ``x`` and each other column ``j``: the
    moves ``x -> j``, and ``j -> x`` unless ``j`` is in the bit set ``cols`` (its own call sets
    those). Return the change in the number of legal actions.

    With single-card moves (``kmax == 1``) each entry is one bit test of the other column's
    exposed card against the cards ``x``'s exposed card goes on (or that go on it).
    """
    c = cfg[Cfg.COLUMNS]
    d = cfg[Cfg.DEPTH]
    kmax = cfg[Cfg.MAX_RUN]
    off_len = cfg[Cfg.OFF_LEN]
    off_tab = cfg[Cfg.OFF_TAB]
    lx = s[off_len + x]
    ux = s[off_tab + x * d + lx - 1] if lx > 0 else 0
    delta = 0
    if kmax == 1:
        goes_on = np.uint64(0)  # cards ``ux`` goes on
        takes = np.uint64(0)  # cards that go on ``ux``
        if lx > 0:
            if ux % N_RANKS != N_RANKS - 1:
                goes_on = targets(cfg, ux)
            if ux % N_RANKS != 0:
                takes = neighbours(cfg, ux, -1)
        for j in range(c):
            if j == x:
                continue
            lj = s[off_len + j]
            if lj > 0:
                bit = np.uint64(1) << np.uint64(s[off_tab + j * d + lj - 1])
                forward = lx > 0 and (goes_on & bit) != 0
                back = lx == 0 or (takes & bit) != 0
            else:
                forward = lx > 0
                back = False
            delta += _put(out, run_row(cfg, x, j), forward)
            if not (cols >> np.uint64(j)) & np.uint64(1):
                delta += _put(out, run_row(cfg, j, x), back)
        return delta
    run_x = run_length(s, cfg, x)
    for j in range(c):
        if j == x:
            continue
        lj = s[off_len + j]
        uj = s[off_tab + j * d + lj - 1] if lj > 0 else 0
        k_card = 0
        k_empty = 0
        if lx > 0:
            if lj == 0:
                k_empty = min(run_x, lim_empty)
            else:
                k_card = _onto_card(s, cfg, x, lx, run_x, uj, lim_card)
        delta += _put_runs(out, run_row(cfg, x, j), k_card, k_empty)
        if (cols >> np.uint64(j)) & np.uint64(1):
            continue
        k_card = 0
        k_empty = 0
        if lj > 0:
            if lx == 0:
                k_empty = min(run_length(s, cfg, j), lim_empty)
            else:
                k_card = _onto_card(s, cfg, j, lj, -1, ux, lim_card)
        delta += _put_runs(out, run_row(cfg, j, x), k_card, k_empty)
    return delta


@njit(cache=True)
def refresh_legal_mask(s, cfg, out, cols, waste, found):
    """Bring ``out``, the legal mask before a move, up to date after it; return the change in
    the number of legal actions (what :func:`legal_mask` counts).

    Only the entries that can have changed are recomputed: those of the columns in the bit
    set ``cols`` (moves out of them, onto them, to a foundation, from the waste), the waste
    moves when ``waste`` (its top changed), the moves to a foundation when ``found`` (the
    foundations changed), and the stock. Every other entry depends on none of what the move
    changed. The caller falls back to :func:`legal_mask` when the move changed the number of
    empty columns under ``run_moves="supermove"`` (every run limit changes) or auto-play ran.
    """
    c = cfg[Cfg.COLUMNS]
    d = cfg[Cfg.DEPTH]
    off_len = cfg[Cfg.OFF_LEN]
    off_tab = cfg[Cfg.OFF_TAB]
    delta = _put(out, ACTION_STOCK, stock_playable(s, cfg))
    wl = s[Slot.WASTE_LEN]
    w = s[cfg[Cfg.OFF_WASTE] + wl - 1] if wl > 0 else -1
    delta += _put(out, ACTION_WASTE_FOUNDATION, w >= 0 and foundation_pile(s, w) >= 0)
    one = np.uint64(1)
    if waste or found:
        touched = np.uint64(2**64 - 1)
    else:
        touched = cols
    # The exposed cards the waste card goes on, as bits (a bit test per column, as _tops).
    onto = targets(cfg, w) if w >= 0 and w % N_RANKS != N_RANKS - 1 else np.uint64(0)
    for j in range(c):
        mine = (cols >> np.uint64(j)) & one
        if not (touched >> np.uint64(j)) & one:
            continue
        lj = s[off_len + j]
        top = s[off_tab + j * d + lj - 1] if lj > 0 else 0
        if mine or waste:
            delta += _put(out, waste_to_column(cfg, j), w >= 0 and (lj == 0 or (onto >> np.uint64(top)) & one != 0))
        if mine or found:
            delta += _put(out, column_to_foundation(cfg, j), lj > 0 and foundation_pile(s, top) >= 0)
    if cols != 0:
        # The single-card path of _pair_moves (max_run 1) uses no run limits: spare the count.
        lim_card, lim_empty = (1, 1) if cfg[Cfg.MAX_RUN] == 1 else run_limits(cfg, empty_columns(s, cfg))
        for x in range(c):
            if (cols >> np.uint64(x)) & one:
                delta += _pair_moves(s, cfg, out, x, cols, lim_card, lim_empty)
    return delta
