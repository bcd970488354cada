"""``forty-thieves play`` driven by scripted input through textual's test pilot: a move, a refused
move, undo to the deal, auto-finish, the no-progress warning, save and resume, statistics."""

from __future__ import annotations

import asyncio

import pytest
from conftest import DEAD_END, NEAR_WIN, position

from agents.play.session import PlaySession
from agents.play.stats import StatsFile
from agents.play.tui import ChoiceScreen, PlayApp
from forty_thieves_env import deal

pytest.importorskip("textual")



def run(app: PlayApp, script) -> None:
    """Run ``script(pilot)`` against ``app`` in a headless terminal of 120 x 40."""

    async def main() -> None:
        async with app.run_test(size=(120, 40)) as pilot:
            await script(pilot)

    asyncio.run(main())


async def type_line(pilot, text: str) -> None:
    await pilot.press(*text, "enter")
    await pilot.pause()


def screen_text(app: PlayApp) -> str:
    return "\n".join(str(w.render()) for w in app.query("Static"))


def test_a_move_a_refused_move_and_undo_to_the_deal(tmp_path) -> None:
    session = PlaySession("hard", deal=5)
    app = PlayApp(session, save_path=tmp_path / "save.json", tick=0)

    async def script(pilot) -> None:
        assert "moves left on the table" in str(app.query_one("#info").render())
        await type_line(pilot, "10>f")
        assert session.moves == 1 and session.game.cards_on_foundations == 1
        assert "played 10>f" in str(app.query_one("#message").render())
        assert "Moves 1" in str(app.query_one("#score").render())
        # Saved after every move, as the rule page's game is: a closed terminal loses nothing.
        assert PlaySession.load(tmp_path / "save.json").game == session.game
        before = session.game.copy()
        await type_line(pilot, "1>2")
        message = app.query_one("#message")
        assert "refused" in str(message.render()) and "does not go on" in str(message.render())
        assert message.has_class("refused") and session.game == before and session.moves == 1
        # Pick moves with the keys: the hint into the input, enter plays it.
        await pilot.press("ctrl+t")
        hinted = app.query_one("#command").value
        assert hinted in session.legal_moves()
        await pilot.press("enter")
        await pilot.pause()
        await pilot.press("down", "enter")  # the first legal move
        await pilot.pause()
        await type_line(pilot, "3")  # a bare column: its card to its best place
        assert "played 3>" in str(app.query_one("#message").render())
        assert len(session.history) == 4
        for _ in range(4):
            await pilot.press("ctrl+z")
        await pilot.pause()
        assert session.game == deal("classic", 5) and not session.history
        await type_line(pilot, "undo")
        assert "nothing to undo" in str(app.query_one("#message").render())

    run(app, script)


def test_auto_finish_then_the_results_card_and_statistics(tmp_path) -> None:
    stats = StatsFile(tmp_path / "stats.json")
    session = PlaySession("hard", position=NEAR_WIN, stats=stats)
    app = PlayApp(session, save_path=tmp_path / "save.json", tick=0)

    async def script(pilot) -> None:
        for move in ("s", "w>f", "s"):
            await type_line(pilot, move)
            assert "FINISH" not in str(app.query_one("#info").render())
        await type_line(pilot, "w>3")
        assert "FINISH available" in str(app.query_one("#info").render())
        await pilot.press("ctrl+f")
        await pilot.pause()
        assert session.won
        assert isinstance(app.screen, ChoiceScreen) and app.screen.name == "results"
        card = str(app.screen.query_one("#choice-text").render())
        assert "You won!" in card and "1 won, 0 lost (100.0 %)" in card
        await pilot.click("#quit")
        await pilot.pause()

    run(app, script)
    assert StatsFile(tmp_path / "stats.json").get("hard").wins == 1
    assert not (tmp_path / "save.json").exists()  # a finished game leaves no save


def test_no_progress_warning_offers_undo_resign_or_replay(tmp_path) -> None:
    stats = StatsFile(tmp_path / "stats.json")
    dead = position(DEAD_END)
    session = PlaySession(None, dead.variant, position=dead, stats=stats)
    app = PlayApp(session, tick=0)

    async def script(pilot) -> None:
        await type_line(pilot, "w>3")
        assert isinstance(app.screen, ChoiceScreen) and app.screen.name == "no-progress"
        assert "no legal move is left" in str(app.screen.query_one("#choice-text").render())
        await pilot.click("#undo")
        await pilot.pause()
        assert session.game == dead and session.undos == 1
        # Back at the dealt position, which is as dead: the warning again, now resign.
        assert isinstance(app.screen, ChoiceScreen) and app.screen.name == "no-progress"
        await pilot.click("#resign")
        await pilot.pause()
        assert session.result == "resigned"
        assert isinstance(app.screen, ChoiceScreen) and app.screen.name == "results"
        await pilot.click("#restart")
        await pilot.pause()
        assert session.game == dead and session.moves == 0 and not session.over

    run(app, script)
    assert stats.get(session.label).losses == 1


def test_save_on_quit_and_resume_with_undo_history(tmp_path) -> None:
    save = tmp_path / "save.json"
    session = PlaySession("normal", deal=40)
    app = PlayApp(session, save_path=save, tick=0)
    played: list[str] = []

    async def first(pilot) -> None:
        for _ in range(4):
            await pilot.press("ctrl+t", "enter")
            await pilot.pause()
            played.append(session.history[-1].moves[0])
        await pilot.press("ctrl+q")
        await pilot.pause()

    run(app, first)
    assert save.exists() and len(played) == 4
    back = PlaySession.load(save)
    assert back.game == session.game and back.moves == 4
    app2 = PlayApp(back, save_path=save, tick=0)

    async def second(pilot) -> None:
        assert "Moves 4" in str(app2.query_one("#score").render())
        for _ in range(4):
            await pilot.press("ctrl+z")
        await pilot.pause()
        assert back.game == deal(back.variant, 40)

    run(app2, second)


def test_share_and_pause_from_the_keys(tmp_path) -> None:
    session = PlaySession("easy", seed=2)
    app = PlayApp(session, tick=0)

    async def script(pilot) -> None:
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert f"forty-thieves play --level easy --deal {session.deal}" in str(app.query_one("#message").render())
        await pilot.press("ctrl+p")
        await pilot.pause()
        assert session.paused and "PAUSED" in str(app.query_one("#info").render())
        await type_line(pilot, "s")
        assert "paused" in str(app.query_one("#message").render()) and session.moves == 0
        await pilot.press("ctrl+p")
        await pilot.pause()
        assert not session.paused

    run(app, script)


def test_cli_resumes_a_saved_game(tmp_path, monkeypatch) -> None:
    """``forty-thieves play`` with no deal options resumes the save; with --new it starts afresh."""
    from agents.cli import main
    from agents.play import tui

    started: list[PlaySession] = []
    monkeypatch.setattr(tui.PlayApp, "run", lambda self: started.append(self.session))
    s = PlaySession("hard", deal=61)
    s.play(s.hint())
    s.save(tmp_path / "save.json")
    assert main(["play", "--data-dir", str(tmp_path)]) == 0
    assert started[-1].deal == 61 and len(started[-1].history) == 1
    assert main(["play", "--data-dir", str(tmp_path), "--level", "normal", "--deal", "62"]) == 0
    assert started[-1].deal == 62 and started[-1].level.name == "normal"
    assert main(["play", "--data-dir", str(tmp_path), "--level", "easy", "--deal", "5"]) == 2  # not a winnable deal
