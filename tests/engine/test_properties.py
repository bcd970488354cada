"""Property tests: the fast engine against the plain reference in ``tests/reference.py``.

Hypothesis draws a deal number (or a whole random position) and a sequence of legal moves, in
every preset and with the ``supermove``, ``auto_play_safe`` and redeal options. After every
move the state must keep its invariants (104 cards, two of each; ordered foundations that never
shrink; sane face-down counts; nothing past the ends of the arrays), every action must answer
``is_legal`` as ``legal_mask`` does, a refused action must leave the state untouched, the text
format must round-trip, and the engine's legal moves, and the position each of them leads to,
must be exactly the reference's.

``make test`` runs a small sample (well under a minute on two cores); ``make test-slow`` runs
the bigger fuzz marked ``slow``.
"""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
from cases import VARIANTS, variant_id
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from reference import RefGame, from_code, rank

from forty_thieves_env import (
    EMPTY,
    GameState,
    IllegalMoveError,
    Variant,
    deal,
    format_move,
    format_position,
    parse_position,
    shuffled_pack,
)
from forty_thieves_env.engine.cards import N_CODES, N_RANKS
from forty_thieves_env.engine.layout import Cfg, Slot

deal_numbers = st.one_of(st.integers(1, 31999), st.integers(32000, 10**15))

FAST = settings(max_examples=3, deadline=None, suppress_health_check=[HealthCheck.too_slow])
SLOW = settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])


# ------------------------------------------------------------------------- the checks


def check_invariants(game: GameState, before: GameState | None = None) -> None:
    """Everything that must hold in any position reached by legal play."""
    v = game.variant
    columns, heights = game.columns, game.foundations
    # 104 cards, each of the 52 exactly twice, across columns, stock, waste and foundations.
    seen = Counter(c for col in columns for c in col) + Counter(game.stock) + Counter(game.waste)
    for pile, height in enumerate(heights):
        seen.update((pile // 2) * N_RANKS + r for r in range(height))
    assert seen == dict.fromkeys(range(N_CODES), 2)
    # Foundations: 0..13, the first pile of a suit never the lower one.
    assert all(0 <= h <= N_RANKS for h in heights)
    assert all(heights[2 * s] >= heights[2 * s + 1] for s in range(4))
    # Sizes, and nothing left behind past the end of a column, the stock or the waste.
    assert len(columns) == v.columns
    assert all(len(col) <= v.max_depth for col in columns)
    assert all(fits(v, p, c) for col in columns for p, c in enumerate(col, 1))  # no column can outgrow its slots
    assert len(game.stock) + len(game.waste) <= v.stock_size
    tab = game.tableau
    for i, col in enumerate(columns):
        assert (tab[i, len(col) :] == EMPTY).all()
    a, cfg = game.array, game.cfg
    stock = a[cfg[Cfg.OFF_STOCK] : cfg[Cfg.OFF_STOCK] + v.stock_size]
    waste = a[cfg[Cfg.OFF_WASTE] : cfg[Cfg.OFF_WASTE] + v.stock_size]
    assert (stock[a[Slot.STOCK_LEN] :] == EMPTY).all() and (stock[: a[Slot.STOCK_LEN]] >= 0).all()
    assert (waste[a[Slot.WASTE_LEN] :] == EMPTY).all() and (waste[: a[Slot.WASTE_LEN]] >= 0).all()
    # Face-down cards: under at least one face-up card, none in an empty column.
    for col, down in zip(columns, game.face_down, strict=True):
        assert 0 <= down < len(col) or down == len(col) == 0
    if v.face_down == 0:
        assert game.face_down == [0] * v.columns
    assert 0 <= game.redeals_left <= v.redeals
    if before is not None:
        # Foundations never give a card back; no card is ever turned face down again, and the
        # face-down cards are the ones that were face down; redeals are only used up.
        assert all(h >= h0 for h, h0 in zip(heights, before.foundations, strict=True))
        for col, down, col0, down0 in zip(columns, game.face_down, before.columns, before.face_down, strict=True):
            assert down <= down0
            assert col[:down] == col0[:down]
        assert game.redeals_left <= before.redeals_left


def legal_texts(game: GameState) -> set[str]:
    return {format_move(game.variant, a) for a in game.legal_actions()}


def check_against_reference(game: GameState, ref: RefGame, illegal: list[int]) -> list[str]:
    """Compare one position with the reference; return its legal moves (sorted).

    Checks every action's ``is_legal`` against ``legal_mask``, that the actions in ``illegal``
    are refused without a trace, that each legal move leads to the reference's position with
    the same count of cards sent home, and the text round trip.
    """
    assert RefGame.from_state(game).key() == ref.key()
    snap = game.snapshot()
    mask = game.legal_mask()
    n = len(mask)
    assert [game.is_legal(a) for a in range(n)] == mask.tolist()
    assert not game.is_legal(-1) and not game.is_legal(n)
    for out_of_range in (-1, n):
        with pytest.raises(IllegalMoveError):
            game.apply(out_of_range)
    moves = sorted(format_move(game.variant, a) for a in np.flatnonzero(mask))
    assert set(moves) == ref.legal_moves()
    assert len(moves) == int(mask.sum())
    assert game.is_won() == ref.is_won()
    assert game.is_stuck() == ref.is_stuck()
    for action in illegal:
        if not mask[action]:
            with pytest.raises(IllegalMoveError):
                game.apply(action)
            assert np.array_equal(game.array, snap)
    for move in moves:
        trial, ref_trial = game.copy(), ref.copy()
        assert trial.play(move) == ref_trial.apply(move), move
        assert RefGame.from_state(trial).key() == ref_trial.key(), move
        check_invariants(trial, game)
    assert np.array_equal(game.array, snap)
    assert parse_position(format_position(game)) == game
    return moves


def play_out(game: GameState, ref: RefGame, data: st.DataObject, steps: int) -> None:
    """Play ``steps`` random legal moves (drawn by hypothesis), checking every position."""
    n = len(game.legal_mask())
    for _ in range(steps):
        check_invariants(game)
        illegal = data.draw(st.lists(st.integers(0, n - 1), max_size=3), label="illegal tries")
        moves = check_against_reference(game, ref, illegal)
        if not moves:
            break
        move = data.draw(st.sampled_from(moves), label="move")
        before = game.copy()
        assert game.play(move) == ref.apply(move)
        check_invariants(game, before)
    # Where the play-out ends, every refused action (not just a sample) must leave no trace.
    check_against_reference(game, ref, list(range(n)))


# -------------------------------------------------------------------------- from deals


def run_deal(variant: Variant, number: int, data: st.DataObject, steps: int) -> None:
    game = deal(variant, number)
    ref = RefGame.deal(variant, shuffled_pack(number).tolist())
    assert RefGame.from_state(game).key() == ref.key()  # the deal itself, auto-play included
    play_out(game, ref, data, steps)


@pytest.mark.parametrize("variant", VARIANTS, ids=variant_id)
@FAST
@given(number=deal_numbers, data=st.data())
def test_random_play_from_a_deal_matches_the_reference(variant: Variant, number: int, data: st.DataObject) -> None:
    run_deal(variant, number, data, steps=25)


@pytest.mark.slow
@pytest.mark.parametrize("variant", VARIANTS, ids=variant_id)
@SLOW
@given(number=deal_numbers, data=st.data())
def test_long_random_play_from_a_deal_matches_the_reference(variant: Variant, number: int, data: st.DataObject) -> None:
    run_deal(variant, number, data, steps=120)


# ---------------------------------------------------------------------- random positions


def chains(cards: list[int], alternate: bool) -> list[int]:
    """``cards`` reordered into descending runs (in suit, or in alternating colours), longest
    first, so that slicing the list into columns leaves runs at the ends of many columns."""
    left = sorted(cards, key=lambda c: -(c % N_RANKS))
    out: list[int] = []
    while left:
        run = [left.pop(0)]
        while True:
            top = run[-1]
            nxt = next(
                (
                    c
                    for c in left
                    if c % N_RANKS == top % N_RANKS - 1
                    and ((c // N_RANKS >= 2) != (top // N_RANKS >= 2) if alternate else c // N_RANKS == top // N_RANKS)
                ),
                None,
            )
            if nxt is None:
                break
            left.remove(nxt)
            run.append(nxt)
        out += run
    return out


def fits(variant: Variant, position: int, card: int) -> bool:
    """Whether ``card`` may lie at 1-based ``position`` of a column: the run it could carry
    (its rank minus one more cards) still fits the column's slots. Every dealt card and every
    built run does, so every position play reaches does; loading refuses any other."""
    return position + card % N_RANKS <= variant.max_depth


def make_room(draw: st.DrawFn, variant: Variant, columns: list[list[int]]) -> None:
    """Rearrange ``columns`` in place until every card :func:`fits` where it lies.

    Each card that does not fit is swapped with a card it can trade places with (drawn), or,
    where there is none, moved onto a column shorter than ``cards_per_column``, whose next
    slot takes any card; either way one misfit less and no new one. One of the two always
    exists while no column is longer than ``LONGEST``: if every other column is at least
    ``cards_per_column`` long, their low slots (positions up to ``cards_per_column``, which
    take any card, a king included) are more than the 24 jacks, queens and kings of the pack
    in every preset, so one of them holds a ten or lower, which fits any slot up to
    ``LONGEST``.
    """
    while True:
        misfit = next(
            ((i, p) for i, col in enumerate(columns) for p, c in enumerate(col, 1) if not fits(variant, p, c)), None
        )
        if misfit is None:
            return
        i, p = misfit
        card = columns[i][p - 1]
        partners = [
            (j, q)
            for j, col in enumerate(columns)
            for q, c in enumerate(col, 1)
            if fits(variant, p, c) and fits(variant, q, card)
        ]
        if partners:
            j, q = draw(st.sampled_from(partners))
            columns[i][p - 1], columns[j][q - 1] = columns[j][q - 1], card
        else:
            short = [j for j, col in enumerate(columns) if j != i and len(col) < variant.cards_per_column]
            assert short, "no partner and no short column: LONGEST is too big"
            del columns[i][p - 1]
            columns[draw(st.sampled_from(short))].append(card)


LONGEST = 6  # most cards a random column starts with


@st.composite
def positions(draw: st.DrawFn, variant: Variant) -> GameState:
    """A random position of ``variant``: random foundations, the other cards spread over
    stock, waste and columns (some empty), shuffled or laid out in runs of either build rule.

    Only positions that loading accepts, as play could reach them: stock and waste together
    hold no more than the stock size, and :func:`make_room` moves each column card that could
    carry a run past the column's slots (rank ``r`` at position ``p`` with ``p + r`` over
    ``max_depth``) to a slot where it fits.
    """
    heights = []
    for _ in range(4):
        low = draw(st.integers(0, N_RANKS))
        heights += [draw(st.integers(low, N_RANKS)), low]
    in_play = []
    for code in range(N_CODES):
        suit, r = divmod(code, N_RANKS)
        home = (heights[2 * suit] > r) + (heights[2 * suit + 1] > r)
        in_play += [code] * (2 - home)
    cards = draw(st.permutations(in_play))
    longest = LONGEST
    # Mostly few cards in stock and waste, so that the columns hold most of the play; never
    # more than the stock size together.
    lo = max(0, len(cards) - longest * variant.columns)
    assert lo <= variant.stock_size
    n_sw = draw(st.integers(lo, min(len(cards), variant.stock_size, max(lo, 20))))
    n_stock = draw(st.integers(0, n_sw))
    stock, waste, rest = cards[:n_stock], cards[n_stock:n_sw], cards[n_sw:]
    layout = draw(st.sampled_from(["shuffled", "suit runs", "colour runs"]))
    if layout != "shuffled":
        rest = chains(rest, alternate=layout == "colour runs")
    columns: list[list[int]] = []
    start = 0
    for i in range(variant.columns):
        left = len(rest) - start
        room = longest * (variant.columns - i - 1)
        size = draw(st.integers(max(0, left - room), min(longest, left)))
        columns.append(list(rest[start : start + size]))
        start += size
    make_room(draw, variant, columns)
    face_down = [draw(st.integers(0, max(len(col) - 1, 0))) if variant.face_down else 0 for col in columns]
    redeals = draw(st.integers(0, variant.redeals))
    return GameState.from_parts(variant, columns, stock, waste, heights, face_down, redeals)


def run_position(variant: Variant, data: st.DataObject, steps: int) -> None:
    game = data.draw(positions(variant), label="position")
    check_invariants(game)
    play_out(game, RefGame.from_state(game), data, steps)


@pytest.mark.parametrize("variant", VARIANTS, ids=variant_id)
@FAST
@given(data=st.data())
def test_random_positions_match_the_reference(variant: Variant, data: st.DataObject) -> None:
    run_position(variant, data, steps=6)


@pytest.mark.slow
@pytest.mark.parametrize("variant", VARIANTS, ids=variant_id)
@SLOW
@given(data=st.data())
def test_many_random_positions_match_the_reference(variant: Variant, data: st.DataObject) -> None:
    run_position(variant, data, steps=20)


# --------------------------------------------------------------------- the reference itself


def test_reference_reads_cards_like_the_engine() -> None:
    """The reference's card text must name the same cards as the engine's codes."""
    from forty_thieves_env.text.notation import card_text

    for code in range(N_CODES):
        assert from_code(code) == card_text(code)
        assert rank(from_code(code)) == code % N_RANKS + 1
