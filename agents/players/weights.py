"""The heuristic players' weights: the named numbers behind every move score.

:func:`weights_array` turns them into the ``float64`` array the scoring kernels read, its
slots named ``W_*``; :data:`POINTLESS`, :data:`TWIN` and :data:`CYCLE` are the fixed
scores of moves that should (almost) never be played.
"""

from __future__ import annotations

import numpy as np

from forty_thieves_env.engine.variants import Variant

# Slots of the weights array (see DEFAULT_WEIGHTS for the values and their meaning).
W_SAFE = 0
W_HOME = 1
W_PARK = 2
W_LOW = 3
W_WASTE_COL = 4
W_EMPTY_USE = 5
W_KING_EMPTY = 6
W_BURY = 7
W_EMPTIED = 8
W_REVEAL = 9
W_BREAK = 10
W_UNBLOCK = 11
W_UNCOVER_HOME = 12
W_UNCOVER_FIT = 13
W_DIG = 14
W_SHORT = 15
W_STOCK = 16
W_REDEAL = 17
W_URGENT_SPAN = 18
W_FD_URGENCY = 19
N_WEIGHTS = 20

#: Score of a pointless move (whole column into an empty one; between twins).
POINTLESS = -100_000.0
#: Score of a move between twins (see :func:`score_moves`).
TWIN = -1_000.0
#: Score of a move back into a position already seen this game.
CYCLE = -10_000_000.0

DEFAULT_WEIGHTS: dict[str, float] = {
    "safe": 1000.0,  # a safe card home (aces always)
    "home": 400.0,  # any other card home ...
    "park": 60.0,  # ... less this per card still out that could be built on it
    "low": 8.5,  # ... plus this per rank below king (lower cards home first)
    "waste_col": 33.0,  # waste card onto a column (uncovers the next waste card)
    "empty_use": 50.0,  # cost of filling an empty column (divided by the empty columns)
    "king_empty": 5.0,  # ... reduced by this when the card is a king
    "bury": 6.0,  # cost per unit of dig value of the destination column
    "emptied": 240.0,  # a column emptied
    "reveal": 60.0,  # a face-down card turned up
    "break": 5.0,  # cost of lifting a card off the card it is built on (see RUN_MOVE_WEIGHTS)
    "unblock": 20.0,  # lifting a card off a card it is not built on
    "uncover_home": 115.0,  # the uncovered card (column or waste) can go home
    "uncover_fit": 90.0,  # ... or fits on another column
    "dig": 8.0,  # per unit of dig value of the source column
    "short": 7.0,  # divided by the cards left in the source column
    "stock": 0.0,  # turning the stock (the baseline: table moves must beat it)
    "redeal": -1.0,  # redealing the waste
    "urgent_span": 2.5,  # a buried card this many ranks from going home has urgency 0
    "fd_urgency": 1.0,  # urgency of a face-down card
}
#: Changes for variants that move runs: there, lifting a run off the card it is built on
#: (splitting a run) is how a player wanders for ever, so it must buy a card home.
RUN_MOVE_WEIGHTS: dict[str, float] = {"break": 300.0}
WEIGHT_NAMES: tuple[str, ...] = tuple(DEFAULT_WEIGHTS)


def default_weights(variant: Variant | None = None) -> dict[str, float]:
    """:data:`DEFAULT_WEIGHTS`, with :data:`RUN_MOVE_WEIGHTS` for a variant with run moves."""
    w = dict(DEFAULT_WEIGHTS)
    if variant is not None and variant.run_moves != "none":
        w.update(RUN_MOVE_WEIGHTS)
    return w


def weights_array(variant: Variant | None = None, **overrides: float) -> np.ndarray:
    """The ``(N_WEIGHTS,) float64`` weights: :func:`default_weights` with ``overrides``."""
    unknown = set(overrides) - set(DEFAULT_WEIGHTS)
    if unknown:
        raise ValueError(f"unknown heuristic weight(s) {sorted(unknown)}; weights are {', '.join(WEIGHT_NAMES)}")
    w = {**default_weights(variant), **overrides}
    return np.array([w[k] for k in WEIGHT_NAMES], dtype=np.float64)
