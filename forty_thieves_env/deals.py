"""Numbered deals: deal ``N`` is PySolFC's game number ``N``, card for card, forever.

PySolFC builds the two decks in order (deck 0 then 1, suits C S H D, ranks A..K), shuffles
the list with its own generator (game numbers below 32000 use the Microsoft FreeCell LCG,
larger ones Python's Mersenne Twister; both come from ``pysol-cards``) and treats the end of
the list as the top of the stock. :func:`~.rules.deal_layout` then deals it. Every variant
uses the same shuffle with its own layout, so deal ``N`` means the same pack everywhere.

Example: deal 12345 of classic has column 1 ``6D AS TH 5H`` (bottom to top) and ``KC`` as
the first stock card.
"""

from __future__ import annotations

import numpy as np
from pysol_cards.random import LCRandom31, MTRandom

from .cards import full_pack
from .rules import deal_layout
from .state import GameState, config_for
from .variants import Variant, get_variant

#: Deal numbers below this use PySolFC's Microsoft-compatible LCG.
MS_LIMIT = 32000
#: Largest deal number PySolFC accepts (its Mersenne Twister seed range).
MAX_DEAL = 10**20


def check_deal_number(number: int) -> int:
    """Validate a deal number (1..10**20) and return it as ``int``."""
    if isinstance(number, bool) or not isinstance(number, (int, np.integer)):
        raise TypeError(f"deal number must be an int, got {number!r}")
    number = int(number)
    if not 1 <= number <= MAX_DEAL:
        raise ValueError(f"deal number must be 1..{MAX_DEAL}, got {number}")
    return number


def shuffled_pack(number: int) -> np.ndarray:
    """The 104-card pack of PySolFC game ``number`` after shuffling, top card last.

    Returns:
        ``(104,)`` int8 card codes.
    """
    number = check_deal_number(number)
    rng = LCRandom31(number) if number < MS_LIMIT else MTRandom(number)
    cards = full_pack().tolist()
    rng.shuffle(cards)
    return np.asarray(cards, dtype=np.int8)


def deal(variant: Variant | str = "classic", number: int = 1) -> GameState:
    """The starting position of deal ``number`` in ``variant`` (a preset name or a Variant)."""
    variant = get_variant(variant)
    state = GameState(variant)
    deal_layout(state.array, config_for(variant), shuffled_pack(number))
    return state
