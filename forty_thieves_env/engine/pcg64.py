"""Deal-number generators inside compiled code: numpy's ``PCG64`` ``Generator.integers``, ported.

Every game of a batch draws its deal numbers from its own ``numpy.random.Generator``
(``PCG64``), exactly as a single environment does (:func:`~forty_thieves_env.envs.sampling.draw_deal`), so that a
seed fixes every deal forever. Calling numpy once per reset from Python costs ~4 µs a game,
a good part of a batch step's serial time; so the batch keeps each generator's state in
a row of a ``uint64`` array and the step kernel draws from it, with the same arithmetic as
numpy's C code:

* ``PCG64``: a 128-bit linear congruential state, advanced then output through XSL-RR
  (``pcg_setseq_128_xsl_rr_64_random_r`` of numpy's ``pcg64.h``);
* ``next_uint32``: half of a 64-bit output, the other half kept for the next call
  (``has_uint32``, ``uinteger``);
* ``integers(low, high)`` for a range below 2**32: Lemire's multiply-and-reject on
  ``next_uint32`` (numpy's ``buffered_bounded_lemire_uint32``).

A row of a state array (``(N, ST_LEN) uint64``) holds a generator's state, increment,
``has_uint32`` and ``uinteger``; :func:`export_state` and :func:`import_state` move it to
and from a ``numpy.random.Generator``. The tests hold every draw, and the state after it,
to numpy's own.
"""

from __future__ import annotations

import numpy as np
from numba import njit
from numba import uint64 as u64

# Slots of a state row.
ST_STATE_HI = 0
ST_STATE_LO = 1
ST_INC_HI = 2
ST_INC_LO = 3
ST_HAS_UINT32 = 4
ST_UINTEGER = 5
ST_LEN = 6

_MULT_HI = u64(2549297995355413924)  # PCG's default 128-bit multiplier, high and low words
_MULT_LO = u64(4865540595714422341)
_LOW32 = u64(0xFFFFFFFF)
_MASK64 = (1 << 64) - 1


@njit(cache=True, inline="always")
def _mulhi(a, b):
    """The high 64 bits of the 128-bit product of two ``uint64``."""
    a_lo = a & _LOW32
    a_hi = a >> u64(32)
    b_lo = b & _LOW32
    b_hi = b >> u64(32)
    lo_lo = a_lo * b_lo
    hi_lo = a_hi * b_lo
    lo_hi = a_lo * b_hi
    cross = (lo_lo >> u64(32)) + (hi_lo & _LOW32) + lo_hi
    return a_hi * b_hi + (hi_lo >> u64(32)) + (cross >> u64(32))


@njit(cache=True)
def next_uint64(st):
    """Advance the generator in row ``st`` and return its next 64-bit output."""
    s_hi = st[ST_STATE_HI]
    s_lo = st[ST_STATE_LO]
    # state = state * MULT + inc (mod 2**128)
    lo = s_lo * _MULT_LO
    hi = _mulhi(s_lo, _MULT_LO) + s_lo * _MULT_HI + s_hi * _MULT_LO
    new_lo = lo + st[ST_INC_LO]
    carry = u64(1) if new_lo < lo else u64(0)
    new_hi = hi + st[ST_INC_HI] + carry
    st[ST_STATE_HI] = new_hi
    st[ST_STATE_LO] = new_lo
    x = new_hi ^ new_lo
    rot = new_hi >> u64(58)
    return (x >> rot) | (x << ((u64(64) - rot) & u64(63)))


@njit(cache=True)
def next_uint32(st):
    """numpy's ``PCG64`` ``next_uint32``: the low half of a fresh output, then its high half."""
    if st[ST_HAS_UINT32]:
        st[ST_HAS_UINT32] = u64(0)
        return st[ST_UINTEGER]
    nxt = next_uint64(st)
    st[ST_HAS_UINT32] = u64(1)
    st[ST_UINTEGER] = nxt >> u64(32)
    return nxt & _LOW32


@njit(cache=True)
def bounded_uint32(st, rng):
    """A uniform integer in ``0..rng`` (``rng < 2**32``, both ends included), as numpy draws it."""
    if rng == u64(0):
        return u64(0)
    if rng == _LOW32:
        return next_uint32(st)
    excl = rng + u64(1)
    m = next_uint32(st) * excl
    leftover = m & _LOW32
    if leftover < excl:
        threshold = (_LOW32 - rng) % excl
        while leftover < threshold:
            m = next_uint32(st) * excl
            leftover = m & _LOW32
    return m >> u64(32)


@njit(cache=True)
def draw_deal_from(st, deals, low, high):
    """A deal number from the generator in row ``st``, as :func:`~forty_thieves_env.envs.sampling.draw_deal` draws it:
    ``deals[integers(len(deals))]`` when ``deals`` is not empty, else ``integers(low, high,
    endpoint=True)``."""
    if deals.shape[0] > 0:
        return deals[np.int64(bounded_uint32(st, u64(deals.shape[0] - 1)))]
    return low + np.int64(bounded_uint32(st, u64(high - low)))


def check_range(low: int, high: int, count: int) -> None:
    """Raise unless every draw the kernels will make is one numpy makes on the 32-bit path."""
    if high - low >= 2**32 or count > 2**32:
        raise ValueError("compiled deal draws need fewer than 2**32 deal numbers to choose from")


def export_state(rng: np.random.Generator, row: np.ndarray) -> None:
    """Write ``rng``'s ``PCG64`` state into the state row ``row`` (``(ST_LEN,) uint64``)."""
    st = rng.bit_generator.state
    if st["bit_generator"] != "PCG64":
        raise TypeError(f"deal generators must be PCG64, got {st['bit_generator']}")
    state, inc = st["state"]["state"], st["state"]["inc"]
    row[ST_STATE_HI] = state >> 64
    row[ST_STATE_LO] = state & _MASK64
    row[ST_INC_HI] = inc >> 64
    row[ST_INC_LO] = inc & _MASK64
    row[ST_HAS_UINT32] = st["has_uint32"]
    row[ST_UINTEGER] = st["uinteger"]


def import_state(row: np.ndarray) -> np.random.Generator:
    """A new ``numpy.random.Generator`` in the state of row ``row``."""
    bg = np.random.PCG64()
    bg.state = {
        "bit_generator": "PCG64",
        "state": {
            "state": (int(row[ST_STATE_HI]) << 64) | int(row[ST_STATE_LO]),
            "inc": (int(row[ST_INC_HI]) << 64) | int(row[ST_INC_LO]),
        },
        "has_uint32": int(row[ST_HAS_UINT32]),
        "uinteger": int(row[ST_UINTEGER]),
    }
    return np.random.Generator(bg)
