"""Hash helpers shared by the players and the solver: splitmix64 and one open-addressing set.

* :func:`mix` is splitmix64's finaliser, the bit scrambler behind the players' position
  hashes and tie-break noise and the solver's column hashes.
* The set stores 128-bit keys ``(h1, h2)`` in two ``uint64`` arrays ``k1``/``k2`` of one
  power-of-two size, with linear probing from ``h1``; ``k2 == 0`` marks a free slot, so a
  key's ``h2`` is never 0. The solver's transposition table uses it with two independent
  halves (:func:`pair_insert`, :func:`pair_contains`). The players' set of visited
  positions holds 64-bit hashes (never 0) in one array: :func:`table_insert` and
  :func:`table_contains` pass that array as both halves, so the same probe serves it.
* :func:`key_insert` is the compact set of the prover and the relaxed game: one ``uint64``
  word a key, probed from a first hash, storing a second.
"""

from __future__ import annotations

import numpy as np
from numba import njit

_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_S30 = np.uint64(30)
_S27 = np.uint64(27)
_S31 = np.uint64(31)
#: 2**64 / golden ratio: steps a seed to well-spread successors (``seed + k * GOLDEN``).
GOLDEN = np.uint64(0x9E3779B97F4A7C15)


@njit(cache=True, inline="always")
def mix(z):
    """splitmix64's finaliser: a bijection of uint64 that scrambles every bit."""
    z = (z ^ (z >> _S30)) * _M1
    z = (z ^ (z >> _S27)) * _M2
    return z ^ (z >> _S31)


@njit(cache=True, inline="always")
def noise(seed, a):
    """A pseudo-random number in ``[0, 1)`` from ``(seed, a)`` (``seed`` a ``uint64``)."""
    return np.float64(mix(seed + np.uint64(a + 1) * GOLDEN) >> np.uint64(11)) / 9007199254740992.0


@njit(cache=True)
def find_slot(k1, k2, h1, h2):
    """The slot holding ``(h1, h2)``, else the free slot where it would go, else -1 (full)."""
    m = k1.shape[0] - 1
    p = np.int64(h1 & np.uint64(m))
    for _ in range(k1.shape[0]):
        if k2[p] == np.uint64(0) or (k1[p] == h1 and k2[p] == h2):
            return p
        p = (p + 1) & m
    return -1


@njit(cache=True)
def pair_insert(k1, k2, h1, h2):
    """Add ``(h1, h2)``; True when it was new, False when it was there already (or the set is full)."""
    p = find_slot(k1, k2, h1, h2)
    if p < 0 or k2[p] != np.uint64(0):
        return False
    k1[p] = h1
    k2[p] = h2
    return True


@njit(cache=True)
def pair_contains(k1, k2, h1, h2):
    """Whether ``(h1, h2)`` is in the set."""
    p = find_slot(k1, k2, h1, h2)
    return p >= 0 and k2[p] != np.uint64(0)


@njit(cache=True)
def table_insert(table, h):
    """Add the 64-bit hash ``h`` (never 0) to the one-array set ``table``; False when it was
    there already or ``table`` is full (``h`` is then not added)."""
    return pair_insert(table, table, h, h)


@njit(cache=True)
def table_contains(table, h):
    """Whether the 64-bit hash ``h`` is in the one-array set ``table``."""
    return pair_contains(table, table, h, h)


@njit(cache=True)
def key_insert(table, h1, h2):
    """Add a position to the 8-byte-a-slot ``table`` (a power-of-two ``uint64`` array):
    linear probing from ``h1``, the word ``h2 | 1`` stored (0 marks a free slot). True when
    it was new, False when it was there already or the table is full."""
    m = table.shape[0] - 1
    key = h2 | np.uint64(1)
    p = np.int64(h1 & np.uint64(m))
    for _ in range(table.shape[0]):
        k = table[p]
        if k == np.uint64(0):
            table[p] = key
            return True
        if k == key:
            return False
        p = (p + 1) & m
    return False
