"""The play session: moves, refusals, undo, score line, levels, hints, auto-play and -finish,
the no-progress warning, statistics, save and resume (all without a terminal)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from conftest import DEAD_END, NEAR_WIN, position

from agents.play.progress import finish_line, no_progress
from agents.play.score import score_of
from agents.play.session import PlayError, PlaySession
from agents.play.stats import LevelStats, StatsFile
from forty_thieves_env import GameState, deal
from forty_thieves_env.envs.winnable import winnable_deals


class Clock:
    """A clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now



# Stock and waste empty; the spade queen lies under a king, so an empty column is needed first.
NEEDS_REARRANGING = """\
variant: classic
stock:
waste:
1: QS KS
2: QS KS
3:
4:
5:
6:
7:
8:
9:
10:
"""


def snapshot(s: PlaySession) -> tuple:
    return (s.game.array.tobytes(), s.moves, s.undos, len(s.history), s.score, s.elapsed, s.started)


@pytest.fixture
def clock() -> Clock:
    return Clock()


def test_a_move_plays_and_a_refused_move_changes_nothing(clock: Clock) -> None:
    s = PlaySession("hard", deal=5, clock=clock)
    assert s.game == deal("classic", 5)
    before = snapshot(s)
    for bad, why in (("1>2", "does not go on"), ("3>11", "no column 11"), ("hello", "not a move"), ("w>f", "waste")):
        with pytest.raises(PlayError, match=why):
            s.play(bad)
        assert snapshot(s) == before
    said = s.play("10>f")
    assert "played 10>f" in said and "1 card(s) home" in said
    assert s.moves == 1 and s.game.cards_on_foundations == 1 and s.started
    expected = deal("classic", 5)
    expected.play("10>f")
    assert s.game == expected


def test_undo_back_to_the_deal_then_refused(clock: Clock) -> None:
    s = PlaySession("normal", deal=77, clock=clock)
    start = s.game.copy()
    played = []
    for _ in range(12):
        move = s.hint()
        s.play(move)
        played.append(move)
    assert s.game != start and s.moves == 12
    for move in reversed(played):
        assert s.undo() == f"undid {move}"
    assert s.game == start
    # The scored page: an undo counts as a move; its points go back.
    assert s.moves == 24 and s.undos == 12 and s.game.cards_on_foundations == 0
    with pytest.raises(PlayError, match="nothing to undo"):
        s.undo()
    assert s.moves == 24


def test_score_line_points_penalty_floor_and_win_bonus() -> None:
    assert score_of(3, 0, False) == 30
    assert score_of(3, 29.9, False) == 30
    assert score_of(5, 30, False) == 20  # 50 - 30
    assert score_of(5, 65, False) == 0  # 50 - 60: never below zero
    assert score_of(104, 100, True) == max(0, 1040 - 90) + 6000  # 600000 / 100 s
    assert score_of(104, 0.2, True) == 1040 + 600000  # under a second counts as one


def test_score_follows_the_clock_and_undo_takes_points_back(clock: Clock) -> None:
    s = PlaySession("hard", deal=5, clock=clock)
    assert s.score == 0
    s.play("10>f")
    s.play("9>f")  # both aces of diamonds home
    assert s.game.cards_on_foundations == 2 and s.score == 20
    s.undo()  # takes its ace's 10 points back
    assert s.score == 10
    clock.now += 29.5
    assert s.score == 10
    clock.now += 0.5
    assert s.score == 0 and s.score_line() == "Moves 3   Time 0:30   Score 0"  # 10 - 30, never below zero
    s.play("9>f")
    assert s.score == 0  # 20 - 30
    # A practised position starts at 0 however many cards it has home already.
    assert PlaySession("hard", position=NEAR_WIN, clock=clock).score == 0


def test_win_freezes_clock_records_stats_and_refuses_more(clock: Clock, tmp_path) -> None:
    stats = StatsFile(tmp_path / "stats.json")
    s = PlaySession("hard", position=NEAR_WIN, clock=clock, stats=stats)
    for move in ["s", "w>f", "s", "w>3", "3>1", "2>f", "1>f", "1>f"]:
        s.play(move)
        clock.now += 5
    said = s.play("2>f")
    assert s.won and "You won!" in said
    seconds = s.elapsed
    assert seconds == 40
    clock.now += 100
    assert s.elapsed == seconds  # the clock stopped with the last card
    assert s.score == score_of(104 - position(NEAR_WIN).cards_on_foundations, 40, True)
    with pytest.raises(PlayError, match="won"):
        s.undo()
    with pytest.raises(PlayError, match="won"):
        s.play("s")
    card = s.results()
    assert card["result"] == "won" and card["moves"] == 9 and card["wins"] == 1 and card["new_record"]
    assert StatsFile(tmp_path / "stats.json").get("hard").wins == 1


def test_a_run_too_long_is_refused_with_how_many_cards_can_move(clock: Clock) -> None:
    """Normal and Easy carry runs within the 2**empty-columns cap, and say the cap when it is passed."""
    game = position(
        "variant: classic run_moves=supermove redeals=1\n1: 9S 8S\n2: TS\n3: KS QS JS\n4: KH\n5: QH\n6: JH\n"
        "7: TH\n8: 9H\n9: 8H\n10:\n"
    )
    s = PlaySession(None, game.variant, position=game, clock=clock)
    assert s.level.name == "normal"
    before = snapshot(s)
    with pytest.raises(PlayError, match="at most 1 card"):
        s.play("1>10x2")  # one empty column, and it is the target: one card at a time
    assert snapshot(s) == before
    s.play("1>2x2")  # onto a card, the empty column is a stop: two cards
    assert [len(c) for c in s.game.columns[:2]] == [0, 3]


def test_restart_and_new_deal_record_a_loss_only_after_a_move(clock: Clock, tmp_path) -> None:
    stats = StatsFile(tmp_path / "s.json")
    s = PlaySession("hard", deal=9, clock=clock, stats=stats)
    s.restart()  # no move yet: no loss
    s.new_game(10)
    assert stats.get("hard").losses == 0
    s.play(s.hint())
    s.undo()  # undo alone records no loss ...
    assert stats.get("hard").losses == 0
    clock.now += 50
    said = s.restart()  # ... but abandoning the started deal does
    assert "counts as a loss" in said and stats.get("hard").losses == 1
    assert s.deal == 10 and s.moves == 0 and s.elapsed == 0 and s.game == deal("classic", 10) and not s.history
    s.play(s.hint())
    s.new_game(11)
    assert stats.get("hard").losses == 2 and stats.get("hard").streak == -2
    assert s.deal == 11
    s.play(s.hint())
    s.resign()
    assert stats.get("hard").losses == 3
    s.restart()  # a resigned deal is not counted twice
    assert stats.get("hard").losses == 3


def test_bad_new_deal_changes_nothing(clock: Clock) -> None:
    s = PlaySession("easy", seed=3, clock=clock)
    assert s.deal in set(winnable_deals("classic").tolist())
    s.play(s.hint())
    before = snapshot(s)
    with pytest.raises(PlayError, match="not one the solver proved winnable"):
        s.new_game(5)
    with pytest.raises(PlayError):
        s.new_game(0)
    assert snapshot(s) == before and s.stats.get("easy").losses == 0


def test_levels_and_share_reproduce_the_deal(clock: Clock) -> None:
    from agents.cli import build_parser
    from agents.cli.play import session_from_args

    cases = [
        PlaySession("easy", seed=1, clock=clock),
        PlaySession("normal", deal=123, clock=clock),
        PlaySession(None, "josephine", deal=4, clock=clock),
        PlaySession(None, "classic", deal=int(winnable_deals("classic")[2]), winnable_only=True, clock=clock),
        PlaySession(None, PlaySession(None, "relaxed").variant.replace(redeals=2), deal=8, clock=clock),
    ]
    labels = ["easy", "normal", "josephine", "classic+winnable", "relaxed redeals=2"]
    assert [c.label for c in cases] == labels
    assert PlaySession(None, "classic", deal=1).label == "hard"  # classic rules, any deal: Hard
    for s in cases:
        words = s.share().split()
        assert words[:2] == ["forty-thieves", "play"]
        args = build_parser(words[1:]).parse_args(words[1:])
        again = session_from_args(args, clock=clock)
        assert again.variant == s.variant and again.deal == s.deal and again.winnable_only == s.winnable_only
        assert again.game == s.game


@pytest.mark.parametrize(("agent", "moves"), [("heuristic", 15), ("lookahead", 3)])
def test_hint_is_legal_and_sees_only_the_players_view(clock: Clock, agent: str, moves: int) -> None:
    s = PlaySession("hard", deal=21, clock=clock, hint_agent=agent)
    rng = np.random.default_rng(0)
    for _ in range(moves):
        move = s.hint()
        assert move in s.legal_moves()
        # The same table with the stock in another order gets the same hint.
        g = s.game
        other = GameState.from_parts(g.variant, g.columns, list(rng.permutation(g.stock)), g.waste, g.foundations)
        twin = PlaySession("hard", position=other, clock=clock, hint_agent=agent)
        assert twin.hint() == move
        s.play(move)
    assert s.hints == moves


def test_auto_play_sends_safe_cards_home_as_part_of_the_move(clock: Clock) -> None:
    plain = PlaySession("hard", position=NEAR_WIN, clock=clock)
    auto = PlaySession("hard", position=NEAR_WIN, clock=clock, auto_play=True)
    start = auto.game.copy()
    assert plain.play("s") == "played s"
    # The KH turned up can only ever go home, and then so can the QS on column 2 (no spade J is out).
    assert auto.play("s") == "played s, 2 card(s) home"
    assert auto.game.cards_on_foundations == plain.game.cards_on_foundations + 2
    assert auto.moves == plain.moves == 1
    auto.undo()
    assert auto.game == start


def test_auto_finish_is_offered_only_when_everything_can_go_home(clock: Clock) -> None:
    s = PlaySession("hard", position=NEAR_WIN, clock=clock)
    assert not s.finish_offered()  # the stock still holds cards
    with pytest.raises(PlayError, match="stock and the waste empty"):
        s.finish()
    for move in ["s", "w>f", "s"]:
        s.play(move)
        assert not s.finish_offered()  # the waste holds the QS
    s.play("w>3")
    assert s.finish_offered()
    moves = s.moves
    said = s.finish()
    assert s.won and s.moves == moves + 1 and "You won!" in said
    stuck = PlaySession(None, "classic", position=position(NEEDS_REARRANGING), clock=clock)
    assert not stuck.finish_offered() and finish_line(stuck.game) is None
    with pytest.raises(PlayError, match="without rearranging"):
        stuck.finish()
    assert stuck.warning() is None  # a king to an empty column frees a queen: not dead


def test_no_progress_warning_once_the_stock_is_spent(clock: Clock) -> None:
    dead = position(DEAD_END)
    s = PlaySession(None, dead.variant, position=dead, clock=clock)
    assert s.legal_moves() == ["w>3", "3>4"]  # moves there are, but none leads home
    assert no_progress(s.game) is True
    assert "no card can ever go home again" in s.warning() and "undo, resign or replay" in s.warning()
    s.play("w>3")
    assert "no legal move is left" in s.warning()
    s.undo()
    s.resign()
    assert s.over and s.warning() is None
    # A live deal with stock left gets no warning, nor a table where a card can still go home.
    assert PlaySession("hard", deal=3, clock=clock).warning() is None
    near = PlaySession("hard", position=NEAR_WIN, clock=clock)
    for move in ["s", "w>f", "s", "w>3"]:
        near.play(move)
    assert near.warning() is None


def test_pause_stops_the_clock_and_blocks_moves(clock: Clock) -> None:
    s = PlaySession("hard", deal=5, clock=clock)
    clock.now += 10
    s.pause()
    clock.now += 500
    assert s.elapsed == 10
    for act in (lambda: s.play("10>f"), s.undo, s.hint):
        with pytest.raises(PlayError, match="paused"):
            act()
    s.resume()
    clock.now += 5
    assert s.elapsed == 15
    s.play("10>f")


def test_save_and_resume_with_undo_history(clock: Clock, tmp_path) -> None:
    s = PlaySession("normal", deal=31, clock=clock, auto_play=True)
    start = s.game.copy()
    for _ in range(10):
        s.play(s.hint())
    s.undo()
    s.hint()
    clock.now += 42
    path = s.save(tmp_path / "game.json")
    clock.now += 3600  # time away does not count
    back = PlaySession.load(path, clock=clock)
    assert back.game == s.game and back.deal == 31 and back.auto_play and back.level.name == "normal"
    assert (back.moves, back.undos, back.hints, back.elapsed) == (s.moves, s.undos, s.hints, 42)
    assert len(back.history) == len(s.history) == 9
    while back.history:
        back.undo()
    assert back.game == start
    # A save whose moves do not lead to its position, or that is not a save, is refused.
    doc = json.loads(path.read_text())
    doc["history"] = doc["history"][:-1]
    path.write_text(json.dumps(doc))
    with pytest.raises(ValueError, match="do not lead to the saved position"):
        PlaySession.load(path)
    path.write_text("{}")
    with pytest.raises(ValueError, match="not a saved game"):
        PlaySession.load(path)
    doc["version"] = 2
    path.write_text(json.dumps(doc))
    with pytest.raises(ValueError, match="this program reads version 1"):
        PlaySession.load(path)


def test_stats_file_per_level_streaks_and_rate(tmp_path) -> None:
    st = LevelStats()
    for won in (True, True, False, False, False, True):
        st.record(won, 1, 100, 5)
    assert (st.wins, st.losses, st.streak, st.best_win_streak, st.worst_loss_streak) == (3, 3, 1, 2, 3)
    assert st.win_rate == 0.5 and "3 won, 3 lost (50.0 %)" in st.summary()
    assert st.record(True, 7, 90, 10) and not st.record(True, 7, 95, 10) and st.record(True, 7, 80, 10)
    f = StatsFile(tmp_path / "stats.json")
    f.record("easy", True, 3, 50, 1000)
    f.record("hard", False, 4, 10, 0)
    again = StatsFile(tmp_path / "stats.json")
    assert again.get("easy").wins == 1 and again.get("hard").losses == 1 and again.get("normal").games == 0
    (tmp_path / "v2.json").write_text('{"version": 2, "levels": {}}')
    with pytest.raises(ValueError, match="reads version 1"):
        StatsFile(tmp_path / "v2.json")
    (tmp_path / "bad.json").write_text("not json")
    with pytest.raises(ValueError, match="not a statistics file"):
        StatsFile(tmp_path / "bad.json")
    assert (tmp_path / "bad.json").read_text() == "not json"


def test_a_saved_position_game_resumes_from_its_position(clock: Clock, tmp_path) -> None:
    s = PlaySession("hard", position=NEAR_WIN, clock=clock)
    s.play("s")
    back = PlaySession.load(s.save(tmp_path / "p.json"), clock=clock)
    assert back.game == s.game and back.deal == 0
    back.undo()
    assert back.game == position(NEAR_WIN)
    with pytest.raises(PlayError, match="position"):
        back.share()


def test_a_tap_sends_a_card_to_its_best_place(clock: Clock) -> None:
    """The scored page's tap: a safe foundation, else a card, else an empty column, else home."""
    game = position("variant: classic\n1: KS\n2: QS\n3: JS TS 9S\n4: KS QS\n5:\n6:\n7:\n8:\n9:\n10:\n")
    s = PlaySession(None, game.variant, position=game, clock=clock)
    assert {"2>f", "2>1", "2>5"} <= set(s.legal_moves())
    assert s.tap("2") == "played 2>1"  # QS could go home, but one spade pile is at 8: not safe
    assert s.tap("3").startswith("played 3>f")  # 9S: both 8s are home, safe
    assert s.tap("4") == "played 4>2"  # no KS exposed now: the leftmost empty column, not home
    before = snapshot(s)
    for source, why in (("w", "waste is empty"), ("9", "column 9 is empty"), ("11", "not a source")):
        with pytest.raises(PlayError, match=why):
            s.tap(source)
    plain = PlaySession("hard", deal=5, clock=clock)
    with pytest.raises(PlayError, match="TC has nowhere to go"):
        plain.tap("1")
    assert snapshot(s) == before


def test_the_no_progress_search_never_reads_a_face_down_card() -> None:
    """Turning a face-down card up counts as hope: the player cannot know it does not help."""
    face_up = position(DEAD_END)
    text = DEAD_END.replace("classic columns=4", "classic columns=4 face_down=1").replace("3: KH", "3: #KH")
    face_down = position(text)
    assert face_down.face_down == [0, 0, 1, 0]
    assert no_progress(face_up) is True
    assert no_progress(face_down) is False  # 3>4 turns the KH up


def test_a_variant_alone_needs_no_level_and_neither_is_hard(clock: Clock) -> None:
    assert PlaySession(variant="streets", deal=2, clock=clock).label == "streets"
    assert PlaySession(deal=2, clock=clock).label == "hard"
    with pytest.raises(ValueError, match="a level or a variant, not both"):
        PlaySession("easy", "classic", deal=2, clock=clock)
