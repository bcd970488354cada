"""Text formats: cards, moves and whole positions (what users paste into bug reports)."""

from __future__ import annotations

import re

import numpy as np
import pytest

from forty_thieves_env import (
    PRESETS,
    GameState,
    PositionError,
    Variant,
    card_text,
    deal,
    format_move,
    format_position,
    get_variant,
    parse_card,
    parse_move,
    parse_position,
)
from forty_thieves_env.engine.actions import n_actions
from forty_thieves_env.engine.cards import N_CODES, N_RANKS, RANK_LETTERS, SUIT_LETTERS, SUIT_SYMBOLS
from forty_thieves_env.engine.layout import column_room_problem, stock_room_problem

CLASSIC = PRESETS["classic"]
JOSEPHINE = PRESETS["josephine"]

# ---------------------------------------------------------------------------- cards


def test_all_52_cards_round_trip_in_every_spelling() -> None:
    seen = set()
    for code in range(N_CODES):
        text = card_text(code)
        assert len(text) == 2 and text not in seen
        seen.add(text)
        assert parse_card(text) == code
        assert parse_card(text.lower()) == code
        assert parse_card(f"  {text} ") == code
        assert parse_card(card_text(code, symbols=True)) == code
    assert len(seen) == N_CODES


@pytest.mark.parametrize(
    ("text", "rank", "suit"),
    [
        ("AC", 0, 0),
        ("KD", 12, 3),
        ("TH", 9, 2),
        ("10h", 9, 2),
        ("10H", 9, 2),
        ("th", 9, 2),
        ("7♠", 6, 1),
        ("q♥", 11, 2),
        ("2♦", 1, 3),
        ("J♣", 10, 0),
        ("5♤", 4, 1),  # the hollow symbols too
        ("5♡", 4, 2),
        ("5♢", 4, 3),
        ("5♧", 4, 0),
    ],
)
def test_card_spellings(text: str, rank: int, suit: int) -> None:
    assert parse_card(text) == suit * N_RANKS + rank


def test_card_text_letters_and_symbols() -> None:
    assert card_text(parse_card("10h")) == "TH"
    assert card_text(parse_card("TH"), symbols=True) == "T♥"
    assert [card_text(s * N_RANKS, symbols=True) for s in range(4)] == ["A♣", "A♠", "A♥", "A♦"]
    assert SUIT_LETTERS == "CSHD" and SUIT_SYMBOLS == "♣♠♥♦" and RANK_LETTERS == "A23456789TJQK"
    assert card_text(np.int8(51)) == "KD"


@pytest.mark.parametrize("text", ["", "K", "T", "1H", "11H", "0S", "KX", "KDD", "HK", "#KD", "10", "1 0H", "K D"])
def test_bad_cards_are_rejected(text: str) -> None:
    with pytest.raises(ValueError, match=r"not a card: .*rank A 2-9 T/10 J Q K, then suit S H D C"):
        parse_card(text)


@pytest.mark.parametrize("code", [-1, 52, 104, 127])
def test_bad_card_codes_are_rejected(code: int) -> None:
    with pytest.raises(ValueError, match=f"not a card code: {code}"):
        card_text(code)


# ---------------------------------------------------------------------------- moves


@pytest.mark.parametrize(
    "variant", [*PRESETS.values(), get_variant("classic", run_moves="supermove")], ids=lambda v: v.name
)
def test_every_action_round_trips_through_text(variant: Variant) -> None:
    texts = [format_move(variant, a) for a in range(n_actions(variant))]
    assert len(set(texts)) == len(texts)  # no two actions share a text
    assert [parse_move(variant, t) for t in texts] == list(range(len(texts)))


@pytest.mark.parametrize(
    ("text", "action"),
    [
        ("s", 0),
        ("S", 0),
        ("w>f", 1),
        ("W>F", 1),
        ("w>7", 2 + 6),
        ("3>f", 2 + 10 + 2),
        ("3>7", 2 + 20 + (2 * 9 + 5)),  # column 7 is the 6th destination from column 3
        ("3 > 7", 2 + 20 + (2 * 9 + 5)),
        ("10>1", 2 + 20 + 9 * 9),
        ("3>7x1", 2 + 20 + (2 * 9 + 5)),
    ],
)
def test_move_examples_classic(text: str, action: int) -> None:
    assert parse_move(CLASSIC, text) == action


def test_move_examples_with_runs() -> None:
    # Josephine: 13 actions per column pair, one per run length.
    base = 2 + 20 + (2 * 9 + 5) * 13
    assert parse_move(JOSEPHINE, "3>7") == base
    assert parse_move(JOSEPHINE, "3>7x2") == base + 1
    assert parse_move(JOSEPHINE, "3>7x13") == base + 12
    assert format_move(JOSEPHINE, base + 1) == "3>7x2"
    assert format_move(JOSEPHINE, base) == "3>7"  # a single card has no "x1"
    assert format_move(JOSEPHINE, 0) == "s" and format_move(JOSEPHINE, 1) == "w>f"
    assert parse_move(PRESETS["limited"], "12>11") == 2 + 24 + 11 * 11 + 10


@pytest.mark.parametrize(
    ("variant", "text", "words"),
    [
        (CLASSIC, "0>3", "'0>3': no column 0 in classic (columns 1..10)"),
        (CLASSIC, "3>0", "'3>0': no column 0 in classic (columns 1..10)"),
        (CLASSIC, "11>3", "'11>3': no column 11 in classic (columns 1..10)"),
        (CLASSIC, "w>11", "'w>11': no column 11 in classic (columns 1..10)"),
        (CLASSIC, "11>f", "'11>f': no column 11 in classic (columns 1..10)"),
        (PRESETS["maria"], "10>1", "'10>1': no column 10 in maria (columns 1..9)"),
        (CLASSIC, "3>3", "'3>3': a column cannot move onto itself (3>3)"),
        (JOSEPHINE, "3>3x2", "a column cannot move onto itself"),
        (CLASSIC, "w>fx2", "'w>fx2': only single cards move from the waste or to a foundation"),
        (CLASSIC, "w>3x2", "only single cards move from the waste or to a foundation"),
        (JOSEPHINE, "3>fx2", "only single cards move from the waste or to a foundation"),
        (CLASSIC, "3>7x2", "'3>7x2': classic moves 1..1 cards at once (run_moves='none'), got 2"),
        (JOSEPHINE, "3>7x14", "'3>7x14': josephine moves 1..13 cards at once (run_moves='free'), got 14"),
        (JOSEPHINE, "3>7x0", "josephine moves 1..13 cards at once (run_moves='free'), got 0"),
        (CLASSIC, "garbage", "not a move: 'garbage' (expected 's', 'w>f', '3>f', 'w>7', '3>7' or '3>7x2')"),
        (CLASSIC, "", "not a move: ''"),
        (CLASSIC, "x14", "not a move: 'x14'"),
        (CLASSIC, "f>3", "not a move: 'f>3'"),
        (CLASSIC, "w>w", "not a move: 'w>w'"),
        (CLASSIC, "3>7x", "not a move: '3>7x'"),
        (CLASSIC, "3-7", "not a move: '3-7'"),
        (CLASSIC, "ss", "not a move: 'ss'"),
    ],
)
def test_bad_moves_name_the_problem(variant: Variant, text: str, words: str) -> None:
    with pytest.raises(ValueError) as info:
        parse_move(variant, text)
    assert words in str(info.value)


@pytest.mark.parametrize("action", [-1, 112, 1000])
def test_format_move_rejects_actions_out_of_range(action: int) -> None:
    with pytest.raises(ValueError, match=rf"action {action} out of range 0\.\.111 for classic"):
        format_move(CLASSIC, action)


# ------------------------------------------------------------------------ positions


def random_play(g: GameState, moves: int, seed: int, every=None) -> None:
    """Play up to ``moves`` random legal actions in place, calling ``every(g)`` after each."""
    rng = np.random.default_rng(seed)
    for _ in range(moves):
        legal = g.legal_actions()
        if not legal:
            break
        g.apply(int(rng.choice(legal)))
        if every is not None:
            every(g)


def assert_round_trip(g: GameState) -> None:
    text = format_position(g)
    back = parse_position(text)
    assert back.variant == g.variant
    assert np.array_equal(back.array, g.array), text
    assert format_position(back) == text


@pytest.mark.parametrize("name", list(PRESETS))
def test_position_round_trip_over_random_play(name: str) -> None:
    for number in (2, 40001):
        g = deal(name, number)
        assert_round_trip(g)
        random_play(g, 150, seed=number, every=assert_round_trip)


def test_round_trip_reaches_interesting_positions() -> None:
    # Guard for the test above: random play must reach waste cards, foundation cards and
    # (in Rank and File) turned-up face-down cards, or the round trip proves little.
    g = deal("rank_and_file", 2)
    random_play(g, 150, seed=2)
    assert g.waste and g.cards_on_foundations > 0
    assert any(d < 3 for d in g.face_down)


@pytest.mark.parametrize(
    "variant",
    [
        get_variant("classic", run_moves="supermove", auto_play_safe=True),
        get_variant("maria", redeals=3),
        Variant("easy", redeals=2, columns=12),
        Variant("My-Game", build="alternate"),
        Variant("mine"),  # a custom name with every option at its default
    ],
    ids=lambda v: v.name,
)
def test_round_trip_of_variant_options(variant: Variant) -> None:
    g = deal(variant, 5)
    assert_round_trip(g)
    random_play(g, 40, seed=1, every=assert_round_trip)


@pytest.mark.parametrize(
    "variant",
    [*PRESETS.values(), get_variant("classic", run_moves="supermove"), get_variant("limited", run_moves="supermove")],
    ids=lambda v: v.name + ("-supermove" if v.run_moves == "supermove" else ""),
)
def test_every_position_play_reaches_passes_the_room_checks(variant: Variant) -> None:
    """The room checks refuse only what play cannot reach: a deal and every position random
    play reaches from it keep each column within reach of its slots and stock plus waste
    within the stock size, so each loads back (round trip)."""
    longest = 0

    def check(g: GameState) -> None:
        nonlocal longest
        assert [column_room_problem(variant, col) for col in g.columns] == [""] * variant.columns
        assert stock_room_problem(variant, len(g.stock), len(g.waste)) == ""
        assert_round_trip(g)
        longest = max(longest, *map(len, g.columns))

    for number in (3, 40003):
        g = deal(variant, number)
        check(g)
        random_play(g, 300, seed=number, every=check)
    assert longest > variant.cards_per_column + 1  # runs were built, or the check proves little


def test_variant_line_spelling() -> None:
    g = deal(get_variant("classic", run_moves="supermove", auto_play_safe=True), 1)
    assert format_position(g).splitlines()[0] == "variant: classic run_moves=supermove auto_play_safe=true"
    assert format_position(deal("rank_and_file", 1)).splitlines()[0] == "variant: rank_and_file"
    text = format_position(deal("rank_and_file", 1)).replace("rank_and_file", "Rank-And-File", 1)
    assert parse_position(text) == deal("rank_and_file", 1)


def test_position_lines_for_a_played_game() -> None:
    g = deal("relaxed", 12345)
    g.play("8>f")  # AH home
    g.play("s")  # KC to the waste
    g.play("s")  # KS
    lines = format_position(g).splitlines()
    assert lines[:5] == [
        "variant: relaxed",
        "redeals: 1",
        "stock: " + " ".join(format_position(deal("classic", 12345)).splitlines()[2].split()[3:]),
        "waste: KC KS",
        "foundations: AH",
    ]
    assert lines[12] == "8: AH 7D 8D"


def test_face_down_cards_are_written_with_a_hash() -> None:
    g = deal("rank_and_file", 12345)
    assert format_position(g).splitlines()[5] == "1: #6D #AS #TH 5H"
    g.play("8>f")  # AH home turns up the 8D under it
    assert g.face_down[7] == 2
    assert format_position(g).splitlines()[12] == "8: #AH #7D 8D"
    back = parse_position(format_position(g))
    assert back == g and back.face_down[7] == 2


# An example layout in the shape of the one in docs/engine.md, with its inline notes; the "..." there is
# filled with columns 2-9 so that every card appears exactly twice, each laid out as play
# leaves a column (four dealt cards, then a run built down in suit on the fourth), so that no
# column could outgrow its 16 slots.
EXAMPLE = """\
variant: classic
redeals: 0
stock: KS 2D          # next card to turn first
waste: 5H 9C          # bottom first, top last
foundations: 3S AH    # top card of each non-empty pile
1: KD 9S 8S 7S        # one line per column, bottom first
2: 7C AD JS QS JS TS 9S 8S 7S 6S 5S 4S
3: 3H 8D KS KC QC JC TC 9C 8C 7C 6C 5C 4C 3C 2C
4: AC 5D 2H KH QH JH TH 9H 8H 7H 6H
5: 6D QS 3C QD JD TD 9D 8D 7D 6D 5D 4D 3D 2D
6: 4H TS 8C KC QC JC TC
7: 2C 7D AH KH QH JH TH 9H 8H 7H 6H 5H 4H 3H 2H
8: 5C 4D AC KD QD JD TD 9D
9: 3D 6C AD 6S 5S 4S 3S 2S AS
10: 4C
"""


def test_the_example_layout() -> None:
    g = parse_position(EXAMPLE)
    assert g.variant == CLASSIC and g.redeals_left == 0
    assert [card_text(c) for c in g.stock] == ["KS", "2D"]
    assert [card_text(c) for c in g.waste] == ["5H", "9C"]
    assert g.foundations == [0, 0, 3, 0, 1, 0, 0, 0]  # spades pile 3 high, hearts pile 1
    assert [card_text(c) for c in g.columns[0]] == ["KD", "9S", "8S", "7S"]
    assert [card_text(c) for c in g.columns[9]] == ["4C"]
    assert g.cards_on_foundations == 4
    # The next stock card is KS; the waste top is 9C.
    g.play("s")
    assert [card_text(c) for c in g.waste] == ["5H", "9C", "KS"]
    # Written back, the notes are gone and the position is the same.
    assert parse_position(format_position(g)) == g


def test_comment_and_blank_lines_are_ignored() -> None:
    text = format_position(deal("maria", 9))
    lines = text.splitlines()
    noisy = ["# saved by me", "", *lines[:2], "   ", "  # stock next", *lines[2:7], "", "#", *lines[7:], "", ""]
    assert parse_position("\n".join(noisy)) == deal("maria", 9)
    # Leading and trailing spaces on a line, and Windows line ends, are fine too.
    assert parse_position("\r\n".join("  " + line + " " for line in lines)) == deal("maria", 9)


def test_a_hash_right_before_a_card_is_a_face_down_card_not_a_note() -> None:
    text = format_position(deal("rank_and_file", 3))
    assert "#" in text.splitlines()[5]
    assert parse_position(text) == deal("rank_and_file", 3)


# --------------------------------------------------------------- validation errors

BASE = format_position(deal("classic", 7)).splitlines()
# deal 7: column 1 is "TC QS 9C 5S", foundations empty, stock of 64.


def with_line(index: int, new: str | None) -> str:
    """BASE with line ``index`` (0-based) replaced, or removed when ``new`` is None."""
    lines = list(BASE)
    if new is None:
        del lines[index]
    else:
        lines[index] = new
    return "\n".join(lines) + "\n"


def error_of(text: str) -> str:
    with pytest.raises(PositionError) as info:
        parse_position(text)
    return str(info.value)


def test_base_position_is_valid() -> None:
    assert BASE[5] == "1: TC QS 9C 5S"
    assert parse_position("\n".join(BASE)) == deal("classic", 7)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # field order
        (with_line(0, "redeals: 0"), "line 1: expected field 'variant', got 'redeals: 0'"),
        ("\n".join([BASE[1], BASE[0], *BASE[2:]]), "line 1: expected field 'variant', got 'redeals: 0'"),
        ("\n".join([BASE[0], BASE[1], BASE[3], BASE[2], *BASE[4:]]), "line 3: expected field 'stock', got 'waste:'"),
        (with_line(4, "foundation: "), "line 5: expected field 'foundations', got 'foundation:'"),
        (with_line(2, "stock KS"), "line 3: expected field 'stock', got 'stock KS'"),
        # the variant line
        (with_line(0, "variant: nope"), "line 1: unknown variant 'nope'; presets are classic, josephine"),
        (with_line(0, "variant:"), "line 1: no variant name"),
        (with_line(0, "variant: classic colums=3"), "line 1: bad variant option 'colums=3'; options are columns,"),
        (with_line(0, "variant: classic redeals"), "line 1: bad variant option 'redeals'"),
        (with_line(0, "variant: classic columns=x"), "line 1: variant option columns needs an integer, got 'x'"),
        (
            with_line(0, "variant: classic auto_play_safe=1"),
            "line 1: variant option auto_play_safe needs true or false",
        ),
        (with_line(0, "variant: classic build=diag"), "line 1: variant 'classic': build must be one of"),
        (
            with_line(0, "variant: classic face_down=9"),
            "line 1: variant 'classic': face_down must be an integer 0..3, got 9",
        ),
        # redeals
        (with_line(1, "redeals: 1"), "line 2: 1 redeals left but classic allows 0"),
        (with_line(1, "redeals: x"), "line 2: redeals must be a whole number, got 'x'"),
        (with_line(1, "redeals: 1.0"), "line 2: redeals must be a whole number, got '1.0'"),
        (with_line(1, "redeals: -1"), "line 2: redeals must be a whole number, got '-1'"),
        (with_line(1, "redeals:"), "line 2: redeals must be a whole number, got ''"),
        (with_line(1, "redeals: ²"), "line 2: redeals must be a whole number, got '²'"),
        # cards counted wrong: the line where the extra copy shows up, or the end for a missing one
        (with_line(5, BASE[5] + " TC"), "line 6: TC appears a third time (also on lines 3, 6)"),
        (with_line(4, "foundations: AS"), "line 5: AS appears a third time (also on lines 3, 3)"),
        (with_line(5, "1: TC QS 9C"), "line 15: missing at the end of the position: 5S x1"),
        (with_line(5, "1: TC QS 9C 5C"), "line 14: 5C appears a third time (also on lines 6, 9)"),
        # columns
        (with_line(14, None), "line 14: classic has 10 columns, found 9"),
        ("\n".join([*BASE, "11: "]), "line 16: classic has 10 columns, this is column 11"),
        (with_line(6, "3: " + BASE[6][3:]), "line 7: expected column line '2: ...', got '3: "),
        (with_line(6, "two: " + BASE[6][3:]), "line 7: expected column line '2: ...'"),
        (with_line(6, BASE[6][3:]), "line 7: expected column line '2: ...'"),
        # foundations
        (with_line(4, "foundations: AS AS AS"), "line 5: more than two S foundation piles (AS)"),
        (with_line(4, "foundations: #AS"), "line 5: face-down card '#AS' is only allowed in a column"),
        # face-down cards
        (with_line(5, "1: TC #QS 9C 5S"), "line 6: face-down cards must lie at the bottom, under every face-up card"),
        (with_line(5, "1: #TC #QS #9C #5S"), "line 6: the exposed card of a column is face up"),
        (with_line(2, "stock: #" + BASE[2][7:]), "line 3: face-down card '#"),
        # capacity
        (with_line(5, "1: " + " ".join(["KS"] * 17)), "line 6: column 1 holds 17 cards, at most 16 fit"),
        (with_line(2, "stock: " + " ".join(["KS"] * 65)), "line 3: 65 cards in the stock; classic holds at most 64"),
        (with_line(3, "waste: " + " ".join(["KS"] * 65)), "line 4: 65 cards in the waste; classic holds at most 64"),
        # bad card text
        (with_line(5, "1: TC QS 9C 5Z"), "line 6: not a card: '5Z'"),
        (with_line(3, "waste: 10"), "line 4: not a card: '10'"),
    ],
)
def test_validation_errors_name_the_line_and_the_problem(text: str, expected: str) -> None:
    message = error_of(text)
    assert expected in message, message
    assert re.match(r"line \d+: ", message), message


def moved_from_stock(column: str, taken: str) -> str:
    """BASE with the cards ``taken`` moved from the stock into column 1, written as ``column``:
    every card still appears twice, so only the shape of column 1 can be wrong."""
    stock = BASE[2].split()[1:]
    for card in taken.split():
        stock.remove(card)
    return "\n".join([*BASE[:2], "stock: " + " ".join(stock), *BASE[3:5], "1: " + column, *BASE[6:]]) + "\n"


@pytest.mark.parametrize(
    ("column", "taken", "problem"),
    [
        # KC at position 6 could carry QC..AC: 18 cards, two more than a classic column's 16 slots.
        ("TC QS 9C 5S JH KC", "JH KC", "line 6: column 1 card 6 (rank 13) could carry a run to 18 cards"),
        ("TC QS 9C 5S KC JH", "JH KC", "line 6: column 1 card 5 (rank 13) could carry a run to 17 cards"),
        # JH at position 7 could carry TH..AH: 17 cards.
        ("TC QS 9C KC 5S 3D JH", "JH KC 3D", "line 6: column 1 card 7 (rank 11) could carry a run to 17 cards"),
    ],
)
def test_a_column_that_could_outgrow_its_slots_is_refused(column: str, taken: str, problem: str) -> None:
    """A card at position p of rank r (ace 1) could carry a run to p + r - 1 cards; a column
    where that is more than its slots is refused, as play never lays a card there."""
    assert error_of(moved_from_stock(column, taken)) == problem + ", more than the 16 a column holds"


def test_a_column_within_reach_of_its_slots_loads() -> None:
    # KC at position 4, as dealt, and JH at 6: each could carry a run to exactly 16 cards.
    column = "TC QS 9C KC 5S JH"
    assert parse_position(moved_from_stock(column, "JH KC")).columns[0] == [parse_card(c) for c in column.split()]


def test_stock_and_waste_together_hold_at_most_the_stock_size() -> None:
    """64 cards in the stock and one in the waste: each fits, but together they are one more
    than the 64 cards classic deals to the stock, and cards never return to it."""
    text = with_line(14, "10: 2S 4D 8H").replace("waste:", "waste: JS", 1)
    assert error_of(text) == "line 4: stock (64) and waste (1) together hold 65 cards; classic deals 64"
    # One stock card less (the last, 9C, back on column 10), and the 64 cards load.
    lines = text.splitlines()
    lines[2] = lines[2].removesuffix(" 9C")
    lines[14] = "10: 2S 4D 8H 9C"
    game = parse_position("\n".join(lines))
    assert (len(game.stock), len(game.waste)) == (63, 1)


def test_errors_name_lines_as_written_counting_comments_and_blanks() -> None:
    text = "# my position\n\n" + with_line(1, "redeals: 2")
    assert error_of(text).startswith("line 4: 2 redeals left but classic allows 0")


def test_position_errors_without_a_line() -> None:
    assert error_of("") == "empty position text"
    assert error_of("# only a note\n\n") == "empty position text"
    assert error_of("\n".join(BASE[:3])) == "missing field 'waste' at end of text"


def test_redeals_may_be_fewer_than_the_variant_allows() -> None:
    text = format_position(deal("relaxed", 4)).replace("redeals: 1", "redeals: 0")
    assert parse_position(text).redeals_left == 0


def test_position_error_is_a_value_error() -> None:
    assert issubclass(PositionError, ValueError)
