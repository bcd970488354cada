"""The observation encoder: what a player sees, as fixed-shape ``int8`` arrays.

This is the one encoder of the package. Its kernel :func:`refresh_obs` reads one state
array (see :mod:`forty_thieves_env.engine.layout`) and rewrites the parts of a game's observation
that a move can change, in place, with no allocation; :func:`encode_obs` is the same kernel
with every part marked changed (a full encode). The step kernels (:mod:`.step`) call the
first after each move and the second after a reset; :class:`ObservationEncoder` wraps the
full encode for one game, over one flat buffer whose slices are the fields.

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

With ``mask_in_observation=True`` (an env option) the observation carries the action mask
too, as ``0``/``1`` ``int8`` (``(n,)`` for ``n`` actions): a ``Dict`` gets it as its
``"action_mask"`` key (:data:`MASK_KEY`, where RLlib and PettingZoo put it), which an
environment hands out as a view of the ``info["action_mask"]`` array it returns with it (the
``bool`` array viewed as ``int8``, no copy); a ``flat`` row gets it after the fields, at
``[F, F + n)`` with ``F = C*D + T + 10`` (:func:`flat_mask_start`; :func:`split_flat` splits
a row or a batch of rows).

The default observation carries everything a player can see and nothing more: face-down
cards and the stock order never reach it. (The waste is public: every card in it was seen
face up. After a redeal the new stock is the old waste, which a player with perfect recall
knows; the observation does not repeat it.)

Where the fields lie in a buffer: a game's *place* is the tuple of its fields' starts, in
``O_*`` order. A batch of ``N`` games (:mod:`.batch`) keeps every game's observation in one
``int8`` buffer, either one flat row after another (``"flat"`` mode) or one block per field
(``"dict"`` and ``"oracle"``: all games' tableaux, then all wastes, ..., so that handing out
a field is one contiguous copy); ``obs_lay`` (``(LAY_ROWS, 2) int64``, rows ``O_*``) gives
each field's start and the distance from one game's field to the next's, and
:func:`obs_place` turns it into game ``i``'s place. Its last row, ``O_MASK``, says where the
batch step copies a game's mask when it hands masks out: ``(0, n)``, one row after another
of a separate ``(N, n)`` array, or, for ``flat`` rows that carry the mask, ``(F, F + n)``,
the tail of each row.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
from numba import njit
from numba import uint64 as u64

from ..engine.bits import copy_bytes, fill_bytes
from ..engine.cards import N_CODES, N_FOUNDATIONS, N_RANKS
from ..engine.checks import check_choice
from ..engine.config import config_for
from ..engine.layout import Cfg, Slot
from ..engine.variants import Variant

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


# Observation fields in the kernels' order (that of :func:`observation_fields`): rows of
# ``obs_lay`` and items of a place (see the module docstring).
O_TABLEAU = 0  # (C, D) the columns, face-down cards hidden
O_WASTE = 1  # (T,) the waste, right-aligned
O_FOUNDATIONS = 2  # (8,) foundation heights
O_COUNTS = 3  # (2,) stock size, redeals left
O_STOCK = 4  # (T,) oracle only: the stock, next card first
O_REVEALED = 5  # (C, D) oracle only: ``tableau_revealed``
O_LEN = 6
O_NAMES = ("tableau", "waste", "foundations", "counts", "stock", "tableau_revealed")
O_MASK = 6  # obs_lay's last row: where handed-out masks go (see the module docstring)
LAY_ROWS = 7

#: The key (and flat layout name) of the action mask in an observation with ``mask_in_observation``.
MASK_KEY = "action_mask"

#: Bit set of every column (variants have at most 16): :func:`refresh_obs` rewrites them all.
ALL_COLUMNS = u64(2**64 - 1)


# ------------------------------------------------------------------------------ kernels


@njit(cache=True, inline="always")
def _obs_column(s, obs, src, dst, n, down, d):
    """One column of ``tableau`` (``down`` hidden, ``n`` cards from ``s[src]``) at ``obs[dst]``;
    with ``down = 0``, one column of the oracle's ``revealed``. A fixed-length select loop, no
    data-dependent branches."""
    for t in range(d):
        v = s[src + t]
        obs[dst + t] = NO_CARD if t >= n else (FACE_DOWN if t < down else v)


@njit(cache=True, inline="always")
def obs_place(lay, i):
    """Where game ``i``'s fields start in the observation buffer laid out by ``lay``
    (``(O_LEN, 2)``: start, stride): a tuple in ``O_*`` order."""
    return (
        lay[0, 0] + i * lay[0, 1],
        lay[1, 0] + i * lay[1, 1],
        lay[2, 0] + i * lay[2, 1],
        lay[3, 0] + i * lay[3, 1],
        lay[4, 0] + i * lay[4, 1],
        lay[5, 0] + i * lay[5, 1],
    )


@njit(cache=True, inline="always")
def refresh_obs(s, cfg, obs, place, oracle, cols, waste, stock):
    """Rewrite the parts of a game's observation (fields at ``place`` in ``obs``) that can
    differ from those of the previous state: the columns in the bit set ``cols``, the waste
    field when ``waste``, the oracle's stock field when ``stock``, and always the
    foundations and counts (ten bytes). With every bit set and both flags it writes all of
    it (:func:`encode_obs`).

    The fields and codes are those of the module docstring; ``oracle`` adds the
    ``stock`` and ``tableau_revealed`` fields.
    """
    c = cfg[Cfg.COLUMNS]
    d = cfg[Cfg.DEPTH]
    cap = cfg[Cfg.STOCK]
    off_len = cfg[Cfg.OFF_LEN]
    off_down = cfg[Cfg.OFF_DOWN]
    off_tab = cfg[Cfg.OFF_TAB]
    one = u64(1)
    o = place[O_TABLEAU]
    for i in range(c):
        if (cols >> u64(i)) & one:
            _obs_column(s, obs, off_tab + i * d, o + i * d, s[off_len + i], s[off_down + i], d)
    if waste:
        # Right-aligned: a card drawn or played shifts every card of the field.
        o = place[O_WASTE]
        wl = s[Slot.WASTE_LEN]
        fill_bytes(obs, o, cap - wl, NO_CARD)
        copy_bytes(obs, o + cap - wl, s, cfg[Cfg.OFF_WASTE], wl)
    o = place[O_FOUNDATIONS]
    for p in range(N_FOUNDATIONS):
        obs[o + p] = s[Slot.FOUND + p]
    o = place[O_COUNTS]
    obs[o + COUNT_STOCK] = s[Slot.STOCK_LEN]
    obs[o + COUNT_REDEALS] = s[Slot.REDEALS]
    if not oracle:
        return
    if stock:
        o = place[O_STOCK]
        sl = s[Slot.STOCK_LEN]
        off_st = cfg[Cfg.OFF_STOCK]
        for t in range(sl):
            obs[o + t] = s[off_st + sl - 1 - t]
        for t in range(sl, cap):
            obs[o + t] = NO_CARD
    o = place[O_REVEALED]
    for i in range(c):
        if (cols >> u64(i)) & one:
            _obs_column(s, obs, off_tab + i * d, o + i * d, s[off_len + i], 0, d)


@njit(cache=True)
def encode_obs(s, cfg, obs, place, oracle):
    """Encode state ``s`` into the observation fields at ``place`` in ``obs``, all of them."""
    refresh_obs(s, cfg, obs, place, oracle, ALL_COLUMNS, True, True)


@njit(cache=True, inline="always")
def _field_sizes(cfg, oracle):
    """``(sizes, n)``: the byte size of each field in ``O_*`` order, and how many the mode has."""
    cd = cfg[Cfg.COLUMNS] * cfg[Cfg.DEPTH]
    cap = cfg[Cfg.STOCK]
    return (cd, cap, N_FOUNDATIONS, N_COUNTS, cap, cd), (O_LEN if oracle else O_STOCK)


@njit(cache=True, inline="always")
def copy_obs(cfg, obs, place, oracle, out):
    """Copy a game's fields (at ``place`` in ``obs``) to the same place in ``out``."""
    sizes, n = _field_sizes(cfg, oracle)
    for f in range(n):
        copy_bytes(out, place[f], obs, place[f], sizes[f])


@njit(cache=True, inline="always")
def gather_obs(cfg, obs, place, oracle, row):
    """Copy a game's fields (at ``place`` in ``obs``) into the flat observation row ``row``."""
    sizes, n = _field_sizes(cfg, oracle)
    o = 0
    for f in range(n):
        copy_bytes(row, o, obs, place[f], sizes[f])
        o += sizes[f]


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


def observation_layout(
    variant: Variant, mode: str, mask_in_observation: bool = False
) -> dict[str, tuple[int, int, tuple[int, ...]]]:
    """Field name -> ``(start, stop, shape)`` in a flat observation row of ``mode``; with
    ``mask_in_observation`` in ``"flat"`` mode, the row ends with the ``(n,)`` mask
    (:data:`MASK_KEY`). (A ``Dict``'s mask is no part of the encoder's row.)"""
    out = {}
    pos = 0
    for name, (shape, _) in observation_fields(variant, oracle=mode == "oracle").items():
        n = int(np.prod(shape))
        out[name] = (pos, pos + n, shape)
        pos += n
    if mask_in_observation and mode == "flat":
        n_actions = int(config_for(variant)[Cfg.N_ACTIONS])
        out[MASK_KEY] = (pos, pos + n_actions, (n_actions,))
    return out


def flat_mask_start(variant: Variant) -> int:
    """Where the mask starts in a ``flat`` row with ``mask_in_observation``: ``F = C*D + T + 10``,
    the size of the fields before it (``row[F:]`` is the ``(n,)`` mask, ``row[:F]`` the row
    without it)."""
    return observation_layout(variant, "flat", True)[MASK_KEY][0]


def split_flat(rows: Any, variant: Variant) -> tuple[Any, Any]:
    """``(fields, mask)``: views of ``flat`` observation rows with ``mask_in_observation`` (one
    row ``(F + n,)`` or a batch ``(..., F + n)``; numpy arrays or torch tensors), split at
    :func:`flat_mask_start`. The mask part is ``0``/``1`` ``int8``
    (``mask.view(np.bool_)``, or ``mask.bool()`` in torch, for a ``bool`` mask)."""
    start = flat_mask_start(variant)
    return rows[..., :start], rows[..., start:]


def observation_lay(
    layout: dict[str, tuple[int, int, tuple[int, ...]]], num_envs: int, by_field: bool, n_actions: int
) -> np.ndarray:
    """The ``(LAY_ROWS, 2) int64`` start and per-game stride of each field (see the module
    docstring) in a buffer of ``num_envs`` observations: one game's flat row after another,
    or (``by_field``) one block per field. Fields the mode lacks get ``(0, 0)``. Row
    ``O_MASK``: ``(F, F + n)`` when the flat rows carry the mask (``layout`` has
    :data:`MASK_KEY`), else ``(0, n_actions)``."""
    size = max(stop for _, stop, _ in layout.values())
    lay = np.zeros((LAY_ROWS, 2), dtype=np.int64)
    for f, name in enumerate(O_NAMES):
        if name in layout:
            start, stop, _ = layout[name]
            lay[f] = (num_envs * start, stop - start) if by_field else (start, size)
    if MASK_KEY in layout and not by_field:
        lay[O_MASK] = (layout[MASK_KEY][0], size)
    else:
        lay[O_MASK] = (0, n_actions)
    return lay


def flat_place(layout: dict[str, tuple[int, int, tuple[int, ...]]]) -> tuple[int, ...]:
    """The place (see :func:`obs_place`) of a single flat observation row of ``layout``."""
    return tuple(int(layout[name][0]) if name in layout else 0 for name in O_NAMES)


def check_mode(mode: str) -> str:
    """``mode``, checked to be one of :data:`OBSERVATION_MODES` (``TypeError`` / ``ValueError`` otherwise)."""
    return check_choice(mode, "observation", OBSERVATION_MODES)


def observation_space(variant: Variant, mode: str = "dict", mask_in_observation: bool = False) -> spaces.Space[Any]:
    """The Gymnasium space of an observation mode (imports gymnasium on first use).

    ``"dict"`` and ``"oracle"``: a ``Dict`` of ``int8`` ``Box`` fields; ``"flat"``: one
    ``(N,) int8`` ``Box`` with ``N = C*D + T + 8 + 2``. With ``mask_in_observation``, the
    ``(n,)`` action mask as ``0``/``1`` ``int8`` too: the ``Dict``'s ``"action_mask"``
    ``Box(0, 1, (n,), int8)``, or ``n`` more entries of the flat ``Box`` (bounds 0 and 1)
    after the ``N`` (see :func:`flat_mask_start`).
    """
    from gymnasium import spaces

    check_mode(mode)
    fields = observation_fields(variant, oracle=mode == "oracle")
    if mask_in_observation:
        n_actions = int(config_for(variant)[Cfg.N_ACTIONS])
        fields[MASK_KEY] = ((n_actions,), np.ones(n_actions, dtype=np.int8))
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

    :meth:`encode` runs :func:`encode_obs` into the buffer (one flat row, fields at
    :attr:`place`); the single environment's step kernel refreshes the same buffer in place.
    :meth:`observation` returns a fresh copy (callers keep observations, so handing out the
    buffer itself would be a bug).

    Args:
        variant: The rules in force (fixes the shapes).
        mode: ``"dict"``, ``"flat"`` or ``"oracle"``.
        mask_in_observation: With ``"flat"``, the buffer ends with room for the ``(n,)`` mask,
            at :attr:`mask_start` (the encoder writes no mask: its owner does).
    """

    def __init__(self, variant: Variant, mode: str = "dict", mask_in_observation: bool = False) -> None:
        self.variant = variant
        self.mode = check_mode(mode)
        self.cfg = config_for(variant)
        self.oracle = int(mode == "oracle")  # an int, as the batch passes it: one compiled kernel
        layout = observation_layout(variant, mode, mask_in_observation)
        self.place = flat_place(layout)  # where each field starts in the buffer
        self.buffer = np.zeros(max(stop for _, stop, _ in layout.values()), dtype=np.int8)  # (F,) every field
        #: Where the mask starts in the buffer: its size when it has no room for one.
        self.mask_start = layout[MASK_KEY][0] if MASK_KEY in layout else self.buffer.shape[0]
        self.views: dict[str, np.ndarray] = {
            name: self.buffer[start:stop].reshape(shape) for name, (start, stop, shape) in layout.items()
        }

    def encode(self, s: np.ndarray) -> None:
        """Encode state array ``s`` into the buffer (every field)."""
        encode_obs(s, self.cfg, self.buffer, self.place, self.oracle)

    def observation(self) -> dict[str, np.ndarray] | np.ndarray:
        """A copy of the buffer: the flat row, or a dict of field arrays."""
        if self.mode == "flat":
            return self.buffer.copy()
        return {name: view.copy() for name, view in self.views.items()}

    def __call__(self, s: np.ndarray) -> dict[str, np.ndarray] | np.ndarray:
        self.encode(s)
        return self.observation()
