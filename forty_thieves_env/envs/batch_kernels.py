"""The batch kernels: N games stepped and reset in one compiled call.

This is the machinery under :class:`~.batch.BatchGames`, and so under the native vector
environments (:mod:`.vector` for Gymnasium, :mod:`.sb3` for stable-baselines3). A batch of
``N`` games is a set of arrays, one row (or slot) per game:

=============  ==================  ===============================================================
array          shape, dtype        content
=============  ==================  ===============================================================
``states``     (N, size) int8      state arrays (see :mod:`forty_thieves_env.engine.layout`)
``masks``      (N, n) bool         legal actions now (what ``action_masks()`` returns)
``obs``        (N * F,) int8       observations: every game's fields of :mod:`.observation`,
                                   placed as ``obs_lay`` says (see there)
``games``      (N, G_LEN) int64    per-game counters, slots ``G_*`` of :mod:`.step`
``ep_return``  (N,) float64        sum of the rewards of the episode so far
``gens``       (N, ST_LEN) uint64  each game's deal generator (:mod:`forty_thieves_env.engine.pcg64`)
``flags``      (F_LEN, N) bool     per-step results, rows ``F_*`` below
``rewards``    (N,) float64        per-step rewards
``out_obs``,   like ``obs``,       what ``step(..., emit=True)`` hands out: each game's
``out_masks``, ``masks`` and       observation, mask and info counters (deal, moves, cards home)
``out_info``   (3, N) int64        after its step, copied by the kernel into fresh arrays
=============  ==================  ===============================================================

Every game keeps the number of its legal actions (``games[:, G_LEGAL]``): the step updates
it with the few mask entries it rewrites, so that neither the end-of-episode test nor the
random-action sampler has to scan a mask.

:func:`step_game` is one game's whole step: :func:`~.step.step_one` (the move, mask,
observation and reward) plus the time limit and autoreset; :func:`reset_game` deals one
game, and :func:`reset_chosen` resets a game that a reset chose. They are written once for
every target: they allocate nothing and use no CPU-only device (their scratch comes from
the caller), so that the CUDA kernels of :mod:`.cuda_kernels` (one game a thread) call the
very same code. The CPU wrappers add what only a CPU needs: :func:`step_games` runs
:func:`step_game` over a range of games on views without reference counts
(:func:`~forty_thieves_env.engine.bits.unowned`) and copies each game's results to the
``out_*`` arrays; it runs over every game serially, and :func:`step_batch_parallel` runs it in
chunks over the cores (``prange``); :func:`reset_batch` runs :func:`reset_chosen` over every game.

The per-game functions take the batch arrays as one tuple, ``bufs``, in this order (the
order of :data:`BUFS`): ``states, masks, obs, obs_lay, games, ep_return, rewards, flags,
final_obs, final_masks, final_games, final_return, decks, gens, pool``; ``pool`` is the
``deals=`` pool (empty: the training range).

Autoreset: ``AUTORESET_NEXT_STEP`` (Gymnasium's default): a game whose episode ended is
reset by its next step, whose action is ignored and whose reward is 0.
``AUTORESET_SAME_STEP`` (what stable-baselines3 expects): the game is reset within the step
that ended it; its last observation, mask and counters are copied to the ``final_*``
arrays first. A reset deals the game's pre-drawn ``G_NEXT_DEAL`` and draws the number of
its next deal from the game's own generator, whose ``PCG64`` state the batch keeps in a row
of ``gens``: resets need no Python.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from ..engine.bits import copy_bytes, unowned
from ..engine.deals import MT_WORK
from ..engine.pcg64 import draw_deal_from
from .observation import O_MASK, copy_obs, gather_obs, obs_place
from .sampling import DEAL_RANGE
from .step import (
    AUTORESET_NEXT_STEP,
    G_CARDS,
    G_DEAL,
    G_ELAPSED,
    G_MOVES,
    G_NEXT_DEAL,
    G_PENDING,
    P_AUTORESET,
    P_MAX_STEPS,
    P_ORACLE,
    ST_ILLEGAL,
    ST_TERMINATED,
    ST_WON,
    reset_one,
    step_one,
)

# Per-step results: rows of ``flags``.
F_TERMINATED = 0  # the episode ended (won, stuck, or a refused action that terminates)
F_TRUNCATED = 1  # the time limit ended the episode
F_WON = 2  # the game is won (after the step, before any same-step reset)
F_ILLEGAL = 3  # the action was refused
F_RESET = 4  # NEXT_STEP: this step was a reset (action ignored)
F_LEN = 5

#: The names of the arrays of ``bufs``, in its order (see the module docstring).
BUFS = (
    "states",
    "masks",
    "obs",
    "obs_lay",
    "games",
    "ep_return",
    "rewards",
    "flags",
    "final_obs",
    "final_masks",
    "final_games",
    "final_return",
    "decks",
    "gens",
    "pool",
)


# ------------------------------------------------------------------ per game, every target


@njit(cache=True, inline="always")
def reset_game(i, cfg, params, number, draw, bufs, work):
    """Deal ``number`` into game ``i`` (state, mask, observation, counters) and zero its
    episode return; with ``draw``, draw the number of its next deal (``G_NEXT_DEAL``) from
    its generator. ``work`` is a ``(MT_WORK,) int64`` scratch array."""
    states, masks, obs, obs_lay, games, ep_return = bufs[:6]
    decks, gens, pool = bufs[12:15]
    g = games[i]
    reset_one(states[i], cfg, masks[i], obs, obs_place(obs_lay, i), params, g, number, decks[i], work)
    ep_return[i] = 0.0
    if draw:
        g[G_NEXT_DEAL] = draw_deal_from(gens[i], pool, DEAL_RANGE[0], DEAL_RANGE[1])


@njit(cache=True, inline="always")
def reset_chosen(i, cfg, params, which, numbers, bufs, work):
    """If ``which[i]``: reset game ``i`` (:func:`reset_game`) and clear its reward and flags.

    With ``numbers`` (``(N,) int64``), the game gets deal ``numbers[i]`` and draws nothing;
    with an empty ``numbers``, it gets its pre-drawn next deal (``G_NEXT_DEAL``) and draws
    the one after from its generator (a reset without a seed, on the GPU).
    """
    if not which[i]:
        return
    games, rewards, flags = bufs[4], bufs[6], bufs[7]
    given = numbers.shape[0] > 0
    number = numbers[i] if given else games[i, G_NEXT_DEAL]
    reset_game(i, cfg, params, number, not given, bufs, work)
    rewards[i] = 0.0
    for f in range(F_LEN):
        flags[f, i] = False


@njit(cache=True, inline="always")
def step_game(i, cfg, spec, params, action, bufs, work):
    """Step game ``i`` with ``action``: :func:`step_one`, the time limit, then autoreset.

    Writes the game's reward and flags; a game that a step resets (``NEXT_STEP``: the step
    after its episode ended; ``SAME_STEP``: the step that ended it, after copying its last
    observation, mask, counters and return to the ``final_*`` arrays) gets its pre-drawn
    next deal, and the number of the one after is drawn from its generator.
    """
    states, masks, obs, obs_lay, games, ep_return, rewards, flags = bufs[:8]
    final_obs, final_masks, final_games, final_return = bufs[8:12]
    g = games[i]
    # Read before the step's stores to int64 arrays, which the compiler cannot tell apart from
    # ``params``: read after them, it is loaded again for every game.
    max_steps = params[P_MAX_STEPS]
    if g[G_PENDING]:  # NEXT_STEP: the episode ended last step; this step resets it
        reset_game(i, cfg, params, g[G_NEXT_DEAL], True, bufs, work)
        rewards[i] = 0.0
        flags[F_TERMINATED, i] = False
        flags[F_TRUNCATED, i] = False
        flags[F_WON, i] = False
        flags[F_ILLEGAL, i] = False
        flags[F_RESET, i] = True
        return
    place = obs_place(obs_lay, i)
    r, status, _, _ = step_one(states[i], cfg, masks[i], obs, place, spec, action, params, g)
    rewards[i] = r
    ep_return[i] += r
    terminated = (status & ST_TERMINATED) != 0
    truncated = max_steps > 0 and g[G_ELAPSED] >= max_steps
    flags[F_TERMINATED, i] = terminated
    flags[F_TRUNCATED, i] = truncated
    flags[F_WON, i] = (status & ST_WON) != 0
    flags[F_ILLEGAL, i] = (status & ST_ILLEGAL) != 0
    flags[F_RESET, i] = False
    if not (terminated or truncated):
        return
    if params[P_AUTORESET] == AUTORESET_NEXT_STEP:
        g[G_PENDING] = 1
        return
    gather_obs(cfg, obs, place, params[P_ORACLE], final_obs[i])
    # Element loops, not slice copies: a slice copy compiles numba's shape-mismatch error
    # path (string formatting; seconds of a first run, and no CUDA), for a case that cannot occur.
    for a in range(masks.shape[1]):
        final_masks[i, a] = masks[i, a]
    for k in range(g.shape[0]):
        final_games[i, k] = g[k]
    final_return[i] = ep_return[i]
    reset_game(i, cfg, params, g[G_NEXT_DEAL], True, bufs, work)


@njit(cache=True, inline="always")
def mask_to_row(i, masks, obs, obs_lay):
    """Copy game ``i``'s mask, as ``0``/``1`` bytes, into the mask part of its ``flat`` row in
    ``obs`` (at ``obs_lay[O_MASK]``, rows that carry the mask: ``mask_in_observation``). The
    CPU step copies it there itself (:func:`step_games`); the CUDA kernels call this after a
    step or reset."""
    at = obs_lay[O_MASK, 0] + i * obs_lay[O_MASK, 1]
    for a in range(masks.shape[1]):
        obs[at + a] = masks[i, a]


# ------------------------------------------------------------------------ CPU wrappers


@njit(cache=True, inline="always")
def _unowned_bufs(bufs):
    """``bufs`` as views without reference counts (see :func:`unowned`)."""
    states, masks, obs, obs_lay, games, ep_return, rewards, flags = bufs[:8]
    final_obs, final_masks, final_games, final_return, decks, gens, pool = bufs[8:15]
    return (
        unowned(states),
        unowned(masks),
        unowned(obs),
        unowned(obs_lay),
        unowned(games),
        unowned(ep_return),
        unowned(rewards),
        unowned(flags),
        unowned(final_obs),
        unowned(final_masks),
        unowned(final_games),
        unowned(final_return),
        unowned(decks),
        unowned(gens),
        unowned(pool),
    )


@njit(cache=True)
def step_games(lo, hi, cfg, spec, params, actions, bufs, outs):
    """Step games ``lo..hi-1`` of a batch with :func:`step_game`.

    ``bufs`` is the tuple of batch arrays (see :data:`BUFS`); ``outs`` is ``(out_obs,
    out_masks, out_info)``. Each one that is not empty gets, after each game's step and while
    it is still in the core's cache, a copy of the game's observation (``out_obs``), mask
    (``out_masks``, 1-D ``bool``, at ``obs_lay[O_MASK]``: row after row of an ``(N, n)``
    array, or the tail of each ``flat`` row that carries its mask) and info counters
    (``out_info``, rows deal, moves, cards home): fresh arrays that the caller hands out
    without copying them again.
    """
    bufs = _unowned_bufs(bufs)
    cfg = unowned(cfg)
    spec = unowned(spec)
    params = unowned(params)
    actions = unowned(actions)
    out_obs = unowned(outs[0])
    out_masks = unowned(outs[1])
    out_info = unowned(outs[2])
    masks, obs, obs_lay, games = bufs[1], bufs[2], bufs[3], bufs[4]
    emit_info = out_info.shape[1] > 0
    emit_masks = out_masks.shape[0] > 0
    emit_obs = out_obs.shape[0] > 0
    n_act = masks.shape[1]
    masks_flat = masks.reshape(masks.shape[0] * n_act)
    mask_at, mask_stride = obs_lay[O_MASK, 0], obs_lay[O_MASK, 1]
    oracle = params[P_ORACLE]
    work = np.empty(MT_WORK, dtype=np.int64)  # the deal shuffle's scratch, for every reset of the range
    for i in range(lo, hi):
        step_game(i, cfg, spec, params, actions[i], bufs, work)
        if emit_obs:
            copy_obs(cfg, obs, obs_place(obs_lay, i), oracle, out_obs)
        if emit_masks:
            copy_bytes(out_masks, mask_at + i * mask_stride, masks_flat, i * n_act, n_act)
        if emit_info:
            out_info[0, i] = games[i, G_DEAL]
            out_info[1, i] = games[i, G_MOVES]
            out_info[2, i] = games[i, G_CARDS]


# The serial step is :func:`step_games` itself, called from Python over every game: a thin
# serial entry point over it would be one more compiled library, its whole step optimised and
# turned into machine code a second time on the first run. The parallel entry point calls it
# per chunk; both share the one compiled step_games.


@njit(parallel=True, cache=True)
def step_batch_parallel(cfg, spec, params, actions, bufs, outs, chunk):
    """Step every game, ``chunk`` games per work item, over numba's threads."""
    n = actions.shape[0]
    for c in prange((n + chunk - 1) // chunk):
        step_games(c * chunk, min(n, (c + 1) * chunk), cfg, spec, params, actions, bufs, outs)


@njit(cache=True)
def reset_batch(cfg, params, which, numbers, bufs):
    """Reset every game ``i`` with ``which[i]`` (:func:`reset_chosen`; resets are rare: serial).

    :meth:`BatchGames.reset` gives the ``numbers`` (its games' pre-drawn next deals when no
    deal is asked for) and draws the next deals itself, after seeding.
    """
    # The config as step_games passes it, so that one compiled reset_one (and the legal mask,
    # observation and deal kernels under it) serves both: half the first run's compiling.
    cfg = unowned(cfg)
    work = np.empty(MT_WORK, dtype=np.int64)
    for i in range(which.shape[0]):
        reset_chosen(i, cfg, params, which, numbers, bufs, work)
