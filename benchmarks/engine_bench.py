"""Engine micro-benchmark: random legal play, one ``legal_mask`` + one ``apply_action`` per step.

Three ways of driving the same kernels are timed for each variant:

* ``njit loop``: the whole loop (legal mask, random legal action, apply, re-deal) is one
  numba function, so the figure is the engine's own speed with no Python in the way.
* ``Python loop``: a Python loop calling the compiled kernels one by one, as an
  environment or a search written in Python does; the gap to the first row is call overhead.
* ``Python loop`` with ``NUMBA_DISABLE_JIT=1`` (run in a subprocess, since the flag is read
  at import): the kernels as plain Python, what a user without a working numba gets.

A game ends when no move is legal (won or stuck), and also after ``--max-moves`` moves,
because random play with run moves or empty columns can shuffle cards back and forth for
ever; the next game is dealt from a pre-shuffled pack, so dealing costs no shuffling.

Usage (from the repository root)::

    .venv/bin/python benchmarks/engine_bench.py
    .venv/bin/python benchmarks/engine_bench.py --steps 500000 --variants classic relaxed
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
from numba import njit

import forty_thieves_env
from forty_thieves_env import deal, get_variant, jitcache, shuffled_pack
from forty_thieves_env.engine.config import config_for
from forty_thieves_env.engine.deals import deal_layout
from forty_thieves_env.engine.layout import Cfg
from forty_thieves_env.engine.rules import apply_action, legal_mask

# The loop below compiles in the engine's rules: an edit of either drops its cached kernel.
_HERE = Path(__file__).parent
jitcache.sync(_HERE, jitcache.package_sources(_HERE, Path(forty_thieves_env.__file__).parent))

N_PACKS = 64  # distinct deals cycled through by the resets


@njit(cache=True)
def njit_random_play(s, cfg, mask, packs, steps, max_moves, seed):  # -> games started
    """``steps`` random legal moves in ``s``, re-dealing from ``packs`` when a game ends."""
    np.random.seed(seed)
    games = 1
    moves = 0
    deal_layout(s, cfg, packs[0])
    for _ in range(steps):
        n = legal_mask(s, cfg, mask)
        if n == 0 or moves >= max_moves:
            deal_layout(s, cfg, packs[games % packs.shape[0]])
            games += 1
            moves = 0
            n = legal_mask(s, cfg, mask)  # the deal always leaves the stock to turn
        r = np.random.randint(n)
        a = 0
        while True:  # the r-th legal action
            if mask[a]:
                if r == 0:
                    break
                r -= 1
            a += 1
        apply_action(s, cfg, a)
        moves += 1
    return games


def python_random_play(s, cfg, mask, packs, steps: int, max_moves: int, seed: int) -> int:
    """The same loop in Python, calling the kernels one by one."""
    rng = random.Random(seed)
    games, moves = 1, 0
    deal_layout(s, cfg, packs[0])
    for _ in range(steps):
        n = legal_mask(s, cfg, mask)
        if n == 0 or moves >= max_moves:
            deal_layout(s, cfg, packs[games % len(packs)])
            games += 1
            moves = 0
            n = legal_mask(s, cfg, mask)
        a = int(np.flatnonzero(mask)[rng.randrange(n)])
        apply_action(s, cfg, a)
        moves += 1
    return games


LOOPS = {"njit loop": njit_random_play, "Python loop": python_random_play}


def measure(variant_name: str, loop: str, steps: int, max_moves: int, seed: int) -> dict:
    """Time one loop on one variant; the first (compiling) call is timed separately."""
    variant = get_variant(variant_name)
    cfg = config_for(variant)
    s = deal(variant, 1).array
    mask = np.zeros(int(cfg[Cfg.N_ACTIONS]), dtype=np.bool_)
    packs = np.stack([shuffled_pack(n) for n in range(1, N_PACKS + 1)])
    fn = LOOPS[loop]
    t0 = time.perf_counter()
    fn(s, cfg, mask, packs, 10, max_moves, seed)  # compiles, or loads numba's cache
    warm = time.perf_counter() - t0
    t0 = time.perf_counter()
    games = fn(s, cfg, mask, packs, steps, max_moves, seed)
    seconds = time.perf_counter() - t0
    return {
        "variant": variant_name,
        "loop": loop,
        "jit": os.environ.get("NUMBA_DISABLE_JIT", "0") != "1",
        "steps": steps,
        "seconds": seconds,
        "steps_per_s": steps / seconds,
        "games": int(games),
        "first_call_s": warm,
    }


def no_jit_rows(args: argparse.Namespace) -> list[dict]:
    """The Python loop with NUMBA_DISABLE_JIT=1, in a subprocess (numba reads it at import)."""
    env = {**os.environ, "NUMBA_DISABLE_JIT": "1"}
    cmd = [sys.executable, os.path.abspath(__file__), "--worker", "--nojit-steps", str(args.nojit_steps)]
    cmd += ["--max-moves", str(args.max_moves), "--seed", str(args.seed), "--variants", *args.variants]
    out = subprocess.run(cmd, env=env, check=True, capture_output=True, text=True).stdout
    return [json.loads(line) for line in out.splitlines() if line.startswith("{")]


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--steps", type=int, default=500_000, help="steps per timed JIT run (default 500000)")
    p.add_argument("--nojit-steps", type=int, default=5_000, help="steps per NUMBA_DISABLE_JIT=1 run (default 5000)")
    p.add_argument(
        "--variants", nargs="+", default=["classic", "josephine"], help="presets (default: classic josephine)"
    )
    p.add_argument("--max-moves", type=int, default=1000, help="moves after which a game is re-dealt (default 1000)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--no-nojit", action="store_true", help="skip the NUMBA_DISABLE_JIT=1 subprocess")
    p.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    for name in args.variants:
        try:
            get_variant(name)  # fail early on a typo, before any timing
        except ValueError as err:
            p.error(str(err))

    if args.worker:  # inside the no-JIT subprocess: one JSON line per variant
        for name in args.variants:
            print(json.dumps(measure(name, "Python loop", args.nojit_steps, args.max_moves, args.seed)), flush=True)
        return

    rows = [measure(name, loop, args.steps, args.max_moves, args.seed) for name in args.variants for loop in LOOPS]
    if not args.no_nojit:
        rows += no_jit_rows(args)
    rows.sort(key=lambda r: (args.variants.index(r["variant"]), not r["jit"], r["loop"] != "njit loop"))

    print(f"random legal play, legal_mask + apply_action per step; re-deal when stuck or after {args.max_moves} moves")
    header = f"{'variant':<14}{'loop':<13}{'JIT':<5}{'steps':>9}{'seconds':>9}{'steps/s':>12}{'games':>7}"
    header += f"{'1st call s':>12}"
    print(header)
    print("-" * len(header))
    for r in rows:
        print(
            f"{r['variant']:<14}{r['loop']:<13}{'on' if r['jit'] else 'off':<5}{r['steps']:>9}"
            f"{r['seconds']:>9.2f}{r['steps_per_s']:>12,.0f}{r['games']:>7}{r['first_call_s']:>12.2f}"
        )


if __name__ == "__main__":
    main()
