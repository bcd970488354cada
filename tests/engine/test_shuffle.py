"""The numba ports of PySolFC's generators against pysol-cards' own classes."""

from __future__ import annotations

import numpy as np
import pytest
from pysol_cards.random import LCRandom31, MTRandom

from forty_thieves_env.engine.deals import MS_LIMIT, shuffled_pack


def pysol_pack(number: int) -> np.ndarray:
    rng = LCRandom31(number) if number < MS_LIMIT else MTRandom(number)
    cards = [i % 52 for i in range(104)]
    rng.shuffle(cards)
    return np.asarray(cards, dtype=np.int8)


BOUNDARIES = [1, 2, 12345, 31998, 31999, 32000, 32001, 2**31 - 1, 2**31, 2**32 - 1, 2**32, 2**63 - 1, 2**63, 10**20]


@pytest.mark.parametrize("number", BOUNDARIES)
def test_boundary_numbers_match_pysol_cards(number: int) -> None:
    np.testing.assert_array_equal(shuffled_pack(number), pysol_pack(number))


def test_random_numbers_match_pysol_cards() -> None:
    rng = np.random.default_rng(2026)
    numbers = [*rng.integers(1, MS_LIMIT, 40).tolist(), *rng.integers(MS_LIMIT, 2**62, 40).tolist()]
    for number in numbers:
        np.testing.assert_array_equal(shuffled_pack(number), pysol_pack(number), err_msg=f"deal {number}")


def test_generators_differ_across_the_boundary() -> None:
    # 31999 and 32000 come from different generators: their packs share no long common layout.
    assert (shuffled_pack(31999) != shuffled_pack(32000)).sum() > 80
