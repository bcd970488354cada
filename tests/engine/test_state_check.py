"""State arrays from outside the engine pass one compiled check (:mod:`forty_thieves_env.engine.state_check`).

Every corruption a user could make (a card code out of range, a column longer than its room, a
stock longer than the stock size, negative lengths and counters, a foundation past the king, a
third copy of a card, ...) is refused by ``GameState(variant, array)``, ``GameState.restore``
and ``env.set_state`` with the problem in words, and the state is left as it was; every state
the rules reach passes; ``check=False`` is the explicit unchecked path.
"""

from __future__ import annotations

import numpy as np
import pytest
from numba.core.registry import CPUDispatcher

from forty_thieves_env import PRESETS, GameState, deal
from forty_thieves_env.engine.cards import EMPTY
from forty_thieves_env.engine.config import config_for
from forty_thieves_env.engine.layout import Cfg, Slot
from forty_thieves_env.engine.state_check import OK, check_state, state_problem
from forty_thieves_env.envs.env import FortyThievesEnv


def _classic_midgame() -> GameState:
    """Classic deal 7 after a few stock turns (cards in the stock and the waste)."""
    g = deal("classic", 7)
    for _ in range(5):
        g.apply(0)
    return g


def _corruptions() -> list[tuple[str, object, str]]:
    """(id, change of a classic mid-game array, words of the message)."""
    cfg = config_for(PRESETS["classic"])
    tab, d = int(cfg[Cfg.OFF_TAB]), int(cfg[Cfg.DEPTH])
    length, down = int(cfg[Cfg.OFF_LEN]), int(cfg[Cfg.OFF_DOWN])
    stock, waste = int(cfg[Cfg.OFF_STOCK]), int(cfg[Cfg.OFF_WASTE])

    def put(**slots: int):
        def change(a: np.ndarray) -> None:
            for index, value in slots.items():
                a[int(index[1:])] = value

        return change

    def third_copy(a: np.ndarray) -> None:
        a[tab + 3] = a[tab + d + 3]  # column 1's top becomes a copy of column 2's top

    def king_deep(a: np.ndarray) -> None:
        # A king as the 5th card of a column: a run built on it would need 17 slots of 16.
        a[tab + 4] = 12
        a[length] = 5
        a[stock + int(a[Slot.STOCK_LEN]) - 1] = EMPTY
        a[Slot.STOCK_LEN] -= 1

    return [
        ("card code 100", put(**{f"_{tab + 3}": 100}), "column 1, card 4 is 100, not a card code"),
        ("card code -56 (200 as int8)", put(**{f"_{tab}": -56}), "column 1, card 1 is -56"),
        ("column past its room", put(**{f"_{length}": 17}), "column 1 has length 17, outside 0..16"),
        ("negative column", put(**{f"_{length + 2}": -1}), "column 3 has length -1"),
        ("stock past its size", put(_0=65), "stock length 65 (slot 0) is outside 0..64"),
        ("negative waste", put(_1=-1), "waste length -1 (slot 1) is outside 0..64"),
        ("stock and waste", put(_0=60, _1=10), "together hold 70 cards"),
        ("foundation 14", put(_3=14), "foundation pile 0 (slot 3) has height 14, outside 0..13"),
        ("negative foundation", put(_4=-1), "foundation pile 1 (slot 4) has height -1"),
        ("piles out of order", put(_3=0, _4=1), "foundation pile 0 is lower than pile 1"),
        ("negative redeals", put(_2=-1), "redeals left -1 (slot 2) is outside 0..0"),
        ("redeals beyond the variant", put(_2=1), "redeals left 1"),
        ("negative face-down", put(**{f"_{down}": -1}), "column 1 has -1 face-down cards"),
        ("all face down", put(**{f"_{down}": 4}), "column 1 has 4 face-down cards"),
        ("junk past a column", put(**{f"_{tab + 10}": 5}), f"unused slot {tab + 10} holds 5"),
        ("junk past the waste", put(**{f"_{waste + 60}": 3}), f"unused slot {waste + 60} holds 3"),
        ("junk past the stock", put(**{f"_{stock + 63}": 3}), f"unused slot {stock + 63} holds 3"),
        ("bad stock card", lambda a: a.__setitem__(stock, 52), "stock slot 0 is 52"),
        ("third copy", third_copy, "every card is there exactly twice"),
        ("no room for a run", king_deep, "column 1, card 5 (KC) could carry a run past the 16 cards"),
    ]


CORRUPTIONS = _corruptions()


@pytest.mark.parametrize(("change", "words"), [c[1:] for c in CORRUPTIONS], ids=[c[0] for c in CORRUPTIONS])
def test_every_corruption_is_refused_everywhere_and_changes_nothing(change, words: str) -> None:
    good = _classic_midgame()
    bad = good.array.copy()
    change(bad)
    assert not np.array_equal(bad, good.array)
    for call in (
        lambda: GameState(good.variant, bad),
        lambda: good.restore(bad),
        lambda: check_state(good.variant, bad),
    ):
        with pytest.raises(ValueError, match="not a valid classic state") as info:
            call()
        assert words in str(info.value), str(info.value)
    assert good == _classic_midgame()
    env = FortyThievesEnv("classic")
    env.reset(seed=0)
    before = env.get_state()
    with pytest.raises(ValueError) as info:
        env.set_state(bad)
    assert words in str(info.value), str(info.value)
    assert np.array_equal(env.get_state().array, before.array)
    # The explicit fast path trusts its caller.
    GameState(good.variant, bad, check=False)
    env.set_state(bad, check=False)


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_every_state_the_rules_reach_is_valid(name: str) -> None:
    rng = np.random.default_rng(7)
    for number in (1, 2):
        g = deal(name, number)
        for _ in range(300):
            code, a, b = state_problem(g.array, g.cfg)
            assert code == OK, (code, a, b)
            legal = g.legal_actions()
            if not legal:
                break
            g.apply(legal[rng.integers(len(legal))])


def test_the_check_is_a_compiled_kernel() -> None:
    assert isinstance(state_problem, CPUDispatcher)


def test_shape_dtype_and_type_are_checked_first() -> None:
    g = deal("classic", 1)
    size = int(g.cfg[Cfg.SIZE])
    with pytest.raises(TypeError, match=rf"must be a \({size},\) int8 numpy array"):
        GameState(g.variant, list(g.array))
    with pytest.raises(ValueError, match="int8"):
        g.restore(g.array.astype(np.int16))
    with pytest.raises(TypeError, match="variant must be a Variant"):
        GameState("classic", g.array)  # type: ignore[arg-type]
