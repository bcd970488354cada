"""The action layout: every move of a variant as one integer of a ``Discrete(n)`` space.

For a variant with ``C`` columns and runs of at most ``K`` cards per move (``K = 1`` when
``run_moves="none"``, else 13); columns are numbered ``i, j = 0..C-1`` here and ``1..C`` in
move text:

==================================  ==========================  ================  ==============
actions                             move                        text              count
==================================  ==========================  ================  ==============
``0``                               turn the stock (or redeal   ``s``             1
                                    when the stock is empty)
``1``                               waste top to a foundation   ``w>f``           1
``2 + j``                           waste top to column ``j``   ``w>{j+1}``       C
``2 + C + i``                       column ``i`` to foundation  ``{i+1}>f``       C
``2 + 2C + (i*(C-1) + j')*K + k-1`` ``k`` cards from column     ``{i+1}>{j+1}``   C (C-1) K
                                    ``i`` to column ``j``,      (``xk`` if k > 1)
                                    ``j' = j - (j > i)``
==================================  ==========================  ================  ==============

So classic has ``2 + 20 + 90 = 112`` actions, Josephine ``2 + 20 + 90*13 = 1192``.
Only single cards go to a foundation; the redeal shares action ``0`` with turning the stock.

This module is the only place that does action-number arithmetic: the rules, the batch
step, the heuristic and the solver call the compiled helpers below (``inline="always"``,
so they cost nothing in a kernel), and move text (:mod:`forty_thieves_env.text.notation`)
goes through :func:`decode` and :func:`encode`.
"""

from __future__ import annotations

from enum import IntEnum

from numba import njit

from .layout import Cfg
from .variants import Variant


class Kind(IntEnum):
    """Kinds of move, the first item of what :func:`decode` returns (``kind == Kind.STOCK``)."""

    STOCK = 0  # turn the stock, or redeal
    WASTE_FOUNDATION = 1  # the waste's top card to a foundation
    WASTE_COLUMN = 2  # the waste's top card to a column
    COLUMN_FOUNDATION = 3  # a column's exposed card to a foundation
    COLUMN_COLUMN = 4  # 1..K cards from one column to another


ACTION_STOCK = 0  # turn the stock, or redeal
ACTION_WASTE_FOUNDATION = 1  # waste top to a foundation
_FIRST_WASTE_COLUMN = 2  # waste top to column 0; column j follows at +j


def n_actions_for(columns: int, max_run: int) -> int:
    """Size of the ``Discrete`` action space of ``columns`` columns and runs of up to ``max_run``."""
    return _first_column_move(columns) + columns * (columns - 1) * max_run


def max_run_for(columns: int, n: int) -> int:
    """The run length ``K`` of a ``Discrete(n)`` action space of ``columns`` columns (the inverse
    of :func:`n_actions_for`); ``ValueError`` when no ``K >= 1`` gives ``n``."""
    pairs = columns * (columns - 1)
    k, rest = divmod(int(n) - _first_column_move(columns), pairs) if pairs else (0, 1)
    if k < 1 or rest:
        raise ValueError(f"Discrete({n}) is no action space of {columns} columns (2 + 2C + C(C-1)K actions)")
    return k


@njit(cache=True, inline="always")
def _first_column_move(c):
    """The first column-to-column action (column 0 to column 1, one card), for ``c`` columns."""
    return _FIRST_WASTE_COLUMN + 2 * c


@njit(cache=True)
def decode(cfg, action):  # -> (kind, src column, dst column, cards); -1 where unused
    """Split an action number into ``(kind, src, dst, k)``; ``src``/``dst`` are column indices."""
    c = cfg[Cfg.COLUMNS]
    if action == ACTION_STOCK:
        return Kind.STOCK, -1, -1, 0
    if action == ACTION_WASTE_FOUNDATION:
        return Kind.WASTE_FOUNDATION, -1, -1, 1
    if action < _FIRST_WASTE_COLUMN + c:
        return Kind.WASTE_COLUMN, -1, action - _FIRST_WASTE_COLUMN, 1
    first = _first_column_move(c)
    if action < first:
        return Kind.COLUMN_FOUNDATION, action - _FIRST_WASTE_COLUMN - c, -1, 1
    kmax = cfg[Cfg.MAX_RUN]
    r = action - first
    if kmax == 1:  # single-card variants: spare the two divisions by kmax
        k = 1
        pair = r
    else:
        k = r % kmax + 1
        pair = r // kmax
    i = pair // (c - 1)
    jj = pair % (c - 1)
    j = jj + 1 if jj >= i else jj
    return Kind.COLUMN_COLUMN, i, j, k


@njit(cache=True, inline="always")
def waste_to_column(cfg, j):
    """Action for the waste's top card to column ``j``."""
    return _FIRST_WASTE_COLUMN + j


@njit(cache=True, inline="always")
def _column_foundation(c, i):
    return _FIRST_WASTE_COLUMN + c + i


@njit(cache=True, inline="always")
def column_to_foundation(cfg, i):
    """Action for column ``i``'s exposed card to a foundation."""
    return _column_foundation(cfg[Cfg.COLUMNS], i)


@njit(cache=True, inline="always")
def first_column_move(cfg):
    """The first column-to-column action: every action from here on moves cards between columns."""
    return _first_column_move(cfg[Cfg.COLUMNS])


@njit(cache=True, inline="always")
def _run_row(c, kmax, i, j):
    jj = j - 1 if j > i else j
    return _first_column_move(c) + (i * (c - 1) + jj) * kmax


@njit(cache=True, inline="always")
def run_row(cfg, i, j):
    """Action for one card from column ``i`` to column ``j`` (``i != j``): the first of the
    ``max_run`` actions that move 1, 2, ... cards between them (``run_row + k - 1`` moves ``k``)."""
    return _run_row(cfg[Cfg.COLUMNS], cfg[Cfg.MAX_RUN], i, j)


@njit(cache=True, inline="always")
def column_to_column(cfg, i, j, k):
    """Action for moving ``k`` cards from column ``i`` to column ``j`` (``i != j``)."""
    return run_row(cfg, i, j) + k - 1


def n_actions(variant: Variant) -> int:
    """Size of the variant's action space."""
    return n_actions_for(variant.columns, variant.max_run)


def encode(variant: Variant, kind: int, src: int = -1, dst: int = -1, k: int = 1) -> int:
    """Inverse of :func:`decode`, with range checks (``ValueError`` on a move with no action)."""
    c, kmax = variant.columns, variant.max_run
    if kind == Kind.STOCK:
        return ACTION_STOCK
    if kind == Kind.WASTE_FOUNDATION:
        return ACTION_WASTE_FOUNDATION
    if kind == Kind.WASTE_COLUMN:
        if not 0 <= dst < c:
            raise ValueError(f"no column {dst + 1} in {variant.name} (1..{c})")
        return _FIRST_WASTE_COLUMN + dst
    if kind == Kind.COLUMN_FOUNDATION:
        if not 0 <= src < c:
            raise ValueError(f"no column {src + 1} in {variant.name} (1..{c})")
        return int(_column_foundation(c, src))
    if kind == Kind.COLUMN_COLUMN:
        for col in (src, dst):
            if not 0 <= col < c:
                raise ValueError(f"no column {col + 1} in {variant.name} (1..{c})")
        if src == dst:
            raise ValueError(f"a column cannot move onto itself ({src + 1}>{dst + 1})")
        if not 1 <= k <= kmax:
            raise ValueError(f"{variant.name} moves 1..{kmax} cards at once (run_moves={variant.run_moves!r}), got {k}")
        return int(_run_row(c, kmax, src, dst)) + k - 1
    raise ValueError(f"unknown move kind {kind}")
