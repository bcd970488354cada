"""Rendering: the table as text and as a picture."""

from __future__ import annotations

import itertools

import gymnasium as gym
import numpy as np
import pytest
from conftest import run_fresh

import forty_thieves_env  # noqa: F401 (registers the ids)
from forty_thieves_env import deal, parse_position
from forty_thieves_env.envs.render import (
    CARD_H,
    CARD_W,
    FAN_STEP,
    MARGIN,
    PITCH,
    STRIP,
    WASTE_FAN,
    TableRenderer,
    table_text,
)

POSITION = """\
variant: classic
redeals: 0
stock: KH
waste: QS KD
foundations: KC KC KD QD KH QH JS JS
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


def test_text_of_a_known_position() -> None:
    assert table_text(parse_position(POSITION)) == (
        "stock 1  redeals 0  waste (2): Q♠ K♦\n"
        "foundations: K♣ K♣ J♠ J♠ K♥ Q♥ K♦ Q♦\n"
        "   1   2   3   4   5   6   7   8   9  10\n"
        "  K♠  K♠  ..  ..  ..  ..  ..  ..  ..  ..\n"
        "      Q♠\n"
    )


def test_text_shows_face_down_cards_and_the_waste_top() -> None:
    env = gym.make("FortyThieves-RankAndFile-v0", render_mode="ansi")
    env.reset(options={"deal": 12345})
    for _ in range(10):
        env.step(0)
    text = env.render()
    game = env.unwrapped.game
    lines = text.splitlines()
    assert lines[0] == "rank_and_file  deal 12345  move 10"
    assert lines[1].startswith("stock 54  redeals 0  waste (10): … ")
    assert lines[1].endswith(table_text(game).splitlines()[0].split()[-1])  # the top card last
    assert lines[1].count("♠") + lines[1].count("♥") + lines[1].count("♦") + lines[1].count("♣") == 8
    rows = lines[4:]
    assert all(row.split() == ["##"] * 10 for row in rows[:3])
    assert len(rows[3].split()) == 10 and "##" not in rows[3]


def _region(frame: np.ndarray, renderer: TableRenderer, column: int, row: int) -> np.ndarray:
    x = MARGIN + column * PITCH
    y = renderer.tableau_y + row * STRIP
    return frame[y : y + CARD_H, x : x + CARD_W]


def _red(pixels: np.ndarray) -> int:
    p = pixels.astype(int)
    return int(((p[..., 0] > 150) & (p[..., 1] < 90) & (p[..., 2] < 90)).sum())


def _blue(pixels: np.ndarray) -> int:
    p = pixels.astype(int)
    return int(((p[..., 2] > 130) & (p[..., 0] < 90)).sum())


def test_picture_shape_and_card_colours() -> None:
    env = gym.make("FortyThieves-v0", render_mode="rgb_array")
    _, info = env.reset(options={"deal": 7})
    frame = env.render()
    renderer = env.unwrapped._renderer
    assert frame.dtype == np.uint8 and frame.ndim == 3 and frame.shape == renderer.shape
    assert frame.shape[2] == 3 and frame.shape[0] >= 300 and frame.shape[1] >= 500
    game = env.unwrapped.game
    for i, col in enumerate(game.columns):
        card = _region(frame, renderer, i, len(col) - 1)  # the exposed card, drawn whole
        red = _red(card)
        if col[-1] // 13 >= 2:
            assert red > 60, f"column {i + 1}: red card drawn without red"
        else:
            assert red == 0, f"column {i + 1}: black card drawn with red"
    # Playing changes the picture but not its size.
    rng = np.random.default_rng(0)
    for _ in range(15):
        legal = np.flatnonzero(info["action_mask"])
        *_, info = env.step(int(legal[rng.integers(len(legal))]))
    later = env.render()
    assert later.shape == frame.shape and not np.array_equal(later, frame)


def test_face_down_cards_are_drawn_as_backs() -> None:
    env = gym.make("FortyThieves-RankAndFile-v0", render_mode="rgb_array")
    env.reset(options={"deal": 12345})
    frame = env.render()
    renderer = env.unwrapped._renderer
    for i in range(10):
        hidden = _region(frame, renderer, i, 0)[:STRIP]
        shown = _region(frame, renderer, i, 3)[:STRIP]
        assert _blue(hidden) > 0.5 * hidden.shape[0] * hidden.shape[1]
        assert _blue(shown) == 0


def test_every_card_is_told_apart_where_it_shows() -> None:
    """The strip a covering card leaves, and the part of a fanned waste card in view, differ for all 52."""
    renderer = TableRenderer(deal("classic", 1).variant)
    faces = [np.asarray(img) for img in renderer._faces]
    strips = [f[:STRIP] for f in faces]
    fans = [f[:, :FAN_STEP] for f in faces]
    for a, b in itertools.combinations(range(52), 2):
        assert not np.array_equal(strips[a], strips[b]), (a, b)
        assert not np.array_equal(fans[a], fans[b]), (a, b)


def test_waste_and_foundations_are_drawn() -> None:
    renderer = TableRenderer(deal("classic", 1).variant)
    game = parse_position(POSITION)
    frame = renderer.draw(game)
    top = frame[MARGIN : MARGIN + CARD_H]
    # KD is the waste top: red in the whole card at the end of the fan.
    x = MARGIN + PITCH + (len(game.waste) - 1) * FAN_STEP
    assert _red(top[:, x : x + CARD_W]) > 60
    assert len(game.waste) <= WASTE_FAN
    # Foundations: hearts and diamonds piles red, clubs and spades not.
    for p in range(8):
        fx = renderer.found_x + p * PITCH
        red = _red(top[:, fx : fx + CARD_W])
        assert (red > 60) == (p // 2 >= 2), p


def test_render_without_a_mode_warns() -> None:
    env = gym.make("FortyThieves-v0").unwrapped
    env.reset(seed=0)
    with pytest.warns(UserWarning, match="render_mode"):
        assert env.render() is None


def test_pillow_is_imported_only_to_draw() -> None:
    """The env module needs neither Pillow (until a picture is drawn) nor torch."""
    run_fresh(
        "import sys, gymnasium as gym, forty_thieves_env",
        "env = gym.make('FortyThieves-v0', render_mode='rgb_array'); env.reset(seed=0); env.step(0)",
        "assert 'PIL' not in sys.modules and 'torch' not in sys.modules",
        "assert env.render().shape[2] == 3 and 'PIL' in sys.modules",
    )
