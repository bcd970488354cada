"""Canonical 128-bit Zobrist hashes of solver positions, whole or updated from a parent.

Two independent 64-bit halves ``(h1, h2)`` key the transposition table
(:func:`agents.hashing.pair_insert`); ``h2`` is never 0, which marks a free slot there.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from agents.hashing import mix
from forty_thieves_env.engine.cards import N_CODES
from forty_thieves_env.engine.layout import Cfg, Slot

_TABLES: dict[tuple[int, int], np.ndarray] = {}


def zobrist_size(depth: int, stock: int) -> int:
    """Entries of one Zobrist table for column capacity ``depth`` and stock size ``stock``."""
    return depth * N_CODES + depth + 1 + 2 * stock * N_CODES + stock + 1 + 128


def make_zobrist(depth: int, stock: int, seed: int = 0x5EED_F0A7) -> np.ndarray:
    """``(2, n)`` uint64 random tables: two independent 64-bit halves of a 128-bit hash."""
    rng = np.random.default_rng(seed)
    return rng.integers(0, np.iinfo(np.uint64).max, size=(2, zobrist_size(depth, stock)), dtype=np.uint64)


def zobrist_for(depth: int, stock: int) -> np.ndarray:
    """The process's one :func:`make_zobrist` table for ``(depth, stock)`` (made on first use)."""
    key = (depth, stock)
    if key not in _TABLES:
        _TABLES[key] = make_zobrist(depth, stock)
    return _TABLES[key]


@njit(cache=True, inline="always")
def _cards_hash(s, at, z, z_at, lo, hi):
    """XOR of the Zobrist terms of the cards ``s[at + p]``, ``p`` in ``lo..hi-1``: card ``c`` at
    place ``p`` is entry ``z_at + p * N_CODES + c`` (a column, the waste or the stock)."""
    h1 = np.uint64(0)
    h2 = np.uint64(0)
    for p in range(lo, hi):
        k = z_at + p * N_CODES + s[at + p]
        h1 ^= z[0, k]
        h2 ^= z[1, k]
    return h1, h2


@njit(cache=True)
def column_hash(s, cfg, z, i):
    """The mixed Zobrist hash ``(x1, x2)`` of column ``i`` alone; ``(0, 0)`` when empty."""
    n = s[cfg[Cfg.OFF_LEN] + i]
    if n == 0:
        return np.uint64(0), np.uint64(0)
    d = cfg[Cfg.DEPTH]
    k = d * N_CODES + s[cfg[Cfg.OFF_DOWN] + i]
    c1, c2 = _cards_hash(s, cfg[Cfg.OFF_TAB] + i * d, z, 0, 0, n)
    return mix(z[0, k] ^ c1), mix(z[1, k] ^ c2)


@njit(cache=True)
def waste_hash(s, cfg, z, lo, hi):
    """XOR of the Zobrist terms of waste slots ``lo..hi-1`` of ``s``."""
    d = cfg[Cfg.DEPTH]
    off_waste_z = d * N_CODES + d + 1
    return _cards_hash(s, cfg[Cfg.OFF_WASTE], z, off_waste_z, lo, hi)


@njit(cache=True)
def stock_hash(s, cfg, z, root_redeals):
    d = cfg[Cfg.DEPTH]
    t = cfg[Cfg.STOCK]
    off_stock_z = d * N_CODES + d + 1 + t * N_CODES
    off_slen_z = off_stock_z + t * N_CODES
    off_red_z = off_slen_z + t + 1
    sl = s[Slot.STOCK_LEN]
    red = s[Slot.REDEALS]
    h1 = z[0, off_slen_z + sl] ^ z[0, off_red_z + red]
    h2 = z[1, off_slen_z + sl] ^ z[1, off_red_z + red]
    if red != root_redeals:
        c1, c2 = _cards_hash(s, cfg[Cfg.OFF_STOCK], z, off_stock_z, 0, sl)
        h1 ^= c1
        h2 ^= c2
    return h1, h2


@njit(cache=True)
def state_hash(s, cfg, z, root_redeals):
    """128-bit hash ``(h1, h2)`` of the *canonical* position of ``s``.

    Canonical: the columns are taken as a multiset (each column's own hash is mixed and the
    results are added, which does not depend on the column order), so permuted columns and
    in particular interchangeable empty columns hash alike; the two copies of a card share
    one code, so swapping them changes nothing. The waste and stock are hashed position by
    position. While no redeal has been used since the root (``redeals left ==
    root_redeals``), the stock is a prefix of the root's stock and its length identifies
    it. Foundations are a function of where the other cards are, so they need no term.
    """
    h1 = np.uint64(0)
    h2 = np.uint64(0)
    for i in range(cfg[Cfg.COLUMNS]):
        x1, x2 = column_hash(s, cfg, z, i)
        h1 += x1
        h2 += x2
    w1, w2 = waste_hash(s, cfg, z, 0, s[Slot.WASTE_LEN])
    t1, t2 = stock_hash(s, cfg, z, root_redeals)
    return h1 ^ w1 ^ t1, (h2 ^ w2 ^ t2) | np.uint64(1)  # h2 == 0 marks an empty table slot


@njit(cache=True, inline="always")
def new_parts(cfg):
    """Room for :func:`hash_parts`: ``(col1, col2, wh)``, each column's hash halves
    (``(C,)`` uint64 twice) and the waste's (``(2,)`` uint64)."""
    c = cfg[Cfg.COLUMNS]
    return np.zeros(c, dtype=np.uint64), np.zeros(c, dtype=np.uint64), np.zeros(2, dtype=np.uint64)


@njit(cache=True)
def hash_parts(s, cfg, z, col1, col2, wh):
    """Fill ``col1``/``col2`` with every column's hash and ``wh`` with the waste's, the
    parts :func:`child_hash` reuses for the children of ``s``."""
    for i in range(cfg[Cfg.COLUMNS]):
        col1[i], col2[i] = column_hash(s, cfg, z, i)
    wh[0], wh[1] = waste_hash(s, cfg, z, 0, s[Slot.WASTE_LEN])


@njit(cache=True, inline="always")
def waste_update(child, parent, cfg, z, w1, w2):
    """The waste's hash halves of ``child`` from its ``parent``'s ``(w1, w2)``: only the slots
    above ``min`` of the two waste lengths changed (see :func:`child_hash`)."""
    wp = parent[Slot.WASTE_LEN]
    wc = child[Slot.WASTE_LEN]
    m = min(wp, wc)
    if wp > m:
        a1, a2 = waste_hash(parent, cfg, z, m, wp)
        w1 ^= a1
        w2 ^= a2
    if wc > m:
        a1, a2 = waste_hash(child, cfg, z, m, wc)
        w1 ^= a1
        w2 ^= a2
    return w1, w2


@njit(cache=True)
def child_hash(child, parent, cfg, z, root_redeals, col1, col2, wh):
    """:func:`state_hash` of ``child``, a position one move (and its safe moves) away from
    ``parent`` whose parts :func:`hash_parts` computed, recomputing only what changed.

    A move and the safe moves after it only push cards on and pop cards off the ends of
    columns and of the waste, one push at most, before any pop. So a column whose length
    did not change holds the same cards (pushed cards popped again, if any), and the waste
    slots below ``min`` of the two waste lengths are unchanged: only the other columns and
    slots are rehashed. ``tests/agents/search/test_solver.py`` checks it against :func:`state_hash`.
    """
    off_len = cfg[Cfg.OFF_LEN]
    h1 = np.uint64(0)
    h2 = np.uint64(0)
    for i in range(cfg[Cfg.COLUMNS]):
        if child[off_len + i] == parent[off_len + i]:
            h1 += col1[i]
            h2 += col2[i]
        else:
            x1, x2 = column_hash(child, cfg, z, i)
            h1 += x1
            h2 += x2
    w1, w2 = waste_update(child, parent, cfg, z, wh[0], wh[1])
    t1, t2 = stock_hash(child, cfg, z, root_redeals)
    return h1 ^ w1 ^ t1, (h2 ^ w2 ^ t2) | np.uint64(1)


@njit(cache=True)
def child_parts(child, parent, cfg, z, root_redeals, p1, p2, pw, c1, c2, cw):
    """:func:`child_hash` that also fills ``child``'s own parts (``c1``, ``c2``: each
    column's halves, ``cw``: the waste's) from its ``parent``'s (``p1``, ``p2``, ``pw``), so
    that a depth-first search can hash that child's children in turn."""
    off_len = cfg[Cfg.OFF_LEN]
    h1 = np.uint64(0)
    h2 = np.uint64(0)
    for i in range(cfg[Cfg.COLUMNS]):
        if child[off_len + i] == parent[off_len + i]:
            c1[i] = p1[i]
            c2[i] = p2[i]
        else:
            c1[i], c2[i] = column_hash(child, cfg, z, i)
        h1 += c1[i]
        h2 += c2[i]
    w1, w2 = waste_update(child, parent, cfg, z, pw[0], pw[1])
    cw[0] = w1
    cw[1] = w2
    t1, t2 = stock_hash(child, cfg, z, root_redeals)
    return h1 ^ w1 ^ t1, (h2 ^ w2 ^ t2) | np.uint64(1)
