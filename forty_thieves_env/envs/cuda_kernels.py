"""The batch kernels compiled for CUDA (numba-cuda): one game a thread, the CPU's own code.

Each kernel is a thin wrapper over the per-game functions that the CPU kernels run
(:func:`~.batch_kernels.step_game`, :func:`~.batch_kernels.reset_chosen`,
:func:`~.sampling.sample_game`): thread ``i`` handles game ``i`` of arrays that live in the
GPU's memory, laid out exactly as :class:`~.batch.BatchGames` lays them out on the host (see
:mod:`.batch_kernels`). The CPU-only parts of the CPU wrappers have no place here: a device
array carries no reference count to avoid (``unowned``), nothing is copied out after a step
(the caller reads the device arrays), and the deal shuffle's scratch is a per-thread local
array (:data:`~forty_thieves_env.engine.deals.MT_WORK` ``int64``, used only by resets).

:class:`~.cuda_games.CudaGames` launches them; this module imports ``numba.cuda`` and is
imported only when CUDA is asked for (``import forty_thieves_env`` never imports it).

The IntEnum index shim: the engine indexes its arrays with ``IntEnum`` members
(``cfg[Cfg.COLUMNS]``, ``s[Slot.WASTE_LEN]``), which numba's own array typing accepts. numba-cuda
(0.30 at least) types CUDA code with a fork of that typing which refuses them ("Unsupported array
index type IntEnum<int64>(Cfg)"), so no kernel that calls the engine would compile.
:func:`install_enum_index` registers, through numba-cuda's public ``overload`` API and for the
CUDA target only, ``getitem``/``setitem`` of an array at an ``IntEnum`` member as the same
access at the member's integer value (the compiler inlines it: the PTX has no call left).
It is installed once, at import, and only when :func:`enum_index_refused` finds that this
numba-cuda refuses such an index (a numba-cuda that accepts it needs nothing).
"""

from __future__ import annotations

import importlib
import operator

from numba import cuda
from numba import int64 as nb_int64

from ..engine.deals import MT_WORK
from ..engine.layout import Cfg
from .batch_kernels import mask_to_row, reset_chosen, step_game
from .sampling import hashed_uniform, sample_game
from .step import G_LEGAL

#: Threads per block of every launch: few enough registers per block for the step's large
#: per-thread state at full occupancy, many enough to fill each multiprocessor.
THREADS = 128


# ------------------------------------------------------------------------------ typing shim


def enum_index_refused() -> bool:
    """Whether numba-cuda's array typing refuses an ``IntEnum`` member as an index.

    Asks numba-cuda's own typing function (``numba.cuda.typing.arraydecl.get_array_index_type``)
    about ``int64[:]`` indexed by ``Cfg.COLUMNS``. Where that function cannot be found (a
    numba-cuda that moved it), it answers ``True``: the shim is then installed, which is
    harmless where it is not needed.
    """
    from numba.core import types

    try:
        arraydecl = importlib.import_module(cuda.__name__ + ".typing.arraydecl")
        get_type = arraydecl.get_array_index_type
    except (ImportError, AttributeError):
        return True
    array = types.Array(types.int64, 1, "C")
    member = types.IntEnumMember(Cfg, types.int64)
    try:
        return get_type(array, member) is None
    except Exception:  # numba raises a NumbaTypeError ("Unsupported array index type")
        return True


_INSTALLED = False


def install_enum_index() -> bool:
    """Register the ``IntEnum`` index overloads for the CUDA target (once); returns whether
    they are installed."""
    global _INSTALLED
    if _INSTALLED:
        return True
    from numba.core import types
    from numba.cuda.extending import overload

    @overload(operator.getitem, target="cuda")
    def _getitem_enum(a, idx):
        if isinstance(a, types.Array) and isinstance(idx, types.IntEnumMember):

            def impl(a, idx):
                return a[idx.value]

            return impl
        return None

    @overload(operator.setitem, target="cuda")
    def _setitem_enum(a, idx, value):
        if isinstance(a, types.Array) and isinstance(idx, types.IntEnumMember):

            def impl(a, idx, value):
                a[idx.value] = value

            return impl
        return None

    _INSTALLED = True
    return True


if enum_index_refused():
    install_enum_index()


# ------------------------------------------------------------------------------ kernels
# The batch arrays come as one tuple argument, ``bufs``, in the order of
# :data:`~.batch_kernels.BUFS`: numba-cuda passes a tuple's arrays to the kernel one by one.


@cuda.jit(cache=True)
def step_kernel(cfg, spec, params, actions, bufs):
    """Step game ``i = thread index`` with ``actions[i]`` (:func:`step_game`); ``(N,)`` threads."""
    i = cuda.grid(1)
    if i < actions.shape[0]:
        work = cuda.local.array(MT_WORK, nb_int64)  # the deal shuffle's scratch (resets only)
        step_game(i, cfg, spec, params, actions[i], bufs, work)


@cuda.jit(cache=True)
def reset_kernel(cfg, params, which, numbers, bufs):
    """Reset every game ``i`` with ``which[i]`` (:func:`reset_chosen`: given deals, or the
    pre-drawn ones when ``numbers`` is empty); ``(N,)`` threads."""
    i = cuda.grid(1)
    if i < which.shape[0]:
        work = cuda.local.array(MT_WORK, nb_int64)
        reset_chosen(i, cfg, params, which, numbers, bufs, work)


@cuda.jit(cache=True)
def mask_rows_kernel(masks, obs, obs_lay):
    """Copy game ``i``'s mask into the mask part of its ``flat`` row (:func:`mask_to_row`), for
    rows that carry the mask; ``(N,)`` threads."""
    i = cuda.grid(1)
    if i < masks.shape[0]:
        mask_to_row(i, masks, obs, obs_lay)


@cuda.jit(cache=True)
def sample_kernel(masks, games, uniforms, out):
    """``out[i]``: the ``floor(uniforms[i] * n_legal)``-th legal action of game ``i`` (0 if none),
    as :func:`~.sampling.sample_counted` picks it."""
    i = cuda.grid(1)
    if i < out.shape[0]:
        out[i] = sample_game(masks, i, games[i, G_LEGAL], uniforms[i])


@cuda.jit(cache=True)
def sample_seeded_kernel(masks, games, seed, out):
    """:func:`sample_kernel` with game ``i``'s uniform number :func:`~.sampling.hashed_uniform`
    ``(seed, i)``: a fresh ``seed`` per call gives fresh actions, and no generator state."""
    i = cuda.grid(1)
    if i < out.shape[0]:
        out[i] = sample_game(masks, i, games[i, G_LEGAL], hashed_uniform(seed, i))


def blocks(n: int) -> int:
    """Blocks of :data:`THREADS` threads that cover ``n`` games."""
    return max(1, (n + THREADS - 1) // THREADS)
