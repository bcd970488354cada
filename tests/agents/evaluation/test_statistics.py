"""Win-rate statistics: McNemar's exact test, the IQM and the seed/deal bootstrap."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import trim_mean

from agents.evaluation.statistics import (
    bootstrap_win_rates,
    iqm,
    mcnemar,
    percentile_interval,
    seed_statistics,
)


def test_mcnemar_hand_worked_cases():
    # 10 discordant deals, all won by A: p = 2 * (1/2)**10.
    r = mcnemar([True] * 10 + [False] * 5, [False] * 10 + [False] * 5)
    assert (r.a_only, r.b_only, r.both, r.neither, r.n, r.discordant) == (10, 0, 0, 5, 15, 10)
    assert r.pvalue == pytest.approx(2 / 1024, rel=1e-12)
    # Mirror image: the same p, the counts swapped.
    s = mcnemar([False] * 10, [True] * 10)
    assert (s.a_only, s.b_only) == (0, 10) and s.pvalue == pytest.approx(2 / 1024)
    # 3 against 1: P(X <= 1) + P(X >= 3) for X ~ Bin(4, 1/2) = (1 + 4 + 4 + 1) / 16.
    t = mcnemar([1, 1, 1, 0, 1, 0], [0, 0, 0, 1, 1, 0])
    assert (t.a_only, t.b_only, t.both, t.neither) == (3, 1, 1, 1)
    assert t.pvalue == pytest.approx(10 / 16)
    # Balanced discordance: p = 1; no discordant deal at all: p = 1.
    assert mcnemar([1, 0], [0, 1]).pvalue == pytest.approx(1.0)
    none = mcnemar([1, 1, 0], [1, 1, 0])
    assert none.discordant == 0 and none.pvalue == 1.0
    with pytest.raises(ValueError, match="same deals"):
        mcnemar([1, 0], [1])


def test_iqm_known_values():
    assert iqm([1, 2, 3, 4, 5, 6, 7, 8]) == pytest.approx(4.5)  # cut 2 a side: (3+4+5+6)/4
    assert iqm([10, 0, 1, 0]) == pytest.approx(0.5)  # sorted 0 0 1 10, cut 1 a side
    assert iqm([0.2, 0.4, 0.9]) == pytest.approx(0.5)  # under 4 values: the mean
    assert iqm([7.0]) == 7.0
    x = np.random.default_rng(0).random((5, 13))
    assert iqm(x, axis=1) == pytest.approx(trim_mean(x, 0.25, axis=1))
    assert iqm(x[0]) == pytest.approx(trim_mean(x[0], 0.25))
    with pytest.raises(ValueError):
        iqm([])


def _seeds(rates=(0.10, 0.12, 0.15, 0.11, 0.13), deals=1000, seed=1):
    rng = np.random.default_rng(seed)
    return [rng.random(deals) < p for p in rates]


def test_bootstrap_is_reproducible_and_contains_the_estimate():
    wins = _seeds()
    a = seed_statistics(wins, n_boot=500, seed=3)
    b = seed_statistics(wins, n_boot=500, seed=3)
    assert a == b
    assert seed_statistics(wins, n_boot=500, seed=4) != a
    rates = [float(np.mean(w)) for w in wins]
    assert a.win_rates == pytest.approx(rates)
    assert a.mean == pytest.approx(np.mean(rates))
    assert a.iqm == pytest.approx(trim_mean(rates, 0.25))
    for est, (low, high) in ((a.mean, a.mean_ci), (a.iqm, a.iqm_ci)):
        assert low < est < high
        assert high - low < 0.1


def test_bootstrap_resamples_seeds_and_deals():
    # One seed: only the deals vary, and the interval is about the binomial one.
    one = seed_statistics(_seeds(rates=(0.3,), deals=400), n_boot=2000)
    p = one.mean
    half = 1.96 * np.sqrt(p * (1 - p) / 400)
    assert one.mean_ci == pytest.approx((p - half, p + half), abs=0.01)
    # Identical seeds: every seed has the same rate, yet the deals still spread it.
    same = [np.array([True, False] * 50)] * 3
    s = seed_statistics(same, n_boot=1000)
    assert s.mean == 0.5 and s.mean_ci[0] < 0.45 and s.mean_ci[1] > 0.55
    # With the deals paired, a hard deal is hard for every seed: resample rows agree more.
    rng = np.random.default_rng(0)
    boot = bootstrap_win_rates(same, 5, rng)
    assert boot.shape == (5, 3) and np.all(boot == boot[:, :1])
    # Unpaired: seeds of different lengths are allowed, paired ones are not.
    ragged = [[True, False, False], [True] * 5 + [False] * 5]
    assert bootstrap_win_rates(ragged, 7, rng, paired_deals=False).shape == (7, 2)
    with pytest.raises(ValueError, match="same deals"):
        bootstrap_win_rates(ragged, 7, rng)
    with pytest.raises(ValueError):
        seed_statistics([], n_boot=10)
    with pytest.raises(ValueError):
        seed_statistics([[True]], n_boot=0)


def test_percentile_interval():
    assert percentile_interval(np.arange(101.0)) == pytest.approx((2.5, 97.5))
    assert percentile_interval(np.arange(101.0), 0.5) == pytest.approx((25, 75))
