"""Does rliable's interval estimate do better than ``agents.evaluation.statistics.seed_statistics``?

    pip install rliable     # not a dependency of the project: see docs/benchmark.md, "Statistics"
    python benchmarks/rliable_check.py [--reps 200] [--boot 1000] [--seed 0]

A simulated recipe: deal ``j`` has a difficulty ``b_j`` and training seed ``s`` a strength ``a_s``
(both normal, on the logit scale), and seed ``s`` wins deal ``j`` with probability
``sigmoid(b_j + a_s)``. The parameters give a classic-like recipe: about 4.6 % of deals won, a
spread between seeds like the three 200M classic seeds' 50 / 46 / 41 of 1000
(docs/research/2026-12-05-classic-200M.md), most deals nearly hopeless. Each repetition draws
``S`` seeds and 1000 deals, plays them, and computes the 95 % interval of the mean and of the
IQM of the seeds' win rates two ways:

* ``seed_statistics`` (ours): a percentile bootstrap that resamples the seeds and the deals;
* rliable's ``get_interval_estimates``: the stratified bootstrap over runs (one task), the
  per-run scores taken as fixed.

It prints how often each interval covers (a) the recipe's win rate over the whole deal
population (what a paper claims) and (b) its expected win rate on the 1000 deals played (the
test split, if every result is read as a statement about those deals only), and the mean width.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from agents.evaluation.statistics import seed_statistics

DEALS = 1000
#: Logit-scale parameters: deal difficulty mean and spread, seed spread.
B_MEAN, B_SD, A_SD = -4.5, 2.0, 0.08


def sigmoid(x: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-x))


def population_rate(rng: np.random.Generator, n: int = 4_000_000) -> float:
    """The recipe's win rate over deals and seeds (Monte Carlo)."""
    return float(sigmoid(rng.normal(B_MEAN, B_SD, n) + rng.normal(0, A_SD, n)).mean())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=200, help="simulated evaluations per seed count")
    parser.add_argument("--boot", type=int, default=1000, help="bootstrap resamples of each interval")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    from rliable import library as rly
    from rliable import metrics

    rng = np.random.default_rng(args.seed)
    truth = population_rate(rng)
    print(f"recipe's population win rate {100 * truth:.2f} %, {DEALS} deals, {args.reps} repetitions, "
          f"{args.boot} resamples")  # fmt: skip
    aggregate = lambda x: np.array([metrics.aggregate_mean(x), metrics.aggregate_iqm(x)])  # noqa: E731
    for n_seeds in (3, 5, 10):
        hits = {k: np.zeros(2) for k in ("ours_pop", "rly_pop", "ours_deals", "rly_deals")}
        width = {"ours": np.zeros(2), "rly": np.zeros(2)}
        seconds = {"ours": 0.0, "rly": 0.0}
        for _ in range(args.reps):
            b = rng.normal(B_MEAN, B_SD, DEALS)
            a = rng.normal(0, A_SD, n_seeds)
            wins = rng.random((n_seeds, DEALS)) < sigmoid(b[None, :] + a[:, None])
            # The expected rate on these deals, over the seed population (Monte Carlo over seeds).
            on_deals = float(sigmoid(b[None, :] + rng.normal(0, A_SD, (2000, 1))).mean())
            t0 = time.perf_counter()
            ours = seed_statistics(wins, n_boot=args.boot, seed=int(rng.integers(2**31)))
            seconds["ours"] += time.perf_counter() - t0
            ours_ci = np.array([ours.mean_ci, ours.iqm_ci])  # (2 metrics, low/high)
            t0 = time.perf_counter()
            scores = {"recipe": wins.mean(axis=1, keepdims=True)}  # (runs, 1 task)
            _, ci = rly.get_interval_estimates(scores, aggregate, reps=args.boot)
            seconds["rly"] += time.perf_counter() - t0
            rly_ci = ci["recipe"].T  # (2 metrics, low/high)
            for name, interval in (("ours", ours_ci), ("rly", rly_ci)):
                hits[f"{name}_pop"] += (interval[:, 0] <= truth) & (truth <= interval[:, 1])
                hits[f"{name}_deals"] += (interval[:, 0] <= on_deals) & (on_deals <= interval[:, 1])
                width[name] += interval[:, 1] - interval[:, 0]
        for name, label in (("ours", "seed_statistics"), ("rly", "rliable")):
            pop, deals = hits[f"{name}_pop"] / args.reps, hits[f"{name}_deals"] / args.reps
            w = width[name] / args.reps
            print(
                f"{n_seeds:>2} seeds  {label:<16} coverage of the population rate: mean {100 * pop[0]:.0f} %, "
                f"IQM {100 * pop[1]:.0f} %; of the rate on these deals: mean {100 * deals[0]:.0f} %, "
                f"IQM {100 * deals[1]:.0f} %; width: mean {100 * w[0]:.2f}, IQM {100 * w[1]:.2f} points; "
                f"{1000 * seconds[name] / args.reps:.0f} ms an interval pair"
            )


if __name__ == "__main__":
    main()
