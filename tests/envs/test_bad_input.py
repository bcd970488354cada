"""Bad input never slips through: every environment refuses it the same way and changes nothing.

Each refusal is checked three ways: the error type, a message that names the argument, the
value and what is accepted, and an environment left exactly as it was (state arrays, masks,
counters and deal generators). The rules themselves are in :mod:`forty_thieves_env.engine.checks`
and docs/validation.md.
"""

from __future__ import annotations

import re

import gymnasium as gym
import numpy as np
import pytest
from conftest import NEAR_WIN, NEAR_WIN_SCRIPT, ONE_MOVE_TO_STUCK
from gymnasium.error import ResetNeeded

from forty_thieves_env import IllegalMoveError, deal
from forty_thieves_env.engine.layout import Cfg
from forty_thieves_env.envs.batch import BatchGames
from forty_thieves_env.envs.env import FortyThievesEnv
from forty_thieves_env.envs.options import EnvOptions
from forty_thieves_env.envs.rewards import FoundationReward
from forty_thieves_env.envs.vector import FortyThievesVectorEnv
from forty_thieves_env.text.errors import ActionSpaceError, ResetNeededError

ENV_MAX = 2**63 - 1


# ----------------------------------------------------------------------------- helpers


def single_snapshot(env: FortyThievesEnv) -> tuple:
    """Everything a refusal must leave alone in a single env."""
    return (
        env._s.copy(),
        env._mask.copy(),
        env._counters.copy(),
        env._deal,
        env._live,
        env._encoder.buffer.copy(),
        repr(env.np_random.bit_generator.state) if env._np_random is not None else None,
    )


def batch_snapshot(b: BatchGames) -> tuple:
    """Everything a refusal must leave alone in a batch (and so in the vector envs)."""
    return (
        b.states.copy(),
        b.masks.copy(),
        b.obs.copy(),
        b.games.copy(),
        b.gens.copy(),
        b.flags.copy(),
        b.rewards.copy(),
        list(b.seeds),
        b.started,
    )


def same(a: tuple, b: tuple) -> bool:
    return all(np.array_equal(x, y) if isinstance(x, np.ndarray) else x == y for x, y in zip(a, b, strict=True))


def refused(call, error: type[Exception], *words: str) -> str:
    """Call ``call``, expect ``error``, and check that the message holds every one of ``words``."""
    with pytest.raises(error) as info:
        call()
    message = str(info.value)
    for w in words:
        assert w in message, (w, message)
    return message


@pytest.fixture(scope="module")
def single() -> FortyThievesEnv:
    env = FortyThievesEnv("classic")
    env.reset(seed=3)
    env.step(0)
    return env


@pytest.fixture(scope="module")
def vector() -> FortyThievesVectorEnv:
    venv = FortyThievesVectorEnv(3, "classic")
    venv.reset(seed=3)
    venv.step(np.zeros(3, dtype=np.int64))
    return venv


# ------------------------------------------------------------------------ 1. deal numbers

BAD_DEALS = [
    (0, ValueError),
    (-1, ValueError),
    (2**63, ValueError),  # beyond int64: the envs report deal numbers in int64 arrays
    (2**63 + 5, ValueError),
    (10**20, ValueError),
    (np.uint64(2**63 + 5), ValueError),
    (np.array(5), TypeError),  # an array, even 0-d, is not a deal number
    (1.5, TypeError),
    (7.0, TypeError),
    (True, TypeError),
    ("5", TypeError),
    (None, TypeError),
]


@pytest.mark.parametrize(("number", "error"), BAD_DEALS, ids=repr)
def test_a_bad_reset_deal_is_refused_alike_by_every_env(single, vector, number, error) -> None:
    before_single, before_vector = single_snapshot(single), batch_snapshot(vector._batch)
    one = refused(lambda: single.reset(seed=9, options={"deal": number}), error, "options['deal']", "1..")
    many = refused(lambda: vector.reset(seed=9, options={"deal": number}), error, "options['deal']", "1..")
    assert one == many  # one rule, one message
    assert str(ENV_MAX) in one
    assert same(single_snapshot(single), before_single)
    assert same(batch_snapshot(vector._batch), before_vector)


@pytest.mark.parametrize(("number", "error"), BAD_DEALS, ids=repr)
def test_a_bad_deal_in_the_deals_argument_is_refused_with_the_same_rule(number, error) -> None:
    for make in (EnvOptions.make, FortyThievesEnv, lambda **k: FortyThievesVectorEnv(2, **k)):
        message = refused(lambda make=make: make(deals=[3, number]), error, "deals[1]", f"1..{ENV_MAX}")
        assert "got" in message


def test_the_deals_argument_takes_only_a_split_name_or_a_sequence_of_integers() -> None:
    refused(lambda: EnvOptions.make(deals=5), TypeError, "deals must be", "int")
    refused(lambda: EnvOptions.make(deals=b"ab"), TypeError, "deals must be", "bytes")
    refused(lambda: EnvOptions.make(deals=[]), ValueError, "non-empty")
    refused(lambda: EnvOptions.make(deals=np.array([[1, 2]])), ValueError, "1-D", "(1, 2)")
    refused(lambda: EnvOptions.make(deals=np.array([1.0, 2.0])), TypeError, "dtype float64")
    refused(lambda: EnvOptions.make(deals=np.array([2**63 + 5], dtype=np.uint64)), ValueError, "deals[0]")
    refused(lambda: EnvOptions.make(deals="training"), ValueError, "unknown deal split")
    # Accepted: any integers in range, numpy ones included, from any iterable.
    for good in ([np.int64(5), 6], np.array([5, 6], dtype=np.uint8), range(5, 7), (ENV_MAX, 5)):
        assert EnvOptions.make(deals=good).deals.dtype == np.int64


def test_the_largest_deal_number_plays_in_every_env() -> None:
    env = FortyThievesEnv("classic")
    _, info = env.reset(options={"deal": ENV_MAX})
    venv = FortyThievesVectorEnv(2, "classic", deals=[ENV_MAX, 7])
    _, infos = venv.reset(options={"deal": [ENV_MAX, np.int64(7)]})
    assert info["deal"] == infos["deal"][0] == ENV_MAX
    np.testing.assert_array_equal(info["action_mask"], infos["action_mask"][0])
    # The engine itself still deals PySolFC's whole range.
    assert deal("classic", 10**20).cards_on_foundations == 0


def test_a_vector_reset_with_one_bad_deal_among_many_changes_nothing(vector) -> None:
    before = batch_snapshot(vector._batch)
    refused(lambda: vector.reset(options={"deal": [1, 2, 2**64]}), ValueError, "options['deal'][2]")
    refused(lambda: vector.reset(options={"deal": [1, 2.5, 3]}), TypeError, "options['deal'][1]")
    refused(lambda: vector.reset(options={"deal": [1, 2]}), ValueError, "num_envs=3", "got 2")
    refused(lambda: vector.reset(seed=-1), ValueError, "seed must be an integer >= 0")
    refused(lambda: vector.reset(seed=1.5), TypeError, "seed")
    refused(lambda: vector.reset(seed=[1, 2]), ValueError, "num_envs=3")
    assert same(batch_snapshot(vector._batch), before)


# -------------------------------------------------------------------------- 2. option types

BAD_OPTIONS = [
    ({"winnable_only": "no"}, TypeError, "winnable_only must be True or False, got 'no'"),
    ({"winnable_only": 1}, TypeError, "winnable_only must be True or False, got 1"),
    ({"winnable_only": None}, TypeError, "winnable_only must be True or False, got None"),
    ({"mask_in_observation": "yes"}, TypeError, "mask_in_observation must be True or False, got 'yes'"),
    ({"mask_in_observation": 1}, TypeError, "mask_in_observation must be True or False, got 1"),
    ({"mask_in_observation": None}, TypeError, "mask_in_observation must be True or False, got None"),
    ({"observation": None}, TypeError, "observation must be one of 'dict', 'flat', 'oracle', got None"),
    ({"illegal_action": 0}, TypeError, "illegal_action must be one of"),
    ({"render_mode": 1}, TypeError, "render_mode must be one of 'ansi', 'rgb_array', got 1"),
    ({"redeals": 1.0}, TypeError, "redeals must be an integer 0..100, got 1.0 (float)"),
    ({"redeals": "1"}, TypeError, "redeals must be an integer 0..100, got '1'"),
    ({"auto_play_safe": "yes"}, TypeError, "auto_play_safe must be True or False, got 'yes'"),
    ({"run_moves": 2}, TypeError, "run_moves must be one of 'none', 'supermove', 'free', got 2"),
    ({"variant": 3}, TypeError, "variant must be a preset name (str) or a Variant, got 3"),
    ({"reward": FoundationReward}, TypeError, "reward must be a name or a Reward instance"),
]


@pytest.mark.parametrize(("kwargs", "error", "words"), BAD_OPTIONS, ids=lambda x: repr(x)[:40])
def test_options_of_the_wrong_kind_are_refused_by_every_env(kwargs, error, words) -> None:
    for make in (EnvOptions.make, FortyThievesEnv, lambda **k: FortyThievesVectorEnv(2, **k)):
        refused(lambda make=make: make(**kwargs), error, words)


def test_numpy_integers_and_bools_are_accepted_as_options() -> None:
    a = EnvOptions.make("classic", redeals=np.int64(1), columns=np.int32(9), winnable_only=np.bool_(False))
    b = EnvOptions.make("classic", redeals=1, columns=9, winnable_only=False)
    assert a.variant == b.variant and a.winnable_only is False
    env = gym.make("FortyThieves-v0", redeals=np.int64(1), auto_play_safe=np.bool_(True))
    assert env.unwrapped.variant.redeals == 1 and env.unwrapped.variant.auto_play_safe is True
    assert FoundationReward(per_card=np.float32(0.5), illegal=np.int64(-1)) == FoundationReward(0.5, 1.0, -1.0)


BAD_VECTOR_ARGS = [
    ({"num_envs": 2.0}, TypeError, "num_envs must be an integer >= 1, got 2.0 (float)"),
    ({"num_envs": 0}, ValueError, "num_envs must be an integer >= 1, got 0"),
    ({"max_episode_steps": 2.5}, TypeError, "max_episode_steps must be an integer >= 1, got 2.5"),
    ({"max_episode_steps": True}, TypeError, "max_episode_steps must be an integer >= 1, got True"),
    ({"num_threads": 1.5}, TypeError, "num_threads must be an integer >= 1, got 1.5"),
    ({"copy": "no"}, TypeError, "copy must be True or False, got 'no'"),
    ({"autoreset_mode": "Never"}, ValueError, "autoreset_mode must be AutoresetMode.NEXT_STEP"),
    ({"autoreset_mode": 1}, TypeError, "autoreset_mode must be"),
]


@pytest.mark.parametrize(("kwargs", "error", "words"), BAD_VECTOR_ARGS, ids=lambda x: repr(x)[:40])
def test_the_vector_envs_own_arguments_are_checked(kwargs, error, words) -> None:
    args = {"num_envs": 2, **kwargs}
    refused(lambda: FortyThievesVectorEnv(**args), error, words)


# ------------------------------------------------------------------------------ 3. actions

BAD_ACTIONS = [12.5, 12.0, np.float64(3.0), True, np.bool_(False), "3", None, [3], np.array([3])]


@pytest.mark.parametrize("action", BAD_ACTIONS, ids=repr)
@pytest.mark.parametrize("illegal_action", ["penalize", "raise", "terminate"])
def test_an_action_that_is_not_an_integer_is_refused_by_the_single_env(action, illegal_action) -> None:
    env = FortyThievesEnv("josephine", illegal_action=illegal_action)
    env.reset(seed=1)
    before = single_snapshot(env)
    refused(lambda: env.step(action), TypeError, "action must be an integer action number", "got")
    assert same(single_snapshot(env), before)
    refused(lambda: env.describe_action(action), TypeError, "action must be an integer")


def test_integer_actions_of_every_kind_are_accepted() -> None:
    env = FortyThievesEnv("classic")
    for a in (0, np.int64(0), np.int8(0), np.uint16(0), np.array(0)):
        env.reset(seed=1)
        _, _, _, _, info = env.step(a)
        assert not info["illegal_action"] and info["moves"] == 1


OUT_OF_SPACE = [10**6, -1, 112, 2**64, np.int64(112), np.int64(-1), np.array(500), np.uint64(2**64 - 1)]
NOT_INTEGERS = [1.5, 3.0, np.float64(3.0), np.float32(1.0), True, np.bool_(False)]


@pytest.mark.parametrize("mode", ["penalize", "terminate", "raise"])
def test_out_of_space_actions_are_refused_in_every_mode(mode) -> None:
    env = FortyThievesEnv("classic", illegal_action=mode)
    env.reset(seed=1)
    before = single_snapshot(env)
    for action in OUT_OF_SPACE:
        refused(lambda a=action: env.step(a), ActionSpaceError, f"action {int(action)} is out of range 0..111",
                "Discrete(112)")  # fmt: skip
    for action in NOT_INTEGERS:
        refused(lambda a=action: env.step(a), TypeError, "must be an integer action number", "Discrete(112)")
    assert same(single_snapshot(env), before)  # the step counter too: nothing was played
    illegal = int(np.flatnonzero(~env._mask)[0])  # an in-space illegal move keeps its mode
    if mode == "raise":
        refused(lambda: env.step(illegal), IllegalMoveError, "illegal move")
    else:
        _, _, terminated, _, info = env.step(illegal)
        assert info["illegal_action"] and terminated == (mode == "terminate")


@pytest.mark.parametrize("mode", ["penalize", "terminate", "raise"])
def test_out_of_space_actions_in_a_batch_are_refused_in_every_mode(mode) -> None:
    venv = FortyThievesVectorEnv(3, "classic", illegal_action=mode)
    venv.reset(seed=2)
    before = batch_snapshot(venv._batch)
    for bad in (10**6, -1, 112, 2**64):
        refused(lambda b=bad: venv.step([0, b, 0]), ActionSpaceError, "game 1", f"action {bad} is out of range",
                "Discrete(112)")  # fmt: skip
    refused(lambda: venv.step(np.array([0, 0, 2**64 - 1], dtype=np.uint64)), ActionSpaceError, "game 2")
    refused(lambda: venv.step(np.array([0, -5, 0], dtype=np.int32)), ActionSpaceError, "game 1", "action -5")
    refused(lambda: venv.step([0, 1.5, 0]), TypeError, "actions[1]", "Discrete(112)")
    assert same(batch_snapshot(venv._batch), before)
    masks = venv.action_masks()
    illegal = [int(np.flatnonzero(~m)[0]) for m in masks]
    if mode == "raise":
        refused(lambda: venv.step(illegal), IllegalMoveError, "game 0: illegal move")
    else:
        _, _, terminated, _, infos = venv.step(illegal)
        assert infos["illegal_action"].all() and terminated.all() == (mode == "terminate")


BAD_BATCH_ACTIONS = [
    (3, ValueError, "actions must be a sequence of 3 integer actions"),  # never broadcast
    (np.int64(3), ValueError, "actions must be a sequence of 3 integer actions"),
    ([0, 0], ValueError, "got shape (2,)"),
    (np.zeros((3, 1), dtype=np.int64), ValueError, "got shape (3, 1)"),
    ([0, 12.5, 0], TypeError, "actions[1] must be an integer action number, got 12.5 (float)"),
    (np.array([0.0, 1.0, 2.0]), TypeError, "dtype float64"),
    (np.array([True, False, True]), TypeError, "dtype bool"),
    ([0, None, 0], TypeError, "actions[1]"),
    ("000", TypeError, "actions must be a sequence"),
    ([0, 10**6, 0], ActionSpaceError, "game 1: action 1000000 is out of range"),  # out of the action space
    (np.array([-1, 0, 0]), ActionSpaceError, "game 0: action -1"),
]


@pytest.mark.parametrize(("actions", "error", "words"), BAD_BATCH_ACTIONS, ids=lambda x: repr(x)[:30])
def test_bad_vector_actions_are_refused_before_any_game_moves(vector, actions, error, words) -> None:
    before = batch_snapshot(vector._batch)
    refused(lambda: vector.step(actions), error, words)
    assert same(batch_snapshot(vector._batch), before)


def test_the_sb3_adapter_checks_actions_alike() -> None:
    pytest.importorskip("stable_baselines3")
    from forty_thieves_env.envs.sb3 import FortyThievesSB3VecEnv

    venv = FortyThievesSB3VecEnv(3, "classic")
    refused(lambda: venv.step(np.zeros(3, dtype=np.int64)), ResetNeeded, "reset()")
    venv.reset()
    before = batch_snapshot(venv.batch)
    for actions, error, words in BAD_BATCH_ACTIONS:
        refused(lambda actions=actions: venv.step(actions), error, words)
    assert same(batch_snapshot(venv.batch), before)


# ------------------------------------------------------------------------ 4. after the end


def test_a_stuck_episode_refuses_further_steps_until_reset() -> None:
    env = gym.make("FortyThieves-v0")
    env.reset(options={"position": ONE_MOVE_TO_STUCK})
    *_, terminated, _, info = env.step(0)
    assert terminated and not info["won"]
    base = env.unwrapped
    before = single_snapshot(base)
    for action in (0, 5, 10_000):
        refused(lambda action=action: env.step(action), ResetNeeded, "episode has ended", "reset()")
    assert same(single_snapshot(base), before)
    env.reset(seed=0)
    assert not env.step(0)[2]


def test_a_won_episode_refuses_further_steps_until_reset() -> None:
    env = gym.make("FortyThieves-v0", illegal_action="raise")
    env.reset(options={"position": NEAR_WIN})
    for move in NEAR_WIN_SCRIPT:
        _, _, terminated, _, info = env.step(env.unwrapped.action_for(move))
    assert terminated and info["won"]
    refused(lambda: env.step(0), ResetNeeded, "episode has ended")


def test_an_episode_ended_by_an_illegal_action_refuses_further_steps() -> None:
    env = FortyThievesEnv("classic", illegal_action="terminate")
    env.reset(options={"position": NEAR_WIN})
    *_, terminated, _, info = env.step(env.action_for("1>2"))
    assert terminated and info["illegal_action"]
    refused(lambda: env.step(0), ResetNeeded, "episode has ended")


def test_set_state_to_a_live_position_starts_an_episode_again() -> None:
    env = FortyThievesEnv("classic")
    refused(lambda: env.step(0), ResetNeeded, "reset() was never called")
    env.reset(seed=4)
    live = env.get_state()
    env.reset(options={"position": ONE_MOVE_TO_STUCK})
    env.step(0)
    refused(lambda: env.step(0), ResetNeeded)
    ended = env.get_state()
    env.set_state(live)
    assert not env.step(0)[2]
    # A stuck (or won) state set directly ends the episode at once.
    env.set_state(ended)
    refused(lambda: env.step(0), ResetNeeded)


def test_vector_envs_refuse_a_step_before_the_first_reset() -> None:
    venv = FortyThievesVectorEnv(2, "classic")
    before = batch_snapshot(venv._batch)
    refused(lambda: venv.step([0, 0]), ResetNeeded, "before the first reset()")
    assert same(batch_snapshot(venv._batch), before)
    batch = BatchGames(2, "classic")
    refused(lambda: batch.step(np.zeros(2, dtype=np.int64)), ResetNeededError, "before the first reset()")
    refused(lambda: batch.reset(which=np.array([True, False])), ValueError, "first reset must reset every game")


def test_vector_envs_never_step_an_ended_episode() -> None:
    # They autoreset: the step after an ending deals the next game (NEXT_STEP) or the ending
    # step already did (SAME_STEP); an ended episode is never stepped.
    for mode in ("NextStep", "SameStep"):
        venv = FortyThievesVectorEnv(1, "classic", autoreset_mode=mode)
        venv.reset(options={"position": ONE_MOVE_TO_STUCK})
        _, _, terminated, _, infos = venv.step([0])
        assert terminated[0]
        _, _, terminated, _, infos = venv.step([0])
        assert not terminated[0] and not infos["illegal_action"][0]


# ------------------------------------------------------------------- 6. state arrays in envs


def test_set_state_refuses_a_corrupted_array_and_changes_nothing(single) -> None:
    good = single.get_state()
    before = single_snapshot(single)
    bad = good.array.copy()
    bad[single.cfg[Cfg.OFF_TAB] + 3] = 99  # the exposed card of column 1
    refused(lambda: single.set_state(bad), ValueError, "not a valid classic state", "column 1, card 4 is 99")
    refused(lambda: single.set_state(good._replace(deal=-1)), ValueError, "EnvState.deal must be an integer 0..")
    refused(lambda: single.set_state(good._replace(moves=1.5)), TypeError, "EnvState.moves must be an integer")
    refused(lambda: single.set_state([1, 2, 3]), TypeError, "state must be an EnvState")
    assert same(single_snapshot(single), before)


def test_a_gamestate_position_written_to_since_it_was_made_is_checked() -> None:
    game = deal("classic", 5)
    game.array[0] = 100  # stock length
    for env in (FortyThievesEnv("classic"), FortyThievesVectorEnv(2, "classic")):
        words = ("options['position']", "stock length 100")
        refused(lambda env=env: env.reset(options={"position": game}), ValueError, *words)


def test_the_unchecked_fast_path_restores_the_env_own_snapshots() -> None:
    env = FortyThievesEnv("classic")
    env.reset(seed=1)
    snap = env.get_state()
    env.step(0)
    env.set_state(snap, check=False)
    assert np.array_equal(env.get_state().array, snap.array)
    refused(lambda: env.set_state(snap.array[:-1], check=False), ValueError, "int8")


def test_messages_name_the_argument_value_and_what_is_accepted() -> None:
    # Spot check of the wording rule on a few refusals of different kinds.
    env = FortyThievesEnv("classic")
    for call in (
        lambda: env.reset(options={"deal": 1.5}),
        lambda: FortyThievesEnv(winnable_only="no"),
        lambda: FortyThievesVectorEnv(2, max_episode_steps=2.5),
    ):
        with pytest.raises((TypeError, ValueError)) as info:
            call()
        assert re.search(r"\w+.* must be .+, got .+", str(info.value)), str(info.value)
