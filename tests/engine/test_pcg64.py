"""The compiled deal draws (:mod:`forty_thieves_env.engine.pcg64`) against numpy's own Generator."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from forty_thieves_env.engine.pcg64 import (
    ST_LEN,
    bounded_uint32,
    check_range,
    draw_deal_from,
    export_state,
    import_state,
    next_uint64,
)
from forty_thieves_env.envs.batch import BatchGames
from forty_thieves_env.envs.sampling import DEAL_RANGE, draw_deal, new_rng
from forty_thieves_env.envs.step import G_DEAL, G_NEXT_DEAL


def _row(rng: np.random.Generator) -> np.ndarray:
    row = np.zeros(ST_LEN, dtype=np.uint64)
    export_state(rng, row)
    return row


@given(seed=st.integers(0, 2**64 - 1), n=st.integers(1, 50))
@settings(max_examples=60, deadline=None)
def test_raw_outputs_and_state_match_numpy(seed: int, n: int) -> None:
    rng = new_rng(seed)
    row = _row(rng)
    ours = [int(next_uint64(row)) for _ in range(n)]
    assert ours == [int(x) for x in rng.bit_generator.random_raw(n)]
    assert import_state(row).bit_generator.state == rng.bit_generator.state


@given(
    seed=st.integers(0, 2**32),
    highs=st.lists(
        st.one_of(st.integers(0, 40), st.integers(0, 2**32 - 1), st.just(2**32 - 1)), min_size=1, max_size=30
    ),
)
@settings(max_examples=80, deadline=None)
def test_bounded_draws_match_integers_in_any_order(seed: int, highs: list[int]) -> None:
    """Mixed ranges, so that the half-used 32-bit output carried between calls is exercised."""
    rng = new_rng(seed)
    row = _row(rng)
    for high in highs:
        assert int(bounded_uint32(row, np.uint64(high))) == int(rng.integers(0, high, endpoint=True))
    assert import_state(row).bit_generator.state == rng.bit_generator.state


@pytest.mark.parametrize("deals", [None, np.arange(1, 1001), np.array([7]), np.array([3, 9])])
def test_deal_draws_match_draw_deal(deals: np.ndarray | None) -> None:
    pool = np.zeros(0, dtype=np.int64) if deals is None else deals.astype(np.int64)
    for seed in range(20):
        rng = new_rng(seed)
        row = _row(rng)
        ours = [int(draw_deal_from(row, pool, *DEAL_RANGE)) for _ in range(100)]
        assert ours == [draw_deal(rng, deals) for _ in range(100)]


def test_export_refuses_other_bit_generators_and_ranges_past_32_bits() -> None:
    row = np.zeros(ST_LEN, dtype=np.uint64)
    with pytest.raises(TypeError, match="PCG64"):
        export_state(np.random.Generator(np.random.MT19937(1)), row)
    assert not row.any()
    check_range(0, 2**32 - 1, 10)
    with pytest.raises(ValueError, match="2\\*\\*32"):
        check_range(0, 2**32, 10)


def test_batch_generators_are_snapshots_one_draw_ahead() -> None:
    """Game i's snapshot continues the sequence a single env seeded with seed + i draws."""
    games = BatchGames(3, "classic")
    games.reset(seed=40)
    for i, snap in enumerate(games.generators()):
        single = new_rng(40 + i)
        first, second = draw_deal(single, None), draw_deal(single, None)
        assert int(games.games[i, G_DEAL]) == first  # the deal being played
        assert int(games.games[i, G_NEXT_DEAL]) == second  # drawn in advance
        assert snap.bit_generator.state == single.bit_generator.state
        snap.random()  # drawing from a snapshot leaves the game's generator alone
    assert [g.bit_generator.state for g in games.generators()] == [_state_after(40 + i, 2) for i in range(3)]


def _state_after(seed: int, draws: int) -> dict:
    rng = new_rng(seed)
    for _ in range(draws):
        draw_deal(rng, None)
    return rng.bit_generator.state
