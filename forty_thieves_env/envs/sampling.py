"""Random draws the environments make: legal actions for a whole batch, and deal numbers.

:func:`sample_legal` and :func:`sample_counted` pick a uniformly random legal action per
row of a batch of masks, in one compiled call (a random-legal-move agent, and what
:meth:`~.vector.FortyThievesVectorEnv.random_legal_actions` returns). :func:`draw_deal`
draws a deal number as the single environment does at reset; :func:`draw_next_deals`
draws the same numbers from a batch's generator states (:mod:`forty_thieves_env.engine.pcg64`).
:func:`sample_game` is the per-game draw they share with the CUDA sampler, which takes its
uniform numbers from :func:`hashed_uniform` when it is given a seed.
"""

from __future__ import annotations

import numpy as np
from numba import njit
from numba import uint64 as u64

from ..engine.bits import load_u64, nth_bit, pack_bytes, popcount, unowned
from ..engine.deals import TRAIN_RANGE
from ..engine.pcg64 import draw_deal_from
from .step import G_LEGAL, G_NEXT_DEAL

#: Deal numbers a reset draws from (both ends included) unless ``deals=`` is given.
DEAL_RANGE = TRAIN_RANGE


# ------------------------------------------------------------------------------ deals


def new_rng(seed: int | None) -> np.random.Generator:
    """The generator Gymnasium's ``seeding.np_random(seed)`` makes (PCG64 over a SeedSequence)."""
    return np.random.Generator(np.random.PCG64(np.random.SeedSequence(seed)))


def draw_deal(rng: np.random.Generator, deals: np.ndarray | None) -> int:
    """One deal number from ``rng``: uniform over ``deals``, or over :data:`DEAL_RANGE`."""
    if deals is None:
        return int(rng.integers(DEAL_RANGE[0], DEAL_RANGE[1], endpoint=True))
    return int(deals[rng.integers(len(deals))])


@njit(cache=True)
def draw_next_deals(gens, pool, games, idx):
    """Draw the next deal number (``G_NEXT_DEAL``) of every game in ``idx`` from its generator."""
    for k in range(idx.shape[0]):
        i = idx[k]
        games[i, G_NEXT_DEAL] = draw_deal_from(gens[i], pool, DEAL_RANGE[0], DEAL_RANGE[1])


# ------------------------------------------------------------------------------ actions


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


@njit(cache=True, inline="always")
def sample_game(masks, i, n, u):
    """A legal action of row ``i`` of the C-contiguous ``masks``, which has ``n`` of them: the
    ``floor(u * n)``-th (0 when ``n`` is 0). The one per-game draw of every sampler, on the
    CPU and in the CUDA kernels (:mod:`.cuda_kernels`) alike."""
    return 0 if n == 0 else _nth_legal(masks, i, _pick(u, n))


@njit(cache=True, inline="always")
def hashed_uniform(seed, i):
    """A uniform float in ``[0, 1)`` from the integers ``seed`` and ``i`` (SplitMix64's mixer):
    a draw per game that needs no generator state, for samplers on a GPU."""
    z = u64(seed) + (u64(i) + u64(1)) * u64(0x9E3779B97F4A7C15)
    z = (z ^ (z >> u64(30))) * u64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> u64(27))) * u64(0x94D049BB133111EB)
    z ^= z >> u64(31)
    return np.float64(z >> u64(11)) * (1.0 / 9007199254740992.0)


@njit(cache=True)
def sample_legal(masks, uniforms, out):
    """``out[i]``: a legal action of row ``i`` of ``masks``, the ``floor(uniforms[i] * n_legal)``-th
    one (0 for an all-False row). A random-legal-move agent for a whole batch in one call.
    """
    if not masks.flags.c_contiguous:
        masks = np.ascontiguousarray(masks)
    masks = unowned(masks)
    for i in range(masks.shape[0]):
        out[i] = sample_game(masks, i, _count_legal(masks, i), uniforms[i])


@njit(cache=True)
def sample_counted(masks, games, uniforms, out):
    """:func:`sample_legal` for a batch, whose ``games[:, G_LEGAL]`` already counts each row's
    legal actions: no counting pass."""
    masks = unowned(masks)
    for i in range(masks.shape[0]):
        out[i] = sample_game(masks, i, games[i, G_LEGAL], uniforms[i])
