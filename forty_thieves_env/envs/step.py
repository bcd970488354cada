"""One game's step and reset, compiled: the kernels under every environment of the package.

:func:`step_one` checks an action against the mask, plays it, and brings the reward, the
mask, the observation and the game's counters up to date, recomputing only what the move
can change; :func:`reset_one` deals a game and computes them all. The single environment
(:class:`~.env.FortyThievesEnv`) calls :func:`step_one` directly, once per step; the batch
kernels (:mod:`.batch_kernels`, and :mod:`.cuda_kernels` on a GPU) call both for every game of a
batch. Neither allocates.

What they read and write besides the state array ``s`` and its config ``cfg``:

* ``mask``: the ``(n,) bool`` legal actions of ``s``;
* ``obs``, ``place``: the observation buffer and where the game's fields lie in it (see
  :mod:`.observation`);
* ``g``: the game's counters, an ``(G_LEN,) int64`` row, slots ``G_*`` below;
* ``spec``: the reward's ``(R_LEN,) float64`` spec (:mod:`.rewards`);
* ``params``: the ``(P_LEN,) int64`` switches of the environment, slots ``P_*`` below.

It imports neither gymnasium nor torch.
"""

from __future__ import annotations

import numpy as np
from numba import njit
from numba import uint64 as u64

from ..engine.actions import Kind, decode
from ..engine.cards import N_CARDS
from ..engine.deals import deal_layout, shuffle_into
from ..engine.incremental import refresh_legal_mask
from ..engine.layout import RUN_SUPERMOVE, Cfg
from ..engine.rules import apply_action, cards_home, empty_columns, legal_mask
from .observation import encode_obs, refresh_obs
from .options import EnvOptions
from .rewards import R_ILLEGAL, reward_from_spec

# Per-game counters: slots of a row ``g`` (a row of a batch's ``games``).
G_DEAL = 0  # deal number being played (0 when started from a position)
G_MOVES = 1  # legal moves played this episode
G_ELAPSED = 2  # steps this episode, refused actions included (what a TimeLimit counts)
G_CARDS = 3  # cards on the foundations now
G_NEXT_DEAL = 4  # deal number of the game's next reset, drawn in advance (batches only)
G_PENDING = 5  # NEXT_STEP autoreset: the episode has ended and the next step resets the game
G_LEGAL = 6  # legal actions now (the True entries of the game's mask)
G_LEN = 7

# Bits of the status that :func:`step_one` returns.
ST_WON = 1  # the game is won after the step
ST_TERMINATED = 2  # the episode ends with this step (won, stuck, or a refused action that terminates)
ST_ILLEGAL = 4  # the action was refused (state, mask and observation unchanged)

# Slots of the ``params`` array (int64).
P_ORACLE = 0  # 1: encode the oracle fields too
P_ILLEGAL_TERMINATES = 1  # 1: a refused action ends the episode
P_AUTORESET = 2  # batches: AUTORESET_NEXT_STEP or AUTORESET_SAME_STEP
P_MAX_STEPS = 3  # batches: truncate after this many steps of an episode; 0: never
P_LEN = 4

# Values of ``params[P_AUTORESET]``, in the order of :data:`~.options.AUTORESETS`.
AUTORESET_NEXT_STEP = 0  # a finished game is reset by its next step (Gymnasium's default)
AUTORESET_SAME_STEP = 1  # a finished game is reset within the step that ended it (SB3's way)


def kernel_params(options: EnvOptions, autoreset: int = AUTORESET_NEXT_STEP, max_steps: int = 0) -> np.ndarray:
    """The ``(P_LEN,) int64`` ``params`` of an environment made with ``options`` (slots ``P_*``)."""
    params = np.zeros(P_LEN, dtype=np.int64)
    params[P_ORACLE] = options.observation == "oracle"
    params[P_ILLEGAL_TERMINATES] = options.illegal_action == "terminate"
    params[P_AUTORESET] = autoreset
    params[P_MAX_STEPS] = max_steps
    return params


@njit(cache=True)
def _play(s, cfg, action):
    """:func:`~forty_thieves_env.engine.rules.apply_action`, compiled once as a function of its
    own that :func:`step_one` calls.

    ``apply_action`` is inlined at numba's IR level wherever it is used (the solvers' hot
    loops want that); inlined into :func:`step_one`, itself inlined into the batch step, its
    IR was copied and typed again at each level: about a tenth of the vector env's first
    compile. The call per step costs nothing the paired step bench can see.
    """
    return apply_action(s, cfg, action)


@njit(cache=True, inline="always")
def step_one(s, cfg, mask, obs, place, spec, action, params, g):
    """One game's step; returns ``(reward, status, moves, cards home)``, status bits ``ST_*``.

    A legal action (``mask[action]``) is applied; then the mask, the observation (fields at
    ``place`` in ``obs``, see :func:`~.observation.obs_place`) and the counters ``g`` (a
    ``G_LEN`` row) are brought up to date. A refused action leaves
    the state, mask and observation as they were and earns ``spec[R_ILLEGAL]``.

    ``mask`` and ``obs`` must be those of ``s`` before the step: only what the move can
    change is recomputed (:func:`~forty_thieves_env.engine.incremental.refresh_legal_mask`,
    :func:`~.observation.refresh_obs`): the
    source and destination columns, the waste, the stock, the foundations. Auto-play, and
    a supermove that changes the number of empty columns, recompute everything.
    """
    g[G_ELAPSED] += 1
    if 0 <= action < mask.shape[0] and mask[action]:
        kind, i, j, _ = decode(cfg, action)
        supermove = cfg[Cfg.RUN] == RUN_SUPERMOVE
        empty_before = empty_columns(s, cfg) if supermove else 0
        moved = _play(s, cfg, action)
        g[G_MOVES] += 1
        if cfg[Cfg.AUTO] or (supermove and empty_columns(s, cfg) != empty_before):
            n_legal = legal_mask(s, cfg, mask)
            encode_obs(s, cfg, obs, place, params[P_ORACLE])
        else:
            cols = u64(0)
            if i >= 0:
                cols |= u64(1) << u64(i)
            if j >= 0:
                cols |= u64(1) << u64(j)
            waste = kind in (Kind.STOCK, Kind.WASTE_FOUNDATION, Kind.WASTE_COLUMN)
            found = kind in (Kind.WASTE_FOUNDATION, Kind.COLUMN_FOUNDATION)
            n_legal = g[G_LEGAL] + refresh_legal_mask(s, cfg, mask, cols, waste, found)
            refresh_obs(s, cfg, obs, place, params[P_ORACLE], cols, waste, kind == Kind.STOCK)
        g[G_LEGAL] = n_legal
        home = cards_home(s)
        g[G_CARDS] = home
        won = home == N_CARDS
        status = 0
        if won:
            status = ST_WON | ST_TERMINATED
        elif n_legal == 0:
            status = ST_TERMINATED
        return reward_from_spec(spec, moved, won), status, g[G_MOVES], home
    status = ST_ILLEGAL
    if g[G_CARDS] == N_CARDS:
        status |= ST_WON
    if params[P_ILLEGAL_TERMINATES]:
        status |= ST_TERMINATED
    return spec[R_ILLEGAL], status, g[G_MOVES], g[G_CARDS]


@njit(cache=True)
def reset_one(s, cfg, mask, obs, place, params, g, number, deck, work):
    """Deal PySolFC deal ``number`` into ``s`` and refresh the mask, observation and counters.

    ``deck`` (``(104,) int8``) and ``work`` (``(MT_WORK,) int64``, see
    :func:`~forty_thieves_env.engine.deals.shuffle_into`) are scratch arrays: the reset
    allocates nothing, so that a CUDA kernel can run it too.
    """
    shuffle_into(number, deck, work)
    deal_layout(s, cfg, deck)
    g[G_LEGAL] = legal_mask(s, cfg, mask)
    encode_obs(s, cfg, obs, place, params[P_ORACLE])
    g[G_DEAL] = number
    g[G_MOVES] = 0
    g[G_ELAPSED] = 0
    g[G_CARDS] = cards_home(s)
    g[G_PENDING] = 0
