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

:func:`step_games` runs :func:`~.step.step_one` (one game's step) plus the time limit,
autoreset and the copies to the ``out_*`` arrays for a range of games; the two entry points
run it over every game, in parallel over the cores (``prange``) or serially.

Autoreset: ``AUTORESET_NEXT_STEP`` (Gymnasium's default): a game whose episode ended is
reset by its next step, whose action is ignored and whose reward is 0.
``AUTORESET_SAME_STEP`` (what stable-baselines3 expects): the game is reset within the step
that ended it; its last observation, mask and counters are copied to the ``final_*``
arrays first. A reset deals the game's pre-drawn ``G_NEXT_DEAL`` and draws the number of
its next deal from the game's own generator, whose ``PCG64`` state the batch keeps in a row
of ``gens``: resets need no Python.
"""

from __future__ import annotations

from numba import njit, prange

from ..engine.bits import copy_bytes, unowned
from ..engine.pcg64 import draw_deal_from
from .observation import copy_obs, gather_obs, obs_place
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


@njit(cache=True)
def step_games(lo, hi, cfg, spec, params, actions, bufs):
    """Step games ``lo..hi-1`` of a batch: :func:`step_one`, the time limit, then autoreset.

    ``bufs`` is the tuple of batch arrays :meth:`BatchGames.step` passes (see its order there).
    When ``out_obs`` is not empty, each game's observation, mask and info counters after its
    step are also copied to ``out_obs``, ``out_masks`` and ``out_info`` (rows deal, moves,
    cards home) while they are still in the core's cache: fresh arrays that the caller hands
    out without copying them again.
    """
    states, masks, obs, obs_lay, games, ep_return, rewards, flags = bufs[:8]
    final_obs, final_masks, final_games, final_return, decks, gens, pool = bufs[8:15]
    out_obs, out_masks, out_info = bufs[15:]
    cfg = unowned(cfg)
    spec = unowned(spec)
    params = unowned(params)
    actions = unowned(actions)
    ep_return = unowned(ep_return)
    rewards = unowned(rewards)
    flags = unowned(flags)
    final_return = unowned(final_return)
    states = unowned(states)
    masks = unowned(masks)
    obs = unowned(obs)
    obs_lay = unowned(obs_lay)
    games = unowned(games)
    decks = unowned(decks)
    gens = unowned(gens)
    pool = unowned(pool)
    final_obs = unowned(final_obs)
    final_masks = unowned(final_masks)
    final_games = unowned(final_games)
    out_obs = unowned(out_obs)
    out_masks = unowned(out_masks)
    out_info = unowned(out_info)
    emit = out_masks.shape[0] > 0
    emit_obs = out_obs.shape[0] > 0
    n_act = masks.shape[1]
    masks_flat = masks.reshape(masks.shape[0] * n_act)
    auto_next = params[P_AUTORESET] == AUTORESET_NEXT_STEP
    max_steps = params[P_MAX_STEPS]
    oracle = params[P_ORACLE]
    deal_low, deal_high = DEAL_RANGE  # compile-time constants
    for i in range(lo, hi):
        g = games[i]
        place = obs_place(obs_lay, i)
        if g[G_PENDING]:  # NEXT_STEP: the episode ended last step; this step resets it
            reset_one(states[i], cfg, masks[i], obs, place, params, g, g[G_NEXT_DEAL], decks[i])
            g[G_NEXT_DEAL] = draw_deal_from(gens[i], pool, deal_low, deal_high)
            ep_return[i] = 0.0
            rewards[i] = 0.0
            flags[F_TERMINATED, i] = False
            flags[F_TRUNCATED, i] = False
            flags[F_WON, i] = False
            flags[F_ILLEGAL, i] = False
            flags[F_RESET, i] = True
        else:
            r, status, _, _ = step_one(states[i], cfg, masks[i], obs, place, spec, actions[i], params, g)
            rewards[i] = r
            ep_return[i] += r
            terminated = (status & ST_TERMINATED) != 0
            truncated = max_steps > 0 and g[G_ELAPSED] >= max_steps
            flags[F_TERMINATED, i] = terminated
            flags[F_TRUNCATED, i] = truncated
            flags[F_WON, i] = (status & ST_WON) != 0
            flags[F_ILLEGAL, i] = (status & ST_ILLEGAL) != 0
            flags[F_RESET, i] = False
            if terminated or truncated:
                if auto_next:
                    g[G_PENDING] = 1
                else:
                    gather_obs(cfg, obs, place, oracle, final_obs[i])
                    # Element loops, not slice copies: a slice copy compiles numba's shape-mismatch
                    # error path (string formatting), seconds of a first run for a case that cannot occur.
                    for a in range(n_act):
                        final_masks[i, a] = masks[i, a]
                    for k in range(g.shape[0]):
                        final_games[i, k] = g[k]
                    final_return[i] = ep_return[i]
                    reset_one(states[i], cfg, masks[i], obs, place, params, g, g[G_NEXT_DEAL], decks[i])
                    g[G_NEXT_DEAL] = draw_deal_from(gens[i], pool, deal_low, deal_high)
                    ep_return[i] = 0.0
        if emit_obs:
            copy_obs(cfg, obs, place, oracle, out_obs)
        if emit:
            copy_bytes(out_masks, i * n_act, masks_flat, i * n_act, n_act)
            out_info[0, i] = g[G_DEAL]
            out_info[1, i] = g[G_MOVES]
            out_info[2, i] = g[G_CARDS]


# Two thin entry points over :func:`step_games`, not one function compiled twice: numba's
# on-disk cache keys entries by function, so two compilations of one would overwrite each other.


@njit(parallel=True, cache=True)
def step_batch_parallel(cfg, spec, params, actions, bufs, chunk):
    """Step every game, ``chunk`` games per work item, over numba's threads."""
    n = actions.shape[0]
    for c in prange((n + chunk - 1) // chunk):
        step_games(c * chunk, min(n, (c + 1) * chunk), cfg, spec, params, actions, bufs)


@njit(cache=True)
def step_batch_serial(cfg, spec, params, actions, bufs, chunk):
    """Step every game in the calling thread (small batches, ``num_threads=1``)."""
    step_games(0, actions.shape[0], cfg, spec, params, actions, bufs)


@njit(cache=True)
def reset_batch(states, cfg, masks, obs, obs_lay, games, ep_return, params, which, numbers, decks):
    """Deal ``numbers[i]`` into every game ``i`` with ``which[i]`` (resets are rare: serial)."""
    # The config as step_games passes it, so that one compiled reset_one (and the legal mask,
    # observation and deal kernels under it) serves both: half the first run's compiling.
    cfg = unowned(cfg)
    for i in range(states.shape[0]):
        if which[i]:
            place = obs_place(obs_lay, i)
            reset_one(states[i], cfg, masks[i], obs, place, params, games[i], numbers[i], decks[i])
            ep_return[i] = 0.0
