"""How much a second thread speeds up numba code on this machine, by kind of work.

The native vector env's step touches about a kilobyte of state, mask and observation per
game, so how well it scales over the cores depends on whether the cores share their
caches (two vCPUs on one physical core's hyperthreads do). This script times three
``prange`` loops on one thread and on two:

* ``compute``: arithmetic in registers, no memory traffic;
* ``800 KB``: read-modify-write passes over an 800 KB array, half of it a thread (more
  than one core's L2, less than two);
* ``32 MB``: the same over 32 MB (main memory).

With one thread the single worker does both halves in turn.

Run: ``.venv/bin/python benchmarks/core_scaling.py`` (a few seconds). A speed-up near 2
for ``compute`` and well under 2 for ``800 KB`` means the two threads share a core's caches
or memory path, and that the step kernel cannot scale much better than the ``800 KB`` row.
"""

from __future__ import annotations

import os
import time

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import numba
import numpy as np
from numba import njit, prange


@njit(parallel=True)
def passes(a: np.ndarray, reps: int) -> int:
    chunk = 4096
    n_chunks = a.shape[0] // chunk
    for part in prange(2):  # one half of the array a thread, ``reps`` passes over it
        lo = part * (n_chunks // 2) * chunk
        hi = (part + 1) * (n_chunks // 2) * chunk
        for _ in range(reps):
            for k in range(lo, hi):
                a[k] = a[k] * 3 + 1
    return a[0]


@njit(parallel=True)
def compute(n: int) -> float:
    acc = np.zeros(n)
    for i in prange(n):
        x = 0.0
        for k in range(300_000):
            x += (k * i) % 7
        acc[i] = x
    return acc.sum()


def main() -> None:
    big = np.zeros(4_000_000, dtype=np.int64)  # 32 MB
    small = np.zeros(100_000, dtype=np.int64)  # 800 KB
    passes(small, 1)
    compute(4)
    cores = numba.config.NUMBA_NUM_THREADS
    times: dict[str, list[float]] = {"compute": [], "800 KB": [], "32 MB": []}
    for threads in (1, min(2, cores)):
        numba.set_num_threads(threads)
        for name, run in (
            ("compute", lambda: compute(64)),
            ("800 KB", lambda: passes(small, 4000)),
            ("32 MB", lambda: passes(big, 10)),
        ):
            best = float("inf")
            for _ in range(3):
                t = time.perf_counter()
                run()
                best = min(best, time.perf_counter() - t)
            times[name].append(best)
    print(f"{'work':8s} {'1 thread':>9s} {'2 threads':>10s} {'speed-up':>9s}")
    for name, (one, two) in times.items():
        print(f"{name:8s} {one:8.3f}s {two:9.3f}s {one / two:8.2f}x")


if __name__ == "__main__":
    main()
