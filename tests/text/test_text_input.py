"""The text layer refuses input of the wrong kind with a message that says it expects text
(or an integer), instead of failing with an unrelated ``AttributeError`` or ``TypeError``."""

from __future__ import annotations

import numpy as np
import pytest

from forty_thieves_env import PRESETS, card_text, deal, format_move, parse_card, parse_move, parse_position
from forty_thieves_env.envs.env import FortyThievesEnv

NOT_TEXT = [None, 5, 1.5, b"KD", ["KD"], np.str_("KD").encode()]


@pytest.mark.parametrize("value", NOT_TEXT, ids=repr)
def test_parsers_say_they_expect_text(value) -> None:
    classic = PRESETS["classic"]
    for call, name in (
        (lambda: parse_card(value), "card"),
        (lambda: parse_move(classic, value), "move"),
        (lambda: parse_position(value), "position"),
        (lambda: FortyThievesEnv("classic").action_for(value), "move"),
    ):
        with pytest.raises(TypeError) as info:
            call()
        message = str(info.value)
        assert message.startswith(f"{name} must be text (str), got "), message
        assert type(value).__name__ in message or repr(value) in message, message


def test_numpy_strings_are_text() -> None:
    assert parse_card(np.str_("KD")) == parse_card("KD")
    assert parse_move(PRESETS["classic"], np.str_("w>f")) == 1


@pytest.mark.parametrize("action", [12.5, 1.0, True, "3", None, [3]], ids=repr)
def test_actions_given_to_the_text_helpers_must_be_integers(action) -> None:
    game = deal("classic", 7)
    before = game.snapshot()
    with pytest.raises(TypeError, match="action must be an integer action number, got"):
        game.apply(action)
    with pytest.raises(TypeError, match="action must be an integer action number, got"):
        game.is_legal(action)
    with pytest.raises(TypeError, match="action must be an integer action number, got"):
        format_move(game.variant, action)
    assert np.array_equal(game.array, before)
    assert game.is_legal(np.int64(0)) and game.apply(np.array(0)) == 0


@pytest.mark.parametrize("code", [12.5, True, "KD", None], ids=repr)
def test_card_codes_must_be_integers(code) -> None:
    with pytest.raises(TypeError, match=r"card code must be an integer 0\.\.51, got"):
        card_text(code)
    assert card_text(np.int8(51)) == "KD"
