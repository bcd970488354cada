"""GameState: snapshots, copies, pickling, equality, assembling from parts, refused moves."""

from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest

from forty_thieves_env import PRESETS, GameState, IllegalMoveError, Variant, deal, parse_card
from forty_thieves_env.engine.config import config_for
from forty_thieves_env.engine.layout import Cfg


def random_play(g: GameState, moves: int, seed: int) -> list[int]:
    """Play up to ``moves`` random legal actions in place; return them (stops when stuck)."""
    rng = np.random.default_rng(seed)
    played = []
    for _ in range(moves):
        legal = g.legal_actions()
        if not legal:
            break
        a = int(rng.choice(legal))
        g.apply(a)
        played.append(a)
    return played


def cards(text: str) -> list[int]:
    return [parse_card(t) for t in text.split()]


# -------------------------------------------------------------------- snapshots


@pytest.mark.parametrize("name", list(PRESETS))
def test_snapshot_restore_is_exact(name: str) -> None:
    g = deal(name, 31)
    random_play(g, 20, seed=1)
    snap = g.snapshot()
    before = g.array.copy()
    buffer = g.array
    played = random_play(g, 60, seed=2)
    assert played and not np.array_equal(g.array, before)
    g.restore(snap)
    assert np.array_equal(g.array, before)
    assert g.array is buffer  # restored in place: views held by callers stay valid
    # Replaying the same moves from the restored state gives the same game again.
    again = g.copy()
    for a in played:
        again.apply(a)
    g2 = g.copy()
    random_play(g2, 60, seed=2)
    assert again == g2


def test_snapshot_is_a_copy() -> None:
    g = deal("classic", 3)
    snap = g.snapshot()
    snap[:] = 0
    assert g == deal("classic", 3)
    assert snap.dtype == np.int8 and snap.shape == (int(g.cfg[Cfg.SIZE]),)


def test_restore_rejects_a_snapshot_of_another_size() -> None:
    g = deal("classic", 3)
    with pytest.raises(ValueError):
        g.restore(deal("maria", 3).snapshot())
    assert g == deal("classic", 3)


# ------------------------------------------------------------------------ copies


def _copiers() -> list:
    return [GameState.copy, copy.copy, copy.deepcopy]


@pytest.mark.parametrize("copier", _copiers(), ids=["copy", "copy.copy", "copy.deepcopy"])
def test_copies_are_independent(copier) -> None:
    g = deal("josephine", 8)
    c = copier(g)
    assert c == g and c is not g and c.array is not g.array
    assert c.variant == g.variant
    random_play(c, 30, seed=5)
    assert g == deal("josephine", 8), "playing on the copy changed the original"
    random_play(g, 10, seed=6)
    assert c != g


# ----------------------------------------------------------------------- pickle


@pytest.mark.parametrize("name", list(PRESETS))
@pytest.mark.parametrize("protocol", [2, pickle.HIGHEST_PROTOCOL])
def test_pickle_round_trip(name: str, protocol: int) -> None:
    g = deal(PRESETS[name].replace(auto_play_safe=name == "relaxed"), 77)
    random_play(g, 40, seed=3)
    back = pickle.loads(pickle.dumps(g, protocol=protocol))
    assert back == g and back.array is not g.array
    assert np.array_equal(back.array, g.array) and back.array.dtype == np.int8
    assert back.variant == g.variant
    # The config is rebuilt from the variant (not pickled): the cached one is reused.
    assert back.cfg is config_for(g.variant)
    # And the copy plays on exactly like the original.
    assert random_play(back, 30, seed=4) == random_play(g, 30, seed=4)
    assert back == g


# -------------------------------------------------------------------- equality


def test_equality_and_hash() -> None:
    a, b = deal("classic", 5), deal("classic", 5)
    assert a == b and hash(a) == hash(b)
    assert len({a, b}) == 1
    b.play("s")
    assert a != b
    assert len({a, b}) == 2
    # Same array, other rules: not the same state (classic and streets arrays have one size).
    streets = GameState(PRESETS["streets"], a.array)
    assert np.array_equal(streets.array, a.array) and streets != a
    assert a != a.array and a != "classic"
    assert (a == a.array) is False


def test_constructor_copies_and_checks_the_array() -> None:
    g = deal("classic", 5)
    h = GameState(g.variant, g.array)
    assert h == g and h.array is not g.array
    size = int(g.cfg[Cfg.SIZE])
    with pytest.raises(ValueError, match=rf"must be \({size},\) int8"):
        GameState(g.variant, g.array.astype(np.int16))
    with pytest.raises(ValueError, match=rf"must be \({size},\) int8"):
        GameState(g.variant, g.array[:-1])
    empty = GameState(PRESETS["maria"])
    assert empty.columns == [[]] * 9 and empty.stock == [] and empty.cards_on_foundations == 0


# ------------------------------------------------------------------ from_parts


def test_from_parts_rebuilds_any_state() -> None:
    for name in PRESETS:
        g = deal(name, 4)
        random_play(g, 50, seed=9)
        h = GameState.from_parts(g.variant, g.columns, g.stock, g.waste, g.foundations, g.face_down, g.redeals_left)
        assert h == g, name


def test_from_parts_orders_the_two_piles_of_a_suit() -> None:
    # The engine keeps pile 2*suit at least as high as pile 2*suit+1, whatever order is given.
    g = GameState.from_parts(PRESETS["classic"], [[]] * 10, foundations=[0, 3, 5, 1, 0, 0, 2, 2])
    assert g.foundations == [3, 0, 5, 1, 0, 0, 2, 2]


def test_from_parts_defaults() -> None:
    g = GameState.from_parts(PRESETS["relaxed"], [cards("KD QD")] + [[]] * 9, stock=cards("2C 3C"))
    assert g.redeals_left == 1 and g.face_down == [0] * 10
    assert g.stock == cards("2C 3C")  # next card to turn first
    g.play("s")
    assert g.waste == cards("2C")


@pytest.mark.parametrize(
    ("kwargs", "words"),
    [
        ({"columns": [[]] * 9}, "classic has 10 columns, got 9"),
        ({"columns": [[]] * 11}, "classic has 10 columns, got 11"),
        ({"stock": [0] * 65}, "stock (65) and waste (0) together hold 65 cards; classic deals 64"),
        ({"waste": [0] * 65}, "stock (0) and waste (65) together hold 65 cards; classic deals 64"),
        ({"stock": [0] * 40, "waste": [0] * 25}, "stock (40) and waste (25) together hold 65 cards; classic deals 64"),
        ({"foundations": [14, 0, 0, 0, 0, 0, 0, 0]}, "foundation heights must be 0..13"),
        ({"foundations": [0, 0, 0, -1, 0, 0, 0, 0]}, "foundation heights must be 0..13"),
        ({"columns": [[0] * 17] + [[]] * 9}, "column 1 holds 17 cards, at most 16 fit"),
        (
            {"columns": [[], cards("TC QS 9C 5S JH KC")] + [[]] * 8},
            "column 2 card 6 (rank 13) could carry a run to 18 cards, more than the 16 a column holds",
        ),
        ({"columns": [[1, 2]] * 10, "face_down": [0, 0, 2] + [0] * 7}, "column 3: 2 face-down cards under 2 cards"),
        ({"columns": [[1, 2]] * 10, "face_down": [-1] + [0] * 9}, "column 1: -1 face-down cards under 2 cards"),
        ({"columns": [[]] * 10, "face_down": [1] + [0] * 9}, "column 1: 1 face-down cards under 0 cards"),
    ],
)
def test_from_parts_validation(kwargs: dict, words: str) -> None:
    args = {"columns": [[]] * 10, **kwargs}
    with pytest.raises(ValueError) as info:
        GameState.from_parts(PRESETS["classic"], **args)
    assert words in str(info.value)


# --------------------------------------------------------------- refused moves


def _position() -> GameState:
    """Classic deal 12345: column 1 ends 5H, column 2 ends 4S, column 8 ends AH."""
    return deal("classic", 12345)


@pytest.mark.parametrize(
    ("move", "words"),
    [
        ("1>2", "illegal move 1>2: 5H does not go on 4S (columns build down in suit)"),
        ("1>f", "illegal move 1>f: 5H does not fit on any foundation"),
        ("w>f", "illegal move w>f: the waste is empty"),
        ("w>3", "illegal move w>3: the waste is empty"),
    ],
)
def test_illegal_move_names_move_and_reason_and_changes_nothing(move: str, words: str) -> None:
    g = _position()
    before = g.array.copy()
    with pytest.raises(IllegalMoveError) as info:
        g.play(move)
    assert str(info.value) == words
    assert np.array_equal(g.array, before)


def test_illegal_stock_turn() -> None:
    g = GameState.from_parts(PRESETS["classic"], [cards("KD")] + [[]] * 9, waste=cards("2C"))
    before = g.array.copy()
    with pytest.raises(IllegalMoveError, match="illegal move s: the stock is empty and no redeal is left"):
        g.play("s")
    assert np.array_equal(g.array, before)


def test_illegal_run_length() -> None:
    # Josephine column 1 ends in a two-card run 6S 5S; three cards cannot move as one.
    v = PRESETS["josephine"]
    g = GameState.from_parts(v, [cards("KH 6S 5S"), cards("7S")] + [[]] * 8)
    before = g.array.copy()
    with pytest.raises(IllegalMoveError, match=r"illegal move 1>2x3: column 1 ends in a run of 2 card\(s\) in suit"):
        g.play("1>2x3")
    assert np.array_equal(g.array, before)
    assert g.play("1>2x2") == 0
    assert g.columns[:2] == [cards("KH"), cards("7S 6S 5S")]


def test_out_of_range_actions() -> None:
    g = _position()
    before = g.array.copy()
    for action in (-1, 112, 10**6):
        with pytest.raises(IllegalMoveError, match=rf"action {action} is out of range 0..111 for classic"):
            g.apply(action)
    assert np.array_equal(g.array, before)
    assert not g.is_legal(112) and not g.is_legal(-1)


def test_illegal_move_error_is_a_value_error() -> None:
    # Callers that catch ValueError for bad input also catch refused moves.
    assert issubclass(IllegalMoveError, ValueError)


def test_legal_move_reports_cards_home() -> None:
    g = _position()
    assert g.play("8>f") == 1
    assert g.foundations[4] == 1 and g.cards_on_foundations == 1
    assert g.columns[7] == cards("AH 7D 8D")
    assert not g.is_won() and not g.is_stuck()


def test_states_of_custom_variants() -> None:
    v = Variant("tiny", columns=2, cards_per_column=1)
    g = deal(v, 1)
    assert g.array.shape == (int(config_for(v)[Cfg.SIZE]),)
    assert len(g.stock) == 102 and len(g.legal_mask()) == 2 + 4 + 2
