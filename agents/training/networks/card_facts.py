"""The integer facts the ``lookup_scorer`` network reads, computed by one compiled kernel.

For every card a policy reads (a column's top slots, the top waste cards) the network needs
to know more than its code: how far it is from home, whether it fits on a column top, and
whether parking it on a foundation would strand anything. Those are rule arithmetic, not
something to learn, and in torch they cost more than the whole network (dozens of small
integer tensor operations per batch). :func:`card_facts` computes them for a batch of
``Dict`` observations in one pass of compiled code, with the engine's own build rule
(:func:`forty_thieves_env.engine.rules.targets` and ``neighbours``), and writes them as rows
of the network's lookup tables (:mod:`agents.training.networks.lookup_scorer`).

The facts of a card code ``x`` (in the order of :data:`CARD_FACTS`):

* ``x`` itself (0..51 cards, 52 face-down, 53 no card);
* its *distance from home*: how many cards the nearer foundation of its suit still needs
  before it (0: it can go home now; 13: both foundations are past it), 14 face-down, 15 none;
* whether it *fits* on a column's top card now (0/1; 2 for face-down and no card);
* how many of its *builders* are still out (the cards of rank one lower that could be built
  on it, both copies: 0 means parking it on a foundation costs nothing; aces 0; 5 for
  face-down and no card).

Per column: the facts of its top ``top_cards`` slots (top first), the length of the ordered
run on top (0 empty, else 1..D), the *dig* card (smallest distance, then the shallowest: its
distance and its depth from the top), the length and the face-down count. Per table: each
foundation pile's height, the stock size, redeals left, the waste size and the facts of the
top ``waste_cards`` waste cards. For run moves, the facts of the top ``slots`` slots of every
column (a run's base card and the card it uncovers).
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
from numba import njit

from forty_thieves_env.engine.cards import N_CODES, N_RANKS
from forty_thieves_env.engine.config import config_for
from forty_thieves_env.engine.rules import neighbours, targets
from forty_thieves_env.engine.variants import get_variant
from forty_thieves_env.envs.observation import FACE_DOWN, N_OBS_CODES, NO_CARD

#: Values of each card fact: code, distance from home, fits, builders out.
N_DIST = N_RANKS + 3
N_FITS = 3
N_OUT = 6
CARD_FACTS = (N_OBS_CODES, N_DIST, N_FITS, N_OUT)
CARD_ROWS = sum(CARD_FACTS)  # 79 rows per card slot
#: Where each fact's rows start in a card slot's block.
FACT_STARTS = np.array([0, N_OBS_CODES, N_OBS_CODES + N_DIST, N_OBS_CODES + N_DIST + N_FITS], dtype=np.int64)
#: Column facts after the slots: run on top, dig distance, dig depth, length, face-down count.
N_COLUMN_EXTRA = 5
#: Table facts before the waste cards: 8 piles, stock size, redeals left, waste size.
N_GLOBAL_EXTRA = 8 + 3


def build_config(alternate: bool) -> np.ndarray:
    """The engine's config array of a variant with this build rule (all the kernel reads of it)."""
    return config_for(dataclasses.replace(get_variant("classic"), build="alternate" if alternate else "suit"))


def column_rows(top_cards: int, depth: int) -> int:
    """Rows of the columns' lookup table."""
    return top_cards * CARD_ROWS + (depth + 1) + N_DIST + depth + 2 * (depth + 1)


def global_rows(stock_size: int, max_redeals: int, waste_cards: int) -> int:
    """Rows of the table's lookup table."""
    return 8 * (N_RANKS + 1) + (stock_size + 1) + (max_redeals + 1) + (stock_size + 1) + waste_cards * CARD_ROWS


@njit(cache=True)
def _code_facts(cfg, h, tops, dist, fit, out):
    """Fill ``dist``, ``fit`` and ``out`` ``(54,)`` with every code's facts in one position.

    ``h``: the 8 foundation heights; ``tops``: the column tops (codes; ``NO_CARD`` for an
    empty column). Codes 52 (face-down) and 53 (no card) get their own values.
    """
    fits_mask = np.uint64(0)  # the codes that fit on some column top
    for t in tops:
        if t < N_CODES and t % N_RANKS > 0:
            fits_mask |= neighbours(cfg, np.int64(t), -1)
    for x in range(N_CODES):
        suit, rank = x // N_RANKS, x % N_RANKS
        d = N_RANKS
        for p in range(2 * suit, 2 * suit + 2):
            if h[p] <= rank and rank - h[p] < d:
                d = rank - h[p]
        dist[x] = d
        fit[x] = (fits_mask >> np.uint64(x)) & np.uint64(1)
        n_out = 0
        if rank > 0:
            bits = neighbours(cfg, np.int64(x), -1)  # the builders: rank - 1 of one or two suits
            for s in range(4):
                if (bits >> np.uint64(s * N_RANKS + rank - 1)) & np.uint64(1):
                    n_out += 2 - (h[2 * s] >= rank) - (h[2 * s + 1] >= rank)  # two copies, less those home
        out[x] = min(n_out, 4)
    dist[FACE_DOWN], dist[NO_CARD] = N_RANKS + 1, N_RANKS + 2
    fit[FACE_DOWN], fit[NO_CARD] = 2, 2
    out[FACE_DOWN], out[NO_CARD] = 5, 5


@njit(cache=True, inline="always")
def _facts(dist, fit, out, x, row, at, base):
    """Write the four facts of code ``x`` as table rows (``base`` + each fact's start) into ``row[at:at+4]``."""
    row[at] = base + x
    row[at + 1] = base + N_OBS_CODES + dist[x]
    row[at + 2] = base + N_OBS_CODES + N_DIST + fit[x]
    row[at + 3] = base + N_OBS_CODES + N_DIST + N_FITS + out[x]


@njit(cache=True)
def card_facts(
    tableau, waste, heights, counts, cfg, top_cards, waste_cards, slots, redeal_rows, col_out, glob_out, slot_out
):
    """Fill the index arrays of a batch (see the module docstring).

    Args:
        tableau: ``(B, C, D)`` card codes, bottom first (the ``Dict`` observation's field).
        waste: ``(B, T)`` right-aligned waste.
        heights: ``(B, 8)`` foundation heights.
        counts: ``(B, 2)`` stock size and redeals left.
        cfg: The engine config array giving the build rule.
        top_cards, waste_cards, slots: Column slots, waste cards and run slots read.
        redeal_rows: Values of the redeals-left count (the most redeals + 1).
        col_out: ``(B, C, top_cards * 4 + 5) int64`` rows of the columns' table.
        glob_out: ``(B, 11 + waste_cards * 4) int64`` rows of the table's table.
        slot_out: ``(B, C, slots, 4) int64`` facts of the top ``slots`` slots, rows within one
            card block (for run moves; ``slots`` 0 skips them).
    """
    n, c, d = tableau.shape
    t = waste.shape[1]
    o_run = top_cards * CARD_ROWS
    o_dig = o_run + d + 1
    o_depth = o_dig + N_DIST
    o_len = o_depth + d
    o_down = o_len + d + 1
    n_stock = t + 1
    h = np.empty(8, np.int64)
    tops = np.empty(c, np.int64)
    lengths = np.empty(c, np.int64)
    dist = np.empty(N_OBS_CODES, np.int64)
    fit = np.empty(N_OBS_CODES, np.int64)
    out = np.empty(N_OBS_CODES, np.int64)
    for i in range(n):
        for p in range(8):
            h[p] = heights[i, p]
        for j in range(c):
            length = 0
            while length < d and tableau[i, j, length] != NO_CARD:
                length += 1
            lengths[j] = length
            tops[j] = tableau[i, j, length - 1] if length > 0 else NO_CARD
        _code_facts(cfg, h, tops, dist, fit, out)
        for j in range(c):
            length = lengths[j]
            row = col_out[i, j]
            for k in range(top_cards):
                x = tableau[i, j, length - 1 - k] if k < length else NO_CARD
                _facts(dist, fit, out, x, row, 4 * k, k * CARD_ROWS)
            for k in range(slots):
                x = tableau[i, j, length - 1 - k] if k < length else NO_CARD
                _facts(dist, fit, out, x, slot_out[i, j, k], 0, 0)
            # The ordered run on top: each card built on the one below it.
            run = 1 if length > 0 else 0
            while run < length:
                x, under = tableau[i, j, length - run], tableau[i, j, length - 1 - run]
                if x >= N_CODES or under >= N_CODES or x % N_RANKS == N_RANKS - 1:
                    break
                if not (targets(cfg, np.int64(x)) >> np.uint64(under)) & np.uint64(1):
                    break
                run += 1
            # The dig card: the smallest distance, then the shallowest (no card: 15 at depth 0).
            best, best_k, down = N_RANKS + 2, 0, 0
            for k in range(length):
                x = tableau[i, j, length - 1 - k]
                down += x == FACE_DOWN
                if dist[x] < best:
                    best, best_k = dist[x], k
            row[4 * top_cards] = o_run + run
            row[4 * top_cards + 1] = o_dig + best
            row[4 * top_cards + 2] = o_depth + best_k
            row[4 * top_cards + 3] = o_len + length
            row[4 * top_cards + 4] = o_down + down
        g = glob_out[i]
        for p in range(8):
            g[p] = p * (N_RANKS + 1) + h[p]
        base = 8 * (N_RANKS + 1)
        g[8] = base + counts[i, 0]
        base += n_stock
        g[9] = base + counts[i, 1]
        base += redeal_rows
        n_waste = 0
        for k in range(t):
            n_waste += waste[i, k] != NO_CARD
        g[10] = base + n_waste
        base += n_stock
        for k in range(waste_cards):
            x = waste[i, t - 1 - k] if k < t else NO_CARD
            _facts(dist, fit, out, x, g, 11 + 4 * k, base + k * CARD_ROWS)


# ------------------------------------------------------------------------ the same in torch


def _code_tables(alternate: bool) -> tuple[np.ndarray, np.ndarray]:
    """``(52, 2)`` codes each card may be built on (54: none) and ``(52, 4)`` foundation piles
    holding its builders (8: none), for the build rule (:func:`neighbours`' suits)."""
    onto = np.full((52, 2), N_OBS_CODES, np.int64)
    piles = np.full((52, 4), 8, np.int64)
    for x in range(52):
        suit, rank = divmod(x, N_RANKS)
        suits = ((2, 3) if suit < 2 else (0, 1)) if alternate else (suit,)
        if rank < N_RANKS - 1:
            onto[x, : len(suits)] = [s * N_RANKS + rank + 1 for s in suits]
        piles[x, : 2 * len(suits)] = [2 * s + k for s in suits for k in (0, 1)]
    return onto, piles


def columns_top_first(tableau: Any, slots: int) -> tuple[Any, Any]:
    """Each column's top ``slots`` slots, top first (slot ``k``: the card ``k`` places below the
    playable one), in torch: the tableau networks all read columns this way.

    Args:
        tableau: The ``Dict`` observation's ``tableau``, ``(B, C, D)`` integer codes, bottom card
            first, ``NO_CARD`` past the end (cards lie contiguously from the bottom).
        slots: How many slots from the top (at most ``D``).

    Returns:
        ``(B, C, slots)`` codes (``NO_CARD`` past the column's bottom) and ``(B, C)`` lengths.
    """
    import torch

    length = (tableau != NO_CARD).sum(-1)  # (B, C)
    pos = length.unsqueeze(-1) - 1 - torch.arange(slots, device=tableau.device)  # (B, C, slots)
    top = tableau.gather(2, pos.clamp(min=0))
    return torch.where(pos >= 0, top, torch.full_like(top, NO_CARD)), length


def card_facts_torch(
    tableau: Any,
    waste: Any,
    heights: Any,
    counts: Any,
    alternate: bool,
    top_cards: int,
    waste_cards: int,
    slots: int,
    redeal_rows: int,
) -> tuple[Any, Any, Any]:
    """:func:`card_facts` in torch, on the observations' device: the same rows, with no host round trip.

    Args:
        tableau, waste, heights, counts: The ``Dict`` observation's fields, ``(B, C, D)``,
            ``(B, T)``, ``(B, 8)``, ``(B, 2)`` (any integer or float dtype holding the codes).
        alternate: The build rule (``build="alternate"``; else by suit).
        top_cards, waste_cards, slots, redeal_rows: As :func:`card_facts`.

    Returns:
        ``(B, C, 4 * top_cards + 5)``, ``(B, 11 + 4 * waste_cards)`` and ``(B, C, slots, 4)``
        ``int64`` rows, equal to :func:`card_facts`' (a test holds them to it).
    """
    import torch

    dev = tableau.device
    tab = tableau.long()
    b, c, d = tab.shape
    t = waste.shape[1]
    h = heights.long()  # (B, 8)
    onto_np, piles_np = _code_tables(alternate)
    onto, piles = torch.as_tensor(onto_np, device=dev), torch.as_tensor(piles_np, device=dev)
    ranks = torch.arange(N_RANKS, device=dev)

    # Every code's facts in this position: (B, 54) each.
    need = ranks.view(1, 1, N_RANKS, 1) - h.view(b, 4, 1, 2)  # (B, 4, 13, 2): cards before it on each pile
    dist = torch.where(need >= 0, need, torch.full_like(need, N_RANKS)).amin(-1).reshape(b, 52)
    top, length = columns_top_first(tab, d)  # (B, C, D) top first, (B, C)
    k = torch.arange(d, device=dev)
    present = torch.zeros(b, N_OBS_CODES + 1, dtype=torch.bool, device=dev)
    present.scatter_(1, top[:, :, 0], True)
    present[:, FACE_DOWN] = False
    present[:, NO_CARD] = False  # column 54 (a code's missing second target) stays False too
    fit = present[:, onto].any(-1).long()  # (B, 52)
    card_rank = ranks.repeat(4)  # (52,)
    hp = torch.cat([h, h.new_full((b, 1), N_RANKS)], 1)  # pile 8: never below a rank
    out = (hp[:, piles] < card_rank.view(1, -1, 1)).sum(-1).clamp(max=4)
    out = torch.where(card_rank == 0, torch.zeros_like(out), out)
    special = torch.tensor([[N_RANKS + 1, N_RANKS + 2], [2, 2], [5, 5]], device=dev)
    dist = torch.cat([dist, special[0].expand(b, 2)], 1)
    fit = torch.cat([fit, special[1].expand(b, 2)], 1)
    out = torch.cat([out, special[2].expand(b, 2)], 1)
    starts = torch.as_tensor(FACT_STARTS, device=dev)

    def facts(codes: torch.Tensor) -> torch.Tensor:  # (B, ...) codes -> (B, ..., 4) rows within a card block
        flat = codes.reshape(b, -1)
        rows = torch.stack([flat, dist.gather(1, flat), fit.gather(1, flat), out.gather(1, flat)], -1)
        return (rows + starts).reshape(*codes.shape, 4)

    blocks = torch.arange(top_cards, device=dev).view(1, 1, -1, 1) * CARD_ROWS
    col_cards = (facts(top[:, :, :top_cards]) + blocks).reshape(b, c, 4 * top_cards)
    slot = facts(top[:, :, :slots]) if slots > 0 else tab.new_zeros(b, c, 0, 4)
    # The ordered run on top: slot k+1 lies under slot k and k is built on it, from the top down.
    x, under = top[:, :, :-1], top[:, :, 1:]
    built = (x < N_CODES) & (under < N_CODES) & (x % N_RANKS != N_RANKS - 1)
    built &= (onto[x.clamp(max=51)] == under.unsqueeze(-1)).any(-1)
    run = torch.where(length > 0, 1 + built.long().cumprod(-1).sum(-1), torch.zeros_like(length))
    # The dig card: the smallest distance, then the shallowest (an empty column: 15 at depth 0).
    key = (dist.gather(1, top.reshape(b, -1)).reshape(b, c, d) * d + k).amin(-1)
    down = (tab == FACE_DOWN).sum(-1)
    o_run = top_cards * CARD_ROWS
    o_dig = o_run + d + 1
    o_depth = o_dig + N_DIST
    o_len = o_depth + d
    o_down = o_len + d + 1
    extra = torch.stack([o_run + run, o_dig + key // d, o_depth + key % d, o_len + length, o_down + down], -1)
    col = torch.cat([col_cards, extra], -1)

    wcodes = waste.long()
    k_w = torch.arange(waste_cards, device=dev)
    wtop = torch.where(k_w < t, wcodes[:, (t - 1 - k_w).clamp(min=0)], torch.full_like(k_w, NO_CARD).expand(b, -1))
    base = 8 * (N_RANKS + 1)
    n_waste = (wcodes != NO_CARD).sum(-1, keepdim=True)
    table = torch.cat(
        [
            torch.arange(8, device=dev) * (N_RANKS + 1) + h,
            base + counts[:, :1].long(),
            base + t + 1 + counts[:, 1:2].long(),
            base + t + 1 + redeal_rows + n_waste,
        ],
        1,
    )
    w_base = base + 2 * (t + 1) + redeal_rows
    wrows = facts(wtop) + w_base + k_w.view(1, -1, 1) * CARD_ROWS  # (B, W, 4)
    glob = torch.cat([table, wrows.reshape(b, -1)], 1)
    return col, glob, slot
