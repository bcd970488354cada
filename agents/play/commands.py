"""What a player types: a move in the notation, or a command word, run on a session.

:func:`run_command` turns one line into one call on a :class:`~.session.PlaySession` and
returns what to tell the player; refusals come back as text, never as an exception, so the
screen just shows them. The terminal app (:mod:`.tui`) and its tests go through here.
"""

from __future__ import annotations

from dataclasses import dataclass

from .session import PlayError, PlaySession

HELP = """\
Moves: s (turn the stock), w>f, w>7, 3>f, 3>7, 3>7x2 (a run of 2, where the rules allow runs);
3 or w alone sends that card to its best place (a safe foundation, a card, an empty column).
Commands: undo (u), hint (h), finish (f), restart, new [N], share, moves (m), auto on|off,
pause, resume, resign, help (?), quit (q).
Keys: ctrl+z undo, ctrl+t hint into the input, up/down pick a legal move, enter plays it,
ctrl+f finish, ctrl+r restart, ctrl+n new deal, ctrl+s share, ctrl+p pause/resume, ctrl+q save and quit."""


@dataclass
class Reply:
    """What a typed line did.

    Attributes:
        message: What to show the player.
        ok: False when the request was refused (nothing changed).
        quit: The player asked to leave.
        prefill: Text to put in the input line (a hint to confirm with enter).
    """

    message: str
    ok: bool = True
    quit: bool = False
    prefill: str = ""


def run_command(session: PlaySession, line: str) -> Reply:
    """Run one typed line on ``session`` (see :data:`HELP`)."""
    words = line.strip().split()
    if not words:
        return Reply("type a move (3>7) or a command; ? for help", ok=False)
    head, rest = words[0].lower(), words[1:]
    try:
        if head in ("?", "help"):
            return Reply(HELP)
        if head in ("q", "quit", "exit"):
            return Reply("bye", quit=True)
        if head in ("u", "undo"):
            return Reply(session.undo())
        if head in ("h", "hint"):
            move = session.hint()
            return Reply(f"hint: {move} (enter plays it)", prefill=move)
        if head in ("f", "finish"):
            return Reply(session.finish())
        if head == "restart":
            return Reply(session.restart())
        if head == "new":
            if len(rest) > 1 or (rest and not rest[0].isdigit()):
                return Reply("new takes one deal number, or none for a random deal", ok=False)
            return Reply(session.new_game(int(rest[0]) if rest else None))
        if head == "share":
            return Reply(session.share())
        if head in ("m", "moves"):
            moves = session.legal_moves()
            return Reply("legal moves: " + (" ".join(moves) if moves else "none"))
        if head == "auto":
            if rest not in (["on"], ["off"]):
                return Reply("auto on, or auto off", ok=False)
            return Reply(session.set_auto_play(rest[0] == "on"))
        if head == "pause":
            return Reply(session.pause())
        if head == "resume":
            return Reply(session.resume())
        if head == "resign":
            return Reply(session.resign())
        if len(words) == 1 and (head == "w" or head.isdigit()):
            return Reply(session.tap(head))  # a bare source: the card goes to its best place
        return Reply(session.play("".join(words)))
    except PlayError as err:
        return Reply(str(err), ok=False)
