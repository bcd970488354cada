"""A CPU stand-in for the GPU under :class:`CudaGames`, and the parity check run on both.

:class:`CpuTwin` does what :class:`~forty_thieves_env.envs.cuda_games.CudaDevice` does with
numpy arrays kept apart from the host batch's (uploads and downloads are real copies) and
kernels that are CPU loops over the very per-game functions the CUDA kernels call, one line
each as in :mod:`forty_thieves_env.envs.cuda_kernels`. With it, everything of
:class:`CudaGames` but the CUDA launches themselves is tested on a machine without a GPU.

:func:`check_parity` steps a :class:`CudaGames` and a :class:`BatchGames` made alike with the
same actions and compares every array of the two batches after every step.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import nullcontext
from pathlib import Path
from typing import Any

import numpy as np
from numba import njit

import forty_thieves_env
from forty_thieves_env import jitcache
from forty_thieves_env.engine.deals import MT_WORK
from forty_thieves_env.envs.batch import BatchGames
from forty_thieves_env.envs.batch_kernels import (
    BUFS,
    F_ILLEGAL,
    F_TERMINATED,
    F_TRUNCATED,
    F_WON,
    mask_to_row,
    reset_chosen,
    step_game,
)
from forty_thieves_env.envs.cuda_games import CudaGames
from forty_thieves_env.envs.sampling import hashed_uniform, sample_game
from forty_thieves_env.envs.step import G_LEGAL

# The twin's kernels are cached beside this file, and compile in the package's per-game code:
# drop them when that code (or this file) changes, as the package does for its own.
_SOURCES = [*jitcache.package_sources(Path(forty_thieves_env.__file__).parent), Path(__file__)]
jitcache.sync(Path(__file__).parent, _SOURCES)


class TwinArray(np.ndarray):
    """A "device" array of the twin: a numpy array that the twin tells from host arrays."""


def _plain(arg: Any) -> Any:
    """A launch argument as the kernels take it: twin arrays as plain numpy arrays, also inside
    the batch arrays' tuple."""
    if isinstance(arg, tuple):
        return tuple(_plain(a) for a in arg)
    return np.asarray(arg) if isinstance(arg, np.ndarray) else arg


@njit(cache=True)
def _step_kernel(cfg, spec, params, actions, bufs):
    work = np.empty(MT_WORK, dtype=np.int64)
    for i in range(actions.shape[0]):  # the CUDA kernel: thread i
        step_game(i, cfg, spec, params, actions[i], bufs, work)


@njit(cache=True)
def _reset_kernel(cfg, params, which, numbers, bufs):
    work = np.empty(MT_WORK, dtype=np.int64)
    for i in range(which.shape[0]):
        reset_chosen(i, cfg, params, which, numbers, bufs, work)


@njit(cache=True)
def _mask_rows_kernel(masks, obs, obs_lay):
    for i in range(masks.shape[0]):
        mask_to_row(i, masks, obs, obs_lay)


@njit(cache=True)
def _sample_kernel(masks, games, uniforms, out):
    for i in range(out.shape[0]):
        out[i] = sample_game(masks, i, games[i, G_LEGAL], uniforms[i])


@njit(cache=True)
def _sample_seeded_kernel(masks, games, seed, out):
    for i in range(out.shape[0]):
        out[i] = sample_game(masks, i, games[i, G_LEGAL], hashed_uniform(seed, i))


_KERNELS = {
    "step_kernel": _step_kernel,
    "reset_kernel": _reset_kernel,
    "mask_rows_kernel": _mask_rows_kernel,
    "sample_kernel": _sample_kernel,
    "sample_seeded_kernel": _sample_seeded_kernel,
}


class CpuTwin:
    """:class:`~forty_thieves_env.envs.cuda_games.CudaDevice`'s operations on the CPU."""

    def __init__(self, index: int = 0) -> None:
        self.index = index
        self.launches: list[str] = []  # kernel names, in launch order

    def context(self) -> Any:
        return nullcontext()

    def to_device(self, host: np.ndarray) -> TwinArray:
        return np.array(host, copy=True, order="C").view(TwinArray)

    def upload(self, dev: np.ndarray, host: np.ndarray) -> None:
        np.copyto(dev, host)

    def download(self, dev: np.ndarray, host: np.ndarray) -> None:
        np.copyto(host, dev)

    def is_device_array(self, x: object) -> bool:
        return isinstance(x, TwinArray)

    def as_array(self, x: object) -> Any:
        return x

    def launch(self, name: str, n: int, *args: Any) -> None:
        self.launches.append(name)
        plain = [_plain(a) for a in args]
        _KERNELS[name](*plain)

    def synchronize(self) -> None:
        pass


def twin_games(*args: Any, **kwargs: Any) -> CudaGames:
    """A :class:`CudaGames` over a :class:`CpuTwin` (same arguments)."""

    class TwinGames(CudaGames):
        @staticmethod
        def _make_device(index: int) -> CpuTwin:
            return CpuTwin(index)

    return TwinGames(*args, **kwargs)


def assert_same(gpu: CudaGames, cpu: BatchGames, when: str) -> None:
    """Every array of the two batches equal (``gpu`` brought to its host first)."""
    host = gpu.to_host()
    for name, a, b in zip(BUFS, host.bufs, cpu.bufs, strict=True):
        if not np.array_equal(a, b):
            bad = np.argwhere(a != b)[:3].tolist()
            raise AssertionError(f"{when}: {name} differs (first at {bad})")


def check_parity(
    make: Callable[..., CudaGames],
    num_envs: int,
    steps: int,
    variant: str,
    *,
    seed: int = 0,
    illegal_every: int = 0,
    every: int = 1,
    **kwargs: Any,
) -> dict[str, int]:
    """Step ``make(num_envs, variant, **kwargs)`` and a BatchGames alike ``steps`` times with
    the same actions and compare all their arrays every ``every`` steps (and at the end).

    Actions are random legal ones drawn from the CPU batch's masks with a generator seeded
    with ``seed``; with ``illegal_every``, every that many games per step get a random
    action of the whole range instead (illegal ones included). Returns counts of what
    happened (resets, wins, truncations, refused actions), for the caller to check that
    the run went through the paths it means to test.
    """
    gpu = make(num_envs, variant, **kwargs)
    cpu = BatchGames(num_envs, variant, **kwargs)
    gpu.reset(seed=seed)
    cpu.reset(seed=seed)
    assert_same(gpu, cpu, "after reset")
    rng = np.random.default_rng(seed)
    counts = {"ended": 0, "won": 0, "truncated": 0, "illegal": 0}
    for t in range(steps):
        actions = cpu.sample_legal(rng)
        if illegal_every:
            pick = np.arange(t % illegal_every, num_envs, illegal_every)
            # Random moves, mostly illegal; in the action space (the batch refuses others outright).
            actions[pick] = rng.integers(0, cpu.n_actions, size=pick.size)
        gpu.step(actions)
        cpu.step(actions)
        if (t + 1) % every == 0 or t == steps - 1:
            assert_same(gpu, cpu, f"step {t}")
        counts["ended"] += int((cpu.flags[F_TERMINATED] | cpu.flags[F_TRUNCATED]).sum())
        counts["won"] += int(cpu.flags[F_WON].sum())
        counts["truncated"] += int(cpu.flags[F_TRUNCATED].sum())
        counts["illegal"] += int(cpu.flags[F_ILLEGAL].sum())
    return counts
