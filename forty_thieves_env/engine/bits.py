"""Raw memory helpers for the kernels: reference-count-free views and unaligned 8-byte words.

Masks are ``bool`` arrays, one byte per action; reading or writing eight entries as one
``uint64`` word lets a kernel count or set them eight at a time. These helpers work on
the address of an entry (``a.ctypes.data + index``); the caller keeps every byte it
touches inside the array.
"""

from __future__ import annotations

import numpy as np
from numba import carray, njit, types
from numba import uint64 as u64
from numba.core.imputils import impl_ret_borrowed
from numba.extending import intrinsic

#: Multiplying a word of eight 0/1 bytes by this puts their sum in the top byte.
BYTE_SUM = u64(0x0101010101010101)


@intrinsic
def _pointer(typingctx, address, dtype):
    """The integer ``address`` as a pointer to ``dtype`` items (for :func:`unowned`)."""
    item = dtype.dtype
    sig = types.CPointer(item)(address, dtype)

    def codegen(context, builder, signature, args):
        return builder.inttoptr(args[0], context.get_value_type(types.CPointer(item)))

    return sig, codegen


@intrinsic
def _typed_like(typingctx, view, a):
    """``view`` (an array of ``a``'s dtype, rank and layout) typed read-only when ``a`` is.

    Both types share one data model, so this is only a change of type; it keeps kernels that
    take a read-only array (a variant's config) at one compiled signature whether they are
    called with the array itself or with an :func:`unowned` view of it.
    """
    ret = view.copy(readonly=True) if not a.mutable else view

    def codegen(context, builder, signature, args):
        return impl_ret_borrowed(context, builder, ret, args[0])

    return ret(view, a), codegen


@njit(cache=True, inline="always")
def unowned(a):
    """A view of the C-contiguous array ``a`` that carries no reference count.

    A row view of an array passed in from Python shares that array's reference count, which
    numba raises and lowers atomically around every use; with two threads stepping games of
    the same arrays that count's cache line bounces between the cores on every game. Views of
    this one (valid while ``a`` is, i.e. during the kernel call) have none. A read-only ``a``
    gives a read-only view, of the same numba type as ``a``: the kernels it is passed to
    compile once for both.
    """
    return _typed_like(carray(_pointer(a.ctypes.data, a.dtype), a.shape), a)


@intrinsic
def load_u64(typingctx, address):
    """The 8 bytes at the integer ``address`` as a ``uint64`` (an unaligned load)."""
    sig = types.uint64(address)

    def codegen(context, builder, signature, args):
        ptr = builder.inttoptr(args[0], context.get_value_type(types.CPointer(types.uint64)))
        return builder.load(ptr, align=1)

    return sig, codegen


@intrinsic
def store_u64(typingctx, address, value):
    """Write the ``uint64`` ``value`` to the 8 bytes at the integer ``address`` (unaligned)."""
    sig = types.void(address, types.uint64)

    def codegen(context, builder, signature, args):
        ptr = builder.inttoptr(args[0], context.get_value_type(types.CPointer(types.uint64)))
        builder.store(args[1], ptr, align=1)
        return context.get_dummy_value()

    return sig, codegen


@intrinsic
def popcount(typingctx, word):
    """The number of set bits of the ``uint64`` ``word`` (one instruction)."""
    sig = types.uint64(types.uint64)

    def codegen(context, builder, signature, args):
        return builder.ctpop(args[0])

    return sig, codegen


@intrinsic
def trailing_zeros(typingctx, word):
    """The index of the lowest set bit of the ``uint64`` ``word`` (64 for 0)."""
    sig = types.uint64(types.uint64)

    def codegen(context, builder, signature, args):
        return builder.cttz(args[0], context.get_constant(types.boolean, False))

    return sig, codegen


#: Multiplying a word of eight 0/1 bytes by this puts byte ``i`` in bit ``56 + i``.
BYTE_BITS = u64(0x0102040810204080)


@njit(cache=True, inline="always")
def pack_bytes(word):
    """The eight 0/1 bytes of ``word`` as the low 8 bits of a ``uint64`` (byte ``i``: bit ``i``)."""
    return (word * BYTE_BITS) >> u64(56)


@njit(cache=True, inline="always")
def nth_bit(bits, n):
    """The index of the ``n``-th (from 0) set bit of ``bits``; 64 when it has ``n`` or fewer."""
    for _ in range(n):
        bits &= bits - u64(1)
    return np.int64(trailing_zeros(bits))


@njit(cache=True, inline="always")
def byte_sum(word):
    """The sum of the eight bytes of ``word`` when each is 0 or 1."""
    return np.int64((word * BYTE_SUM) >> u64(56))


def _spread_table() -> np.ndarray:
    table = np.zeros(256, dtype=np.uint64)
    for bits in range(256):
        word = 0
        for i in range(8):
            if bits >> i & 1:
                word |= 1 << (8 * i)
        table[bits] = word
    return table


#: ``SPREAD[b]``: the word whose byte ``i`` is bit ``i`` of ``b`` (eight bools from 8 bits).
SPREAD = _spread_table()


@njit(cache=True, inline="always")
def copy_bytes(dst, dst_at, src, src_at, n):
    """``dst[dst_at:dst_at + n] = src[src_at:src_at + n]`` for 1-byte arrays that do not
    overlap there: eight bytes a word, the last word overlapping the one before it."""
    if n < 8:
        for t in range(n):
            dst[dst_at + t] = src[src_at + t]
        return
    d = dst.ctypes.data + dst_at
    s = src.ctypes.data + src_at
    k = 0
    while k + 8 <= n:
        store_u64(d + k, load_u64(s + k))
        k += 8
    if k < n:
        store_u64(d + n - 8, load_u64(s + n - 8))


@njit(cache=True, inline="always")
def fill_bytes(dst, at, n, value):
    """``dst[at:at + n] = value`` for a 1-byte array and ``0 <= value < 128``: eight bytes a
    word, the last word overlapping the one before it."""
    if n < 8:
        for t in range(n):
            dst[at + t] = value
        return
    word = u64(value) * BYTE_SUM
    d = dst.ctypes.data + at
    k = 0
    while k + 8 <= n:
        store_u64(d + k, word)
        k += 8
    if k < n:
        store_u64(d + n - 8, word)
