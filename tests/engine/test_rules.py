"""One test per rule sentence of the rule pages (``shared/rules``), each drawn as a position.

Positions are written with just the cards in play; :func:`conftest.position` puts the rest on
the foundations. Columns that only fill space use sets of high cards that can go nowhere
(their next card home and the cards that would build on them are buried), e.g. for clubs
``9C QC KC`` twice and ``TC JC`` twice with both club piles at 8, or ``JC QC KC`` twice with both
at 10. Each test checks what is allowed and what is refused, and a refusal must leave the state
exactly as it was.
"""

from __future__ import annotations

from collections import Counter

import pytest
from conftest import assert_refused, cards, column_text, legal, moves_from, position, position_text

from forty_thieves_env import (
    PRESETS,
    GameState,
    IllegalMoveError,
    PositionError,
    deal,
    format_move,
    get_variant,
    parse_move,
    parse_position,
    shuffled_pack,
)
from forty_thieves_env.engine.actions import n_actions
from forty_thieves_env.engine.cards import N_CARDS, N_CODES, N_RANKS
from forty_thieves_env.text.notation import card_text

NO_RUNS = [name for name, v in PRESETS.items() if v.run_moves == "none"]
NO_REDEAL = [name for name, v in PRESETS.items() if v.redeals == 0]


def heights(state, suit: str) -> list[int]:
    """The two pile heights of a suit, higher first."""
    i = "CSHD".index(suit)
    return state.foundations[2 * i : 2 * i + 2]


def reshape(text: str, columns: int) -> str:
    """Fit a ten-column position whose columns 9 and 10 are ``JD QD KD`` to 9 or 12 columns.

    Nine columns make columns 9 and 10 one column ``QD KD QD KD`` (the two JD go home: the
    diamond piles then stand at J instead of 10, and both QD stay buried); twelve add the two TD
    (the diamond piles then stand at 9 instead of 10), so the cards the test is about stay where
    they were.
    """
    if columns == 10:
        return text
    lines = text.strip().splitlines()
    assert lines[-2].strip() == "9: JD QD KD" and lines[-1].strip() == "10: JD QD KD", "reshape needs that ending"
    if columns == 9:
        return "\n".join([*lines[:-2], "9: QD KD QD KD"]) + "\n"
    assert columns == 12
    return "\n".join([*lines, "11: TD", "12: TD"]) + "\n"


# Positions shared by several tests.

# Nothing can move: every top is a king or a jack whose queen is buried, the cards the piles need
# next (9C, 9H, QD, JS) are buried too, and no column is empty. ``fourth`` is KD or nothing: a
# JC under it is just as dead.
STUCK_POSITION = """
variant: {variant}
stock: {stock}
waste: {waste}
1: 9C QC KC
2: 9C QC KC
3: TC JC
4: TC JC {fourth}
5: 9H QH KH
6: 9H QH KH
7: TH JH
8: TH JH
9: QD QD KD
10: JS QS KS
"""

# Column 1 ends in a run in alternating colours, column 3 in a run in suit; targets for both
# (a red and a black king), and two empty columns.
SUPERMOVE_RUNS = """
variant: {variant}
1: QS JH TS
2: KH
3: QS JS TS
4: KS
5: JS KS QH
6: 9C QC KC
7: TC JC TC JC
8: 9C QC KC
9:
10:
"""


# =============================================================================== the deal


@pytest.mark.parametrize("number", [1, 617, 31999, 32000, 10**12])
def test_pack_is_two_full_decks(number: int) -> None:
    """104 cards, two of every card."""
    pack = shuffled_pack(number)
    assert len(pack) == N_CARDS
    assert Counter(pack.tolist()) == dict.fromkeys(range(N_CODES), 2)


@pytest.mark.parametrize("number", [1, 12345, 32000, 987654321])
def test_classic_deal_is_ten_face_up_columns_of_four_dealt_across_then_64_stock(number: int) -> None:
    """Forty cards face up into ten columns of four, one card per column per pass; 64 in the stock."""
    pack = shuffled_pack(number).tolist()
    top_first = pack[::-1]  # the end of the pack is its top
    game = deal("classic", number)
    assert len(game.columns) == 10
    for col in range(10):
        # Pass p gives column `col` the card (p * 10 + col) from the top.
        assert game.columns[col] == [top_first[p * 10 + col] for p in range(4)]
    assert game.face_down == [0] * 10
    assert game.stock == top_first[40:]
    assert len(game.stock) == 64
    assert game.waste == []
    assert game.foundations == [0] * 8
    assert game.redeals_left == 0
    everywhere = [c for col in game.columns for c in col] + game.stock
    assert Counter(everywhere) == dict.fromkeys(range(N_CODES), 2)


@pytest.mark.parametrize(
    ("name", "columns", "per_column", "face_down", "stock"),
    [
        ("classic", 10, 4, 0, 64),
        ("josephine", 10, 4, 0, 64),
        ("streets", 10, 4, 0, 64),
        ("maria", 9, 4, 0, 68),
        ("limited", 12, 3, 0, 68),
        ("rank_and_file", 10, 4, 3, 64),
        ("relaxed", 10, 4, 0, 64),
    ],
)
def test_every_variant_deals_its_layout(name: str, columns: int, per_column: int, face_down: int, stock: int) -> None:
    """Layouts of the variants: Maria 9x4 with 68 in the stock, Limited 12x3 with 68, Rank and
    File 10x4 with three face down under one face-up card, the others 10x4 with 64."""
    top_first = shuffled_pack(4242).tolist()[::-1]
    game = deal(name, 4242)
    assert [len(c) for c in game.columns] == [per_column] * columns
    for col in range(columns):
        assert game.columns[col] == [top_first[p * columns + col] for p in range(per_column)]
    assert game.face_down == [face_down] * columns
    assert game.stock == top_first[columns * per_column :]
    assert len(game.stock) == stock == get_variant(name).stock_size


def test_rank_and_file_shows_only_the_last_card_of_each_column() -> None:
    """Rank and File: only the last card of each column is dealt face up."""
    game = deal("rank_and_file", 77)
    for i in range(1, 11):
        tokens = column_text(game, i).split()
        assert [t.startswith("#") for t in tokens] == [True, True, True, False]


# ======================================================================= building on columns

#: Columns 4-10 of the building and the stock positions: a TS, then the clubs and diamonds left
#: in play, parked where nothing in those tests moves them.
COLUMNS_4_TO_10 = """
4: TS
5: 9C QC KC
6: 9C QC KC
7: TC JC
8: TC JC
9: JD QD KD
10: JD QD KD
"""

BUILD_POSITION = (
    """
variant: {variant}
1: KS QS JS 8S
2: 9S
3: KH QH JH TH 9H"""
    + COLUMNS_4_TO_10
)


def test_classic_builds_down_by_one_in_suit_only() -> None:
    """The 8 of spades goes on the 9 of spades, never on the 9 of hearts nor on the 10 of spades."""
    game = position(BUILD_POSITION.format(variant="classic"))
    assert "1>2" in legal(game)
    assert_refused(game, "1>3")  # 8S on 9H: wrong suit
    assert_refused(game, "1>4")  # 8S on TS: not one rank lower
    game.play("1>2")
    assert column_text(game, 2) == "9S 8S"
    assert column_text(game, 1) == "KS QS JS"


@pytest.mark.parametrize("name", ["limited", "josephine", "relaxed"])
def test_other_same_suit_variants_build_in_suit(name: str) -> None:
    """Limited, Josephine and Relaxed keep the same-suit building of the parent game."""
    game = position(reshape(BUILD_POSITION.format(variant=name), get_variant(name).columns))
    assert "1>2" in legal(game)
    assert_refused(game, "1>3")
    assert_refused(game, "1>4")


@pytest.mark.parametrize("name", ["streets", "maria", "rank_and_file"])
def test_alternating_colour_variants_build_on_the_other_colour(name: str) -> None:
    """Streets, Maria and Rank and File build down in alternating colours: 8S on 9H, not on 9S."""
    game = position(reshape(BUILD_POSITION.format(variant=name), get_variant(name).columns))
    assert "1>3" in legal(game)
    assert_refused(game, "1>2")  # 8S on 9S: same colour
    assert_refused(game, "1>4")  # 8S on TS: not one rank lower
    game.play("1>3")
    assert column_text(game, 3) == "KH QH JH TH 9H 8S"


# ============================================================================ no wrapping

WRAP_POSITION = """
variant: {variant}
1: KS QS JS TS 9S 8S 7S 6S 5S 4S 3S AS
2: 2S
3: KS
4: KH QH JH TH 9H 8H 7H 6H 5H 4H 3H 2H
5: KH
6: 9C QC KC
7: 9C QC KC
8: TC JC
9: TC JC
10: {tenth}
"""


@pytest.mark.parametrize("name", ["classic", "streets"])
def test_an_ace_at_the_end_of_a_column_takes_nothing(name: str) -> None:
    """Ranks do not wrap: neither a king nor a two goes on an ace."""
    game = position(WRAP_POSITION.format(variant=name, tenth="QD KD QD KD"))
    assert not any(m.endswith(">1") for m in legal(game))
    for move in ("2>1", "3>1", "4>1", "5>1"):  # 2S, KS, 2H, KH
        assert_refused(game, move)


@pytest.mark.parametrize("name", ["classic", "streets"])
def test_a_king_moves_only_to_an_empty_column_or_its_foundation(name: str) -> None:
    game = position(WRAP_POSITION.format(variant=name, tenth=""))
    # The spade piles stand at QS and nothing: KS fits the first.
    assert moves_from(game, "3") == {"3>f", "3>10"}
    assert moves_from(game, "5") == {"5>f", "5>10"}
    game.play("3>10")
    assert column_text(game, 10) == "KS"
    # With no empty column and its foundation not ready, a king cannot move at all.
    blocked = position(STUCK_POSITION.format(variant=name, stock="", waste="", fourth="KD"))
    assert column_text(blocked, 1).endswith("KC")
    assert moves_from(blocked, "1") == set()


# ========================================================================= empty columns


@pytest.mark.parametrize("name", ["classic", "streets", "maria", "limited"])
def test_an_empty_column_takes_any_card_from_a_column_or_the_waste(name: str) -> None:
    text = f"""
        variant: {name}
        waste: 5H 8H
        1: KS QS JS TS 9S 8S
        2: 8C
        3: KH QH JH TH 9H
        4:
        5: 9C QC KC
        6: 9C QC KC
        7: TC JC
        8: 7H 6H TC JC
        9: JD QD KD
        10: JD QD KD
        """
    game = position(reshape(text, get_variant(name).columns))
    for i in range(1, game.variant.columns + 1):
        if i != 4:
            assert f"{i}>4" in legal(game)  # kings, jacks, nines, eights
    assert "w>4" in legal(game)
    game.play("w>4")
    assert column_text(game, 4) == "8H"
    assert game.waste == cards("5H")
    # Once filled, it takes only what builds on its card.
    assert_refused(game, "1>4")
    # With no empty column left, a card that fits nowhere stays where it is.
    assert_refused(game, "w>1")


# =============================================================== what is playable at all

#: Columns 2-9 of this section's positions: a 6H (column 2) that a 5H would build on, a TC for
#: a 9C, and the rest of the cards in play parked where nothing here moves them.
PLAYABLE_COLUMNS = """
        2: KH QH JH TH 9H 8H 7H 6H
        3: TC
        4: JC QC KC
        5: 9S QS KS
        6: 9S QS KS
        7: TS JS
        8: TS JS
        9: JD QD KD
"""


def test_only_the_exposed_card_of_a_column_is_playable() -> None:
    """5H under 9C would fit on 6H and on the 4H pile, but only 9C is playable."""
    game = position(
        f"""
        variant: classic
        1: 5H 9C
        {PLAYABLE_COLUMNS}
        10: JD QD KD
        """
    )
    assert_refused(game, "1>2")  # would move 9C onto 6H
    for move in moves_from(game, "1"):
        trial = game.copy()
        trial.play(move)
        assert column_text(trial, 1) == "5H"  # whatever moves, it is the 9C
    game.play("1>3")
    assert {"1>2", "1>f"} <= legal(game)
    game.play("1>f")
    assert heights(game, "H") == [13, 5]


@pytest.mark.parametrize("name", ["josephine", "rank_and_file"])
def test_a_buried_card_cannot_travel_under_a_card_that_is_not_built_on_it(name: str) -> None:
    """Run moves carry only a run: 5H under 9C is not one, so neither ``1>2x2`` (5H onto 6H)
    nor ``1>10x2`` (into the empty column) is allowed; ``1>10`` moves the 9C alone."""
    game = position(
        f"""
        variant: {name}
        1: 5H 9C
        {PLAYABLE_COLUMNS}
        10:
        """
    )
    assert "1>10" in legal(game)
    assert_refused(game, "1>2x2")
    assert_refused(game, "1>10x2")


def test_only_the_top_waste_card_is_playable() -> None:
    """5H under 9C in the waste fits 6H and the foundation, but only 9C can move."""
    game = position(
        f"""
        variant: classic
        waste: 5H 9C
        1: KD QD JD 8D
        {PLAYABLE_COLUMNS}
        10: TD 9D
        """
    )
    assert_refused(game, "w>2")
    assert moves_from(game, "w") == {"w>3", "w>f"}  # the 9C: onto TC, or home on the 8C pile
    game.play("w>3")
    assert moves_from(game, "w") == {"w>2", "w>f"}
    game.play("w>2")
    assert column_text(game, 2).endswith("6H 5H")
    assert game.waste == []
    assert moves_from(game, "w") == set()


# ====================================================================== one card at a time

RUN_POSITION = """
variant: {variant}
1: KS QS JS TS
2: JC QC KC
3: KD 9S 8S 7S
4: JC QC KC
5: 9H QH KH
6: KS QS JS TS 9S
7: 9H QH KH
8: {eighth}
9: TH JH
10: {tenth}
"""


@pytest.mark.parametrize("name", NO_RUNS)
def test_exactly_one_card_moves_at_a_time(name: str) -> None:
    """Classic, Streets, Maria and Limited: no move carries more than one card."""
    variant = get_variant(name)
    texts = [format_move(variant, a) for a in range(n_actions(variant))]
    assert not any("x" in t for t in texts)
    for move in ("3>1x3", "3>6x2", "3>8x2"):
        with pytest.raises(ValueError):
            parse_move(variant, move)
    # "x1" is still one card.
    assert parse_move(variant, "3>1x1") == parse_move(variant, "3>1")


def test_classic_run_must_travel_one_card_at_a_time() -> None:
    """A column ending in 9, 8, 7 of spades: only the 7 can move, even with a 10S and an empty column."""
    game = position(RUN_POSITION.format(variant="classic", eighth="", tenth="TH JH"))
    assert moves_from(game, "3") == {"3>f", "3>8"}
    with pytest.raises(ValueError):
        game.play("3>1x3")
    with pytest.raises(ValueError):
        game.play("3>6x2")
    # The same position in Josephine moves the run (so the test above can fail).
    josephine = position(RUN_POSITION.format(variant="josephine", eighth="", tenth="TH JH"))
    assert "3>1x3" in legal(josephine)


# ============================================================================ foundations


def test_foundations_start_with_an_ace_and_two_piles_per_suit() -> None:
    """Eight foundations, two per suit, each built up in suit from an ace."""
    game = position(
        """
        variant: classic
        foundations: KC KC KS KS KD
        1: KH QH JH TH 9H 8H 7H 6H 5H 4H 3H 2H AH
        2: KH QH JH TH 9H 8H 7H 6H 5H 4H 3H AH 2H
        3: QD JD TD 9D 8D 7D 6D 5D 4D 3D 2D
        4: AD
        5: KD
        6:
        7:
        8:
        9:
        10:
        """
    )
    assert len(game.foundations) == 8
    assert heights(game, "H") == [0, 0]
    assert_refused(game, "2>f")  # a 2 cannot start a pile
    assert_refused(game, "3>f")  # 2D: the diamond piles stand at K and nothing
    game.play("1>f")
    assert heights(game, "H") == [1, 0]
    assert_refused(game, "3>f")  # 2D does not go on the AH pile either
    game.play("2>f")  # 2H on the AH pile
    assert heights(game, "H") == [2, 0]
    game.play("2>f")  # the second AH starts the second heart pile
    assert heights(game, "H") == [2, 1]
    game.play("4>f")
    game.play("3>f")
    assert heights(game, "D") == [13, 2]


def test_either_pile_of_a_suit_takes_the_next_card() -> None:
    """With the heart piles at 3H and 5H, a 4H goes on one and a 6H on the other."""
    game = position(
        """
        variant: classic
        waste: 6H 6H
        foundations: KC KC KS KS KD KD 5H 3H
        1: KH QH JH TH 9H 8H 7H 4H
        2: KH QH JH TH 9H 8H 7H 5H
        3:
        4:
        5:
        6:
        7:
        8:
        9:
        10:
        """
    )
    assert {"1>f", "w>f"} <= legal(game)
    assert_refused(game, "2>f")  # 5H: neither pile stands at 4H
    game.play("1>f")
    assert heights(game, "H") == [5, 4]
    game.play("w>f")
    assert heights(game, "H") == [6, 4]
    game.play("2>f")  # now the other pile takes 5H
    assert heights(game, "H") == [6, 5]
    game.play("w>f")
    assert heights(game, "H") == [6, 6]


def test_a_card_on_a_foundation_never_leaves_it() -> None:
    game = position(
        """
        variant: josephine
        waste: 4D
        1: KD QD JD TD 9D 8D 7D 6D 5D
        2: KH QH JH TH 9H 8H 7H 6H 5H
        3:
        4: 9C QC KC
        5: 9C QC KC
        6: TC JC
        7: TC JC
        8: JS QS KS
        9: JS QS KS
        10: TS
        """
    )
    variant = game.variant
    # No move text names a foundation as its source...
    for text in ("f>3", "f>w", "f>f"):
        with pytest.raises(ValueError):
            parse_move(variant, text)
    assert not any(format_move(variant, a).startswith("f") for a in range(n_actions(variant)))
    # ...and after a card goes home, no legal move lowers any pile.
    game.play("2>f")
    after = game.foundations
    for action in game.legal_actions():
        trial = game.copy()
        trial.apply(action)
        assert all(h1 >= h0 for h1, h0 in zip(trial.foundations, after, strict=True))
        assert trial.cards_on_foundations >= game.cards_on_foundations


# ================================================================================= the stock

STOCK_POSITION = (
    """
variant: {variant}
redeals: {redeals}
stock: {stock}
waste: {waste}
1: KS QS JS 8S
2: 9S
3: KH QH JH TH 9H 8H 7H"""
    + COLUMNS_4_TO_10
)


def test_the_stock_turns_one_card_onto_the_waste_whenever_the_player_chooses() -> None:
    game = position(STOCK_POSITION.format(variant="classic", redeals=0, stock="6H 5H 4H", waste=""))
    # Table moves are available (8S on 9S, 9S on TS), yet turning the stock is allowed.
    assert {"1>2", "s"} <= legal(game)
    game.play("s")
    assert game.stock == cards("5H 4H")
    assert game.waste == cards("6H")
    assert moves_from(game, "w") == {"w>3"}  # the turned card may be played at once
    game.play("s")
    assert game.stock == cards("4H")
    assert game.waste == cards("6H 5H")
    assert moves_from(game, "w") == set()  # 6H is covered now, and 5H fits nowhere
    game.play("s")
    assert game.stock == []
    assert game.waste == cards("6H 5H 4H")


@pytest.mark.parametrize("name", NO_REDEAL)
def test_without_redeals_the_stock_goes_through_once(name: str) -> None:
    """One pass: once the stock is empty, ``s`` is refused and the waste stays as it is."""
    text = STOCK_POSITION.format(variant=name, redeals=0, stock="", waste="6H 5H 4H")
    game = position(reshape(text, get_variant(name).columns))
    assert "s" not in legal(game)
    assert_refused(game, "s")
    assert game.waste == cards("6H 5H 4H")


@pytest.mark.parametrize("variant", ["relaxed", "classic redeals=1", "streets redeals=1"])
def test_a_redeal_turns_the_waste_over_to_come_out_in_the_same_order(variant: str) -> None:
    game = position(STOCK_POSITION.format(variant=variant, redeals=1, stock="6H 5H 4H", waste=""))
    assert game.redeals_left == 1
    first_pass = []
    for _ in range(3):
        game.play("s")
        first_pass.append(game.waste[-1])
    assert game.stock == []
    assert "s" in legal(game)  # the redeal
    game.play("s")
    assert game.redeals_left == 0
    assert game.waste == []
    assert game.stock == cards("6H 5H 4H")
    second_pass = []
    for _ in range(3):
        game.play("s")
        second_pass.append(game.waste[-1])
    assert second_pass == first_pass == cards("6H 5H 4H")
    # No second redeal.
    assert_refused(game, "s")


def test_cards_played_from_the_waste_are_not_dealt_again() -> None:
    game = position(STOCK_POSITION.format(variant="relaxed", redeals=1, stock="6H 5H 4H", waste=""))
    game.play("s")
    game.play("w>3")  # 6H onto 7H
    game.play("s")
    game.play("s")
    game.play("s")  # redeal
    assert game.stock == cards("5H 4H")


def test_two_redeals_count_down() -> None:
    game = position(STOCK_POSITION.format(variant="classic redeals=2", redeals=2, stock="6H", waste=""))
    for left in (1, 0):
        game.play("s")
        game.play("s")  # redeal
        assert game.redeals_left == left
        assert game.stock == cards("6H")
    game.play("s")
    assert_refused(game, "s")


def test_a_redeal_needs_cards_in_the_waste() -> None:
    """Turning over an empty waste would change nothing: refused, and the redeal is kept."""
    game = position(STOCK_POSITION.format(variant="relaxed", redeals=1, stock="", waste=""))
    assert_refused(game, "s")
    assert game.redeals_left == 1


def test_redeals_left_in_a_position_are_honoured() -> None:
    """A relaxed game whose redeal was used (``redeals: 0``) does not redeal again."""
    game = position(STOCK_POSITION.format(variant="relaxed", redeals=0, stock="", waste="6H"))
    assert_refused(game, "s")


# ======================================================================= won and stuck


def test_won_when_all_eight_foundations_are_complete() -> None:
    game = position(
        """
        variant: classic
        1: KH
        2:
        3:
        4:
        5:
        6:
        7:
        8:
        9:
        10:
        """
    )
    assert heights(game, "H") == [13, 12]
    assert not game.is_won()
    assert not game.is_stuck()
    assert game.play("1>f") == 1
    assert game.is_won()
    assert game.cards_on_foundations == N_CARDS
    assert legal(game) == set()
    assert not game.is_stuck()  # a won game is won, not stuck


@pytest.mark.parametrize("name", ["classic", "streets", "josephine", "rank_and_file"])
def test_stuck_when_the_stock_is_spent_and_nothing_legal_remains(name: str) -> None:
    game = position(STUCK_POSITION.format(variant=name, stock="", waste="", fourth="KD"))
    assert legal(game) == set()
    assert game.is_stuck()
    assert not game.is_won()


def test_not_stuck_while_the_stock_has_a_card() -> None:
    game = position(STUCK_POSITION.format(variant="classic", stock="KD", waste="", fourth=""))
    assert legal(game) == {"s"}
    assert not game.is_stuck()
    game.play("s")
    # The turned KD fits nowhere and the stock is spent.
    assert game.is_stuck()


def test_not_stuck_while_a_redeal_is_left() -> None:
    game = position(STUCK_POSITION.format(variant="relaxed", stock="", waste="KD", fourth=""))
    assert legal(game) == {"s"}
    assert not game.is_stuck()
    game.play("s")
    game.play("s")
    assert game.is_stuck()
    classic = position(STUCK_POSITION.format(variant="classic", stock="", waste="KD", fourth=""))
    assert classic.is_stuck()


def test_not_stuck_with_a_table_move_left() -> None:
    game = position(
        STUCK_POSITION.format(variant="classic", stock="", waste="", fourth="KD").replace("QH KH", "KH QH", 1)
    )
    assert legal(game) == {"5>6", "7>5", "8>5"}  # QH on KH, JH on QH
    assert not game.is_stuck()


# ================================================================================ Josephine


@pytest.mark.parametrize("name", ["josephine", "relaxed"])
def test_a_same_suit_run_moves_as_a_block_whole_or_in_part(name: str) -> None:
    """Josephine (and Relaxed): 9S 8S 7S onto a 10S, 8S 7S onto a 9S, 1..3 cards into an empty
    column; the KD under the run is not in suit and never travels with it."""
    game = position(RUN_POSITION.format(variant=name, eighth="", tenth="TH JH"))
    assert moves_from(game, "3") == {"3>f", "3>1x3", "3>6x2", "3>8", "3>8x2", "3>8x3"}
    assert_refused(game, "3>8x4")
    assert_refused(game, "3>1x2")  # 8S is not one rank below 10S
    game.play("3>1x3")
    assert column_text(game, 1) == "KS QS JS TS 9S 8S 7S"
    assert column_text(game, 3) == "KD"


@pytest.mark.parametrize("name", ["josephine", "relaxed"])
def test_free_runs_need_no_empty_column(name: str) -> None:
    game = position(RUN_POSITION.format(variant=name, eighth="TH", tenth="JH"))
    assert moves_from(game, "3") == {"3>f", "3>1x3", "3>6x2"}


def test_a_run_must_be_in_suit_in_josephine() -> None:
    game = position(SUPERMOVE_RUNS.format(variant="josephine"))
    assert {"3>4x3", "3>9x2", "3>9x3"} <= legal(game)  # QS JS TS is a run in suit, no limit
    for move in ("1>2x3", "1>9x2", "1>9x3", "1>4x3"):  # QS JH TS is not
        assert_refused(game, move)


# ============================================================================= Rank and File


def test_rank_and_file_turns_up_a_face_down_card_when_it_is_uncovered() -> None:
    game = position(
        """
        variant: rank_and_file
        1: #KD #QC JS
        2: KS QH
        3: KH
        4: QS KC
        5: JC QC KC
        6: JH QH KH
        7: JD QD KD
        8: TS JS QS KS
        9: 9H
        10: TH
        """
    )
    assert game.face_down[0] == 2
    assert moves_from(game, "1") == {"1>2", "1>f"}  # JS on QH, JS home; nothing face down moves
    game.play("1>2")
    assert column_text(game, 1) == "#KD QC"
    assert game.face_down[0] == 1
    assert "1>3" in legal(game)  # the turned-up QC is playable: onto KH
    game.play("1>3")
    assert column_text(game, 1) == "KD"
    assert game.face_down[0] == 0
    assert "1>f" in legal(game)


def test_rank_and_file_runs_never_include_face_down_cards() -> None:
    game = position(
        """
        variant: rank_and_file
        1: #KH QC JD
        2: KD
        3: QD KC
        4:
        5: 9S QS KS
        6: 9S QS KS
        7: TS JS
        8: TS JS
        9: JH QH
        10: QD KD
        """
    )
    # QC JD: onto either KD, into the empty column 4; JD home on the TD pile.
    assert moves_from(game, "1") == {"1>2x2", "1>10x2", "1>4", "1>4x2", "1>f"}
    assert_refused(game, "1>4x3")  # would lift the face-down KH
    game.play("1>2x2")
    assert column_text(game, 2) == "KD QC JD"
    assert column_text(game, 1) == "KH"  # turned face up
    assert game.face_down[0] == 0


def test_rank_and_file_moves_an_alternating_run_whole_or_in_part() -> None:
    game = position(
        """
        variant: rank_and_file
        1: KS QH JC TD
        2: KC
        3: QD
        4: JS
        5:
        6: QS KH
        7: QC JD KD
        8: JS QS KS
        9: JC QC KC
        10: QH KH
        """
    )
    assert moves_from(game, "1") == {
        "1>2x3",  # QH JC TD onto KC (or the black kings of columns 8 and 9)
        "1>8x3",
        "1>9x3",
        "1>3x2",  # JC TD onto QD
        "1>4",  # TD onto JS
        "1>f",  # TD home on the 9D pile
        "1>5",  # into the empty column: 1 to 4 cards
        "1>5x2",
        "1>5x3",
        "1>5x4",
    }
    assert_refused(game, "1>2x2")
    assert_refused(game, "1>2x4")
    game.play("1>5x4")
    assert column_text(game, 5) == "KS QH JC TD"
    assert column_text(game, 1) == ""


def test_relaxed_is_classic_with_one_redeal_and_free_runs() -> None:
    assert get_variant("relaxed") == get_variant("classic").replace(name="relaxed", redeals=1, run_moves="free")


# ================================================================================ supermove

WORKED_EXAMPLE = """
variant: classic run_moves=supermove
1: {first}
2: {second}
3: K♦ 9♠ 8♠ 7♠
4: JC QC KC
5: 9H QH KH
6: 10♠
7: 9H QH KH
8:
9: TH JH
10: TH JH
"""


def test_supermove_worked_example_one_empty_column() -> None:
    """Column 3 ends K♦ 9♠ 8♠ 7♠, column 6 ends in 10♠, one empty column: the three cards do not
    go onto the 10♠ ("Max 2 at once"), and only one card goes into the empty column."""
    game = position(WORKED_EXAMPLE.format(first="JS QS KS", second="JC QC KC"))
    assert not any(m.startswith("3>6") for m in legal(game))  # column 6 does not light up
    assert_refused(game, "3>6x3")
    assert moves_from(game, "3") == {"3>f", "3>8"}
    assert_refused(game, "3>8x2")
    with pytest.raises(IllegalMoveError, match="at most 2"):
        game.play("3>6x3")


def test_supermove_worked_example_two_empty_columns() -> None:
    """Free a second empty column (the spare clubs go home) and the limit becomes 4: the run moves
    onto the 10♠ in one move."""
    game = position(WORKED_EXAMPLE.format(first="", second="JS QS KS"))
    assert "3>6x3" in legal(game)
    assert game.play("3>6x3") == 0
    assert column_text(game, 6) == "TS 9S 8S 7S"
    assert column_text(game, 3) == "KD"
    assert column_text(game, 1) == column_text(game, 8) == ""  # no card was left in the spare columns


def test_supermove_two_cards_onto_a_card_with_one_empty_column() -> None:
    """One empty column: 8♠ 7♠ may go onto the other 9♠, but not without the empty column."""
    text = RUN_POSITION.format(variant="classic run_moves=supermove", eighth="{eighth}", tenth="{tenth}")
    game = position(text.format(eighth="", tenth="TH JH"))
    assert moves_from(game, "3") == {"3>f", "3>6x2", "3>8"}
    game.play("3>6x2")
    assert column_text(game, 6) == "KS QS JS TS 9S 8S 7S"
    crowded = position(text.format(eighth="TH", tenth="JH"))
    assert moves_from(crowded, "3") == {"3>f"}
    assert_refused(crowded, "3>6x2")
    assert_refused(crowded, "3>1x3")


POWERS_POSITION = """
variant: classic run_moves=supermove
1: QS JS TS 9S 8S 7S 6S 5S 4S
2: KS
3: KS QS
4: QC KC QC KC
5: TC JC TC JC
6: JS TS 9S 8S
7: JH QH KH
8: {c8}
9: {c9}
10: {c10}
"""


@pytest.mark.parametrize(
    ("empty", "fill"),
    [
        (3, ("", "", "")),
        (2, ("JH QH KH", "", "")),
        (1, ("JH QH KH", "JD QD KD", "")),
        (0, ("JH QH KH", "JD QD KD", "JD QD KD")),
    ],
)
def test_supermove_carries_two_to_the_power_of_the_empty_columns(empty: int, fill: tuple[str, str, str]) -> None:
    """A run of 9 spades (QS..4S): onto a card at most 2**e cards, into an empty column 2**(e-1)."""
    game = position(POWERS_POSITION.format(c8=fill[0], c9=fill[1], c10=fill[2]))
    onto_card = 2**empty
    # Targets for 9 (onto KS), 8 (onto QS) and 4 cards (onto 8S).
    for move, k in (("1>2x9", 9), ("1>3x8", 8), ("1>6x4", 4)):
        assert (move in legal(game)) == (k <= onto_card), move
    into_empty = 2 ** (empty - 1) if empty else 0
    for k in range(1, 10):
        move = "1>10" + (f"x{k}" if k > 1 else "")
        assert (move in legal(game)) == (k <= into_empty), move
    if empty == 3:
        game.play("1>3x8")
        assert column_text(game, 3) == "KS QS JS TS 9S 8S 7S 6S 5S 4S"
        assert column_text(game, 1) == "QS"


def test_classic_supermove_moves_only_runs_in_suit() -> None:
    game = position(SUPERMOVE_RUNS.format(variant="classic run_moves=supermove"))
    assert {"3>4x3", "3>9x2"} <= legal(game)  # QS JS TS is a run in suit
    for move in ("1>2x3", "1>9x2", "1>4x3"):  # QS JH TS is not
        assert_refused(game, move)


def test_streets_supermove_moves_only_alternating_runs() -> None:
    game = position(SUPERMOVE_RUNS.format(variant="streets run_moves=supermove"))
    assert {"1>2x3", "1>9x2"} <= legal(game)  # QS JH TS alternates
    assert_refused(game, "1>9x3")  # two empty columns: at most 2 into one of them
    for move in ("3>9x2", "3>9x3", "3>2x3"):  # QS JS TS does not
        assert_refused(game, move)
    game.play("1>2x3")
    assert column_text(game, 2) == "KH QS JH TS"


# ============================================================================ auto-play safe

# Both JH are home; a move of the KD from column 1 uncovers the two QH (then the kings).
HEARTS_READY = """
1: KH QH QH KD
2: JS QS KS
3: QD QD KD
4:
5: 9C QC KC
6: 9C QC KC
7: TC JC
8: TC JC
9: QS KS
10: KH
"""


def test_auto_play_sends_safe_cards_home_after_a_move_and_counts_them() -> None:
    """Both JH are home, so once a move uncovers QH it goes home, then the next QH, then the
    kings (each safe once both cards below it are home, the second one from column 10); apply
    counts all four."""
    text = "variant: {variant}\n" + HEARTS_READY
    game = position(text.format(variant="classic auto_play_safe=true"))
    assert game.play("1>4") == 4
    assert heights(game, "H") == [13, 13]
    assert column_text(game, 1) == column_text(game, 10) == ""
    assert column_text(game, 4) == "KD"  # KD itself does not fit the diamond piles at J
    # Without the option nothing moves by itself.
    plain = position(text.format(variant="classic"))
    assert plain.play("1>4") == 0
    assert heights(plain, "H") == [11, 11]


def test_auto_play_leaves_an_unsafe_card_alone() -> None:
    """A 3H fits the 2H pile but one 2H is still in a column (it could be built on the 3H)."""
    game = position(
        """
        variant: classic auto_play_safe=true
        1: 5H 4H 3H KD
        2: 2H KH QH JH TH 9H 8H 7H 6H 5H 4H 3H
        3:
        4: 9C QC KC
        5: 9C QC KC
        6: TC JC
        7: TC JC
        8: QS KS QS KS
        9: KH QH JH TH 9H 8H 7H 6H
        10: JD QD KD
        """
    )
    assert heights(game, "H") == [2, 1]
    assert game.play("1>3") == 0
    assert column_text(game, 1).endswith("4H 3H")
    assert column_text(game, 2).endswith("4H 3H")
    assert heights(game, "H") == [2, 1]
    # Playing a 3H by hand is still allowed and counts one card, nothing more follows.
    assert game.play("1>f") == 1
    assert heights(game, "H") == [3, 1]


def test_auto_play_with_alternating_colours_waits_for_the_other_colour() -> None:
    """In Streets a QH is safe only when both jacks of spades and of clubs are home."""
    text = "variant: {variant} auto_play_safe=true\n" + HEARTS_READY
    streets = position(text.format(variant="streets"))
    assert streets.play("1>4") == 0  # JS (and the JCs) are still out
    assert column_text(streets, 1) == "KH QH QH"
    classic = position(text.format(variant="classic"))
    assert classic.play("1>4") == 4


def test_auto_play_takes_a_turned_ace_straight_home() -> None:
    text = """
        variant: {variant}
        stock: AD
        1: 9C QC KC
        2: 9C QC KC
        3: TC JC
        4: TC JC
        5: 9H QH KH
        6: 9H QH KH
        7: TH JH
        8: TH JH
        9: JD QD KD
        10: 2D KD QD JD TD 9D 8D 7D 6D 5D 4D 3D
        """
    auto = position(text.format(variant="classic auto_play_safe=true"))
    assert heights(auto, "D") == [10, 0]
    assert auto.play("s") == 1
    assert auto.waste == []
    assert heights(auto, "D") == [10, 1]
    plain = position(text.format(variant="classic"))
    assert plain.play("s") == 0
    assert plain.waste == cards("AD")


def test_auto_play_runs_at_the_deal() -> None:
    """A deal whose layout exposes an ace starts with that ace already home."""
    number = next(n for n in range(1, 500) if any(col[-1] % N_RANKS == 0 for col in deal("classic", n).columns))
    plain = deal("classic", number)
    auto = deal(get_variant("classic", auto_play_safe=True), number)
    assert plain.cards_on_foundations == 0
    exposed_aces = sum(col[-1] % N_RANKS == 0 for col in plain.columns)
    aces_home = sum(h >= 1 for h in auto.foundations)
    assert aces_home >= exposed_aces >= 1
    # Cards only left the ends of the columns, and only for the foundations.
    for before, after in zip(plain.columns, auto.columns, strict=True):
        assert before[: len(after)] == after
    assert sum(len(c) for c in auto.columns) == 40 - auto.cards_on_foundations
    assert auto.stock == plain.stock
    assert auto.waste == []


# ================================================================ positions play cannot reach
#
# Two hand-made positions no game can reach, which once loaded and then made the engine write
# past its fixed-size slots: loading must refuse them.


def all_cards(game: GameState) -> Counter:
    """Every card of the position, foundations included, by code."""
    seen = Counter(c for col in game.columns for c in col) + Counter(game.stock) + Counter(game.waste)
    for pile, height in enumerate(game.foundations):
        seen.update((pile // 2) * N_RANKS + r for r in range(height))
    return seen


def test_no_legal_move_loses_a_card_from_a_loaded_position() -> None:
    text = position_text(
        """
        variant: classic
        waste: 4H
        1: KC KC QC QC JC JC TC TC 9C 9C 8C 8C 7C 7C 6C 5H
        2: KH QH JH TH 9H 8H 7H 6H
        3: KH QH JH TH 9H 8H 7H 6H 5H
        4: KD
        5: KD
        6: KS
        7: KS
        8: QD
        9: QD
        10: 6C
        """
    )
    try:
        game = parse_position(text)
    except PositionError:
        return  # refusing a column that could outgrow its room is one fix
    for action in game.legal_actions():
        trial = game.copy()
        trial.apply(action)
        assert all_cards(trial) == dict.fromkeys(range(N_CODES), 2), format_move(game.variant, action)


def test_stock_and_waste_together_hold_no_more_than_the_stock() -> None:
    """Only the 64 cards left after the deal ever reach the stock or the waste (classic).

    The position is refused at load; playing it is not tried here, as that corrupts memory.
    """
    pack = shuffled_pack(5).tolist()
    text = "\n".join(
        [
            "variant: classic",
            "redeals: 0",
            "stock: " + " ".join(card_text(c) for c in pack[:50]),
            "waste: " + " ".join(card_text(c) for c in pack[50:100]),
            "foundations:",
            *(f"{i + 1}: {card_text(pack[100 + i]) if i < 4 else ''}" for i in range(10)),
        ]
    )
    with pytest.raises(PositionError):
        parse_position(text)
