"""Env steps per second of the batch engine on a GPU (:class:`CudaGames`), and a quick parity check.

For each preset (``--games`` games each) and for a sweep of batch sizes on one preset, a
:class:`~forty_thieves_env.envs.cuda_games.CudaGames` plays random legal moves with its
observations, masks, rewards and autoresets kept up to date on the device. The actions come
from outside the step, as a policy's would: each step, the sampler kernel writes a random
legal action per game into a device array (``sample_legal(seed, out)``), then the step
kernel plays them. Timings are CUDA events around each launch, after ``--warmup`` steps
(the first of which compiles the kernels, or loads them from numba's cache):

* ``step``: the step kernel alone, game steps per second;
* ``with sampling``: sampler plus step, what a random-action loop on the device reaches.

``--cpu`` adds :class:`~forty_thieves_env.envs.batch.BatchGames` on the machine's cores,
the same games and the same kind of actions, for comparison.

``--check`` runs instead the parity check of ``tests/envs/test_cuda.py`` on fewer games:
CudaGames and BatchGames stepped with the same random legal actions, every array compared
after every step (same-step autoreset and a short time limit, so that the device deals
from its own generators); it exits 1 at the first difference.

Usage (from the repository root, on the GPU machine; see docs/cuda.md)::

    python3 -m benchmarks.cuda_bench --out results/cuda_bench.json
    python3 -m benchmarks.cuda_bench --check
"""

from __future__ import annotations

import argparse
import json
import platform
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

# The GPU machine's numba-cuda imports np.row_stack, which numpy 2.5 dropped: give it back
# before numba.cuda is imported (here, never in the package).
if not hasattr(np, "row_stack"):
    np.row_stack = np.vstack

ROOT = Path(__file__).resolve().parent.parent
PRESETS = ["classic", "josephine", "streets", "maria", "limited", "rank_and_file", "relaxed"]
CHECKED = ["classic", "josephine", "rank_and_file", "relaxed"]


def time_gpu(variant: str, n: int, args: argparse.Namespace) -> dict[str, object]:
    """Time ``args.steps`` steps of ``n`` games of ``variant`` on the GPU."""
    from numba import cuda

    from forty_thieves_env.envs.cuda_games import CudaGames

    t0 = time.perf_counter()
    games = CudaGames(
        n,
        variant,
        observation=args.observation,
        autoreset=args.autoreset,
        max_episode_steps=args.max_episode_steps,
        device=args.device,
    )
    games.reset(seed=0)
    setup_s = time.perf_counter() - t0
    with cuda.gpus[args.device]:
        out = cuda.device_array(n, dtype=np.int64)
        t0 = time.perf_counter()
        for t in range(args.warmup):
            games.sample_legal(t, out)
            games.step(out)
        games.synchronize()
        warmup_s = time.perf_counter() - t0
        marks = [(cuda.event(), cuda.event(), cuda.event()) for _ in range(args.steps)]
        for t, (before, between, after) in enumerate(marks):
            before.record()
            games.sample_legal(args.warmup + t, out)
            between.record()
            games.step(out)
            after.record()
        marks[-1][2].synchronize()
        sample_ms = sum(cuda.event_elapsed_time(b, m) for b, m, _ in marks)
        step_ms = sum(cuda.event_elapsed_time(m, a) for _, m, a in marks)
        total_ms = cuda.event_elapsed_time(marks[0][0], marks[-1][2])
    steps = n * args.steps
    return {
        "variant": variant,
        "games": n,
        "steps": args.steps,
        "step_per_s": steps / (step_ms / 1e3),
        "with_sampling_per_s": steps / (total_ms / 1e3),
        "sample_ms": sample_ms,
        "step_ms": step_ms,
        "setup_s": setup_s,
        "warmup_s": warmup_s,
    }


def time_cpu(variant: str, n: int, args: argparse.Namespace) -> float:
    """Steps per second of :class:`BatchGames` on this machine's cores, alike."""
    from forty_thieves_env.envs.batch import BatchGames

    games = BatchGames(
        n, variant, observation=args.observation, autoreset=args.autoreset, max_episode_steps=args.max_episode_steps
    )
    games.reset(seed=0)
    rng = np.random.default_rng(0)
    actions = np.zeros(n, dtype=np.int64)
    for _ in range(3):
        games.step(games.sample_legal(rng, actions))
    steps = max(10, args.steps // 4)
    t0 = time.perf_counter()
    for _ in range(steps):
        games.step(games.sample_legal(rng, actions))
    return n * steps / (time.perf_counter() - t0)


def check(args: argparse.Namespace) -> int:
    """The parity check of tests/envs/test_cuda.py on ``args.check_games`` games; 0 when equal."""
    sys.path.insert(0, str(ROOT / "tests"))
    from cuda_twin import check_parity

    from forty_thieves_env.envs.cuda_games import CudaGames

    failed = 0
    for variant in CHECKED:
        for autoreset in ("same_step", "next_step"):
            t0 = time.perf_counter()
            try:
                counts = check_parity(
                    CudaGames,
                    args.check_games,
                    args.check_steps,
                    variant,
                    seed=0,
                    autoreset=autoreset,
                    max_episode_steps=40,
                    illegal_every=29,
                )
                verdict = f"same ({counts})"
            except AssertionError as err:
                verdict, failed = f"DIFFERENT: {err}", 1
            print(f"{variant:14} {autoreset:10} {time.perf_counter() - t0:6.1f} s  {verdict}", flush=True)
    return failed


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--games", type=int, default=65_536, help="games per preset")
    p.add_argument("--variants", nargs="+", default=PRESETS)
    p.add_argument("--sweep", type=int, nargs="*", default=[4096, 16_384, 262_144], help="more batch sizes")
    p.add_argument("--sweep-variant", default="classic")
    p.add_argument("--steps", type=int, default=200, help="timed steps per run")
    p.add_argument("--warmup", type=int, default=20)
    p.add_argument("--observation", default="dict", choices=["dict", "flat", "oracle"])
    p.add_argument("--autoreset", default="next_step", choices=["next_step", "same_step"])
    p.add_argument("--max-episode-steps", type=int, default=1000)
    p.add_argument("--device", type=int, default=0)
    p.add_argument("--cpu", action="store_true", help="also time BatchGames on the CPU cores")
    p.add_argument("--out", type=Path, help="write the results as JSON here")
    p.add_argument("--check", action="store_true", help="run the parity check instead")
    p.add_argument("--check-games", type=int, default=4096)
    p.add_argument("--check-steps", type=int, default=120)
    args = p.parse_args()
    if args.check:
        return check(args)

    from numba import cuda

    runs = [(v, args.games) for v in args.variants]
    runs += [(args.sweep_variant, n) for n in args.sweep if n != args.games]
    rows = []
    # warm-up s: the first steps, which compile the kernels (or load them from numba's cache)
    print(f"{'variant':14} {'games':>8} {'step M/s':>9} {'w/ sample':>10} {'CPU M/s':>8} {'warm-up s':>9}")
    for variant, n in runs:
        row = time_gpu(variant, n, args)
        if args.cpu:
            row["cpu_per_s"] = time_cpu(variant, n, args)
        rows.append(row)
        cpu_s = f"{row['cpu_per_s'] / 1e6:8.2f}" if args.cpu else f"{'-':>8}"
        print(
            f"{variant:14} {n:8d} {row['step_per_s'] / 1e6:9.1f} {row['with_sampling_per_s'] / 1e6:10.1f} "
            f"{cpu_s} {row['warmup_s']:9.1f}",
            flush=True,
        )
    if args.out:
        try:
            commit = subprocess.run(
                ["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True, check=True
            ).stdout.strip()
        except (OSError, subprocess.CalledProcessError):
            commit = None
        from importlib.metadata import version

        with cuda.gpus[args.device]:
            name = cuda.get_current_device().name
        meta = {
            "gpu": name.decode() if isinstance(name, bytes) else str(name),
            "python": platform.python_version(),
            "numba": version("numba"),
            "numba_cuda": version("numba-cuda"),
            "commit": commit,
            "args": {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items()},
        }
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps({"meta": meta, "runs": rows}, indent=2) + "\n")
        print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
