"""The terminal game of ``forty-thieves play``: a textual app over a :class:`~.session.PlaySession`.

The screen shows the score line (moves, time, score), the level and deal, the table (columns
numbered 1..N, the stock count, the waste, the foundations; red suits in red), a message line
and an input line. Moves and commands are typed (:mod:`.commands`), or picked with keys: up and
down step through the legal moves, ctrl+t puts the hint in the input, enter plays. Two dialogs:
the no-progress warning (undo, resign or replay) and the results card at the end (new deal,
replay, quit). An unfinished game is saved after every action and on quit, for the next
``forty-thieves play``; the info line says when moves are left on the table (the stock never
has to be turned) and when auto-finish is offered.

Everything the game does is in the session; this module only draws and routes keys, which
textual's test pilot drives in the tests.
"""

from __future__ import annotations

from pathlib import Path

from rich.text import Text
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Footer, Input, Static

from forty_thieves_env.envs.render import table_text

from .commands import HELP, Reply, run_command
from .session import PlaySession

__all__ = ["PlayApp"]


class ChoiceScreen(ModalScreen[str]):
    """A dialog: a text and buttons; dismissed with the pressed button's id."""

    DEFAULT_CSS = """
    ChoiceScreen { align: center middle; }
    ChoiceScreen > Vertical { width: 76; height: auto; border: thick $accent; background: $surface; padding: 1 2; }
    ChoiceScreen #choice-text { margin-bottom: 1; }
    ChoiceScreen Horizontal { height: auto; }
    ChoiceScreen Button { margin-right: 2; }
    """

    def __init__(self, text: str, choices: list[tuple[str, str]], name: str) -> None:
        super().__init__(name=name)
        self._text = text
        self._choices = choices

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(Text(self._text), id="choice-text")
            with Horizontal():
                for key, label in self._choices:
                    yield Button(label, id=key)

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id or "")


class PlayApp(App[None]):
    """The game (see the module docstring).

    Args:
        session: The game to play.
        save_path: Where quitting saves an unfinished game (``None``: not saved).
        tick: Seconds between clock refreshes of the score line (0: none, for tests).
    """

    TITLE = "Forty Thieves"
    ENABLE_COMMAND_PALETTE = False  # ctrl+p is pause here
    CSS = """
    #score { height: 1; background: $primary; color: $text; padding: 0 1; text-style: bold; }
    #info { height: 1; padding: 0 1; color: $text-muted; }
    #table { padding: 0 1; height: 1fr; }
    #message { height: auto; min-height: 1; padding: 0 1; }
    #message.refused { color: $error; }
    """
    BINDINGS = [  # noqa: RUF012 (textual's convention)
        Binding("ctrl+z", "command('undo')", "Undo", priority=True),
        Binding("ctrl+t", "command('hint')", "Hint", priority=True),
        Binding("ctrl+f", "command('finish')", "Finish", priority=True),
        Binding("ctrl+r", "command('restart')", "Restart", priority=True),
        Binding("ctrl+n", "command('new')", "New deal", priority=True),
        Binding("ctrl+s", "command('share')", "Share", priority=True),
        Binding("ctrl+p", "pause", "Pause", priority=True),
        Binding("up", "pick(-1)", "Previous move", show=False, priority=True),
        Binding("down", "pick(1)", "Next move", show=False, priority=True),
        Binding("f1", "command('help')", "Help"),
        Binding("ctrl+q", "command('quit')", "Save & quit", priority=True),
    ]

    def __init__(self, session: PlaySession, save_path: str | Path | None = None, tick: float = 1.0) -> None:
        super().__init__()
        self.session = session
        self.save_path = Path(save_path) if save_path is not None else None
        self.tick = tick
        self.message = "Type a move (3>7, w>f, s) or ? for help."
        self.refused = False
        self._pick = -1
        self._warned: bytes | None = None  # the position whose no-progress warning was shown

    # ----- layout -----------------------------------------------------------------------------
    def compose(self) -> ComposeResult:
        yield Static(id="score")
        yield Static(id="info")
        yield Static(id="table")
        yield Static(id="message")
        yield Input(placeholder="move or command (? for help)", id="command")
        yield Footer()

    def on_mount(self) -> None:
        self.refresh_view()
        self.query_one(Input).focus()
        if self.tick > 0:
            self.set_interval(self.tick, self._refresh_score)

    def _refresh_score(self) -> None:
        self.query_one("#score", Static).update(self.session.score_line())

    def table_markup(self) -> Text:
        """The table as text, hearts and diamonds in red."""
        text = Text(table_text(self.session.game))
        text.highlight_regex(r"(?:10|[A2-9TJQK])[♥♦]", "bold red")
        text.highlight_regex(r"(?:10|[A2-9TJQK])[♠♣]", "bold")
        return text

    def refresh_view(self) -> None:
        s = self.session
        self._refresh_score()
        where = f"deal {s.deal}" if s.deal else "a position"
        flags = [f"level {s.label}", where]
        if s.auto_play:
            flags.append("auto-play on")
        if s.paused:
            flags.append("PAUSED (ctrl+p resumes)")
        if s.finish_offered():
            flags.append("FINISH available: ctrl+f or 'finish'")
        elif not s.over and any(m != "s" for m in s.legal_moves()):
            flags.append("moves left on the table")
        self.query_one("#info", Static).update(Text("   ".join(flags)))
        self.query_one("#table", Static).update(self.table_markup())
        msg = self.query_one("#message", Static)
        msg.update(Text(self.message))  # plain text: "[N]" in the help is not markup
        msg.set_class(self.refused, "refused")

    # ----- input ------------------------------------------------------------------------------
    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.input.value = ""
        self.do(event.value)

    def action_command(self, line: str) -> None:
        self.do(line)

    def action_pause(self) -> None:
        self.do("resume" if self.session.paused else "pause")

    def action_pick(self, step: int) -> None:
        """Step through the legal moves into the input line (enter plays the one shown)."""
        moves = self.session.legal_moves()
        if not moves or self.session.over:
            return
        self._pick = (self._pick + step) % len(moves)
        box = self.query_one(Input)
        box.value = moves[self._pick]
        box.cursor_position = len(box.value)

    def do(self, line: str) -> Reply:
        """Run one typed line, show what it did, and open a dialog when the game calls for one."""
        reply = run_command(self.session, line)
        if reply.quit:
            self.save_and_exit()
            return reply
        self.message = HELP if line.strip() in ("?", "help") else reply.message
        self.refused = not reply.ok
        self._pick = -1
        if reply.prefill:
            box = self.query_one(Input)
            box.value = reply.prefill
            box.cursor_position = len(reply.prefill)
        self.refresh_view()
        self.keep()
        self._dialogs()
        return reply

    # ----- dialogs ----------------------------------------------------------------------------
    def _dialogs(self) -> None:
        s = self.session
        if s.over:
            if not isinstance(self.screen, ChoiceScreen):
                choices = [("new", "New deal"), ("restart", "Replay this deal"), ("quit", "Quit")]
                self.push_screen(ChoiceScreen(s.results_text(), choices, "results"), self._chosen)
            return
        key = s.game.array.tobytes()
        warning = s.warning()
        if warning and self._warned != key:
            self._warned = key
            choices = [("undo", "Undo"), ("resign", "Resign"), ("restart", "Replay the deal")]
            self.push_screen(ChoiceScreen(warning, choices, "no-progress"), self._chosen)

    def _chosen(self, choice: str | None) -> None:
        if choice:
            self.do(choice)

    def keep(self) -> None:
        """Save an unfinished game (a finished one leaves no save behind).

        Called after every action, as the rule page's game is "saved after every move", so a
        closed terminal loses nothing; and on quit.
        """
        if self.save_path is None:
            return
        if self.session.over:
            self.save_path.unlink(missing_ok=True)
        else:
            self.session.save(self.save_path)

    def save_and_exit(self) -> None:
        self.keep()
        self.exit()
