"""The Forty Thieves family as one frozen dataclass with named presets.

Every rule option is a field; a preset is just a :class:`Variant` with a name. Any preset
can be varied with :meth:`Variant.replace` (``CLASSIC.replace(redeals=1)``).

============== ======= ===== ========= ========= =========== =======
preset         columns cards face-down build     run moves   redeals
============== ======= ===== ========= ========= =========== =======
classic        10      4     0         suit      none        0
josephine      10      4     0         suit      free        0
streets        10      4     0         alternate none        0
maria          9       4     0         alternate none        0
limited        12      3     0         suit      none        0
rank_and_file  10      4     3         alternate free        0
relaxed        10      4     0         suit      free        1
============== ======= ===== ========= ========= =========== =======
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Literal

from .cards import N_CARDS, N_RANKS
from .checks import check_choice, check_flag, check_int

BuildRule = Literal["suit", "alternate"]
RunMoves = Literal["none", "supermove", "free"]

BUILD_RULES: tuple[str, ...] = ("suit", "alternate")
RUN_MOVES: tuple[str, ...] = ("none", "supermove", "free")
MAX_COLUMNS = 16
MAX_REDEALS = 100


@dataclass(frozen=True)
class Variant:
    """One member of the Forty Thieves family.

    Attributes:
        name: Preset name, or a custom label.
        columns: Number of tableau columns.
        cards_per_column: Cards dealt to each column (across the rows, one per pass).
        face_down: How many of each column's dealt cards lie face down under the rest;
            a face-down card turns up when it becomes the column's exposed card.
        build: ``"suit"``: a card goes on the next higher card of its suit.
            ``"alternate"``: on the next higher card of the other colour.
        run_moves: ``"none"``: exactly one card moves at a time. ``"supermove"``: a run
            built by ``build`` moves as one move only when single-card moves through empty
            columns could do it, at most ``2 ** e`` cards where ``e`` counts the empty
            columns other than the destination (so half as many into an empty column).
            ``"free"``: a run of any length moves, whole or in part.
        redeals: How many times the waste may be turned over into a new stock once the
            stock is empty; the cards come out again in the same order.
        auto_play_safe: After every move (and after the deal), send *safe* cards to the
            foundations until none is left. A card of rank ``r`` is safe when every card
            that could ever be built on it in the tableau is already on a foundation:
            with ``build="suit"`` both copies of rank ``r - 1`` of its suit, with
            ``build="alternate"`` both copies of rank ``r - 1`` of each suit of the other
            colour. Aces are always safe. Such a card can no longer be needed, so playing
            it never loses a win.
    """

    name: str = "classic"
    columns: int = 10
    cards_per_column: int = 4
    face_down: int = 0
    build: BuildRule = "suit"
    run_moves: RunMoves = "none"
    redeals: int = 0
    auto_play_safe: bool = False

    def __post_init__(self) -> None:
        # Checked with the package's one rule per kind of argument (:mod:`.checks`): an option
        # is refused unless it is exactly of its kind, so that ``auto_play_safe="no"`` or
        # ``redeals=1.5`` never slips through; numpy numbers are normalised to Python ones so
        # that equal variants are equal (and hash alike) however they were made.
        def where(field: str) -> str:
            return f"variant {self.name!r}: {field}"

        if not isinstance(self.name, str):
            raise TypeError(f"variant name must be text (str), got {self.name!r} ({type(self.name).__name__})")
        ranges = {
            "columns": (1, MAX_COLUMNS),
            "cards_per_column": (1, None),
            "face_down": (0, None),
            "redeals": (0, MAX_REDEALS),
        }
        for field, (low, high) in ranges.items():
            object.__setattr__(self, field, check_int(getattr(self, field), where(field), low, high))
        if self.columns * self.cards_per_column >= N_CARDS:
            raise ValueError(
                f"{where('cards_per_column')} must leave a stock: columns * cards_per_column < {N_CARDS}, "
                f"got {self.columns} * {self.cards_per_column} = {self.columns * self.cards_per_column}"
            )
        check_int(self.face_down, where("face_down"), 0, self.cards_per_column - 1)
        check_choice(self.build, where("build"), BUILD_RULES)
        check_choice(self.run_moves, where("run_moves"), RUN_MOVES)
        object.__setattr__(self, "auto_play_safe", check_flag(self.auto_play_safe, where("auto_play_safe")))

    @property
    def stock_size(self) -> int:
        """Cards left in the stock after the deal."""
        return N_CARDS - self.columns * self.cards_per_column

    @property
    def max_depth(self) -> int:
        """Most cards a column can ever hold.

        Cards only leave a column from its end, so a column is a prefix of its dealt cards
        followed by a built run; a run under a king of the deal adds at most 12 cards, and
        a run started in an empty column at most 13.
        """
        return max(self.cards_per_column + N_RANKS - 1, N_RANKS)

    @property
    def max_run(self) -> int:
        """Longest run one move can carry (1 without run moves)."""
        return 1 if self.run_moves == "none" else N_RANKS

    def replace(self, **changes: object) -> Variant:
        """A copy with some fields changed (validated like a new variant)."""
        return dataclasses.replace(self, **changes)  # type: ignore[arg-type]


CLASSIC = Variant("classic")
JOSEPHINE = Variant("josephine", run_moves="free")
STREETS = Variant("streets", build="alternate")
MARIA = Variant("maria", columns=9, build="alternate")
LIMITED = Variant("limited", columns=12, cards_per_column=3)
RANK_AND_FILE = Variant("rank_and_file", face_down=3, build="alternate", run_moves="free")
RELAXED = Variant("relaxed", redeals=1, run_moves="free")

PRESETS: dict[str, Variant] = {v.name: v for v in (CLASSIC, JOSEPHINE, STREETS, MARIA, LIMITED, RANK_AND_FILE, RELAXED)}


class UnknownOptionError(TypeError, ValueError):
    """An unknown keyword argument, in Python's own words (``... got an unexpected keyword argument 'x'``).

    A ``TypeError`` as Python raises for any function, so that wrappers that try a keyword and fall
    back on that error (TorchRL's ``GymEnv`` passes ``frameskip``) work; also a ``ValueError``, which
    this error was before.
    """


def get_variant(name: str | Variant, caller: str = "get_variant", **overrides: object) -> Variant:
    """Look up a preset by name (``"rank-and-file"`` and any case accepted) and apply overrides.

    ``caller``: the function the message names for an unknown override (an environment's
    constructor passes its own).

    Raises:
        TypeError: ``name`` is neither text nor a Variant, or an override of the wrong kind.
        UnknownOptionError: an override that is no variant option (a ``TypeError`` and a ``ValueError``).
        ValueError: unknown preset name or invalid override.
    """
    if isinstance(name, Variant):
        base = name
    else:
        if not isinstance(name, str):
            raise TypeError(f"variant must be a preset name (str) or a Variant, got {name!r} ({type(name).__name__})")
        key = name.strip().lower().replace("-", "_").replace(" ", "_")
        if key not in PRESETS:
            raise ValueError(f"unknown variant {name!r}; presets are {', '.join(PRESETS)}")
        base = PRESETS[key]
    fields = {f.name for f in dataclasses.fields(Variant)}
    unknown = set(overrides) - fields
    if unknown:
        raise UnknownOptionError(
            f"{caller}() got an unexpected keyword argument {sorted(unknown)[0]!r}: unknown variant option(s) "
            f"{sorted(unknown)}; options are {sorted(fields)}"
        )
    return base.replace(**overrides) if overrides else base
