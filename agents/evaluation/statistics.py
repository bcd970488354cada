"""Statistics of win rates: one agent on a set of deals, two agents on the same deals, and
one recipe trained with several seeds.

* :func:`wilson_interval`: the Wilson score interval of ``wins / n`` (one results file).
* :func:`mcnemar`: two agents on the same deals. Only the deals exactly one of them won
  say which is better; under "equally good" each such deal is a fair coin, so the p-value
  is the exact two-sided binomial test of the discordant counts (McNemar's exact test).
* :func:`seed_statistics`: one recipe, several training seeds, each evaluated on the same
  deals. Point estimates are the mean and the interquartile mean (IQM: the mean of the
  middle half, as rliable reports) of the per-seed win rates; the 95 % intervals are
  percentile bootstrap intervals that resample the seeds *and* the deals (see
  :func:`bootstrap_win_rates`), seeded, so the same call gives the same interval.

scipy (the ``eval`` extra) gives the binomial tests; the rest is numpy.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

#: Bootstrap resamples unless told otherwise: percentile ends stable to about 0.1 point of win rate.
N_BOOT = 2000


def wilson_interval(wins: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """Wilson score interval for a win rate (via ``scipy.stats.binomtest``); ``(0, 1)`` for no games."""
    if n == 0:
        return 0.0, 1.0
    from scipy.stats import binomtest

    ci = binomtest(int(wins), int(n)).proportion_ci(confidence_level=confidence, method="wilson")
    return float(ci.low), float(ci.high)


@dataclass(frozen=True)
class McNemarResult:
    """Two agents, A and B, on the same deals (see :func:`mcnemar`).

    Attributes:
        a_only: Deals A won and B lost.
        b_only: Deals B won and A lost.
        both: Deals both won.
        neither: Deals both lost.
        pvalue: Exact two-sided binomial p-value of ``a_only`` in ``a_only + b_only``
            fair coin flips; 1 when there is no discordant deal.
    """

    a_only: int
    b_only: int
    both: int
    neither: int
    pvalue: float

    @property
    def n(self) -> int:
        """Deals compared."""
        return self.a_only + self.b_only + self.both + self.neither

    @property
    def discordant(self) -> int:
        """Deals exactly one agent won."""
        return self.a_only + self.b_only


def mcnemar(a_won: Sequence[bool], b_won: Sequence[bool]) -> McNemarResult:
    """McNemar's exact test for two agents' results on the same deals, in the same order.

    Args:
        a_won: Whether A won each deal.
        b_won: Whether B won each deal (same length, same deals).

    Returns:
        The counts and ``scipy.stats.binomtest(a_only, a_only + b_only, 0.5)``'s p-value
        (two-sided); 10 discordant deals all won by A give ``2 / 1024``.

    Raises:
        ValueError: The sequences differ in length.
    """
    a = np.asarray(a_won, dtype=bool)
    b = np.asarray(b_won, dtype=bool)
    if a.shape != b.shape or a.ndim != 1:
        raise ValueError(f"mcnemar needs two results on the same deals, got {a.shape} and {b.shape}")
    a_only = int(np.sum(a & ~b))
    b_only = int(np.sum(b & ~a))
    pvalue = 1.0
    if a_only + b_only:
        from scipy.stats import binomtest

        pvalue = float(binomtest(a_only, a_only + b_only, 0.5).pvalue)
    return McNemarResult(a_only, b_only, int(np.sum(a & b)), int(np.sum(~a & ~b)), min(pvalue, 1.0))


def iqm(values: Sequence[float] | np.ndarray, axis: int = -1) -> np.ndarray | float:
    """Interquartile mean: the mean after cutting ``floor(n / 4)`` values from each end.

    The same as ``scipy.stats.trim_mean(values, 0.25)`` (what rliable computes): with fewer
    than 4 values nothing is cut and it is the mean.

    Args:
        values: The values, along ``axis`` (several rows at once for a 2-D array).
        axis: The axis to reduce.

    Returns:
        A float for 1-D input, else an array without ``axis``.
    """
    x = np.sort(np.asarray(values, dtype=np.float64), axis=axis)
    n = x.shape[axis]
    if n == 0:
        raise ValueError("iqm of no values")
    cut = n // 4
    middle = np.take(x, np.arange(cut, n - cut), axis=axis).mean(axis=axis)
    return float(middle) if np.ndim(middle) == 0 else middle


def bootstrap_win_rates(
    wins: Sequence[Sequence[bool]], n_boot: int, rng: np.random.Generator, paired_deals: bool = True
) -> np.ndarray:
    """``(n_boot, S)`` per-seed win rates of bootstrap resamples of ``S`` seeds' results.

    Each resample draws ``S`` seeds with replacement and, for each drawn seed, its deals
    with replacement, so an interval covers both the spread between training seeds and the
    luck of the deals.

    Args:
        wins: One sequence per seed of whether each deal was won.
        n_boot: Resamples.
        rng: The generator (seed it for a reproducible interval).
        paired_deals: The seeds played the same deals in the same order (what evaluate's
            files of one group hold): one draw of deal indices per resample serves every
            seed, because a deal hard for one seed is hard for the others; drawing deals
            per seed would treat that shared difficulty as independent noise and give too
            narrow an interval. False: each seed's deals are drawn on their own (the
            seeds may then have played different deals, or different numbers of them).

    Raises:
        ValueError: No seed, a seed without deals, or ``paired_deals`` with seeds of
            different lengths.
    """
    rows = [np.asarray(w, dtype=bool) for w in wins]
    if not rows or any(r.ndim != 1 or r.size == 0 for r in rows):
        raise ValueError("bootstrap needs at least one seed, each with at least one deal")
    s = len(rows)
    seeds = rng.integers(0, s, size=(n_boot, s))
    if paired_deals:
        d = rows[0].size
        if any(r.size != d for r in rows):
            raise ValueError("paired_deals needs every seed to have played the same deals")
        played = np.stack(rows).astype(np.float64)  # (S, D)
        counts = rng.multinomial(d, np.full(d, 1.0 / d), size=n_boot)  # deal draws per resample
        rates = counts @ played.T / d  # (n_boot, S): every seed on each resample's deals
        return np.take_along_axis(rates, seeds, axis=1)
    won = np.array([r.sum() for r in rows])
    deals = np.array([r.size for r in rows])
    # Drawing a seed's D deals with replacement wins Binomial(D, its win rate) of them.
    return rng.binomial(deals[seeds], won[seeds] / deals[seeds]) / deals[seeds]


def percentile_interval(samples: np.ndarray, confidence: float = 0.95) -> tuple[float, float]:
    """The central ``confidence`` range of bootstrap ``samples``."""
    tail = 100 * (1 - confidence) / 2
    low, high = np.percentile(samples, [tail, 100 - tail])
    return float(low), float(high)


@dataclass(frozen=True)
class SeedStatistics:
    """One recipe over several seeds (see :func:`seed_statistics`).

    Attributes:
        win_rates: Each seed's win rate, in the order given.
        mean: Their mean.
        mean_ci: Bootstrap interval of the mean.
        iqm: Their interquartile mean (the mean for fewer than 4 seeds).
        iqm_ci: Bootstrap interval of the IQM.
        n_boot: Resamples.
        confidence: Interval level.
    """

    win_rates: tuple[float, ...]
    mean: float
    mean_ci: tuple[float, float]
    iqm: float
    iqm_ci: tuple[float, float]
    n_boot: int
    confidence: float


def seed_statistics(
    wins: Sequence[Sequence[bool]],
    n_boot: int = N_BOOT,
    confidence: float = 0.95,
    seed: int = 0,
    paired_deals: bool = True,
) -> SeedStatistics:
    """Mean and IQM of per-seed win rates, each with a percentile bootstrap interval.

    Args:
        wins: One sequence per seed of whether each deal was won.
        n_boot: Resamples (:func:`bootstrap_win_rates`).
        confidence: Interval level.
        seed: Seeds the resampling: the same arguments give the same intervals.
        paired_deals: See :func:`bootstrap_win_rates`.
    """
    if n_boot < 1:
        raise ValueError(f"n_boot must be at least 1, got {n_boot}")
    boot = bootstrap_win_rates(wins, n_boot, np.random.default_rng(seed), paired_deals)  # checks wins
    rates = np.array([np.mean(np.asarray(w, dtype=bool)) for w in wins])
    return SeedStatistics(
        win_rates=tuple(float(r) for r in rates),
        mean=float(rates.mean()),
        mean_ci=percentile_interval(boot.mean(axis=1), confidence),
        iqm=float(iqm(rates)),
        iqm_ci=percentile_interval(np.asarray(iqm(boot, axis=1)), confidence),
        n_boot=int(n_boot),
        confidence=float(confidence),
    )
