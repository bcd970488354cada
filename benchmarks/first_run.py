"""Time the first run from an empty numba cache: ``gym.make`` and ``gym.make_vec``, each with a
reset and one step, in a fresh interpreter whose ``NUMBA_CACHE_DIR`` is an empty folder.

    python benchmarks/first_run.py [--id FortyThieves-v0] [--num-envs 8]

Prints the seconds of each case: the import, the first reset and step (what compiles), and a
second, warm interpreter on the cache the first one wrote.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import textwrap

CASE = textwrap.dedent(
    """
    import time
    t0 = time.perf_counter()
    import gymnasium as gym
    import forty_thieves_env
    t1 = time.perf_counter()
    env = {make}
    obs, info = env.reset(seed=0)
    obs, *_ = env.step({action})
    t2 = time.perf_counter()
    print(f"{{t1 - t0:.1f}} {{t2 - t1:.1f}}")
    """
)


def run(code: str, cache: str) -> tuple[float, float]:
    env = {**os.environ, "NUMBA_CACHE_DIR": cache}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    imp, first = out.stdout.split()[-2:]
    return float(imp), float(first)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--id", default="FortyThieves-v0")
    parser.add_argument("--num-envs", type=int, default=8)
    args = parser.parse_args()
    cases = {
        "gym.make": (f"gym.make({args.id!r})", "int(info['action_mask'].argmax())"),
        "gym.make_vec": (
            f"gym.make_vec({args.id!r}, num_envs={args.num_envs})",
            "info['action_mask'].argmax(axis=1)",
        ),
    }
    for name, (make, action) in cases.items():
        code = CASE.format(make=make, action=action)
        with tempfile.TemporaryDirectory() as cache:
            cold = run(code, cache)
            warm = run(code, cache)
        print(
            f"{name:13s} cold: import {cold[0]:5.1f} s, first reset+step {cold[1]:5.1f} s | "
            f"warm: import {warm[0]:5.1f} s, first reset+step {warm[1]:5.1f} s"
        )


if __name__ == "__main__":
    main()
