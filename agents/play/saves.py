"""A saved game of ``forty-thieves play``: what :meth:`~.session.PlaySession.save` writes, and the
resume that :meth:`~.session.PlaySession.load` does.

A save holds the setup (level or variant and options), the deal or the practised position, the
clock, the counters and the undo history as moves. Resuming lays the deal out again and replays
the history as undoable actions, so undo works after a resume, then checks that the moves lead
to the saved position; a file that does not is refused, and left as it is. Time away does not
count: the clock goes on from the saved seconds.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from forty_thieves_env.text.errors import IllegalMoveError
from forty_thieves_env.text.game import GameState
from forty_thieves_env.text.position import format_position

from .setup import Setup
from .storage import read_json

__all__ = ["SAVE_VERSION", "resume", "save_document"]

#: The save format's version (a save of another version is refused, not misread).
SAVE_VERSION = 1


def save_document(session: Any, start: GameState | None) -> dict[str, Any]:
    """The saved game of ``session`` (a :class:`~.session.PlaySession`, named here, not imported:
    the session imports this module) that started from ``start`` (``None``: its deal)."""
    return {
        "version": SAVE_VERSION,
        "label": session.label,  # for a person reading the file; the setup below is what counts
        **session.setup.to_json(),
        "auto_play": session.auto_play,
        "hint_agent": session.hint_agent,
        "deal": session.deal,
        "seconds": session.elapsed,
        "moves": session.moves,
        "undos": session.undos,
        "hints": session.hints,
        "started": session.started,
        "history": [{"moves": e.moves, "auto": e.auto} for e in session.history],
        "start": format_position(start) if start is not None else None,
        "position": format_position(session.game),
    }


def resume(
    make: Callable[..., Any],
    path: str | os.PathLike[str],
    *,
    stats: Any,
    clock: Callable[[], float],
    seed: int | None,
) -> Any:
    """The session saved in ``path``, made by ``make`` (the session class) and brought to where it
    was saved: its undo history replayed, its counters and clock restored.

    Raises:
        ValueError: not a save file, another version, or moves that do not replay to the
            saved position (the file is left as it is).
    """
    where = Path(path)
    try:
        doc = read_json(where, SAVE_VERSION)
        setup = Setup.from_json(doc)
        session = make(
            None,
            setup.variant,
            deal=int(doc["deal"]) if doc.get("start") is None else None,
            position=doc.get("start"),
            winnable_only=setup.winnable_only,
            auto_play=bool(doc["auto_play"]),
            stats=stats,
            hint_agent=doc.get("hint_agent", "heuristic"),
            clock=clock,
            seed=seed,
        )
        for item in doc["history"]:
            session._apply([str(m) for m in item["moves"]], bool(item["auto"]))
        if format_position(session.game) != doc["position"]:
            raise ValueError("the saved moves do not lead to the saved position")
        # Inside the try: a save missing one of these is reported like any other damage.
        session.moves = int(doc["moves"])
        session.undos = int(doc["undos"])
        session.hints = int(doc["hints"])
        session.started = bool(doc["started"])
        session._elapsed = float(doc["seconds"])
    except KeyError as err:
        raise ValueError(f"{where} is not a saved game that can be resumed: no {err} field") from None
    except (ValueError, TypeError, AttributeError, IllegalMoveError) as err:
        raise ValueError(f"{where} is not a saved game that can be resumed: {err}") from None
    session._since = clock()
    return session
