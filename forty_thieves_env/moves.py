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
The kernels here are compiled with numba and also used by the rules engine.
"""

from __future__ import annotations

from numba import njit

from .state import CFG_COLUMNS, CFG_MAX_RUN, CFG_N_ACTIONS, config_for
from .variants import Variant

KIND_STOCK = 0
KIND_WASTE_FOUNDATION = 1
KIND_WASTE_COLUMN = 2
KIND_COLUMN_FOUNDATION = 3
KIND_COLUMN_COLUMN = 4

ACTION_STOCK = 0
ACTION_WASTE_FOUNDATION = 1


@njit(cache=True)
def decode(cfg, action):  # -> (kind, src column, dst column, cards); -1 where unused
    """Split an action number into ``(kind, src, dst, k)``; ``src``/``dst`` are column indices."""
    c = cfg[CFG_COLUMNS]
    if action == 0:
        return KIND_STOCK, -1, -1, 0
    if action == 1:
        return KIND_WASTE_FOUNDATION, -1, -1, 1
    if action < 2 + c:
        return KIND_WASTE_COLUMN, -1, action - 2, 1
    if action < 2 + 2 * c:
        return KIND_COLUMN_FOUNDATION, action - 2 - c, -1, 1
    kmax = cfg[CFG_MAX_RUN]
    r = action - 2 - 2 * c
    if kmax == 1:  # single-card variants: spare the two divisions by kmax
        k = 1
        pair = r
    else:
        k = r % kmax + 1
        pair = r // kmax
    i = pair // (c - 1)
    jj = pair % (c - 1)
    j = jj + 1 if jj >= i else jj
    return KIND_COLUMN_COLUMN, i, j, k


@njit(cache=True)
def waste_to_column(cfg, j):
    return 2 + j


@njit(cache=True)
def column_to_foundation(cfg, i):
    return 2 + cfg[CFG_COLUMNS] + i


@njit(cache=True, inline="always")
def column_to_column(cfg, i, j, k):
    """Action for moving ``k`` cards from column ``i`` to column ``j`` (``i != j``)."""
    c = cfg[CFG_COLUMNS]
    jj = j - 1 if j > i else j
    return 2 + 2 * c + (i * (c - 1) + jj) * cfg[CFG_MAX_RUN] + k - 1


def n_actions(variant: Variant) -> int:
    """Size of the variant's action space."""
    return int(config_for(variant)[CFG_N_ACTIONS])


def encode(variant: Variant, kind: int, src: int = -1, dst: int = -1, k: int = 1) -> int:
    """Inverse of :func:`decode`, with range checks (``ValueError`` on a move with no action)."""
    cfg = config_for(variant)
    c, kmax = variant.columns, variant.max_run
    if kind == KIND_STOCK:
        return ACTION_STOCK
    if kind == KIND_WASTE_FOUNDATION:
        return ACTION_WASTE_FOUNDATION
    if kind == KIND_WASTE_COLUMN:
        if not 0 <= dst < c:
            raise ValueError(f"no column {dst + 1} in {variant.name} (1..{c})")
        return int(waste_to_column(cfg, dst))
    if kind == KIND_COLUMN_FOUNDATION:
        if not 0 <= src < c:
            raise ValueError(f"no column {src + 1} in {variant.name} (1..{c})")
        return int(column_to_foundation(cfg, src))
    if kind == KIND_COLUMN_COLUMN:
        for col in (src, dst):
            if not 0 <= col < c:
                raise ValueError(f"no column {col + 1} in {variant.name} (1..{c})")
        if src == dst:
            raise ValueError(f"a column cannot move onto itself ({src + 1}>{dst + 1})")
        if not 1 <= k <= kmax:
            raise ValueError(f"{variant.name} moves 1..{kmax} cards at once (run_moves={variant.run_moves!r}), got {k}")
        return int(column_to_column(cfg, src, dst, k))
    raise ValueError(f"unknown move kind {kind}")


def describe_action(variant: Variant, action: int) -> str:
    """Move text for an action number (``"3>7x2"``)."""
    from .notation import format_move

    return format_move(variant, action)


def parse_move(variant: Variant, text: str) -> int:
    """Action number for move text (``"w>f"``, ``"3>7"``, ``"3>7x2"``, ``"s"``)."""
    from .notation import parse_move as _parse

    return _parse(variant, text)
