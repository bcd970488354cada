"""Steps per second of the environments on a warm numba cache: the figure a compile-time
change must leave alone.

    python benchmarks/step_speed.py [--case make|vec|serial|batch ...] [--calls N] [--id FortyThieves-v0]
                                    [--observation dict|flat|oracle] [--mask-in-observation]

Times, after a warm-up, a fixed number of ``step`` calls of random legal play: ``make``,
``gym.make`` (one Python ``step`` per move, the action drawn from the mask in numpy);
``vec``, ``gym.make_vec`` of 64 games (the serial step kernel, actions from the env's own
compiled sampler); ``serial`` and ``batch``, a :class:`BatchGames` of 256 and 1024 games (the
serial and the parallel step kernel, the kernels' own speed). Each line is game steps per
second. The work is fixed, so the process's own time is a figure too: to compare two
checkouts, run it with ``PYTHONPATH=<checkout>`` for each, side by side and repeated (a
paired timer of whole processes; the figures move with the machine's load).
``--observation`` and ``--mask-in-observation`` make every environment with those options
(given only when not the defaults, so that the script runs on checkouts without them).
"""

from __future__ import annotations

import argparse
import functools
import time

import gymnasium as gym
import numpy as np

import forty_thieves_env
from forty_thieves_env.envs.batch import BatchGames
from forty_thieves_env.envs.registration import id_variant


def timed(step, calls: int) -> float:
    """Calls of ``step`` per second over ``calls`` calls (after ``calls // 10`` as warm-up)."""
    for _ in range(calls // 10):
        step()
    start = time.perf_counter()
    for _ in range(calls):
        step()
    return calls / (time.perf_counter() - start)


#: Environment options from the command line (only those that differ from the defaults).
OPTIONS: dict[str, object] = {}


def single(env_id: str, calls: int) -> float:
    env = gym.make(env_id, **OPTIONS)
    rng = np.random.default_rng(0)
    state = {"mask": env.reset(seed=0)[1]["action_mask"]}

    def step() -> None:
        _, _, terminated, truncated, info = env.step(int(rng.choice(np.flatnonzero(state["mask"]))))
        state["mask"] = env.reset()[1]["action_mask"] if terminated or truncated else info["action_mask"]

    return timed(step, calls)


def vector(env_id: str, calls: int, n: int = 64) -> float:
    env = gym.make_vec(env_id, num_envs=n, **OPTIONS)
    env.reset(seed=0)
    rng = np.random.default_rng(0)
    sample = env.unwrapped.random_legal_actions
    return n * timed(lambda: env.step(sample(rng)), calls)


def batch(env_id: str, calls: int, n: int = 1024) -> float:
    """:class:`BatchGames` of ``n`` games, actions from its compiled sampler, no gymnasium."""
    games = BatchGames(n, id_variant(env_id)[0], autoreset="same_step", **OPTIONS)
    games.reset(seed=0)
    rng = np.random.default_rng(0)
    actions = np.zeros(n, dtype=np.int64)

    def step() -> None:
        games.sample_legal(rng, actions)
        games.step(actions)

    return n * timed(step, calls)


#: name: (label, function, default calls: about 2 s each on an idle core).
CASES = {
    "make": ("gym.make", single, 200_000),
    "vec": ("gym.make_vec(64)", vector, 60_000),
    "serial": ("BatchGames(256)", functools.partial(batch, n=256), 8_000),
    "batch": ("BatchGames(1024)", batch, 2_000),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--case", nargs="+", choices=list(CASES), default=list(CASES))
    parser.add_argument("--calls", type=int, default=None, help="timed step calls per case (default: each case's own)")
    parser.add_argument("--id", default="FortyThieves-v0")
    parser.add_argument("--observation", choices=["dict", "flat", "oracle"], default="dict")
    parser.add_argument("--mask-in-observation", action="store_true")
    args = parser.parse_args()
    if args.observation != "dict":
        OPTIONS["observation"] = args.observation
    if args.mask_in_observation:
        OPTIONS["mask_in_observation"] = True
    print(f"# {forty_thieves_env.__file__} {OPTIONS}")
    for name in args.case:
        label, run, calls = CASES[name]
        print(f"{label:17s} {run(args.id, args.calls or calls):10.0f} steps/s")


if __name__ == "__main__":
    main()
