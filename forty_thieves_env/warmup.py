"""Compile every kernel the environments run, once, ahead of the first real run.

    python -m forty_thieves_env.warmup

From an empty numba cache the first reset and step of a process compile the engine's kernels
(tens of seconds; :func:`forty_thieves_env.jitcache.compile_notice` says so on screen when
it happens). This command does that work ahead, for the single environment, the vector
environment's serial and parallel steps (and so the stable-baselines3 adapter, which shares
them): every variant, observation mode and reward runs the same compiled kernels, so one
pass covers them all. ``make test`` and ``make demo`` run it after installing.
"""

from __future__ import annotations

import time

import numpy as np

from .envs.batch import PARALLEL_MIN_GAMES
from .envs.env import FortyThievesEnv
from .envs.vector import FortyThievesVectorEnv


def main() -> None:
    """Run one reset and one step of each environment kind, printing the time each took."""
    start = time.perf_counter()
    env = FortyThievesEnv("classic")
    _, info = env.reset(seed=0)
    env.step(int(np.flatnonzero(info["action_mask"])[0]))
    print(f"single env: {time.perf_counter() - start:.1f} s")
    for n in (2, PARALLEL_MIN_GAMES):  # the serial and the parallel step kernels
        t = time.perf_counter()
        venv = FortyThievesVectorEnv(n, "classic")
        venv.reset(seed=0)
        venv.step(venv.random_legal_actions(np.random.default_rng(0)))
        print(f"vector env of {n}: {time.perf_counter() - t:.1f} s")
    print(f"forty-thieves-env kernels ready in {time.perf_counter() - start:.1f} s")


if __name__ == "__main__":
    main()
