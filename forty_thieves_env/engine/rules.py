"""The rules engine: legal moves, applying a move, auto-play, win and stuck tests.

Every rule of the family is written here once, as numba-compiled kernels over the flat
state arrays of :mod:`.layout` (set ``NUMBA_DISABLE_JIT=1`` to run them as plain Python).
Kernels take ``(s, cfg, ...)``: ``s`` is a ``(size,) int8`` state array, ``cfg`` the
variant's ``(CFG_LEN,) int64`` config from :func:`.config.config_for`. The update of a legal
mask after a move is in :mod:`.incremental`; the reasons a move is refused, in words, are in
:mod:`forty_thieves_env.text.explain`.

Rules (from the rule pages in ``shared/rules``):

* Only the exposed card of a column and the top waste card are playable.
* A column card goes on the next higher card of its suit (``build="suit"``) or of the
  other colour (``"alternate"``); ranks do not wrap, so an ace takes nothing and a king
  moves only to an empty column or a foundation. An empty column takes any card.
* Runs move as one move only as the variant's ``run_moves`` allows (see
  :class:`~.variants.Variant`); a run is face-up cards each built on the next by the
  build rule. A face-down card turns up when it becomes its column's exposed card.
* A foundation takes the ace of its suit when empty, then the next rank; either pile of a
  suit may take the next card. Foundation cards never leave.
* ``s`` turns one stock card onto the waste; with the stock empty and a redeal left it
  turns the (non-empty) waste over into a new stock that deals in the same order again.
* Won when all eight foundations hold 13 cards; stuck when not won and nothing is legal.
"""

from __future__ import annotations

import numpy as np
from numba import njit
from numba import uint64 as u64

from .actions import ACTION_STOCK, ACTION_WASTE_FOUNDATION, Kind, column_to_foundation, decode, run_row, waste_to_column
from .bits import popcount
from .cards import EMPTY, N_CARDS, N_RANKS
from .layout import RUN_SUPERMOVE, Cfg, Slot

# ----------------------------------------------------------------------------- helpers


@njit(cache=True, inline="always")
def fits(cfg, card, target):
    """Whether ``card`` may be built on ``target`` in a column (both real cards)."""
    if target % N_RANKS != card % N_RANKS + 1:
        return False
    if cfg[Cfg.ALTERNATE]:
        return (card // N_RANKS >= 2) != (target // N_RANKS >= 2)
    return card // N_RANKS == target // N_RANKS


@njit(cache=True, inline="always")
def foundation_pile(s, card):
    """Index into ``s`` of the foundation pile that takes ``card`` now, or -1."""
    p = Slot.FOUND + 2 * (card // N_RANKS)
    r = card % N_RANKS
    if s[p] == r:
        return p
    if s[p + 1] == r:
        return p + 1
    return -1


@njit(cache=True)
def is_safe(s, cfg, card):
    """Whether ``card`` can go home now and no card that could be built on it is still out.

    See :class:`~.variants.Variant` (``auto_play_safe``) for the definition and why such a
    card can never be needed again.
    """
    if foundation_pile(s, card) < 0:
        return False
    r = card % N_RANKS
    if r == 0:
        return True
    suit = card // N_RANKS
    if cfg[Cfg.ALTERNATE]:
        lo = 0 if suit >= 2 else 2  # the two suits of the other colour
        for other in range(lo, lo + 2):
            if s[Slot.FOUND + 2 * other + 1] < r:  # pile 2*suit+1 is the lower one
                return False
        return True
    return s[Slot.FOUND + 2 * suit + 1] >= r


@njit(cache=True, inline="always")
def column_top(s, cfg, i):
    n = s[cfg[Cfg.OFF_LEN] + i]
    if n == 0:
        return -1
    return s[cfg[Cfg.OFF_TAB] + i * cfg[Cfg.DEPTH] + n - 1]


@njit(cache=True)
def run_length(s, cfg, i):
    """Face-up cards at the end of column ``i`` that form a run (0 for an empty column)."""
    n = s[cfg[Cfg.OFF_LEN] + i]
    if n == 0:
        return 0
    if cfg[Cfg.MAX_RUN] == 1:
        return 1
    base = cfg[Cfg.OFF_TAB] + i * cfg[Cfg.DEPTH]
    lowest = s[cfg[Cfg.OFF_DOWN] + i]
    k = 1
    while n - k - 1 >= lowest and fits(cfg, s[base + n - k], s[base + n - k - 1]):
        k += 1
    return k


@njit(cache=True, inline="always")
def empty_columns(s, cfg):
    n = 0
    off = cfg[Cfg.OFF_LEN]
    for i in range(cfg[Cfg.COLUMNS]):
        if s[off + i] == 0:
            n += 1
    return n


@njit(cache=True, inline="always")
def run_limit(cfg, n_empty, dst_empty):
    """Most cards one move may carry, given the empty columns (the destination included)."""
    if cfg[Cfg.RUN] == RUN_SUPERMOVE:
        # Single-card moves through e spare empty columns shift at most 2**e cards; an empty
        # destination cannot be used as a stop.
        spare = n_empty - 1 if dst_empty else n_empty
        return 1 << spare
    return cfg[Cfg.MAX_RUN]


# ----------------------------------------------------------------------- legal moves


@njit(cache=True, inline="always")
def stock_playable(s, cfg):
    return s[Slot.STOCK_LEN] > 0 or (s[Slot.REDEALS] > 0 and s[Slot.WASTE_LEN] > 0)


@njit(cache=True, inline="always")
def _tops(s, cfg):
    """``(present, empties)``: bit ``u`` of ``present`` is set when some column's exposed card
    is card code ``u``; bit ``j`` of ``empties`` when column ``j`` is empty."""
    c = cfg[Cfg.COLUMNS]
    d = cfg[Cfg.DEPTH]
    off_len = cfg[Cfg.OFF_LEN]
    off_tab = cfg[Cfg.OFF_TAB]
    present = np.uint64(0)
    empties = np.uint64(0)
    for j in range(c):
        lj = s[off_len + j]
        if lj == 0:
            empties |= np.uint64(1) << np.uint64(j)
        else:
            present |= np.uint64(1) << np.uint64(s[off_tab + j * d + lj - 1])
    return present, empties


@njit(cache=True, inline="always")
def count_bits(bits):
    return np.int64(popcount(u64(bits)))


@njit(cache=True, inline="always")
def neighbours(cfg, card, step):
    """Bits (as in ``present`` of :func:`_tops`) of the card codes one rank from ``card``
    (``step`` +1 or -1) that build with it: the same suit, or the two suits of the other
    colour. The caller keeps the rank in range (no king up, no ace down)."""
    if cfg[Cfg.ALTERNATE]:
        r = card % N_RANKS + step
        lo = 0 if card // N_RANKS >= 2 else 2 * N_RANKS  # the two suits of the other colour
        return (np.uint64(1) << np.uint64(lo + r)) | (np.uint64(1) << np.uint64(lo + N_RANKS + r))
    return np.uint64(1) << np.uint64(card + step)


@njit(cache=True, inline="always")
def targets(cfg, card):
    """Bits of the card codes that ``card`` may be built on (the caller never asks for a king)."""
    return neighbours(cfg, card, 1)


@njit(cache=True, inline="always")
def _moves_from(s, cfg, out, i, present, empties, lim_card, lim_empty):
    """Set the column-to-column moves out of the non-empty column ``i``; return how many.

    For each run length ``k`` the card that would lead the moved run finds its destination
    columns by a bit test on the exposed cards (``present``) instead of a loop over every
    column; only a hit (rare) looks for the columns themselves.
    """
    c = cfg[Cfg.COLUMNS]
    d = cfg[Cfg.DEPTH]
    off_len = cfg[Cfg.OFF_LEN]
    off_tab = cfg[Cfg.OFF_TAB]
    li = s[off_len + i]
    base_i = off_tab + i * d
    r = run_length(s, cfg, i)
    n = 0
    for k in range(1, min(r, lim_card) + 1):
        base = s[base_i + li - k]
        if base % N_RANKS == N_RANKS - 1:
            break  # a king goes on no card, and nothing longer can start above it
        bits = targets(cfg, base)
        if present & bits == 0:
            continue
        for j in range(c):
            lj = s[off_len + j]
            # ``fits(cfg, base, top)`` is the bit of ``top`` in ``bits``: no division by 13.
            if j != i and lj > 0 and (bits >> np.uint64(s[off_tab + j * d + lj - 1])) & np.uint64(1):
                out[run_row(cfg, i, j) + k - 1] = True
                n += 1
    if empties != 0:
        lim = min(r, lim_empty)
        for j in range(c):
            if (empties >> np.uint64(j)) & np.uint64(1):
                a0 = run_row(cfg, i, j)
                for k in range(lim):
                    out[a0 + k] = True
                n += lim
    return n


@njit(cache=True, inline="always")
def run_limits(cfg, n_empty):
    """The longest run that may move onto a card and into an empty column (0: none empty)."""
    return run_limit(cfg, n_empty, False), (run_limit(cfg, n_empty, True) if n_empty > 0 else 0)


@njit(cache=True, inline="always")
def _move_context(s, cfg):
    """What every column move is checked against: the bit sets of exposed cards and empty
    columns, and :func:`run_limits`."""
    present, empties = _tops(s, cfg)
    lim_card, lim_empty = run_limits(cfg, count_bits(empties))
    return present, empties, lim_card, lim_empty


@njit(cache=True)
def legal_mask(s, cfg, out):
    """Fill ``out`` (``(n_actions,) bool``) with the legal actions; return how many."""
    out[:] = False
    c = cfg[Cfg.COLUMNS]
    d = cfg[Cfg.DEPTH]
    off_len = cfg[Cfg.OFF_LEN]
    off_tab = cfg[Cfg.OFF_TAB]
    present, empties, lim_card, lim_empty = _move_context(s, cfg)
    count = 0
    if stock_playable(s, cfg):
        out[ACTION_STOCK] = True
        count += 1
    wl = s[Slot.WASTE_LEN]
    if wl > 0:
        w = s[cfg[Cfg.OFF_WASTE] + wl - 1]
        if foundation_pile(s, w) >= 0:
            out[ACTION_WASTE_FOUNDATION] = True
            count += 1
        for j in range(c):
            lj = s[off_len + j]
            if lj == 0 or fits(cfg, w, s[off_tab + j * d + lj - 1]):
                out[waste_to_column(cfg, j)] = True
                count += 1
    for i in range(c):
        li = s[off_len + i]
        if li == 0:
            continue
        if foundation_pile(s, s[off_tab + i * d + li - 1]) >= 0:
            out[column_to_foundation(cfg, i)] = True
            count += 1
        count += _moves_from(s, cfg, out, i, present, empties, lim_card, lim_empty)
    return count


@njit(cache=True)
def count_legal(s, cfg):
    out = np.zeros(cfg[Cfg.N_ACTIONS], dtype=np.bool_)
    return legal_mask(s, cfg, out)


@njit(cache=True)
def is_legal(s, cfg, action):
    """Whether ``action`` is legal (agrees with :func:`legal_mask`, without building it)."""
    if action < 0 or action >= cfg[Cfg.N_ACTIONS]:
        return False
    kind, i, j, k = decode(cfg, action)
    if kind == Kind.STOCK:
        return stock_playable(s, cfg)
    d = cfg[Cfg.DEPTH]
    off_len = cfg[Cfg.OFF_LEN]
    off_tab = cfg[Cfg.OFF_TAB]
    if kind in (Kind.WASTE_FOUNDATION, Kind.WASTE_COLUMN):
        wl = s[Slot.WASTE_LEN]
        if wl == 0:
            return False
        card = s[cfg[Cfg.OFF_WASTE] + wl - 1]
        if kind == Kind.WASTE_FOUNDATION:
            return foundation_pile(s, card) >= 0
        lj = s[off_len + j]
        return lj == 0 or fits(cfg, card, s[off_tab + j * d + lj - 1])
    li = s[off_len + i]
    if li == 0:
        return False
    base_i = off_tab + i * d
    if kind == Kind.COLUMN_FOUNDATION:
        return foundation_pile(s, s[base_i + li - 1]) >= 0
    if k > run_length(s, cfg, i):
        return False
    lj = s[off_len + j]
    if k > run_limit(cfg, empty_columns(s, cfg), lj == 0):
        return False
    return lj == 0 or fits(cfg, s[base_i + li - k], s[off_tab + j * d + lj - 1])


# ------------------------------------------------------------------------ applying


@njit(cache=True, inline="always")
def _pop_column(s, cfg, i, k):
    """Remove ``k`` cards from the end of column ``i``, turning up a face-down card beneath."""
    li = s[cfg[Cfg.OFF_LEN] + i] - k
    base = cfg[Cfg.OFF_TAB] + i * cfg[Cfg.DEPTH]
    for t in range(li, li + k):
        s[base + t] = EMPTY
    s[cfg[Cfg.OFF_LEN] + i] = li
    pd = cfg[Cfg.OFF_DOWN] + i
    if s[pd] >= li:
        s[pd] = li - 1 if li > 0 else 0


@njit(cache=True, inline="always")
def _push_foundation(s, card):
    s[foundation_pile(s, card)] += 1


@njit(cache=True, inline="always")
def _pop_waste(s, cfg):
    wl = s[Slot.WASTE_LEN] - 1
    p = cfg[Cfg.OFF_WASTE] + wl
    card = s[p]
    s[p] = EMPTY
    s[Slot.WASTE_LEN] = wl
    return card


@njit(cache=True)
def auto_play(s, cfg):
    """Send safe cards (see :func:`is_safe`) home until none is left; return how many went."""
    c = cfg[Cfg.COLUMNS]
    moved = 0
    changed = True
    while changed:
        changed = False
        wl = s[Slot.WASTE_LEN]
        if wl > 0:
            w = np.int64(s[cfg[Cfg.OFF_WASTE] + wl - 1])  # the type of ``top`` below: one is_safe compiled
            if is_safe(s, cfg, w):
                _pop_waste(s, cfg)
                _push_foundation(s, w)
                moved += 1
                changed = True
        for i in range(c):
            top = column_top(s, cfg, i)
            if top >= 0 and is_safe(s, cfg, top):
                _pop_column(s, cfg, i, 1)
                _push_foundation(s, top)
                moved += 1
                changed = True
    return moved


@njit(cache=True, inline="always")
def apply_action(s, cfg, action):
    """Play a legal ``action`` in place; return the cards that reached the foundations.

    The caller guarantees legality (check with :func:`is_legal`); auto-play follows when
    the variant has ``auto_play_safe``.
    """
    kind, i, j, k = decode(cfg, action)
    d = cfg[Cfg.DEPTH]
    off_len = cfg[Cfg.OFF_LEN]
    off_tab = cfg[Cfg.OFF_TAB]
    moved = 0
    if kind == Kind.STOCK:
        sl = s[Slot.STOCK_LEN]
        wl = s[Slot.WASTE_LEN]
        off_st = cfg[Cfg.OFF_STOCK]
        off_w = cfg[Cfg.OFF_WASTE]
        if sl > 0:
            s[off_w + wl] = s[off_st + sl - 1]
            s[off_st + sl - 1] = EMPTY
            s[Slot.STOCK_LEN] = sl - 1
            s[Slot.WASTE_LEN] = wl + 1
        else:
            # Redeal: the waste turned over; its bottom card becomes the next to turn.
            for t in range(wl):
                s[off_st + t] = s[off_w + wl - 1 - t]
            for t in range(wl):
                s[off_w + t] = EMPTY
            s[Slot.STOCK_LEN] = wl
            s[Slot.WASTE_LEN] = 0
            s[Slot.REDEALS] -= 1
    elif kind == Kind.WASTE_FOUNDATION:
        _push_foundation(s, _pop_waste(s, cfg))
        moved = 1
    elif kind == Kind.WASTE_COLUMN:
        card = _pop_waste(s, cfg)
        lj = s[off_len + j]
        s[off_tab + j * d + lj] = card
        s[off_len + j] = lj + 1
    elif kind == Kind.COLUMN_FOUNDATION:
        card = column_top(s, cfg, i)
        _pop_column(s, cfg, i, 1)
        _push_foundation(s, card)
        moved = 1
    else:
        li = s[off_len + i]
        lj = s[off_len + j]
        src = off_tab + i * d + li - k
        dst = off_tab + j * d + lj
        for t in range(k):
            s[dst + t] = s[src + t]
        s[off_len + j] = lj + k
        _pop_column(s, cfg, i, k)
    if cfg[Cfg.AUTO]:
        moved += auto_play(s, cfg)
    return moved


# ------------------------------------------------------------------------ game end


@njit(cache=True, inline="always")
def cards_home(s):
    total = 0
    for p in range(Slot.FOUND, Slot.FOUND + 8):
        total += s[p]
    return total


@njit(cache=True)
def is_won(s):
    return cards_home(s) == N_CARDS


@njit(cache=True)
def is_stuck(s, cfg):
    return not is_won(s) and count_legal(s, cfg) == 0
