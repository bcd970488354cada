"""Variant presets against the rule pages, name look-up, validation and the action-space sizes."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from forty_thieves_env import PRESETS, Variant, get_variant
from forty_thieves_env.engine.actions import max_run_for, n_actions

# What the rule pages in shared/rules say, field by field (the quotes are from the pages):
#   classic: "ten columns of four", "in suit and in suit only", "Exactly one card moves at a
#            time", "The stock runs once - 64 cards".
#   josephine: "The Forty Thieves layout and rules with the one-card restriction dropped: a
#            descending same-suit run ... may be lifted and moved as a block".
#   streets: "Everything as in Forty Thieves ... except that the tableau builds down in
#            alternating colours".
#   maria: "Nine columns of four ... 68 go to the stock, and the tableau builds down in
#            alternating colours".
#   limited: "Twelve columns of three ... same same-suit building and the same
#            one-card-at-a-time rule".
#   rank_and_file: "only the last card of each column is dealt face up; the three under it
#            lie face down", "alternating colours", "a descending run may travel as a block,
#            whole or in part".
#   relaxed: "Relaxed lets you redeal once", "Relaxed lets you move a whole same-suit run at
#            once, with no limit".
# (name, columns, cards per column, face-down, build, run moves, redeals, stock)
EXPECTED = [
    ("classic", 10, 4, 0, "suit", "none", 0, 64),
    ("josephine", 10, 4, 0, "suit", "free", 0, 64),
    ("streets", 10, 4, 0, "alternate", "none", 0, 64),
    ("maria", 9, 4, 0, "alternate", "none", 0, 68),
    ("limited", 12, 3, 0, "suit", "none", 0, 68),
    ("rank_and_file", 10, 4, 3, "alternate", "free", 0, 64),
    ("relaxed", 10, 4, 0, "suit", "free", 1, 64),
]


def test_presets_are_exactly_the_family() -> None:
    assert list(PRESETS) == [row[0] for row in EXPECTED]


@pytest.mark.parametrize("row", EXPECTED, ids=lambda r: r[0])
def test_preset_fields_match_the_rule_pages(row: tuple) -> None:
    name, stock = row[0], row[7]
    v = PRESETS[name]
    assert (v.name, v.columns, v.cards_per_column, v.face_down, v.build, v.run_moves, v.redeals) == row[:7]
    assert v.stock_size == stock
    # No preset plays cards home by itself: that is an option, not a rule of any page.
    assert v.auto_play_safe is False


def test_derived_sizes() -> None:
    assert PRESETS["classic"].max_run == 1 and PRESETS["josephine"].max_run == 13
    assert Variant(run_moves="supermove").max_run == 13
    # A dealt column plus a run under its king, or a whole run in an empty column.
    assert PRESETS["classic"].max_depth == 4 + 12
    assert PRESETS["limited"].max_depth == 3 + 12
    assert Variant(columns=16, cards_per_column=1).max_depth == 13
    assert Variant(columns=1, cards_per_column=20).max_depth == 32


@pytest.mark.parametrize(
    ("name", "size"),
    [
        ("classic", 112),  # 2 + 2*10 + 10*9
        ("josephine", 1192),  # 2 + 2*10 + 10*9*13
        ("streets", 112),
        ("maria", 92),  # 2 + 18 + 9*8
        ("limited", 158),  # 2 + 24 + 12*11
        ("rank_and_file", 1192),
        ("relaxed", 1192),
    ],
)
def test_action_space_sizes(name: str, size: int) -> None:
    assert n_actions(PRESETS[name]) == size


def test_supermove_option_widens_the_action_space() -> None:
    assert n_actions(get_variant("classic", run_moves="supermove")) == 1192


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("classic", "classic"),
        ("CLASSIC", "classic"),
        ("  Relaxed ", "relaxed"),
        ("rank-and-file", "rank_and_file"),
        ("Rank and File", "rank_and_file"),
        ("RANK_AND_FILE", "rank_and_file"),
    ],
)
def test_get_variant_normalises_names(text: str, name: str) -> None:
    assert get_variant(text) is PRESETS[name]


def test_get_variant_passes_variants_through_and_applies_overrides() -> None:
    custom = Variant("mine", columns=8)
    assert get_variant(custom) is custom
    v = get_variant("streets", redeals=2, auto_play_safe=True)
    assert (v.name, v.build, v.redeals, v.auto_play_safe) == ("streets", "alternate", 2, True)
    assert PRESETS["streets"].redeals == 0  # the preset itself is untouched


def test_get_variant_rejects_unknown_names_and_options() -> None:
    with pytest.raises(ValueError, match=r"unknown variant 'spider'; presets are classic, josephine"):
        get_variant("spider")
    with pytest.raises(ValueError, match=r"unknown variant option\(s\) \['colour'\]"):
        get_variant("classic", colour="red")


@pytest.mark.parametrize(
    ("changes", "field", "error", "words"),
    [
        ({"columns": 0}, "columns", ValueError, "must be an integer 1..16, got 0"),
        ({"columns": 17}, "columns", ValueError, "must be an integer 1..16, got 17"),
        ({"columns": "10"}, "columns", TypeError, "must be an integer 1..16, got '10'"),
        ({"columns": True}, "columns", TypeError, "must be an integer 1..16, got True (bool)"),
        ({"cards_per_column": 0}, "cards_per_column", ValueError, "must be an integer >= 1, got 0"),
        ({"cards_per_column": 11}, "cards_per_column", ValueError, "must leave a stock"),  # 110 cards > 104
        ({"cards_per_column": 2.0}, "cards_per_column", TypeError, "must be an integer >= 1, got 2.0 (float)"),
        ({"face_down": 4}, "face_down", ValueError, "must be an integer 0..3, got 4"),  # the exposed card is face up
        ({"face_down": -1}, "face_down", ValueError, "must be an integer >= 0, got -1"),
        ({"redeals": -1}, "redeals", ValueError, "must be an integer 0..100, got -1"),
        ({"redeals": 101}, "redeals", ValueError, "must be an integer 0..100, got 101"),
        ({"redeals": 1.5}, "redeals", TypeError, "must be an integer 0..100, got 1.5 (float)"),
        ({"build": "colour"}, "build", ValueError, "must be one of 'suit', 'alternate', got 'colour'"),
        ({"run_moves": "all"}, "run_moves", ValueError, "must be one of 'none', 'supermove', 'free', got 'all'"),
        ({"run_moves": None}, "run_moves", TypeError, "must be one of 'none', 'supermove', 'free', got None"),
        ({"auto_play_safe": 1}, "auto_play_safe", TypeError, "must be True or False, got 1"),
        ({"auto_play_safe": "no"}, "auto_play_safe", TypeError, "must be True or False, got 'no'"),
    ],
)
def test_invalid_options_name_the_field(changes: dict, field: str, error: type, words: str) -> None:
    for make in (lambda: Variant("x", **changes), lambda: get_variant("classic", **changes)):
        with pytest.raises(error) as info:
            make()
        message = str(info.value)
        assert field in message and words in message, message


def test_numpy_numbers_are_options_like_python_ones() -> None:
    # An integer is an integer however it was made: np.int64 from a config array or a sweep.
    v = get_variant("classic", redeals=np.int64(1), columns=np.int32(9), auto_play_safe=np.bool_(True))
    assert v == get_variant("classic", redeals=1, columns=9, auto_play_safe=True)
    assert hash(v) == hash(get_variant("classic", redeals=1, columns=9, auto_play_safe=True))
    assert type(v.redeals) is int and type(v.auto_play_safe) is bool


def test_get_variant_names_must_be_text() -> None:
    for bad in (None, 5, b"classic"):
        with pytest.raises(TypeError, match="variant must be a preset name"):
            get_variant(bad)  # type: ignore[arg-type]


def test_edge_options_that_are_valid() -> None:
    # 16 columns of 6 leave 8 cards in the stock; 1 column of 103 leaves 1.
    assert Variant(columns=16, cards_per_column=6).stock_size == 8
    assert Variant(columns=1, cards_per_column=103).stock_size == 1
    assert Variant(redeals=100, face_down=3).redeals == 100


def test_variants_are_frozen_and_hashable() -> None:
    v = PRESETS["classic"]
    with pytest.raises(dataclasses.FrozenInstanceError):
        v.columns = 9  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        v.name = "other"  # type: ignore[misc]
    assert v.columns == 10
    assert hash(v) == hash(Variant("classic")) and v == Variant("classic")
    assert v != Variant("classic", redeals=1)
    assert {v: 1}[Variant()] == 1


def test_replace_validates_and_copies() -> None:
    v = PRESETS["limited"]
    w = v.replace(redeals=3)
    assert (w.redeals, w.columns, v.redeals) == (3, 12, 0)
    with pytest.raises(ValueError, match=r"redeals must be an integer 0\.\.100"):
        v.replace(redeals=-2)
    with pytest.raises(TypeError):
        v.replace(colour="red")


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_max_run_inverts_the_action_count(name: str) -> None:
    v = PRESETS[name]
    assert max_run_for(v.columns, n_actions(v)) == v.max_run


@pytest.mark.parametrize("n", [0, 21, 22, 113, 1191])
def test_max_run_refuses_a_count_no_layout_gives(n: int) -> None:
    with pytest.raises(ValueError, match=f"Discrete\\({n}\\) is no action space of 10 columns"):
        max_run_for(10, n)
