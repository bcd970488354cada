"""Text of cards and moves (the position format is in :mod:`.position`).

Card
    Rank ``A 2 3 4 5 6 7 8 9 T J Q K`` (``10`` accepted) then suit ``S H D C`` (``♠ ♥ ♦ ♣``
    accepted), case-insensitive: ``KD``, ``10h``, ``7♠``. A ``#`` prefix marks a face-down
    card in a column: ``#5H``.

Move
    ``s`` turns the stock (or redeals when the stock is empty and a redeal is left);
    otherwise ``<src>><dst>`` with ``src`` = ``w`` (waste) or a column 1..N and ``dst`` =
    ``f`` (foundation) or a column, and ``xK`` for a run of K cards: ``w>f``, ``3>f``,
    ``w>7``, ``3>7``, ``3>7x2``.
"""

from __future__ import annotations

import re

from ..engine.actions import Kind, decode, encode, n_actions
from ..engine.cards import N_CODES, N_RANKS, RANK_LETTERS, SUIT_LETTERS, SUIT_SYMBOLS
from ..engine.checks import check_action, check_text, is_integer
from ..engine.config import config_for
from ..engine.variants import Variant

# ------------------------------------------------------------------------------ cards

_SUIT_IN = {**{ch: i for i, ch in enumerate(SUIT_LETTERS)}, **{ch: i for i, ch in enumerate(SUIT_SYMBOLS)}}
_SUIT_IN.update({"♤": 1, "♡": 2, "♢": 3, "♧": 0})
_RANK_IN = {ch: i for i, ch in enumerate(RANK_LETTERS)}
_RANK_IN["10"] = 9


def parse_card(text: str) -> int:
    """Card code for text like ``"KD"``, ``"10h"`` or ``"7♠"``.

    Raises:
        TypeError: not text.
        ValueError: not a card.
    """
    t = check_text(text, "card").strip().upper()
    if len(t) < 2 or t[:-1] not in _RANK_IN or t[-1] not in _SUIT_IN:
        raise ValueError(f"not a card: {text!r} (rank A 2-9 T/10 J Q K, then suit S H D C)")
    return _SUIT_IN[t[-1]] * N_RANKS + _RANK_IN[t[:-1]]


def card_text(code: int, symbols: bool = False) -> str:
    """Two-character text of a card code (``"TH"``, or ``"T♥"`` with ``symbols``)."""
    if not is_integer(code):
        raise TypeError(f"card code must be an integer 0..{N_CODES - 1}, got {code!r} ({type(code).__name__})")
    code = int(code)
    if not 0 <= code < N_CODES:
        raise ValueError(f"not a card code: {code} (card codes are 0..{N_CODES - 1})")
    suits = SUIT_SYMBOLS if symbols else SUIT_LETTERS
    return RANK_LETTERS[code % N_RANKS] + suits[code // N_RANKS]


def cards_text(codes: list[int]) -> str:
    return " ".join(card_text(c) for c in codes)


# ------------------------------------------------------------------------------ moves

_MOVE_RE = re.compile(r"^(w|\d+)>(f|\d+)(?:x(\d+))?$")


def parse_move(variant: Variant, text: str) -> int:
    """Action number of move text in ``variant`` (see the module docstring).

    Raises:
        TypeError: not text.
        ValueError: malformed text, or a move no action expresses in this variant.
    """
    t = re.sub(r"\s+", "", check_text(text, "move")).lower()
    if t == "s":
        return encode(variant, Kind.STOCK)
    m = _MOVE_RE.match(t)
    if not m:
        raise ValueError(f"not a move: {text!r} (expected 's', 'w>f', '3>f', 'w>7', '3>7' or '3>7x2')")
    src, dst, count = m.groups()
    k = int(count) if count is not None else 1
    if count is not None and (src == "w" or dst == "f") and k != 1:
        raise ValueError(f"{text!r}: only single cards move from the waste or to a foundation")
    c = variant.columns
    for part in (src, dst):
        if part not in ("w", "f") and not 1 <= int(part) <= c:
            raise ValueError(f"{text!r}: no column {part} in {variant.name} (columns 1..{c})")
    if src == "w":
        if dst == "f":
            return encode(variant, Kind.WASTE_FOUNDATION)
        return encode(variant, Kind.WASTE_COLUMN, dst=int(dst) - 1)
    if dst == "f":
        return encode(variant, Kind.COLUMN_FOUNDATION, src=int(src) - 1)
    try:
        return encode(variant, Kind.COLUMN_COLUMN, int(src) - 1, int(dst) - 1, k)
    except ValueError as err:
        raise ValueError(f"{text!r}: {err}") from None


def format_move(variant: Variant, action: int) -> str:
    """Move text for an action number."""
    cfg = config_for(variant)
    action = check_action(action)
    n = n_actions(variant)
    if not 0 <= action < n:
        raise ValueError(f"action {action} out of range 0..{n - 1} for {variant.name}")
    kind, i, j, k = (int(x) for x in decode(cfg, action))
    if kind == Kind.STOCK:
        return "s"
    if kind == Kind.WASTE_FOUNDATION:
        return "w>f"
    if kind == Kind.WASTE_COLUMN:
        return f"w>{j + 1}"
    if kind == Kind.COLUMN_FOUNDATION:
        return f"{i + 1}>f"
    assert kind == Kind.COLUMN_COLUMN
    return f"{i + 1}>{j + 1}" + (f"x{k}" if k > 1 else "")
