"""Numbered deals: deal ``N`` is PySolFC's game number ``N``, card for card, forever.

PySolFC builds the two decks in order (deck 0 then 1, suits C S H D, ranks A..K), shuffles
the list with its own generator (game numbers below 32000 use the Microsoft FreeCell LCG,
larger ones Python's Mersenne Twister; both come from ``pysol-cards``) and treats the end of
the list as the top of the stock. :func:`deal_layout` then deals it
(:func:`forty_thieves_env.text.game.deal` gives the position). Every variant
uses the same shuffle with its own layout, so deal ``N`` means the same pack everywhere.

Example: deal 12345 of classic has column 1 ``6D AS TH 5H`` (bottom to top) and ``KC`` as
the first stock card.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .cards import EMPTY, N_CARDS, full_pack
from .checks import check_int, is_integer
from .layout import Cfg, Slot
from .rules import auto_play

#: Deal numbers below this use PySolFC's Microsoft-compatible LCG.
MS_LIMIT = 32000
#: Largest deal number PySolFC accepts (its Mersenne Twister seed range): :func:`shuffled_pack`
#: and :func:`forty_thieves_env.text.game.deal` take 1..MAX_DEAL.
MAX_DEAL = 10**20
#: Largest deal number an environment plays: environments report deal numbers in ``int64``
#: arrays (``info["deal"]``, a vector env's infos) and their kernels deal them, so every
#: environment, its ``deals=`` argument and its ``reset(options={"deal": n})`` take 1..2**63-1.
MAX_ENV_DEAL = 2**63 - 1

#: Fixed evaluation splits, the same numbers in every variant. Training draws deal numbers
#: from ``TRAIN_RANGE`` (inclusive), which shares no number with them.
SPLITS: dict[str, range] = {"test": range(1, 1001), "validation": range(1001, 2001)}
TRAIN_RANGE = (MS_LIMIT, 2**31 - 1)


def deal_split(name: str) -> np.ndarray:
    """Deal numbers of a named evaluation split (``"test"``: 1..1000, ``"validation"``: 1001..2000).

    Raises:
        ValueError: unknown split name.
    """
    if name not in SPLITS:
        raise ValueError(f"unknown deal split {name!r}; splits are {', '.join(SPLITS)}")
    return np.arange(SPLITS[name].start, SPLITS[name].stop, dtype=np.int64)


def check_deal_number(number: object, name: str = "deal number", high: int = MAX_DEAL) -> int:
    """A deal number checked to be an integer ``1..high`` (see :mod:`.checks`), as a Python ``int``.

    Args:
        number: What the caller gave.
        name: The argument, as the message names it (``"options['deal']"``).
        high: :data:`MAX_DEAL` for the engine, :data:`MAX_ENV_DEAL` for the environments.

    Raises:
        TypeError: not an integer (a float or a bool included).
        ValueError: outside ``1..high``; above :data:`MAX_ENV_DEAL` for an environment, the message
            says where such a deal can be played (one of the two ranges names the other).
    """
    try:
        return check_int(number, name, 1, high)
    except ValueError as err:
        if high == MAX_ENV_DEAL and is_integer(number) and high < int(number) <= MAX_DEAL:  # type: ignore[call-overload]
            raise ValueError(
                f"{err}: the environments take deals 1..2**63-1 (int64 deal numbers in their infos); "
                f"deals up to 10**20 (PySolFC's range) are dealt by forty_thieves_env.deal() and `forty-thieves deal`"
            ) from None
        raise


def check_deal_numbers(deals: object, name: str = "deals", high: int = MAX_ENV_DEAL) -> np.ndarray:
    """A non-empty 1-D sequence (or array) of deal numbers, each checked as :func:`check_deal_number`,
    as an ``int64`` array (a copy).

    Raises:
        TypeError: not a sequence of integers (a string, bytes, a scalar, floats).
        ValueError: empty, not 1-D, or a number outside ``1..high``.
    """
    if isinstance(deals, (str, bytes, bytearray)) or not hasattr(deals, "__iter__"):
        raise TypeError(f"{name} must be a non-empty sequence of deal numbers (integers), got {type(deals).__name__}")
    if isinstance(deals, np.ndarray):
        arr = deals
        if arr.ndim != 1:
            raise ValueError(f"{name} must be a 1-D sequence of deal numbers, got an array of shape {arr.shape}")
        if arr.dtype.kind in "iu":
            if arr.size and (arr.min() < 1 or arr.max() > high):
                bad = arr[(arr < 1) | (arr > high)][0]
                check_deal_number(bad, f"{name}[{int(np.flatnonzero(arr == bad)[0])}]", high)
        elif arr.dtype != object:
            raise TypeError(f"{name} must hold deal numbers (integers), got an array of dtype {arr.dtype}")
        values = arr.tolist() if arr.dtype == object else None
    else:
        values = list(deals)  # type: ignore[call-overload]
    if values is not None:
        for k, v in enumerate(values):
            if not is_integer(v):
                raise TypeError(f"{name}[{k}] must be an integer deal number 1..{high}, got {v!r} ({type(v).__name__})")
            check_deal_number(v, f"{name}[{k}]", high)
        arr = np.array(values, dtype=np.int64) if values else np.zeros(0, dtype=np.int64)
    if arr.size == 0:
        raise ValueError(f"{name} must be a non-empty sequence of deal numbers, got an empty one")
    return np.array(arr, dtype=np.int64)


# Both generators are ported to numba so a batch of games can be re-dealt without Python;
# tests check them against pysol-cards' own classes. They allocate nothing: the Mersenne
# Twister's state lives in a scratch array the caller gives (``work``, :data:`MT_WORK`
# ``int64``), so that the same code runs on the CPU and in a CUDA kernel (where a thread
# has no heap but a fixed-size local array).
_MT_N = 624
_MT_M = 397
_MASK32 = 0xFFFFFFFF
_MT_KEY = _MT_N  # first slot of ``work`` holding the seed's 32-bit words (two for an int64)
#: Length of the scratch array of :func:`shuffle_into`: the 624 state words and the two
#: 32-bit words of a deal number below 2**63.
MT_WORK = _MT_N + 2


@njit(cache=True, inline="always")
def _shuffle_ms(number, out):
    """PySolFC's ``LCRandom31(number).shuffle(out)`` (numbers below 32000)."""
    seed = np.int64(number)
    for n in range(out.shape[0] - 1, 0, -1):
        seed = (seed * 214013 + 2531011) & 0x1FFFFFFFF
        j = ((seed >> 16) & 0x7FFF) % (n + 1)
        tmp = out[n]
        out[n] = out[j]
        out[j] = tmp


@njit(cache=True, inline="always")
def _mt_seed(key, mt):
    """CPython's ``random.seed(int)``: init_by_array over the 32-bit words ``key`` of the seed,
    into ``mt[:624]`` (``key`` may be a slice of ``mt`` past them)."""
    mt[0] = 19650218
    for i in range(1, _MT_N):
        mt[i] = (1812433253 * (mt[i - 1] ^ (mt[i - 1] >> 30)) + i) & _MASK32
    i, j = 1, 0
    for _ in range(max(_MT_N, key.shape[0])):
        mt[i] = ((mt[i] ^ ((mt[i - 1] ^ (mt[i - 1] >> 30)) * 1664525)) + key[j] + j) & _MASK32
        i += 1
        j += 1
        if i >= _MT_N:
            mt[0] = mt[_MT_N - 1]
            i = 1
        if j >= key.shape[0]:
            j = 0
    for _ in range(_MT_N - 1):
        mt[i] = ((mt[i] ^ ((mt[i - 1] ^ (mt[i - 1] >> 30)) * 1566083941)) - i) & _MASK32
        i += 1
        if i >= _MT_N:
            mt[0] = mt[_MT_N - 1]
            i = 1
    mt[0] = 0x80000000


@njit(cache=True)
def _mt_twist(mt):
    for k in range(_MT_N):
        y = (mt[k] & 0x80000000) | (mt[(k + 1) % _MT_N] & 0x7FFFFFFF)
        v = mt[(k + _MT_M) % _MT_N] ^ (y >> 1)
        if y & 1:
            v ^= 0x9908B0DF
        mt[k] = v


@njit(cache=True, inline="always")
def _mt_next(mt, pos):
    """Next tempered 32-bit output of the state ``mt[:624]`` at index ``pos``, and the next index.

    The index is a value, not a slot of ``mt``: kept in a register, not stored and reloaded
    around every store to the state (which may be the same array, as far as the compiler knows).
    """
    if pos >= _MT_N:
        _mt_twist(mt)
        pos = 0
    y = mt[pos]
    y ^= y >> 11
    y ^= (y << 7) & 0x9D2C5680
    y ^= (y << 15) & 0xEFC60000
    y ^= y >> 18
    return y, pos + 1


@njit(cache=True)
def _shuffle_mt_with(key, out, mt):
    """PySolFC's ``MTRandom(number).shuffle(out)`` for the seed words ``key``: CPython's Mersenne
    Twister, randint via random(); ``mt`` (at least 624 long) is the generator's scratch."""
    _mt_seed(key, mt)
    pos = _MT_N
    for n in range(out.shape[0] - 1, 0, -1):
        a, pos = _mt_next(mt, pos)
        b, pos = _mt_next(mt, pos)
        a >>= 5
        b >>= 6
        x = (a * 67108864.0 + b) / 9007199254740992.0
        j = int(x * (n + 1))
        tmp = out[n]
        out[n] = out[j]
        out[j] = tmp


@njit(cache=True)
def _shuffle_mt(key, out):
    """:func:`_shuffle_mt_with` with a scratch of its own (seeds of any length, from Python)."""
    _shuffle_mt_with(key, out, np.empty(_MT_N, dtype=np.int64))


@njit(cache=True)
def shuffle_into(number, out, work):
    """Fill ``out`` (``(104,) int8``) with the shuffled pack of deal ``number`` (< 2**63);
    ``work`` is a ``(MT_WORK,) int64`` scratch array (overwritten)."""
    for i in range(N_CARDS):
        out[i] = i % 52
    if number < MS_LIMIT:
        _shuffle_ms(number, out)
    else:
        n_words = 0
        x = number
        while x > 0:
            work[_MT_KEY + n_words] = x & _MASK32
            n_words += 1
            x >>= 32
        _shuffle_mt_with(work[_MT_KEY : _MT_KEY + n_words], out, work)


def shuffled_pack(number: int) -> np.ndarray:
    """The 104-card pack of PySolFC game ``number`` after shuffling, top card last.

    Returns:
        ``(104,)`` int8 card codes.
    """
    number = check_deal_number(number)
    out = full_pack()
    if number < 2**63:
        shuffle_into(number, out, np.empty(MT_WORK, dtype=np.int64))
    else:  # beyond int64: build the seed words in Python
        key = np.array([(number >> (32 * w)) & _MASK32 for w in range((number.bit_length() + 31) // 32)])
        _shuffle_mt(key, out)
    return out


@njit(cache=True)
def deal_layout(s, cfg, deck):
    """Lay out a shuffled pack into ``s`` (overwritten).

    ``deck`` is ``(104,) int8`` with the *top* of the pack last, as PySolFC holds its talon
    (:func:`shuffled_pack`, :func:`shuffle_into`):
    the cards are dealt across the columns left to right, one pass per row, from the top;
    the face-down rows come first; what is left is the stock, its top the next to turn.
    """
    c = cfg[Cfg.COLUMNS]
    d = cfg[Cfg.DEPTH]
    per = cfg[Cfg.PER_COLUMN]
    off_tab = cfg[Cfg.OFF_TAB]
    s[:off_tab] = 0
    s[off_tab:] = EMPTY
    s[Slot.REDEALS] = cfg[Cfg.REDEALS]
    pos = N_CARDS - 1
    for p in range(per):
        for i in range(c):
            s[off_tab + i * d + p] = deck[pos]
            pos -= 1
    for i in range(c):
        s[cfg[Cfg.OFF_LEN] + i] = per
        s[cfg[Cfg.OFF_DOWN] + i] = cfg[Cfg.FACE_DOWN]
    n = cfg[Cfg.STOCK]
    off_st = cfg[Cfg.OFF_STOCK]
    for t in range(n):
        s[off_st + t] = deck[t]
    s[Slot.STOCK_LEN] = n
    if cfg[Cfg.AUTO]:
        auto_play(s, cfg)
