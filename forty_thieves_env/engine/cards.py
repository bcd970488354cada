"""Numeric card codes shared by every part of the engine.

A card is one ``int8``: ``code = suit * 13 + rank`` with ``rank`` 0 (ace) .. 12 (king)
and suits in PySolFC's order clubs, spades, hearts, diamonds (0..3). The two copies of a
card in the 104-card pack share one code: the rules never tell them apart.

Clubs and spades are black, hearts and diamonds red, so ``colour = suit >= 2``.
"""

from __future__ import annotations

import numpy as np

N_SUITS = 4
N_RANKS = 13
N_CODES = N_SUITS * N_RANKS  # 52 distinct cards
N_CARDS = 2 * N_CODES  # 104 cards in two decks
N_FOUNDATIONS = 2 * N_SUITS  # two piles per suit

EMPTY = -1  # an unused slot in a fixed-size card array

#: Suit letters in code order (PySolFC's C S H D).
SUIT_LETTERS = "CSHD"
#: Rank letters in code order.
RANK_LETTERS = "A23456789TJQK"
SUIT_SYMBOLS = "♣♠♥♦"

CLUBS, SPADES, HEARTS, DIAMONDS = range(4)
ACE, KING = 0, 12


def card(rank: int, suit: int) -> int:
    """Return the code of the card with 0-based ``rank`` and ``suit``."""
    if not (0 <= rank < N_RANKS and 0 <= suit < N_SUITS):
        raise ValueError(f"no card with rank {rank} and suit {suit}")
    return suit * N_RANKS + rank


def rank_of(code: int) -> int:
    """0-based rank (0 = ace, 12 = king) of a card code."""
    return code % N_RANKS


def suit_of(code: int) -> int:
    """Suit index (C S H D = 0..3) of a card code."""
    return code // N_RANKS


def is_red(code: int) -> bool:
    """True for hearts and diamonds."""
    return code // N_RANKS >= 2


def full_pack() -> np.ndarray:
    """The 104 cards in PySolFC's unshuffled order: deck 0 then deck 1, suits C S H D, A..K.

    Returns:
        ``(104,)`` int8 array of card codes.
    """
    return np.tile(np.arange(N_CODES, dtype=np.int8), 2)


def card_name(code: int) -> str:
    """Two-character name of a card code (``"TH"``), for the engine's own messages."""
    return RANK_LETTERS[code % N_RANKS] + SUIT_LETTERS[code // N_RANKS]
