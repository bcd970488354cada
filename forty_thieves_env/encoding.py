"""Observation encoding: what a player sees, as fixed-shape ``int8`` arrays.

The kernels here read one state array (see :mod:`.state`) and write into preallocated
output arrays, with no allocation, so a batched environment can call them once per game
inside a ``prange`` loop. :class:`ObservationEncoder` wraps them for one game: it owns one
flat buffer whose slices are the fields, and hands out copies.

Card codes in an observation (``C`` columns, column capacity ``D`` = ``variant.max_depth``,
``T`` = ``variant.stock_size``):

======== ===================================================================
code     meaning
======== ===================================================================
0..51    a face-up card, the engine's code ``suit * 13 + rank`` (suits C S H D,
         rank 0 = ace .. 12 = king)
52       ``FACE_DOWN``: a face-down card (its identity is hidden)
53       ``NO_CARD``: an empty slot
======== ===================================================================

Fields (in this order; the ``flat`` observation is their concatenation, each flattened
row-major):

==================== ========== ============================================================
field                shape      meaning
==================== ========== ============================================================
``tableau``          (C, D)     column ``i`` bottom card first, ``NO_CARD`` past its end
``waste``            (T,)       the whole waste right-aligned: ``waste[-1]`` is the playable
                                top card, ``waste[-2]`` the one under it, ...; ``NO_CARD``
                                pads the front
``foundations``      (8,)       height 0..13 of pile ``2*suit + k``; pile ``2*suit`` is never
                                lower than ``2*suit + 1`` (so its top card is
                                ``suit*13 + height - 1``)
``counts``           (2,)       ``[cards in the stock, redeals left]``
``stock``            (T,)       oracle only: stock cards, next to turn first, ``NO_CARD`` after
``tableau_revealed`` (C, D)     oracle only: ``tableau`` with face-down cards shown
==================== ========== ============================================================

The default observation carries everything a player can see and nothing more: face-down
cards and the stock order never reach it. (The waste is public: every card in it was seen
face up. After a redeal the new stock is the old waste, which a player with perfect recall
knows; the observation does not repeat it.)
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
from numba import njit

from .engine.cards import N_CODES, N_FOUNDATIONS, N_RANKS
from .engine.config import config_for
from .engine.layout import (
    CFG_COLUMNS,
    CFG_DEPTH,
    CFG_OFF_DOWN,
    CFG_OFF_LEN,
    CFG_OFF_STOCK,
    CFG_OFF_TAB,
    CFG_OFF_WASTE,
    CFG_STOCK,
    S_FOUND,
    S_REDEALS,
    S_STOCK_LEN,
    S_WASTE_LEN,
)
from .engine.variants import Variant

if TYPE_CHECKING:
    from gymnasium import spaces

FACE_DOWN = N_CODES  # 52
NO_CARD = N_CODES + 1  # 53
N_OBS_CODES = N_CODES + 2  # 54 values, 0..53

# Slots of the ``counts`` field.
COUNT_STOCK = 0
COUNT_REDEALS = 1
N_COUNTS = 2

OBSERVATION_MODES: tuple[str, ...] = ("dict", "flat", "oracle")


# ------------------------------------------------------------------------------ kernels


@njit(cache=True)
def encode_into(s, cfg, tableau_out, waste_out, foundations_out, counts_out):
    """Write the player's view of state ``s`` into the outputs (all ``int8``, overwritten).

    Shapes: ``tableau_out`` (C, D), ``waste_out`` (T,), ``foundations_out`` (8,),
    ``counts_out`` (2,); see the module docstring for the codes.
    """
    c = cfg[CFG_COLUMNS]
    d = cfg[CFG_DEPTH]
    off_len = cfg[CFG_OFF_LEN]
    off_down = cfg[CFG_OFF_DOWN]
    off_tab = cfg[CFG_OFF_TAB]
    for i in range(c):
        n = s[off_len + i]
        down = s[off_down + i]
        base = off_tab + i * d
        for t in range(d):
            if t >= n:
                tableau_out[i, t] = NO_CARD
            elif t < down:
                tableau_out[i, t] = FACE_DOWN
            else:
                tableau_out[i, t] = s[base + t]
    cap = cfg[CFG_STOCK]
    wl = s[S_WASTE_LEN]
    pad = cap - wl
    off_w = cfg[CFG_OFF_WASTE]
    for t in range(pad):
        waste_out[t] = NO_CARD
    for t in range(wl):
        waste_out[pad + t] = s[off_w + t]
    for p in range(N_FOUNDATIONS):
        foundations_out[p] = s[S_FOUND + p]
    counts_out[COUNT_STOCK] = s[S_STOCK_LEN]
    counts_out[COUNT_REDEALS] = s[S_REDEALS]


@njit(cache=True)
def encode_oracle_into(s, cfg, tableau_out, waste_out, foundations_out, counts_out, stock_out, revealed_out):
    """:func:`encode_into` plus the hidden cards (perfect information, for planning research).

    ``stock_out`` (T,): stock cards, next to turn first, ``NO_CARD`` after the last;
    ``revealed_out`` (C, D): the tableau with face-down cards shown by their codes.
    """
    encode_into(s, cfg, tableau_out, waste_out, foundations_out, counts_out)
    cap = cfg[CFG_STOCK]
    sl = s[S_STOCK_LEN]
    off_st = cfg[CFG_OFF_STOCK]
    for t in range(sl):
        stock_out[t] = s[off_st + sl - 1 - t]
    for t in range(sl, cap):
        stock_out[t] = NO_CARD
    c = cfg[CFG_COLUMNS]
    d = cfg[CFG_DEPTH]
    off_len = cfg[CFG_OFF_LEN]
    off_tab = cfg[CFG_OFF_TAB]
    for i in range(c):
        n = s[off_len + i]
        base = off_tab + i * d
        for t in range(d):
            revealed_out[i, t] = s[base + t] if t < n else NO_CARD


# ------------------------------------------------------------------------------ layout


def observation_fields(variant: Variant, oracle: bool = False) -> dict[str, tuple[tuple[int, ...], np.ndarray]]:
    """Field name -> ``(shape, high)`` in the flat order; every field's low bound is 0.

    ``high`` is an ``int8`` array of the field's shape (inclusive upper bound). The redeal
    count's bound is at least 1 so that no bound is degenerate.
    """
    c, d, t = variant.columns, variant.max_depth, variant.stock_size
    counts_high = np.array([t, max(variant.redeals, 1)], dtype=np.int8)
    fields: dict[str, tuple[tuple[int, ...], np.ndarray]] = {
        "tableau": ((c, d), np.full((c, d), NO_CARD, dtype=np.int8)),
        "waste": ((t,), np.full(t, NO_CARD, dtype=np.int8)),
        "foundations": ((N_FOUNDATIONS,), np.full(N_FOUNDATIONS, N_RANKS, dtype=np.int8)),
        "counts": ((N_COUNTS,), counts_high),
    }
    if oracle:
        fields["stock"] = ((t,), np.full(t, NO_CARD, dtype=np.int8))
        fields["tableau_revealed"] = ((c, d), np.full((c, d), NO_CARD, dtype=np.int8))
    return fields


def check_mode(mode: str) -> str:
    if mode not in OBSERVATION_MODES:
        raise ValueError(f"unknown observation {mode!r}; choose one of {', '.join(OBSERVATION_MODES)}")
    return mode


def observation_space(variant: Variant, mode: str = "dict") -> spaces.Space[Any]:
    """The Gymnasium space of an observation mode (imports gymnasium on first use).

    ``"dict"`` and ``"oracle"``: a ``Dict`` of ``int8`` ``Box`` fields; ``"flat"``: one
    ``(N,) int8`` ``Box`` with ``N = C*D + T + 8 + 2``.
    """
    from gymnasium import spaces

    check_mode(mode)
    fields = observation_fields(variant, oracle=mode == "oracle")
    if mode == "flat":
        high = np.concatenate([h.ravel() for _, h in fields.values()])
        return spaces.Box(low=np.zeros_like(high), high=high, dtype=np.int8)
    return spaces.Dict(
        {
            name: spaces.Box(low=np.zeros_like(high), high=high, shape=shape, dtype=np.int8)
            for name, (shape, high) in fields.items()
        }
    )


class ObservationEncoder:
    """Encodes one game's state array in an observation mode, into one reused buffer.

    :meth:`encode` runs the kernel into the buffer; :meth:`observation` returns a fresh copy
    (callers keep observations, so handing out the buffer itself would be a bug).

    Args:
        variant: The rules in force (fixes the shapes).
        mode: ``"dict"``, ``"flat"`` or ``"oracle"``.
    """

    def __init__(self, variant: Variant, mode: str = "dict") -> None:
        self.variant = variant
        self.mode = check_mode(mode)
        self.cfg = config_for(variant)
        fields = observation_fields(variant, oracle=mode == "oracle")
        size = sum(int(np.prod(shape)) for shape, _ in fields.values())
        self.buffer = np.zeros(size, dtype=np.int8)  # (N,) int8: every field, flat
        self.views: dict[str, np.ndarray] = {}
        pos = 0
        for name, (shape, _) in fields.items():
            n = int(np.prod(shape))
            self.views[name] = self.buffer[pos : pos + n].reshape(shape)
            pos += n
        v = self.views
        self._args = (v["tableau"], v["waste"], v["foundations"], v["counts"])
        if mode == "oracle":
            self._args += (v["stock"], v["tableau_revealed"])

    def encode(self, s: np.ndarray) -> None:
        """Encode state array ``s`` into the buffer."""
        if self.mode == "oracle":
            encode_oracle_into(s, self.cfg, *self._args)
        else:
            encode_into(s, self.cfg, *self._args)

    def observation(self) -> dict[str, np.ndarray] | np.ndarray:
        """A copy of the last encoded observation."""
        if self.mode == "flat":
            return self.buffer.copy()
        return {name: view.copy() for name, view in self.views.items()}

    def __call__(self, s: np.ndarray) -> dict[str, np.ndarray] | np.ndarray:
        self.encode(s)
        return self.observation()
