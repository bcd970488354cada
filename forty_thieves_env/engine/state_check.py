"""Validating a state array: every invariant the kernels rely on, checked in one compiled pass.

The kernels never check a state: they trust that it is one the rules can reach (a column
never outgrows its slots, a pile never passes the king, ...). A state array from outside the
engine (``env.set_state``, ``GameState(variant, array)``, ``GameState.restore``, a
``GameState`` given as a reset position) is therefore checked here first, so that a corrupted
one is refused with the reason in words instead of being played as an impossible game or
failing later somewhere unrelated.

:func:`state_problem` is the compiled check (about a microsecond); :func:`check_state` calls
it and turns the first problem found into a ``ValueError``. Search code that restores its own
snapshots skips both through the explicit ``check=False`` of those entry points.

The invariants, for a variant with ``C`` columns, column capacity ``D`` and stock size ``T``
(slots as in :mod:`.layout`):

* the stock and the waste each hold ``0..T`` cards, together at most ``T``;
* the redeals left are ``0..variant.redeals``;
* every foundation height is ``0..13``, and pile ``2*suit`` is never lower than pile ``2*suit + 1``;
* every column holds ``0..D`` cards, with ``0..len-1`` of them face down (none when empty);
* every used slot holds a card code ``0..51``, every unused slot ``EMPTY``;
* a card at position ``p`` (1-based) of a column with rank ``r`` (0 = ace) has ``p + r <= D``,
  so that a run built on it fits (:func:`.layout.column_room_problem`);
* every card is in the game exactly twice: the columns, stock, waste and foundations (a pile
  of height ``h`` holds ranks ``1..h`` of its suit) hold each of the 52 codes two times.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .cards import EMPTY, N_CODES, N_FOUNDATIONS, N_RANKS, card_name
from .config import config_for
from .layout import Cfg, Slot
from .variants import Variant

# Problem codes: what :func:`state_problem` returns first, with two numbers saying where.
OK = 0
BAD_STOCK_LEN = 1  # (length, -)
BAD_WASTE_LEN = 2  # (length, -)
STOCK_AND_WASTE = 3  # (stock, waste)
BAD_REDEALS = 4  # (redeals, -)
BAD_FOUNDATION = 5  # (pile, height)
PILES_OUT_OF_ORDER = 6  # (suit, -)
BAD_COLUMN_LEN = 7  # (column, length)
BAD_FACE_DOWN = 8  # (column, face-down count)
BAD_COLUMN_CARD = 9  # (column * D + position, value)
BAD_STOCK_CARD = 10  # (position, value)
BAD_WASTE_CARD = 11  # (position, value)
NOT_EMPTY = 12  # (array index, value)
NO_ROOM = 13  # (column * D + position, card)
BAD_COUNT = 14  # (card code, copies)


@njit(cache=True, inline="always")
def pile_slot_problem(s, off, p, length, bad_card, counts):
    """The problem of slot ``p`` of the stock or the waste (the pile whose slots start at ``off``
    and that holds ``length`` cards), ``bad_card`` naming a slot in use that holds no card code;
    ``(OK, 0, 0)`` when there is none, after counting the slot's card in ``counts``."""
    v = np.int64(s[off + p])
    if p < length:
        if v < 0 or v >= N_CODES:
            return bad_card, p, v
        counts[v] += 1
    elif v != EMPTY:
        return NOT_EMPTY, off + p, v
    return OK, 0, 0


@njit(cache=True)
def state_problem(s, cfg):
    """The first problem of the state array ``s`` as ``(code, a, b)`` (see the codes above), or
    ``(OK, 0, 0)`` when ``s`` satisfies every invariant of the module docstring.

    ``s`` must have the variant's size (the caller checks the shape and dtype).
    """
    c = cfg[Cfg.COLUMNS]
    d = cfg[Cfg.DEPTH]
    t = cfg[Cfg.STOCK]
    sl = np.int64(s[Slot.STOCK_LEN])
    wl = np.int64(s[Slot.WASTE_LEN])
    if sl < 0 or sl > t:
        return BAD_STOCK_LEN, sl, 0
    if wl < 0 or wl > t:
        return BAD_WASTE_LEN, wl, 0
    if sl + wl > t:
        return STOCK_AND_WASTE, sl, wl
    if s[Slot.REDEALS] < 0 or s[Slot.REDEALS] > cfg[Cfg.REDEALS]:
        return BAD_REDEALS, np.int64(s[Slot.REDEALS]), 0
    counts = np.zeros(N_CODES, dtype=np.int64)
    for p in range(N_FOUNDATIONS):
        h = np.int64(s[Slot.FOUND + p])
        if h < 0 or h > N_RANKS:
            return BAD_FOUNDATION, p, h
        for r in range(h):
            counts[(p // 2) * N_RANKS + r] += 1
    for suit in range(N_FOUNDATIONS // 2):
        if s[Slot.FOUND + 2 * suit] < s[Slot.FOUND + 2 * suit + 1]:
            return PILES_OUT_OF_ORDER, suit, 0
    off_len = cfg[Cfg.OFF_LEN]
    off_down = cfg[Cfg.OFF_DOWN]
    off_tab = cfg[Cfg.OFF_TAB]
    for i in range(c):
        n = np.int64(s[off_len + i])
        if n < 0 or n > d:
            return BAD_COLUMN_LEN, i, n
        down = np.int64(s[off_down + i])
        if down < 0 or down > max(n - 1, 0):
            return BAD_FACE_DOWN, i, down
        base = off_tab + i * d
        for p in range(d):
            v = np.int64(s[base + p])
            if p < n:
                if v < 0 or v >= N_CODES:
                    return BAD_COLUMN_CARD, i * d + p, v
                if p + 1 + v % N_RANKS > d:
                    return NO_ROOM, i * d + p, v
                counts[v] += 1
            elif v != EMPTY:
                return NOT_EMPTY, base + p, v
    off_st = cfg[Cfg.OFF_STOCK]
    off_w = cfg[Cfg.OFF_WASTE]
    for p in range(t):  # slot p of the stock, then of the waste: the first problem is the same as ever
        code, a, b = pile_slot_problem(s, off_st, p, sl, BAD_STOCK_CARD, counts)
        if code == OK:
            code, a, b = pile_slot_problem(s, off_w, p, wl, BAD_WASTE_CARD, counts)
        if code != OK:
            return code, a, b
    for code in range(N_CODES):
        if counts[code] != 2:
            return BAD_COUNT, code, counts[code]
    return OK, 0, 0


def describe_problem(variant: Variant, code: int, a: int, b: int) -> str:
    """The words for a problem :func:`state_problem` found (``""`` for ``OK``)."""
    d, t = variant.max_depth, variant.stock_size
    if code == OK:
        return ""
    if code == BAD_STOCK_LEN:
        return f"stock length {a} (slot {int(Slot.STOCK_LEN)}) is outside 0..{t}"
    if code == BAD_WASTE_LEN:
        return f"waste length {a} (slot {int(Slot.WASTE_LEN)}) is outside 0..{t}"
    if code == STOCK_AND_WASTE:
        return f"stock ({a}) and waste ({b}) together hold {a + b} cards; {variant.name} deals {t} to the stock"
    if code == BAD_REDEALS:
        return f"redeals left {a} (slot {int(Slot.REDEALS)}) is outside 0..{variant.redeals}"
    if code == BAD_FOUNDATION:
        return f"foundation pile {a} (slot {int(Slot.FOUND) + a}) has height {b}, outside 0..13"
    if code == PILES_OUT_OF_ORDER:
        return f"foundation pile {2 * a} is lower than pile {2 * a + 1} (pile 2*suit is kept the higher)"
    if code == BAD_COLUMN_LEN:
        return f"column {a + 1} has length {b}, outside 0..{d}"
    if code == BAD_FACE_DOWN:
        return f"column {a + 1} has {b} face-down cards; 0..(its length - 1) may be face down"
    if code == BAD_COLUMN_CARD:
        return f"column {a // d + 1}, card {a % d + 1} is {b}, not a card code (0..{N_CODES - 1})"
    if code == BAD_STOCK_CARD:
        return f"stock slot {a} is {b}, not a card code (0..{N_CODES - 1})"
    if code == BAD_WASTE_CARD:
        return f"waste slot {a} is {b}, not a card code (0..{N_CODES - 1})"
    if code == NOT_EMPTY:
        return f"unused slot {a} holds {b}; unused slots hold EMPTY ({EMPTY})"
    if code == NO_ROOM:
        return (
            f"column {a // d + 1}, card {a % d + 1} ({card_name(b)}) could carry a run past the {d} cards "
            "a column holds"
        )
    if code == BAD_COUNT:
        return f"{card_name(a)} is in the game {b} time(s); every card is there exactly twice"
    return f"unknown problem {code}"


def check_state(variant: Variant, array: object, name: str = "state array") -> np.ndarray:
    """``array``, checked to be a valid state array of ``variant`` (see the module docstring).

    Args:
        variant: The rules the state is for.
        array: The candidate state array.
        name: How the message names it (``"set_state's array"``).

    Returns:
        ``array`` as a numpy array (not copied).

    Raises:
        TypeError: not a numpy array.
        ValueError: the wrong shape or dtype, or the first invariant it breaks, in words.
    """
    cfg = config_for(variant)
    size = int(cfg[Cfg.SIZE])
    if not isinstance(array, np.ndarray):
        raise TypeError(f"{name} must be a ({size},) int8 numpy array for {variant.name}, got {type(array).__name__}")
    if array.shape != (size,) or array.dtype != np.int8:
        raise ValueError(f"{name} must be ({size},) int8 for {variant.name}, got {array.shape} {array.dtype}")
    code, a, b = state_problem(array, cfg)
    if code != OK:
        raise ValueError(f"{name} is not a valid {variant.name} state: {describe_problem(variant, code, a, b)}")
    return array
