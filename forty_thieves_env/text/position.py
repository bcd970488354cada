"""The position format: a whole game as text (what users paste into bug reports).

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
from typing import NamedTuple, Protocol

from ..engine.cards import N_CODES, N_RANKS, SUIT_LETTERS
from ..engine.checks import check_text
from ..engine.layout import column_room_problem, stock_room_problem
from ..engine.variants import PRESETS, Variant
from .errors import PositionError
from .notation import card_text, cards_text, parse_card


class Position(Protocol):
    """What :func:`format_position` reads (a :class:`~forty_thieves_env.text.game.GameState`)."""

    variant: Variant

    @property
    def redeals_left(self) -> int: ...

    @property
    def stock(self) -> list[int]: ...

    @property
    def waste(self) -> list[int]: ...

    @property
    def foundations(self) -> list[int]: ...

    @property
    def columns(self) -> list[list[int]]: ...

    @property
    def face_down(self) -> list[int]: ...


class PositionParts(NamedTuple):
    """A parsed position, in the arguments of :meth:`~forty_thieves_env.text.game.GameState.from_parts`."""

    variant: Variant
    columns: list[list[int]]
    stock: list[int]
    waste: list[int]
    foundations: list[int]  # eight pile heights, pile 2*suit + k
    face_down: list[int]
    redeals_left: int


# A note after a field: "#" after a space and before a space or the line end. A face-down
# card is "#" directly followed by its card ("#5H"), so the two never clash.
_NOTE_RE = re.compile(r"\s#(?:\s.*)?$")


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


def format_position(state: Position) -> str:
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


def read_position(text: str) -> PositionParts:
    """Read a position written by :func:`format_position` (or by hand) into its parts;
    :func:`forty_thieves_env.text.game.parse_position` makes the ``GameState``.

    Raises:
        TypeError: not text.
        PositionError: names the line number and what is wrong with it.
    """
    check_text(text, "position")
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
    return PositionParts(variant, columns, stock, waste, heights, face_down, redeals)
