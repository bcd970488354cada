"""The batch engine: N games stepped, reset and encoded in one compiled call.

This is the machinery under the native vector environments (:mod:`.vector` for Gymnasium,
:mod:`.sb3` for stable-baselines3) and under the fused single-game step of
:class:`~.env.FortyThievesEnv`. It imports neither gymnasium nor torch.

A batch of ``N`` games is a set of arrays, one row (or slot) per game:

=============  ==================  ===============================================================
array          shape, dtype        content
=============  ==================  ===============================================================
``states``     (N, size) int8      state arrays (see :mod:`.state`)
``masks``      (N, n) bool         legal actions now (what ``action_masks()`` returns)
``obs``        (N * F,) int8       observations: every game's fields of :mod:`.encoding`, placed
                                   as ``obs_lay`` says (below)
``games``      (N, G_LEN) int64    per-game counters, slots ``G_*`` below
``ep_return``  (N,) float64        sum of the rewards of the episode so far
``gens``       (N, ST_LEN) uint64  each game's deal generator (:mod:`.generators`)
``flags``      (F_LEN, N) bool     per-step results, rows ``F_*`` below
``rewards``    (N,) float64        per-step rewards
``out_obs``,   like ``obs``,       what ``step(..., emit=True)`` hands out: each game's
``out_masks``, ``masks`` and       observation, mask and info counters (deal, moves, cards home)
``out_info``   (3, N) int64        after its step, copied by the kernel into fresh arrays
=============  ==================  ===============================================================

Every game keeps the number of its legal actions (``games[:, G_LEGAL]``): the step updates
it with the few mask entries it rewrites, so that neither the end-of-episode test nor the
random-action sampler has to scan a mask.

Observation buffer: in ``"flat"`` mode it is the ``(N, F)`` rows of the flat observation,
one game after another; in ``"dict"`` and ``"oracle"`` mode each field is one block
``(N, *shape)`` (all games' tableaux, then all wastes, ...), so that handing out a field
is one contiguous copy. ``obs_lay`` (``(O_LEN, 2) int64``, rows ``O_*``) gives each
field's start and the distance from one game's field to the next's; :func:`obs_place`
turns it into one game's field starts (its *place*), which the encoding kernels take.

:func:`step_one` is one game's step (check the action against the mask, apply it, reward,
mask, observation) and is what the single environment calls; the batch kernels run
:func:`step_games` (``step_one`` plus the time limit, autoreset and the copies to the
``out_*`` arrays) for every game, in parallel over the cores (``prange``) or serially.

Autoreset: ``AUTORESET_NEXT_STEP`` (Gymnasium's default): a game whose episode ended is
reset by its next step, whose action is ignored and whose reward is 0.
``AUTORESET_SAME_STEP`` (what stable-baselines3 expects): the game is reset within the step
that ended it; its last observation, mask and counters are copied to the ``final_*``
arrays first. A reset deals the game's pre-drawn ``G_NEXT_DEAL`` and draws the number of
its next deal from the game's own generator, whose ``PCG64`` state the batch keeps in a row
of ``gens`` (see :mod:`.generators`): resets need no Python.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np
from numba import njit, prange
from numba import uint64 as u64

from .encoding import COUNT_REDEALS, COUNT_STOCK, FACE_DOWN, N_COUNTS, NO_CARD, check_mode, observation_fields
from .engine.actions import KIND_COLUMN_FOUNDATION, KIND_STOCK, KIND_WASTE_COLUMN, KIND_WASTE_FOUNDATION, decode
from .engine.bits import copy_bytes, fill_bytes, load_u64, nth_bit, pack_bytes, popcount, unowned
from .engine.cards import N_CARDS, N_FOUNDATIONS
from .engine.config import config_for
from .engine.deals import TRAIN_RANGE, check_deal_number, deal_layout, deal_split, shuffle_into
from .engine.incremental import refresh_legal_mask
from .engine.layout import (
    CFG_AUTO,
    CFG_COLUMNS,
    CFG_DEPTH,
    CFG_N_ACTIONS,
    CFG_OFF_DOWN,
    CFG_OFF_LEN,
    CFG_OFF_STOCK,
    CFG_OFF_TAB,
    CFG_OFF_WASTE,
    CFG_RUN,
    CFG_SIZE,
    CFG_STOCK,
    RUN_SUPERMOVE,
    S_FOUND,
    S_REDEALS,
    S_STOCK_LEN,
    S_WASTE_LEN,
)
from .engine.pcg64 import ST_LEN, check_range, draw_deal_from, export_state, import_state
from .engine.rules import apply_action, cards_home, empty_columns, legal_mask
from .engine.variants import Variant, get_variant
from .rewards import R_ILLEGAL, Reward, make_reward, reward_from_spec

# Per-game counters: slots of a row of ``games``.
G_DEAL = 0  # deal number being played (0 when started from a position)
G_MOVES = 1  # legal moves played this episode
G_ELAPSED = 2  # steps this episode, refused actions included (what a TimeLimit counts)
G_CARDS = 3  # cards on the foundations now
G_NEXT_DEAL = 4  # deal number of the game's next reset, drawn in advance
G_PENDING = 5  # NEXT_STEP: the episode has ended and the next step resets the game
G_LEGAL = 6  # legal actions now (the True entries of the game's mask)
G_LEN = 7

# Per-step results: rows of ``flags``.
F_TERMINATED = 0
F_TRUNCATED = 1
F_WON = 2  # the game is won (after the step, before any same-step reset)
F_ILLEGAL = 3  # the action was refused
F_RESET = 4  # NEXT_STEP: this step was a reset (action ignored)
F_LEN = 5

# Bits of the status that :func:`step_one` returns.
ST_WON = 1
ST_TERMINATED = 2
ST_ILLEGAL = 4

# Slots of the ``params`` array (int64).
P_ORACLE = 0  # 1: encode the oracle fields too
P_ILLEGAL_TERMINATES = 1  # 1: a refused action ends the episode
P_AUTORESET = 2  # AUTORESET_NEXT_STEP or AUTORESET_SAME_STEP
P_MAX_STEPS = 3  # truncate after this many steps of an episode; 0: never
P_LEN = 4

AUTORESET_NEXT_STEP = 0
AUTORESET_SAME_STEP = 1
AUTORESET_MODES = {"next_step": AUTORESET_NEXT_STEP, "same_step": AUTORESET_SAME_STEP}

ILLEGAL_ACTIONS: tuple[str, ...] = ("penalize", "raise", "terminate")
#: Deal numbers a reset draws from (both ends included) unless ``deals=`` is given.
DEAL_RANGE = TRAIN_RANGE
#: Below this many games a step runs in the calling thread: waking numba's worker threads
#: costs microseconds on an idle machine and milliseconds on a busy one, more than the
#: work of a small batch (about a microsecond per game).
PARALLEL_MIN_GAMES = 512
#: Games per work item of a parallel step (see :meth:`BatchGames._run`): 64 games' per-step
#: flags fill one cache line, so that two threads seldom write the same line.
PARALLEL_CHUNK = 64
#: Bit set of every column (variants have at most 16), for :func:`refresh_obs`.
ALL_COLUMNS = u64(2**64 - 1)

# Observation fields in the kernels' order (that of :func:`~.encoding.observation_fields`):
# rows of ``obs_lay`` and items of a place (see the module docstring).
O_TABLEAU = 0
O_WASTE = 1
O_FOUNDATIONS = 2
O_COUNTS = 3
O_STOCK = 4  # oracle only
O_REVEALED = 5  # oracle only (``tableau_revealed``)
O_LEN = 6
O_NAMES = ("tableau", "waste", "foundations", "counts", "stock", "tableau_revealed")


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

    The fields are those of :func:`~.encoding.encode_into` (and, with ``oracle``,
    :func:`~.encoding.encode_oracle_into`); the tests hold the two to the same output.
    """
    c = cfg[CFG_COLUMNS]
    d = cfg[CFG_DEPTH]
    cap = cfg[CFG_STOCK]
    off_len = cfg[CFG_OFF_LEN]
    off_down = cfg[CFG_OFF_DOWN]
    off_tab = cfg[CFG_OFF_TAB]
    one = u64(1)
    o = place[O_TABLEAU]
    for i in range(c):
        if (cols >> u64(i)) & one:
            _obs_column(s, obs, off_tab + i * d, o + i * d, s[off_len + i], s[off_down + i], d)
    if waste:
        # Right-aligned: a card drawn or played shifts every card of the field.
        o = place[O_WASTE]
        wl = s[S_WASTE_LEN]
        fill_bytes(obs, o, cap - wl, NO_CARD)
        copy_bytes(obs, o + cap - wl, s, cfg[CFG_OFF_WASTE], wl)
    o = place[O_FOUNDATIONS]
    for p in range(N_FOUNDATIONS):
        obs[o + p] = s[S_FOUND + p]
    o = place[O_COUNTS]
    obs[o + COUNT_STOCK] = s[S_STOCK_LEN]
    obs[o + COUNT_REDEALS] = s[S_REDEALS]
    if not oracle:
        return
    if stock:
        o = place[O_STOCK]
        sl = s[S_STOCK_LEN]
        off_st = cfg[CFG_OFF_STOCK]
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
    cd = cfg[CFG_COLUMNS] * cfg[CFG_DEPTH]
    cap = cfg[CFG_STOCK]
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


@njit(cache=True, inline="always")
def step_one(s, cfg, mask, obs, place, spec, action, params, g):
    """One game's step; returns ``(reward, status, moves, cards home)``, status bits ``ST_*``.

    A legal action (``mask[action]``) is applied; then the mask, the observation (fields at
    ``place`` in ``obs``, see :func:`obs_place`) and
    the counters ``g`` (a ``games`` row) are brought up to date. A refused action leaves
    the state, mask and observation as they were and earns ``spec[R_ILLEGAL]``.

    ``mask`` and ``obs`` must be those of ``s`` before the step: only what the move can
    change is recomputed (:func:`~.rules.refresh_legal_mask`, :func:`refresh_obs`): the
    source and destination columns, the waste, the stock, the foundations. Auto-play, and
    a supermove that changes the number of empty columns, recompute everything.
    """
    g[G_ELAPSED] += 1
    if 0 <= action < mask.shape[0] and mask[action]:
        kind, i, j, _ = decode(cfg, action)
        supermove = cfg[CFG_RUN] == RUN_SUPERMOVE
        empty_before = empty_columns(s, cfg) if supermove else 0
        moved = apply_action(s, cfg, action)
        g[G_MOVES] += 1
        if cfg[CFG_AUTO] or (supermove and empty_columns(s, cfg) != empty_before):
            n_legal = legal_mask(s, cfg, mask)
            encode_obs(s, cfg, obs, place, params[P_ORACLE])
        else:
            cols = u64(0)
            if i >= 0:
                cols |= u64(1) << u64(i)
            if j >= 0:
                cols |= u64(1) << u64(j)
            waste = kind in (KIND_STOCK, KIND_WASTE_FOUNDATION, KIND_WASTE_COLUMN)
            found = kind in (KIND_WASTE_FOUNDATION, KIND_COLUMN_FOUNDATION)
            n_legal = g[G_LEGAL] + refresh_legal_mask(s, cfg, mask, cols, waste, found)
            refresh_obs(s, cfg, obs, place, params[P_ORACLE], cols, waste, kind == KIND_STOCK)
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
def reset_one(s, cfg, mask, obs, place, params, g, number, deck):
    """Deal PySolFC deal ``number`` into ``s`` and refresh the mask, observation and counters."""
    shuffle_into(number, deck)
    deal_layout(s, cfg, deck)
    g[G_LEGAL] = legal_mask(s, cfg, mask)
    encode_obs(s, cfg, obs, place, params[P_ORACLE])
    g[G_DEAL] = number
    g[G_MOVES] = 0
    g[G_ELAPSED] = 0
    g[G_CARDS] = cards_home(s)
    g[G_PENDING] = 0


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
                    final_masks[i, :] = masks[i]
                    final_games[i, :] = g
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
    for i in range(states.shape[0]):
        if which[i]:
            place = obs_place(obs_lay, i)
            reset_one(states[i], cfg, masks[i], obs, place, params, games[i], numbers[i], decks[i])
            ep_return[i] = 0.0


@njit(cache=True)
def draw_next_deals(gens, pool, games, idx):
    """Draw the next deal number (``G_NEXT_DEAL``) of every game in ``idx`` from its generator."""
    for k in range(idx.shape[0]):
        i = idx[k]
        games[i, G_NEXT_DEAL] = draw_deal_from(gens[i], pool, DEAL_RANGE[0], DEAL_RANGE[1])


@njit(cache=True, inline="always")
def _count_legal(masks, i):
    """The number of True entries of row ``i`` of the C-contiguous ``masks``, eight a word."""
    n_act = masks.shape[1]
    start = masks.ctypes.data + i * n_act
    n = 0
    a = 0
    while a + 8 <= n_act:
        n += np.int64(popcount(pack_bytes(load_u64(start + a))))
        a += 8
    row = masks[i]
    for b in range(a, n_act):
        n += row[b]
    return n


@njit(cache=True, inline="always")
def _nth_legal(masks, i, n):
    """The action of the ``n``-th True entry (from 0) of row ``i`` of the C-contiguous
    ``masks`` (the last action if the row has ``n`` or fewer): whole words of eight entries
    are counted and skipped, then the entry is found among the bits of its word."""
    n_act = masks.shape[1]
    start = masks.ctypes.data + i * n_act
    a = 0
    while a + 8 <= n_act:
        bits = pack_bytes(load_u64(start + a))
        c = np.int64(popcount(bits))
        if n < c:
            return a + nth_bit(bits, n)
        n -= c
        a += 8
    row = masks[i]
    while a < n_act - 1:
        if row[a]:
            if n == 0:
                return a
            n -= 1
        a += 1
    return n_act - 1


@njit(cache=True, inline="always")
def _pick(u, n):
    """``floor(u * n)`` for ``u`` in ``[0, 1)``, kept below ``n``."""
    return min(int(u * n), n - 1)


@njit(cache=True)
def sample_legal(masks, uniforms, out):
    """``out[i]``: a legal action of row ``i`` of ``masks``, the ``floor(uniforms[i] * n_legal)``-th
    one (0 for an all-False row). A random-legal-move agent for a whole batch in one call.
    """
    if not masks.flags.c_contiguous:
        masks = np.ascontiguousarray(masks)
    masks = unowned(masks)
    for i in range(masks.shape[0]):
        n = _count_legal(masks, i)
        out[i] = 0 if n == 0 else _nth_legal(masks, i, _pick(uniforms[i], n))


@njit(cache=True)
def sample_counted(masks, games, uniforms, out):
    """:func:`sample_legal` for a batch, whose ``games[:, G_LEGAL]`` already counts each row's
    legal actions: no counting pass."""
    masks = unowned(masks)
    for i in range(masks.shape[0]):
        n = games[i, G_LEGAL]
        out[i] = 0 if n == 0 else _nth_legal(masks, i, _pick(uniforms[i], n))


# ------------------------------------------------------------------------- Python side


def check_deals(deals: str | Iterable[int] | np.ndarray | None) -> np.ndarray | None:
    """The ``deals=`` argument as an ``int64`` array of deal numbers (``None`` stays ``None``).

    Raises:
        ValueError: empty, not integers, or a number below 1.
    """
    if deals is None:
        return None
    if isinstance(deals, str):
        return deal_split(deals)
    arr = np.asarray(list(deals) if not isinstance(deals, np.ndarray) else deals)
    if arr.ndim != 1 or arr.size == 0 or not np.issubdtype(arr.dtype, np.integer):
        raise ValueError("deals must be a non-empty sequence of deal numbers (ints)")
    if arr.min() < 1:
        raise ValueError(f"deal numbers start at 1, got {int(arr.min())}")
    return arr.astype(np.int64)


def check_position(variant: Variant, position: object) -> np.ndarray:
    """The state array of a position to start from: position text or a ``GameState`` of ``variant``.

    Raises:
        TypeError: neither text nor a ``GameState``.
        ValueError: another variant's position, or one with no legal move (won or stuck).
    """
    from .engine.rules import count_legal
    from .text.game import GameState, parse_position

    game = parse_position(position) if isinstance(position, str) else position
    if not isinstance(game, GameState):
        raise TypeError(f"options['position'] must be position text or a GameState, got {type(position)}")
    if game.variant != variant:
        raise ValueError(f"the position is a {game.variant} position, this environment plays {variant}")
    if count_legal(game.array, config_for(variant)) == 0:
        raise ValueError("the position has no legal move (won or stuck): there is nothing to play")
    return game.array


def draw_deal(rng: np.random.Generator, deals: np.ndarray | None) -> int:
    """One deal number from ``rng``: uniform over ``deals``, or over :data:`DEAL_RANGE`."""
    if deals is None:
        return int(rng.integers(DEAL_RANGE[0], DEAL_RANGE[1], endpoint=True))
    return int(deals[rng.integers(len(deals))])


def new_rng(seed: int | None) -> np.random.Generator:
    """The generator Gymnasium's ``seeding.np_random(seed)`` makes (PCG64 over a SeedSequence)."""
    return np.random.Generator(np.random.PCG64(np.random.SeedSequence(seed)))


def observation_layout(variant: Variant, mode: str) -> dict[str, tuple[int, int, tuple[int, ...]]]:
    """Field name -> ``(start, stop, shape)`` in a flat observation row of ``mode``."""
    out = {}
    pos = 0
    for name, (shape, _) in observation_fields(variant, oracle=mode == "oracle").items():
        n = int(np.prod(shape))
        out[name] = (pos, pos + n, shape)
        pos += n
    return out


def observation_lay(layout: dict[str, tuple[int, int, tuple[int, ...]]], num_games: int, by_field: bool) -> np.ndarray:
    """The ``(O_LEN, 2) int64`` start and per-game stride of each field (see the module
    docstring) in a buffer of ``num_games`` observations: one game's flat row after another,
    or (``by_field``) one block per field. Fields the mode lacks get ``(0, 0)``."""
    size = max(stop for _, stop, _ in layout.values())
    lay = np.zeros((O_LEN, 2), dtype=np.int64)
    for f, name in enumerate(O_NAMES):
        if name in layout:
            start, stop, _ = layout[name]
            lay[f] = (num_games * start, stop - start) if by_field else (start, size)
    return lay


def flat_place(layout: dict[str, tuple[int, int, tuple[int, ...]]]) -> tuple[int, ...]:
    """The place (see :func:`obs_place`) of a single flat observation row of ``layout``."""
    return tuple(int(layout[name][0]) if name in layout else 0 for name in O_NAMES)


class BatchGames:
    """``num_games`` games of one variant, stepped in one compiled call (no gymnasium needed).

    Every game has its own random generator for its deals, seeded as Gymnasium's
    ``SyncVectorEnv`` seeds its sub-environments (``seed + i`` for game ``i``), and draws
    deal numbers from it exactly as :class:`~.env.FortyThievesEnv` does; the number of
    each game's next deal is drawn in advance (``games[:, G_NEXT_DEAL]``), and the kernel
    draws the following one from the game's generator state (:attr:`gens`, see
    :mod:`.generators`) when it autoresets, without Python. A seed therefore fixes every
    deal of every game, and game ``i`` plays the same deals as a single environment reset
    with ``seed + i``.

    Args:
        num_games: ``N``.
        variant: A preset name or :class:`~.variants.Variant`; ``options`` override it.
        observation: ``"dict"``, ``"flat"`` or ``"oracle"`` (the buffer is flat in every mode).
        reward: A reward name or :class:`~.rewards.Reward`.
        illegal_action: ``"penalize"``, ``"raise"`` (checked in Python, before any game
            moves) or ``"terminate"``.
        deals: Deal numbers to draw from (split name or numbers); default the training range.
        winnable_only: Draw only deals of the variant's winnable set (:mod:`.winnable`),
            intersected with ``deals`` when given.
        max_episode_steps: Truncate an episode after this many steps (``None``: never).
        autoreset: ``"next_step"`` or ``"same_step"`` (see the module docstring).
        num_threads: numba threads for a step (``None``: numba's current setting).
    """

    def __init__(
        self,
        num_games: int,
        variant: str | Variant = "classic",
        *,
        observation: str = "dict",
        reward: str | Reward = "foundation",
        illegal_action: str = "penalize",
        deals: str | Iterable[int] | np.ndarray | None = None,
        winnable_only: bool = False,
        max_episode_steps: int | None = None,
        autoreset: str = "next_step",
        num_threads: int | None = None,
        **options: object,
    ) -> None:
        if isinstance(num_games, bool) or not isinstance(num_games, (int, np.integer)) or num_games < 1:
            raise ValueError(f"num_games must be a positive int, got {num_games!r}")
        if illegal_action not in ILLEGAL_ACTIONS:
            raise ValueError(f"unknown illegal_action {illegal_action!r}; choose one of {', '.join(ILLEGAL_ACTIONS)}")
        if autoreset not in AUTORESET_MODES:
            raise ValueError(f"unknown autoreset {autoreset!r}; choose one of {', '.join(AUTORESET_MODES)}")
        if max_episode_steps is not None and (isinstance(max_episode_steps, bool) or max_episode_steps < 1):
            raise ValueError(f"max_episode_steps must be a positive int or None, got {max_episode_steps!r}")
        if num_threads is not None and num_threads < 1:
            raise ValueError(f"num_threads must be a positive int or None, got {num_threads!r}")
        n = self.num_games = int(num_games)
        self.variant = get_variant(variant, **options)
        self.cfg = config_for(self.variant)
        self.n_actions = int(self.cfg[CFG_N_ACTIONS])
        self.observation_mode = check_mode(observation)
        self.reward = make_reward(reward)
        self.spec = self.reward.spec()
        self.illegal_action = illegal_action
        self.deals = check_deals(deals)
        self.winnable_only = bool(winnable_only)
        if self.winnable_only:
            from .winnable import restrict_deals

            self.deals = restrict_deals(self.variant, self.deals)
        self.max_episode_steps = max_episode_steps
        self.autoreset = autoreset
        self.num_threads = num_threads
        self.layout = observation_layout(self.variant, observation)
        obs_size = self.obs_size = max(stop for _, stop, _ in self.layout.values())
        self.obs_lay = observation_lay(self.layout, n, by_field=self.observation_mode != "flat")

        self.params = np.zeros(P_LEN, dtype=np.int64)
        self.params[P_ORACLE] = observation == "oracle"
        self.params[P_ILLEGAL_TERMINATES] = illegal_action == "terminate"
        self.params[P_AUTORESET] = AUTORESET_MODES[autoreset]
        self.params[P_MAX_STEPS] = max_episode_steps or 0
        # The kernels draw deals from this list when it is not empty (see generators.py).
        self.deal_pool = np.zeros(0, dtype=np.int64) if self.deals is None else self.deals.astype(np.int64)
        check_range(*DEAL_RANGE, self.deal_pool.shape[0])

        size = int(self.cfg[CFG_SIZE])
        self.states = np.zeros((n, size), dtype=np.int8)
        self.masks = np.zeros((n, self.n_actions), dtype=np.bool_)
        self.obs = np.zeros(n * obs_size, dtype=np.int8)
        self._obs_rows = self.obs.reshape(n, obs_size)  # the flat mode's (N, F) view, one object
        self.games = np.zeros((n, G_LEN), dtype=np.int64)
        self.ep_return = np.zeros(n, dtype=np.float64)
        self.rewards = np.zeros(n, dtype=np.float64)
        self.flags = np.zeros((F_LEN, n), dtype=np.bool_)
        self.actions = np.zeros(n, dtype=np.int64)
        self.decks = np.zeros((n, N_CARDS), dtype=np.int8)
        # Last observation, mask and counters of the games a SAME_STEP step reset.
        same = autoreset == "same_step"
        self.final_obs = np.zeros((n if same else 0, obs_size), dtype=np.int8)
        self.final_masks = np.zeros((n if same else 0, self.n_actions), dtype=np.bool_)
        self.final_games = np.zeros((n if same else 0, G_LEN), dtype=np.int64)
        self.final_return = np.zeros(n if same else 0, dtype=np.float64)
        # What step(emit=True) hands out (filled by the kernel), and the empty stand-ins otherwise.
        self.out_obs = np.zeros(0, dtype=np.int8)
        self.out_masks = np.zeros((0, self.n_actions), dtype=np.bool_)
        self.out_info = np.zeros((3, 0), dtype=np.int64)
        self._no_outputs = (self.out_obs, self.out_masks.reshape(-1), self.out_info)
        # Each game's deal generator (numpy's PCG64 state, drawn from by the kernels).
        self.gens = np.zeros((n, ST_LEN), dtype=np.uint64)
        self.seeded = False  # whether seed_rngs has given every game a generator
        self.seeds: list[int | None] = [None] * n  # what each game's generator was seeded with
        self._parallel = n >= PARALLEL_MIN_GAMES and num_threads != 1

    # ----- views --------------------------------------------------------------------
    def field(self, name: str, source: np.ndarray | None = None, buffer: np.ndarray | None = None) -> np.ndarray:
        """``(N, *shape)`` view of observation field ``name``: of the live buffer ``obs`` (or
        ``buffer``, laid out alike, e.g. :attr:`out_obs`), or of ``source``, an ``(n, F)``
        array of flat observation rows."""
        start, stop, shape = self.layout[name]
        if source is not None:
            return source[:, start:stop].reshape(source.shape[0], *shape)
        n = self.num_games
        buf = self.obs if buffer is None else buffer
        if self.observation_mode == "flat":
            return buf.reshape(n, self.obs_size)[:, start:stop].reshape(n, *shape)
        base = n * start
        return buf[base : base + n * (stop - start)].reshape(n, *shape)

    def flat_rows(self) -> np.ndarray:
        """``(N, F)``: every game's observation as a flat row (a copy in dict modes)."""
        if self.observation_mode == "flat":
            return self._obs_rows
        return np.concatenate([self.field(name).reshape(self.num_games, -1) for name in self.layout], axis=1)

    def observations(
        self, source: np.ndarray | None = None, copy: bool = True, buffer: np.ndarray | None = None
    ) -> np.ndarray | dict[str, np.ndarray]:
        """Batched observations: of the live buffer (or ``buffer``, laid out alike), or of the
        flat rows ``source``; the rows in ``"flat"`` mode, else a dict of :meth:`field`
        arrays (each one contiguous block of the buffer); copies, or views with ``copy=False``
        (of the live buffer: overwritten by the next step)."""
        if self.observation_mode == "flat":
            if source is None:
                source = self._obs_rows if buffer is None else buffer.reshape(self.num_games, self.obs_size)
            return source.copy() if copy else source
        if copy:
            return {name: self.field(name, source, buffer).copy() for name in self.layout}
        return {name: self.field(name, source, buffer) for name in self.layout}

    def final_observations(self, idx: np.ndarray) -> list[np.ndarray | dict[str, np.ndarray]]:
        """The last observation of each game in ``idx`` that a same-step reset ended, one per game."""
        last = self.observations(self.final_obs[idx])
        if isinstance(last, np.ndarray):
            return list(last)
        return [{name: v[k] for name, v in last.items()} for k in range(len(idx))]

    @property
    def terminated(self) -> np.ndarray:
        return self.flags[F_TERMINATED]

    @property
    def truncated(self) -> np.ndarray:
        return self.flags[F_TRUNCATED]

    # ----- deals ----------------------------------------------------------------------
    def _refill(self, idx: Sequence[int] | np.ndarray) -> None:
        draw_next_deals(self.gens, self.deal_pool, self.games, np.asarray(idx, dtype=np.int64))

    def generators(self) -> tuple[np.random.Generator, ...]:
        """Each game's deal generator, as a ``numpy.random.Generator`` in its present state.

        Snapshots: the batch keeps the generators' states in :attr:`gens`, so drawing from
        these does not change the games' deals. Each is one draw ahead of a single
        environment seeded alike, the draw of the game's next deal (``G_NEXT_DEAL``).
        """
        if not self.seeded:
            self.seed_rngs(None)
        return tuple(import_state(row) for row in self.gens)

    def seed_rngs(self, seed: int | Sequence[int | None] | None) -> None:
        """(Re)seed the games' generators: ``seed + i`` for game ``i``, a list of N seeds, or ``None``.

        A ``None`` seed (for all games, or one entry of a list) keeps the game's generator, as
        ``SyncVectorEnv`` leaves a sub-environment's; games without one get an unseeded one.
        A reseeded game's next deal is drawn again from its new generator.
        """
        n = self.num_games
        if seed is None:
            seeds: list[int | None] = [None] * n
        elif isinstance(seed, (int, np.integer)) and not isinstance(seed, bool):
            seeds = [int(seed) + i for i in range(n)]
        else:
            seeds = [None if s is None else int(s) for s in seed]
            if len(seeds) != n:
                raise ValueError(f"a list of seeds must have num_games={n} entries, got {len(seeds)}")
        changed = [i for i, s in enumerate(seeds) if not self.seeded or s is not None]
        for i in changed:
            export_state(new_rng(seeds[i]), self.gens[i])
            self.seeds[i] = seeds[i]
        self.seeded = True
        self._refill(changed)

    def reset(
        self,
        seed: int | Sequence[int | None] | None = None,
        deal: int | Sequence[int] | np.ndarray | None = None,
        which: np.ndarray | None = None,
        position: object = None,
    ) -> None:
        """Deal new games: each game's pre-drawn next deal, or ``deal`` (one number or N).

        Args:
            seed: see :meth:`seed_rngs`.
            deal: deal numbers to play instead of drawing (one for all, or one per game).
            which: ``(N,) bool``: reset only these games (default all).
            position: start from this position instead (text or ``GameState``, one for all
                or a list of N); the game's deal number is then 0 and nothing is drawn.
        """
        n = self.num_games
        which = np.ones(n, dtype=np.bool_) if which is None else np.asarray(which, dtype=np.bool_)
        if which.shape != (n,):
            raise ValueError(f"which must have shape ({n},), got {which.shape}")
        if position is not None:
            if deal is not None:
                raise ValueError("give either a deal or a position, not both")
            self._load_positions(position, which)
            self.seed_rngs(seed)
            return
        self.seed_rngs(seed)
        if deal is None:
            numbers = self.games[:, G_NEXT_DEAL].copy()
            drawn = np.flatnonzero(which)
        else:
            if isinstance(deal, (int, np.integer)) and not isinstance(deal, bool):
                numbers = np.full(n, check_deal_number(deal), dtype=np.int64)
            else:
                numbers = np.array([check_deal_number(d) for d in deal], dtype=np.int64)
                if numbers.shape != (n,):
                    raise ValueError(f"give one deal number or num_games={n}, got {len(numbers)}")
            drawn = np.zeros(0, dtype=np.int64)
        if numbers.max(initial=0) >= 2**63:
            raise ValueError("the batch engine plays deal numbers below 2**63")
        reset_batch(
            self.states,
            self.cfg,
            self.masks,
            self.obs,
            self.obs_lay,
            self.games,
            self.ep_return,
            self.params,
            which,
            numbers,
            self.decks,
        )
        self.flags[:, which] = False
        self.rewards[which] = 0.0
        self._refill(drawn)

    def _load_positions(self, position: object, which: np.ndarray) -> None:
        one = isinstance(position, str) or not isinstance(position, Sequence)
        positions = [position] * self.num_games if one else list(position)  # type: ignore[arg-type]
        if len(positions) != self.num_games:
            raise ValueError(f"give one position or num_games={self.num_games}, got {len(positions)}")
        arrays = {int(i): check_position(self.variant, positions[i]) for i in np.flatnonzero(which)}
        oracle = self.params[P_ORACLE]
        for i, array in arrays.items():
            s = self.states[i]
            s[:] = array
            g = self.games[i]
            g[G_DEAL] = g[G_MOVES] = g[G_ELAPSED] = g[G_PENDING] = 0
            g[G_LEGAL] = legal_mask(s, self.cfg, self.masks[i])
            encode_obs(s, self.cfg, self.obs, obs_place(self.obs_lay, i), oracle)
            g[G_CARDS] = cards_home(s)
        self.ep_return[which] = 0.0
        self.flags[:, which] = False
        self.rewards[which] = 0.0

    def step(self, actions: np.ndarray, emit: bool = False, emit_obs: bool = True) -> None:
        """Step every game with ``actions`` (``(N,)`` ints); results land in the arrays.

        With ``emit``, the kernel also writes fresh arrays of what a step returns, for the
        caller to keep: :attr:`out_masks` ``(N, n)``, :attr:`out_info` ``(3, N)`` (deal,
        moves, cards home) and, with ``emit_obs``, :attr:`out_obs` (the observation buffer,
        laid out as ``obs``; see :meth:`observations`).
        """
        n = self.num_games
        if emit:
            self.out_obs = np.empty(n * self.obs_size if emit_obs else 0, dtype=np.int8)
            self.out_masks = np.empty((n, self.n_actions), dtype=np.bool_)
            self.out_info = np.empty((3, n), dtype=np.int64)
            outs = (self.out_obs, self.out_masks.reshape(-1), self.out_info)
        else:
            outs = self._no_outputs
        a = self.actions
        a[:] = actions  # casts and checks the shape
        if self.illegal_action == "raise":
            self._raise_if_illegal(a)
        kernel = step_batch_parallel if self._parallel else step_batch_serial
        bufs = (
            self.states,
            self.masks,
            self.obs,
            self.obs_lay,
            self.games,
            self.ep_return,
            self.rewards,
            self.flags,
            self.final_obs,
            self.final_masks,
            self.final_games,
            self.final_return,
            self.decks,
            self.gens,
            self.deal_pool,
            *outs,
        )  # in the order step_games unpacks them
        self._run(kernel, self.cfg, self.spec, self.params, a, bufs, PARALLEL_CHUNK)

    def _run(self, kernel, *args) -> None:
        """Call a kernel; a parallel one hands its chunks of :data:`PARALLEL_CHUNK` games to
        the threads one at a time.

        numba's threads split a loop into one block each by default, so a thread that the
        OS preempts (a busy machine) holds up the whole step; taking chunks in turn lets the
        others take over its share.
        """
        if not self._parallel:
            kernel(*args)
            return
        import numba

        before = numba.get_num_threads()
        if self.num_threads is not None:
            numba.set_num_threads(min(self.num_threads, numba.config.NUMBA_NUM_THREADS))
        try:
            with numba.parallel_chunksize(1):
                kernel(*args)
        finally:
            if self.num_threads is not None:
                numba.set_num_threads(before)

    def _raise_if_illegal(self, a: np.ndarray) -> None:
        from .text.errors import IllegalMoveError
        from .text.explain import why_illegal
        from .text.notation import format_move

        live = self.games[:, G_PENDING] == 0
        in_range = (a >= 0) & (a < self.n_actions)
        legal = in_range & self.masks[np.arange(self.num_games), np.clip(a, 0, self.n_actions - 1)]
        bad = np.flatnonzero(live & ~legal)
        if bad.size:
            i = int(bad[0])
            act = int(a[i])
            if not in_range[i]:
                raise IllegalMoveError(
                    f"game {i}: action {act} is out of range 0..{self.n_actions - 1} for {self.variant.name}"
                )
            why = why_illegal(self.states[i], self.cfg, act)
            raise IllegalMoveError(f"game {i}: illegal move {format_move(self.variant, act)}: {why}")

    def sample_legal(self, rng: np.random.Generator, out: np.ndarray | None = None) -> np.ndarray:
        """A uniformly random legal action per game (0 where none is legal), in one call."""
        out = np.zeros(self.num_games, dtype=np.int64) if out is None else out
        u = rng.random(self.num_games)
        sample_counted(self.masks, self.games, u, out)
        return out
