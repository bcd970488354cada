"""One game's row and its seed: what the evaluator and the batched policy evaluator share.

:class:`GameResult` is the row one deal leaves in ``results.json``/``results.csv``;
:func:`agent_seed` gives the agent its seed for a deal, so a game depends only on
``(seed, deal)``, whichever process or batch plays it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass
class GameResult:
    """One deal played once."""

    deal: int
    won: bool
    cards_on_foundations: int
    moves: int
    seconds: float  # wall time
    truncated: bool  # stopped by the move cap
    #: The playing process's CPU time for the game (``time.process_time``), which other work
    #: on a shared machine does not inflate; None where it is not measured per game (the
    #: batched policy evaluator plays many games at once).
    cpu_seconds: float | None = None


def agent_seed(seed: int, deal: int) -> int:
    """The agent's seed for one deal: a hash of ``(seed, deal)`` (63 bits)."""
    state = np.random.SeedSequence([int(seed) % 2**63, int(deal) % 2**63]).generate_state(2, np.uint32)
    return (int(state[0]) << 31) ^ int(state[1])
