"""Numbered deals: deal ``N`` must be PySolFC's game ``N`` card for card, in every variant, forever.

The golden strings below were computed once with the engine and checked by hand against the
known fact that PySolFC game 12345 has column 1 ``6D AS TH 5H`` (bottom to top) and ``KC`` as the
first stock card. They are literals on purpose: any change to the shuffle, the generator switch
or the dealing order breaks them, and changing them is a breaking change for every user who
recorded a deal number.

The generators are also re-implemented here from their published definitions (the Microsoft
FreeCell LCG and Python's Mersenne Twister driven the way PySolFC drives it), so the tests do not
rely only on ``pysol_cards`` agreeing with itself.
"""

from __future__ import annotations

import random
from collections import Counter

import numpy as np
import pytest
from pysol_cards.random import LCRandom31, MTRandom

from forty_thieves_env import PRESETS, Variant, deal, format_position, shuffled_pack
from forty_thieves_env.engine.cards import N_CARDS, N_CODES, N_RANKS, full_pack
from forty_thieves_env.engine.deals import MAX_DEAL, MS_LIMIT
from forty_thieves_env.text.notation import card_text

# ----------------------------------------------------------------------------- goldens

GOLDEN_CLASSIC_1 = """\
variant: classic
redeals: 0
stock: 3S 9C 7D 4S 8H TH AH JC 4H 7H QS QC 7C 3S QH 9S 2S QH 3C AS 4S KS 6D TD 9C 9D JS 4D 5C 6C AD JH 6S 3C JD TC AH QS 2C 9H 3H 7S 5C 9D KS 5D TS QD 7S 6D TS KD QD 7H 3D 2C KH 5D 3H 2D 4C 5S 6S AC
waste:
foundations:
1: 3D AS KD 7D
2: 5H 8C 2H 9S
3: JC 6C TD 8H
4: KH 6H 8S JH
5: 5S TC AC 4D
6: 5H 8D 7C 2D
7: KC 4C 2H 6H
8: KC JS AD TH
9: 8D QC 9H 8C
10: JD 4H 8S 2S
"""  # noqa: E501 (a golden position is one line per pile)

GOLDEN_CLASSIC_12345 = """\
variant: classic
redeals: 0
stock: KC KS 2H AS 9C KH 6H 2D TD QD JD QC 5H QC 4H 6D TH 4S QS 2H 5C 7S 9H JC 3C 4C 3S TS 7D 9C 2C KD 6H 4C 8H TC 8S 8D JC 5D 2D 6S 8C JH KH TC 7C 6S 7H JS AC JS AC 5D 9D 6C 3S 8C QH KD 9S KC JD 4D
waste:
foundations:
1: 6D AS TH 5H
2: 7C 3D KS 4S
3: AD 7S TD 9S
4: QD TS 5C 8H
5: 3H 7H QS 8S
6: 3D 2S 6C 2C
7: QH 3C 4H 9D
8: AH 7D 8D AH
9: 3H 5S JH 2S
10: 9H AD 5S 4D
"""  # noqa: E501

# Deal number -> (columns 1..3 bottom to top, first 8 stock cards), classic.
GOLDEN_PREFIXES = {
    31999: (["3D 5S 2H 8D", "5S 3S 6D 9S", "2H 3D 2S 4H"], "9H 2D 3H 5H AS AD KD TH"),
    32000: (["KH 3C 7C 7H", "9H KD JD QC", "TD 4H KD 4D"], "5H JD 4S 8C 3S 5S 2C AC"),
    123456789: (["2S QH 6C QS", "4C QD JD 3D", "JD 7S AC 7H"], "3S 5D 9S JC 6D QC 4H 3H"),
    10**20: (["2C QS 3H QH", "4C 9S QH JS", "8C AD 6S KH"], "8S TS TC 2D 6H 3S 4D 9H"),
}

# Other layouts of deal 12345: the same pack top, dealt across their own column count.
GOLDEN_LAYOUTS_12345 = {
    # 9 columns: the first pass stops at 3H, so 9H opens the second pass on column 1.
    "maria": ["6D 9H 5S 8D", "7C AS AD JH", "AD 3D TH 5S"],
    # 12 columns of 3: the first pass runs on to 9H AS 3D in columns 10-12.
    "limited": ["6D 7S QS", "7C TS 6C", "AD 7H 4H"],
    "rank_and_file": ["#6D #AS #TH 5H", "#7C #3D #KS 4S", "#AD #7S #TD 9S"],
}


def _text(cards: list[int]) -> str:
    return " ".join(card_text(c) for c in cards)


def test_known_fact_of_game_12345() -> None:
    # The one fact that came from PySolFC itself rather than from this engine.
    g = deal("classic", 12345)
    assert _text(g.columns[0]) == "6D AS TH 5H"
    assert card_text(g.stock[0]) == "KC"


@pytest.mark.parametrize(("number", "golden"), [(1, GOLDEN_CLASSIC_1), (12345, GOLDEN_CLASSIC_12345)])
def test_golden_whole_positions(number: int, golden: str) -> None:
    assert format_position(deal("classic", number)) == golden


@pytest.mark.parametrize("number", sorted(GOLDEN_PREFIXES))
def test_golden_prefixes(number: int) -> None:
    columns, stock = GOLDEN_PREFIXES[number]
    g = deal("classic", number)
    assert [_text(c) for c in g.columns[:3]] == columns
    assert _text(g.stock[:8]) == stock


@pytest.mark.parametrize("name", sorted(GOLDEN_LAYOUTS_12345))
def test_golden_variant_layouts(name: str) -> None:
    lines = format_position(deal(name, 12345)).splitlines()
    columns = [line.split(": ", 1)[1] for line in lines[5:8]]
    assert columns == GOLDEN_LAYOUTS_12345[name]


# ------------------------------------------------------------------- the generators


def _ms_lcg_shuffle(seed: int, cards: list[int]) -> list[int]:
    """Microsoft FreeCell's rand() (seeds below 2**31) driving PySolFC's Fisher-Yates shuffle."""
    x = seed
    cards = list(cards)
    for n in range(len(cards) - 1, 0, -1):
        x = (x * 214013 + 2531011) & 0xFFFFFFFF
        j = ((x >> 16) & 0x7FFF) % (n + 1)
        cards[n], cards[j] = cards[j], cards[n]
    return cards


def _mt_shuffle(seed: int, cards: list[int]) -> list[int]:
    """PySolFC's Mersenne Twister shuffle: ``j = int(random() * (n + 1))``, not ``randbelow``."""
    rng = random.Random(seed)
    cards = list(cards)
    for n in range(len(cards) - 1, 0, -1):
        j = int(rng.random() * (n + 1))
        cards[n], cards[j] = cards[j], cards[n]
    return cards


@pytest.mark.parametrize("number", [1, 2, 617, 11982, 12345, 31999])
def test_small_numbers_use_the_ms_lcg(number: int) -> None:
    assert shuffled_pack(number).tolist() == _ms_lcg_shuffle(number, full_pack().tolist())


@pytest.mark.parametrize("number", [32000, 32001, 123456789, 2**40 + 5, MAX_DEAL])
def test_large_numbers_use_the_mersenne_twister(number: int) -> None:
    assert shuffled_pack(number).tolist() == _mt_shuffle(number, full_pack().tolist())


def test_generator_switches_between_31999_and_32000() -> None:
    # PySolFC's constructRandom: ``if 0 <= seed < 32000: LCRandom31`` else MTRandom.
    assert MS_LIMIT == 32000
    pack = full_pack().tolist()
    for number, expected, other in ((31999, LCRandom31, MTRandom), (32000, MTRandom, LCRandom31)):
        got = shuffled_pack(number).tolist()
        assert got == expected(number).shuffle(list(pack))
        assert got != other(number).shuffle(list(pack)), number


@pytest.mark.parametrize("number", [1, 12345, 31999, 32001, 123456789, MAX_DEAL])
def test_pack_order_matches_pysol_cards_dealer(number: int) -> None:
    # pysol_cards' own dealer (its two-deck Gypsy) reverses the shuffled list so that it is
    # top first; our pack must be that order read from the other end. 32000 is left out
    # on purpose: pysol_cards switches generators at ``<= 32000`` while PySolFC itself
    # (and so this engine) switches at ``< 32000``.
    from pysol_cards.deal_game import Game
    from pysol_cards.random_base import RandomBase

    game = Game("gypsy", number, RandomBase.DEALS_PYSOLFC)
    game.deal()
    top_first = [c.suit * N_RANKS + c.rank - 1 for c in game.cards]
    assert shuffled_pack(number)[::-1].tolist() == top_first


def test_shuffled_pack_is_a_deterministic_permutation() -> None:
    a = shuffled_pack(777)
    assert a.dtype == np.int8 and a.shape == (N_CARDS,)
    assert np.array_equal(a, shuffled_pack(777))
    assert sorted(a.tolist()) == sorted(full_pack().tolist())
    assert not np.array_equal(a, shuffled_pack(778))


def test_full_pack_is_pysolfc_order() -> None:
    # Deck 0 then deck 1, suits C S H D, ranks A..K: the list the shuffle starts from.
    texts = [card_text(c) for c in full_pack()]
    assert texts[:3] == ["AC", "2C", "3C"] and texts[13] == "AS" and texts[26] == "AH" and texts[39] == "AD"
    assert texts[51] == "KD" and texts[52:] == texts[:52]


# -------------------------------------------------------------------- every variant

CUSTOM = [Variant("wide", columns=13, cards_per_column=5, face_down=2), Variant("one", columns=1, cards_per_column=1)]


@pytest.mark.parametrize("variant", [*PRESETS.values(), *CUSTOM], ids=lambda v: v.name)
@pytest.mark.parametrize("number", [5, 12345, 987654321])
def test_every_variant_deals_the_same_pack_across_its_columns(variant: Variant, number: int) -> None:
    top_first = shuffled_pack(number)[::-1].tolist()
    g = deal(variant, number)
    c, per = variant.columns, variant.cards_per_column
    # One pass per row, columns left to right, from the top of the pack.
    for i, col in enumerate(g.columns):
        assert col == [top_first[p * c + i] for p in range(per)], f"column {i + 1}"
    assert g.stock == top_first[c * per :]
    assert len(g.stock) == variant.stock_size
    assert g.face_down == [variant.face_down] * c
    assert g.waste == [] and g.foundations == [0] * 8
    assert g.redeals_left == variant.redeals


@pytest.mark.parametrize("variant", [*PRESETS.values(), *CUSTOM], ids=lambda v: v.name)
@pytest.mark.parametrize("auto", [False, True])
def test_deal_conserves_104_cards(variant: Variant, auto: bool) -> None:
    variant = variant.replace(auto_play_safe=auto)
    for number in (1, 3, 40000):
        g = deal(variant, number)
        counts: Counter[int] = Counter(g.stock + g.waste)
        for col in g.columns:
            counts.update(col)
        for pile, height in enumerate(g.foundations):
            counts.update((pile // 2) * N_RANKS + r for r in range(height))
        assert counts == Counter({code: 2 for code in range(N_CODES)})
        assert sum(counts.values()) == N_CARDS


def test_stock_sizes_and_shapes() -> None:
    assert {name: len(deal(name, 9).stock) for name in PRESETS} == {
        "classic": 64,
        "josephine": 64,
        "streets": 64,
        "maria": 68,
        "limited": 68,
        "rank_and_file": 64,
        "relaxed": 64,
    }
    assert [len(c) for c in deal("maria", 9).columns] == [4] * 9
    assert [len(c) for c in deal("limited", 9).columns] == [3] * 12
    assert deal("rank_and_file", 9).face_down == [3] * 10


def test_auto_play_at_the_deal_sends_aces_home() -> None:
    # Deal 12345 has AH at the end of column 8 and nothing else safe under it.
    auto = PRESETS["classic"].replace(auto_play_safe=True)
    g = deal(auto, 12345)
    assert g.variant == auto
    assert g.foundations == [0, 0, 0, 0, 1, 0, 0, 0]  # one heart pile holds AH
    assert g.columns[7] == deal("classic", 12345).columns[7][:-1]


def test_deal_accepts_names_variants_and_numpy_ints() -> None:
    a = deal("classic", 12345)
    assert deal(PRESETS["classic"], 12345) == a
    assert deal("CLASSIC", np.int64(12345)) == a
    assert deal("rank-and-file", 12345) == deal("rank_and_file", 12345)


@pytest.mark.parametrize(
    ("number", "error", "words"),
    [
        (0, ValueError, "1..100000000000000000000, got 0"),
        (-1, ValueError, "got -1"),
        (MAX_DEAL + 1, ValueError, "got 100000000000000000001"),
        (1.5, TypeError, "must be an integer 1..100000000000000000000, got 1.5 (float)"),
        (True, TypeError, "must be an integer 1..100000000000000000000, got True (bool)"),
        ("12", TypeError, "must be an integer 1..100000000000000000000, got '12'"),
        (None, TypeError, "must be an integer 1..100000000000000000000, got None"),
    ],
)
def test_bad_deal_numbers_are_rejected(number: object, error: type[Exception], words: str) -> None:
    with pytest.raises(error, match="deal number") as info:
        deal("classic", number)  # type: ignore[arg-type]
    assert words in str(info.value)
    with pytest.raises(error):
        shuffled_pack(number)  # type: ignore[arg-type]


def test_unknown_variant_name_is_rejected() -> None:
    with pytest.raises(ValueError, match="unknown variant 'forty'"):
        deal("forty", 1)
