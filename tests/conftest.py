"""Shared helpers for the rules tests: positions written with just the cards in play.

A position must hold all 104 cards, but a rule is easiest to read from the handful of cards it
is about. :func:`position` takes a partial position text (the variant line and every column
line, optionally ``redeals``, ``stock``, ``waste`` and ``foundations``) and fills in what is
missing: redeals default to the variant's, stock and waste to empty, and the foundations to
*everything not in play*. That last step is only possible when the cards in play are what some
pair of piles per suit leaves over (a pile holds ace..top, so for each suit the number of
copies in play can only grow with the rank); otherwise :func:`position` says so and the test
must write ``foundations:`` itself.

Every column line must be written, even an empty one (``8:``): an empty column takes any card,
so a column left out by accident would change what is legal.
"""

from __future__ import annotations

import functools
import subprocess
import sys
from collections.abc import Iterator

import numpy as np
import pytest

from forty_thieves_env import (
    GameState,
    IllegalMoveError,
    format_move,
    format_position,
    get_variant,
    parse_card,
    parse_position,
)
from forty_thieves_env.engine.cards import N_RANKS, RANK_LETTERS, SUIT_LETTERS

_HEADER = ("variant", "redeals", "stock", "waste", "foundations")


def _variant_of(line: str):
    """The Variant named by a ``variant:`` value such as ``classic run_moves=supermove``."""
    name, *opts = line.split()
    changes: dict[str, object] = {}
    for opt in opts:
        key, _, raw = opt.partition("=")
        if raw.lower() in ("true", "false"):
            changes[key] = raw.lower() == "true"
        elif raw.lstrip("-").isdigit():
            changes[key] = int(raw)
        else:
            changes[key] = raw
    return get_variant(name, **changes)


def foundation_tops(in_play: list[int]) -> str:
    """The ``foundations:`` value that holds exactly the cards not in ``in_play``.

    Args:
        in_play: Card codes in the columns, stock and waste (each at most twice).

    Raises:
        ValueError: no two piles per suit can hold exactly the rest.
    """
    counts = np.bincount(np.asarray(in_play, dtype=np.int64), minlength=4 * N_RANKS)
    tops = []
    for suit in range(4):
        home = [2 - int(counts[suit * N_RANKS + r]) for r in range(N_RANKS)]
        if min(home) < 0:
            raise ValueError(f"more than two copies of a {SUIT_LETTERS[suit]} card in play")
        # A pile is ace..top, so the copies at home can never go up with the rank.
        if any(home[r + 1] > home[r] for r in range(N_RANKS - 1)):
            raise ValueError(
                f"the {SUIT_LETTERS[suit]} cards in play {home} (copies at home per rank) fit no pair of "
                "foundation piles; write 'foundations:' explicitly"
            )
        for height in (sum(h >= 1 for h in home), sum(h >= 2 for h in home)):
            if height:
                tops.append(RANK_LETTERS[height - 1] + SUIT_LETTERS[suit])
    return " ".join(tops)


def position_text(text: str) -> str:
    """Complete a partial position text (see the module docstring) into a full one."""
    fields: dict[str, str] = {}
    columns: list[str] = []
    for raw in text.strip().splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        key, sep, value = line.partition(":")
        if not sep:
            raise ValueError(f"not a position line: {line!r}")
        key = key.strip().lower()
        if key in _HEADER:
            fields[key] = value.strip()
        else:
            columns.append(f"{key}: {value.strip()}")
    if "variant" not in fields:
        raise ValueError("a position needs its 'variant:' line")
    variant = _variant_of(fields["variant"])
    if len(columns) != variant.columns:
        raise ValueError(f"{variant.name} has {variant.columns} columns; write every line, got {len(columns)}")
    fields.setdefault("redeals", str(variant.redeals))
    fields.setdefault("stock", "")
    fields.setdefault("waste", "")
    if "foundations" not in fields:
        in_play = [
            parse_card(tok.lstrip("#"))
            for part in (fields["stock"], fields["waste"], *(c.partition(":")[2] for c in columns))
            for tok in part.split()
        ]
        fields["foundations"] = foundation_tops(in_play)
    head = [f"{key}: {fields[key]}".rstrip() for key in _HEADER]
    return "\n".join(head + [c.rstrip() for c in columns]) + "\n"


def position(text: str) -> GameState:
    """Load a partial position text (see the module docstring)."""
    return parse_position(position_text(text))


def legal(state: GameState) -> set[str]:
    """The legal moves of ``state`` as move text."""
    return {format_move(state.variant, a) for a in state.legal_actions()}


def moves_from(state: GameState, src: str) -> set[str]:
    """The legal moves whose source is ``src`` (``"w"`` or a column number)."""
    return {m for m in legal(state) if m.split(">")[0] == src}


def assert_refused(state: GameState, move: str) -> None:
    """``move`` parses, is not legal, raises IllegalMoveError and leaves ``state`` exactly as it was."""
    before = state.snapshot()
    assert move not in legal(state)
    with pytest.raises(IllegalMoveError):
        state.play(move)
    assert np.array_equal(state.array, before)


def cards(text: str) -> list[int]:
    """Card codes of space-separated card text."""
    return [parse_card(t) for t in text.split()]


def column_text(state: GameState, i: int) -> str:
    """Column ``i`` (1-based) as card text, bottom first, face-down cards marked ``#``."""
    for line in format_position(state).splitlines():
        key, _, value = line.partition(":")
        if key == str(i):
            return value.strip()
    raise ValueError(f"no column {i}")


# Classic, five cards from a win (the env and vector env tests play it): KH and QS in the stock,
# KS in column 1, KS QS in column 2.
NEAR_WIN = """\
variant: classic
redeals: 0
stock: KH QS
waste:
foundations: KC KC KD KD KH QH JS JS
1: KS
2: KS QS
3:
4:
5:
6:
7:
8:
9:
10:
"""
NEAR_WIN_SCRIPT = ["s", "w>f", "s", "w>3", "3>1", "2>f", "1>f", "1>f", "2>f"]

# A dead end (partial, for position()): the stock spent, legal moves (a JH or a QH onto a heart one
# higher), and no card can ever go home: both 10s of hearts and both spade queens lie under the spade
# kings, and there is no empty column.
# Classic, only spades out: every column top is K, J, 9, 7 or 5 (none fits on another), so the
# only move is turning the last stock card, the 3S, which fits nowhere either: then stuck.
ONE_MOVE_TO_STUCK = """\
variant: classic
redeals: 0
stock: 3S
waste:
foundations: KC KC KH KH KD KD
1: AS 2S KS
2: AS 2S KS
3: 3S 4S JS
4: 4S JS
5: 6S 9S
6: 6S 9S
7: 8S 7S
8: 8S 7S
9: TS 5S
10: TS QS QS 5S
"""

DEAD_END = """\
variant: classic columns=4
stock:
waste: JH JH
1: TH QS KS
2: TH QS KS
3: KH QH
4: QH KH
"""


@pytest.fixture
def one_torch_thread():
    """torch on one thread during the test, restored after it."""
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@functools.cache
def _winning_moves(variant: str, number: int) -> tuple[str, ...]:
    from agents.search.solver import solve  # the solver's tests only
    from forty_thieves_env import deal

    result = solve(deal(variant, number), max_nodes=300_000)
    assert result.verdict == "won", (variant, number)
    return tuple(result.moves)


def winning_line(variant: str, number: int) -> Iterator[tuple[GameState, str]]:
    """Each position of a winning line of test deal ``number`` (the solver's, at 300,000
    positions; solved once a process) with the move played from it. The position is one
    game played on in place: copy it to keep it."""
    from forty_thieves_env import deal

    game = deal(variant, number)
    for move in _winning_moves(variant, number):
        yield game, move
        game.play(move)


def run_fresh(*lines: str) -> None:
    """Run ``lines`` as one program in a new Python process, whose imports start from nothing
    (what a module pulls in is seen there, not hidden by this process's); fails if it fails."""
    subprocess.run([sys.executable, "-c", "\n".join(lines)], check=True)


# ------------------------------------------------------------------------------ GPU tests

# The GPU machine's numba-cuda imports ``np.row_stack``, which numpy 2.5 dropped: the alias
# must exist before anything imports numba.cuda. Tests and scripts only, never the package.
if not hasattr(np, "row_stack"):
    np.row_stack = np.vstack


@functools.cache
def gpu_visible() -> bool:
    """Whether numba-cuda is installed and finds a GPU with its driver."""
    import importlib.util

    if importlib.util.find_spec("numba_cuda") is None:
        return False
    from numba import cuda

    return bool(cuda.is_available())


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Skip the tests marked ``cuda`` where no GPU is visible (``make test`` on a CPU machine)."""
    wanted = [item for item in items if item.get_closest_marker("cuda") is not None]
    if wanted and not gpu_visible():
        skip = pytest.mark.skip(reason="needs an NVIDIA GPU, its CUDA driver and numba-cuda")
        for item in wanted:
            item.add_marker(skip)
