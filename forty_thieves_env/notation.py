"""Text formats: cards, moves and whole positions (what users paste into bug reports).

Card
    Rank ``A 2 3 4 5 6 7 8 9 T J Q K`` (``10`` accepted) then suit ``S H D C`` (``♠ ♥ ♦ ♣``
    accepted), case-insensitive: ``KD``, ``10h``, ``7♠``. A ``#`` prefix marks a face-down
    card in a column: ``#5H``.

Move
    ``s`` turns the stock (or redeals when the stock is empty and a redeal is left);
    otherwise ``<src>><dst>`` with ``src`` = ``w`` (waste) or a column 1..N and ``dst`` =
    ``f`` (foundation) or a column, and ``xK`` for a run of K cards: ``w>f``, ``3>f``,
    ``w>7``, ``3>7``, ``3>7x2``.

Position
    One field per line in this order; blank lines, ``#`` comment lines and notes after a
    field (``#`` after a space, as in ``stock: KS 2D  # next card first``) are ignored::

        variant: classic
        redeals: 0
        stock: KS 2D          (next card to turn first)
        waste: 5H 9C          (bottom first, top last)
        foundations: 3S AH    (top card of each non-empty pile)
        1: KD 9S 8S 7S        (bottom first; nothing after the colon = empty)
        ...
        10: 4C

    ``variant`` is a preset name optionally followed by option overrides, e.g.
    ``variant: classic run_moves=supermove auto_play_safe=true`` (a custom name is written
    with every option); ``redeals`` is the number of redeals left. Loading checks
    everything (every card exactly twice, the column count, consistent foundations, column
    capacity) and raises :class:`PositionError` naming the line and the problem.
"""

from __future__ import annotations

import dataclasses
import re

from .cards import N_CODES, N_RANKS, RANK_LETTERS, SUIT_LETTERS, SUIT_SYMBOLS
from .moves import (
    KIND_COLUMN_COLUMN,
    KIND_COLUMN_FOUNDATION,
    KIND_STOCK,
    KIND_WASTE_COLUMN,
    KIND_WASTE_FOUNDATION,
    decode,
    encode,
)
from .state import CFG_N_ACTIONS, GameState, column_room_problem, config_for, stock_room_problem
from .variants import PRESETS, Variant

# ------------------------------------------------------------------------------ cards

_SUIT_IN = {**{ch: i for i, ch in enumerate(SUIT_LETTERS)}, **{ch: i for i, ch in enumerate(SUIT_SYMBOLS)}}
_SUIT_IN.update({"♤": 1, "♡": 2, "♢": 3, "♧": 0})
_RANK_IN = {ch: i for i, ch in enumerate(RANK_LETTERS)}
_RANK_IN["10"] = 9


def parse_card(text: str) -> int:
    """Card code for text like ``"KD"``, ``"10h"`` or ``"7♠"``.

    Raises:
        ValueError: not a card.
    """
    t = text.strip().upper()
    if len(t) < 2 or t[:-1] not in _RANK_IN or t[-1] not in _SUIT_IN:
        raise ValueError(f"not a card: {text!r} (rank A 2-9 T/10 J Q K, then suit S H D C)")
    return _SUIT_IN[t[-1]] * N_RANKS + _RANK_IN[t[:-1]]


def card_text(code: int, symbols: bool = False) -> str:
    """Two-character text of a card code (``"TH"``, or ``"T♥"`` with ``symbols``)."""
    code = int(code)
    if not 0 <= code < N_CODES:
        raise ValueError(f"not a card code: {code}")
    suits = SUIT_SYMBOLS if symbols else SUIT_LETTERS
    return RANK_LETTERS[code % N_RANKS] + suits[code // N_RANKS]


def cards_text(codes: list[int]) -> str:
    return " ".join(card_text(c) for c in codes)


# ------------------------------------------------------------------------------ moves

_MOVE_RE = re.compile(r"^(w|\d+)>(f|\d+)(?:x(\d+))?$")


def parse_move(variant: Variant, text: str) -> int:
    """Action number of move text in ``variant`` (see the module docstring).

    Raises:
        ValueError: malformed text, or a move no action expresses in this variant.
    """
    t = re.sub(r"\s+", "", text).lower()
    if t == "s":
        return encode(variant, KIND_STOCK)
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
            return encode(variant, KIND_WASTE_FOUNDATION)
        return encode(variant, KIND_WASTE_COLUMN, dst=int(dst) - 1)
    if dst == "f":
        return encode(variant, KIND_COLUMN_FOUNDATION, src=int(src) - 1)
    try:
        return encode(variant, KIND_COLUMN_COLUMN, int(src) - 1, int(dst) - 1, k)
    except ValueError as err:
        raise ValueError(f"{text!r}: {err}") from None


def format_move(variant: Variant, action: int) -> str:
    """Move text for an action number."""
    cfg = config_for(variant)
    action = int(action)
    if not 0 <= action < cfg[CFG_N_ACTIONS]:
        raise ValueError(f"action {action} out of range 0..{int(cfg[CFG_N_ACTIONS]) - 1} for {variant.name}")
    kind, i, j, k = (int(x) for x in decode(cfg, action))
    if kind == KIND_STOCK:
        return "s"
    if kind == KIND_WASTE_FOUNDATION:
        return "w>f"
    if kind == KIND_WASTE_COLUMN:
        return f"w>{j + 1}"
    if kind == KIND_COLUMN_FOUNDATION:
        return f"{i + 1}>f"
    assert kind == KIND_COLUMN_COLUMN
    return f"{i + 1}>{j + 1}" + (f"x{k}" if k > 1 else "")


# --------------------------------------------------------------------------- positions


# A note after a field: "#" after a space and before a space or the line end. A face-down
# card is "#" directly followed by its card ("#5H"), so the two never clash.
_NOTE_RE = re.compile(r"\s#(?:\s.*)?$")


class PositionError(ValueError):
    """Bad position text; the message names the line and the problem."""


_OPTION_FIELDS = {f.name: f for f in dataclasses.fields(Variant) if f.name != "name"}


def _variant_text(v: Variant) -> str:
    base = PRESETS.get(v.name)
    # A custom name spells out every option: the reader cannot know its defaults, and the
    # parser refuses a bare unknown name (most likely a typo of a preset).
    extras = [
        f"{name}={str(getattr(v, name)).lower() if isinstance(getattr(v, name), bool) else getattr(v, name)}"
        for name in _OPTION_FIELDS
        if base is None or getattr(v, name) != getattr(base, name)
    ]
    return " ".join([v.name, *extras])


def _parse_variant(text: str) -> Variant:
    words = text.split()
    if not words:
        raise ValueError("no variant name")
    name, *opts = words
    key = name.lower().replace("-", "_")
    # Preset names are normalised; a custom name is kept as written so that it round-trips.
    base = PRESETS.get(key, Variant(name=name))
    if key not in PRESETS and not opts:
        raise ValueError(f"unknown variant {name!r}; presets are {', '.join(PRESETS)}")
    changes: dict[str, object] = {}
    for opt in opts:
        field, sep, raw = opt.partition("=")
        if not sep or field not in _OPTION_FIELDS:
            raise ValueError(f"bad variant option {opt!r}; options are {', '.join(_OPTION_FIELDS)} as key=value")
        kind = _OPTION_FIELDS[field].type
        if kind in ("int", int):
            try:
                changes[field] = int(raw)
            except ValueError:
                raise ValueError(f"variant option {field} needs an integer, got {raw!r}") from None
        elif kind in ("bool", bool):
            if raw.lower() not in ("true", "false"):
                raise ValueError(f"variant option {field} needs true or false, got {raw!r}")
            changes[field] = raw.lower() == "true"
        else:
            changes[field] = raw
    return base.replace(**changes)


def format_position(state: GameState) -> str:
    """The position of ``state`` as text; :func:`parse_position` gives it back exactly."""
    v = state.variant
    found = state.foundations
    tops = []
    for p, h in enumerate(found):
        if h:
            tops.append(card_text((p // 2) * N_RANKS + h - 1))
    lines = [
        f"variant: {_variant_text(v)}",
        f"redeals: {state.redeals_left}",
        f"stock: {cards_text(state.stock)}".rstrip(),
        f"waste: {cards_text(state.waste)}".rstrip(),
        f"foundations: {' '.join(tops)}".rstrip(),
    ]
    for i, (col, down) in enumerate(zip(state.columns, state.face_down, strict=True)):
        cards = [("#" if t < down else "") + card_text(c) for t, c in enumerate(col)]
        lines.append(f"{i + 1}: {' '.join(cards)}".rstrip())
    return "\n".join(lines) + "\n"


def parse_position(text: str) -> GameState:
    """Load a position written by :func:`format_position` (or by hand).

    Raises:
        PositionError: names the line number and what is wrong with it.
    """
    lines = [
        (n, _NOTE_RE.sub("", line).strip())
        for n, line in enumerate(text.splitlines(), start=1)
        if line.strip() and not line.strip().startswith("#")
    ]
    if not lines:
        raise PositionError("empty position text")

    def fail(n: int, why: str) -> PositionError:
        return PositionError(f"line {n}: {why}")

    expected = ["variant", "redeals", "stock", "waste", "foundations"]
    fields: dict[str, tuple[int, str]] = {}
    rest = iter(lines)
    for want in expected:
        try:
            n, line = next(rest)
        except StopIteration:
            raise PositionError(f"missing field {want!r} at end of text") from None
        key, sep, value = line.partition(":")
        if not sep or key.strip().lower() != want:
            raise fail(n, f"expected field {want!r}, got {line!r} (fields: {', '.join(expected)}, then columns)")
        fields[want] = (n, value.strip())

    n, value = fields["variant"]
    try:
        variant = _parse_variant(value)
    except ValueError as err:
        raise fail(n, str(err)) from None

    n, value = fields["redeals"]
    if not re.fullmatch(r"[0-9]+", value):
        raise fail(n, f"redeals must be a whole number, got {value!r}")
    redeals = int(value)
    if redeals > variant.redeals:
        raise fail(n, f"{redeals} redeals left but {variant.name} allows {variant.redeals}")

    def cards_of(n: int, value: str, allow_down: bool = False) -> tuple[list[int], list[bool]]:
        codes, down = [], []
        for tok in value.split():
            hidden = tok.startswith("#")
            if hidden and not allow_down:
                raise fail(n, f"face-down card {tok!r} is only allowed in a column")
            try:
                codes.append(parse_card(tok[1:] if hidden else tok))
            except ValueError as err:
                raise fail(n, str(err)) from None
            down.append(hidden)
        return codes, down

    # Lines on which each card has been seen, so a bad count can name where it went wrong.
    seen: list[list[int]] = [[] for _ in range(N_CODES)]

    def count(n: int, code: int) -> None:
        where = seen[code]
        if len(where) == 2:
            raise fail(
                n,
                f"{card_text(code)} appears a third time (also on lines {where[0]}, {where[1]}); "
                "every card is in the pack exactly twice",
            )
        where.append(n)

    stock, _ = cards_of(*fields["stock"])
    waste, _ = cards_of(*fields["waste"])
    for name, cards in (("stock", stock), ("waste", waste)):
        where = fields[name][0]
        if len(cards) > variant.stock_size:
            raise fail(where, f"{len(cards)} cards in the {name}; {variant.name} holds at most {variant.stock_size}")
        for c in cards:
            count(where, c)
    problem = stock_room_problem(variant, len(stock), len(waste))
    if problem:
        raise fail(fields["waste"][0], problem)

    n, value = fields["foundations"]
    tops, _ = cards_of(n, value)
    heights = [0] * 8
    for c in tops:
        suit = c // N_RANKS
        if heights[2 * suit] == 0:
            heights[2 * suit] = c % N_RANKS + 1
        elif heights[2 * suit + 1] == 0:
            heights[2 * suit + 1] = c % N_RANKS + 1
        else:
            raise fail(n, f"more than two {SUIT_LETTERS[suit]} foundation piles ({card_text(c)})")
    for c in tops:  # counted once the piles are known good: a third pile is the clearer error
        for r in range(c % N_RANKS + 1):
            count(n, (c // N_RANKS) * N_RANKS + r)

    columns: list[list[int]] = []
    face_down: list[int] = []
    col_lines = list(rest)
    for idx, (n, line) in enumerate(col_lines):
        key, sep, value = line.partition(":")
        if not sep or key.strip() != str(idx + 1):
            raise fail(n, f"expected column line '{idx + 1}: ...', got {line!r}")
        if idx >= variant.columns:
            raise fail(n, f"{variant.name} has {variant.columns} columns, this is column {idx + 1}")
        cards, down = cards_of(n, value, allow_down=True)
        problem = column_room_problem(variant, cards)
        if problem:
            raise fail(n, f"column {idx + 1} {problem}")
        k = sum(down)
        if down != [True] * k + [False] * (len(cards) - k):
            raise fail(n, "face-down cards must lie at the bottom, under every face-up card")
        if down and all(down):
            raise fail(n, "the exposed card of a column is face up")
        for c in cards:
            count(n, c)
        columns.append(cards)
        face_down.append(k)
    if len(columns) != variant.columns:
        where = col_lines[-1][0] if col_lines else lines[-1][0]
        raise fail(where, f"{variant.name} has {variant.columns} columns, found {len(columns)}")
    missing = [f"{card_text(c)} x{2 - len(where)}" for c, where in enumerate(seen) if len(where) < 2]
    if missing:
        raise fail(
            lines[-1][0],
            f"missing at the end of the position: {', '.join(missing[:12])}{' ...' if len(missing) > 12 else ''} "
            "(every card must appear exactly twice in the columns, stock, waste and foundations together)",
        )
    return GameState.from_parts(variant, columns, stock, waste, heights, face_down, redeals)
