"""The observation encoder and reward specs: the numba kernels against a plain reference.

The reference here decodes a GameState through its Python properties, never through the
kernels, so a wrong offset, code or padding in the kernels shows up as a mismatch.
"""

from __future__ import annotations

import numpy as np
import pytest
from hidden_cards import permute_hidden, random_states
from numba import njit
from reference import reference_observation

from forty_thieves_env import PRESETS, deal, format_position, get_variant, parse_card
from forty_thieves_env.engine.cards import N_CARDS
from forty_thieves_env.engine.layout import Cfg
from forty_thieves_env.envs.observation import (
    FACE_DOWN,
    NO_CARD,
    ObservationEncoder,
    encode_obs,
    flat_place,
    obs_place,
    observation_fields,
    observation_lay,
    observation_layout,
    observation_space,
)
from forty_thieves_env.envs.rewards import (
    FoundationReward,
    Reward,
    ScoreReward,
    WinReward,
    make_reward,
    reward_from_spec,
)

VARIANTS = list(PRESETS)


@pytest.mark.parametrize("variant", VARIANTS)
def test_observation_matches_reference_over_random_play(variant: str) -> None:
    v = get_variant(variant)
    encoders = {mode: ObservationEncoder(v, mode) for mode in ("dict", "flat", "oracle")}
    spaces = {mode: observation_space(v, mode) for mode in encoders}
    seen_face_down = seen_waste = False
    for game in random_states(variant, 40, seed=VARIANTS.index(variant)):
        ref = reference_observation(game)
        obs = encoders["dict"](game.array)
        assert list(obs) == ["tableau", "waste", "foundations", "counts"]
        for key, value in obs.items():
            assert value.dtype == np.int8
            np.testing.assert_array_equal(value, ref[key], err_msg=key)
        oracle = encoders["oracle"](game.array)
        for key, value in oracle.items():
            np.testing.assert_array_equal(value, ref[key], err_msg=key)
        flat = encoders["flat"](game.array)
        np.testing.assert_array_equal(flat, np.concatenate([obs[k].ravel() for k in obs]))
        for mode, o in (("dict", obs), ("flat", flat), ("oracle", oracle)):
            assert spaces[mode].contains(o), mode
        seen_face_down |= bool((obs["tableau"] == FACE_DOWN).any())
        seen_waste |= bool(len(game.waste) > 0)
    assert seen_waste
    assert seen_face_down == (v.face_down > 0)


def test_waste_is_right_aligned_with_the_top_card_last() -> None:
    game = deal("classic", 12345)
    for _ in range(3):
        game.play("s")
    obs = ObservationEncoder(game.variant)(game.array)
    assert obs["waste"][-1] == game.waste[-1]
    assert obs["waste"][-3] == parse_card("KC")  # deal 12345's first stock card
    np.testing.assert_array_equal(obs["waste"][-3:], game.waste)
    assert (obs["waste"][:-3] == NO_CARD).all()
    assert obs["counts"].tolist() == [61, 0]


def test_kernels_overwrite_every_slot() -> None:
    """Outputs start as garbage (a reused buffer): every slot must be written."""
    for variant in ("rank_and_file", "relaxed", "limited"):
        v = get_variant(variant)
        oracle = observation_layout(v, "oracle")
        size = max(stop for _, stop, _ in oracle.values())
        for game in random_states(variant, 10, seed=5):
            clean = np.zeros(size, dtype=np.int8)
            dirty = np.full(size, 77, dtype=np.int8)
            encode_obs(game.array, game.cfg, clean, flat_place(oracle), 1)
            encode_obs(game.array, game.cfg, dirty, flat_place(oracle), 1)
            np.testing.assert_array_equal(clean, dirty)
            # Without the oracle fields, the row is the first four fields, written in full.
            plain = observation_layout(v, "dict")
            dirty4 = np.full(max(stop for _, stop, _ in plain.values()), 77, dtype=np.int8)
            encode_obs(game.array, game.cfg, dirty4, flat_place(plain), 0)
            np.testing.assert_array_equal(clean[: dirty4.size], dirty4)


@njit(cache=False)
def _encode_batch(states, cfg, obs, lay):
    for g in range(states.shape[0]):
        encode_obs(states[g], cfg, obs, obs_place(lay, g), 0)


def test_kernel_is_callable_per_game_from_compiled_code() -> None:
    """A batched env calls the kernel for every game inside its own kernel, into one buffer
    laid out one block per field (each field's rows of all games together)."""
    v = get_variant("rank_and_file")
    games = random_states("rank_and_file", 6, seed=11)
    states = np.stack([g.array for g in games])
    layout = observation_layout(v, "dict")
    size = max(stop for _, stop, _ in layout.values())
    obs = np.full(len(games) * size, 77, dtype=np.int8)
    lay = observation_lay(layout, len(games), by_field=True, n_actions=int(games[0].cfg[Cfg.N_ACTIONS]))
    _encode_batch(states, games[0].cfg, obs, lay)
    fields = observation_fields(v)
    for name, (start, stop, shape) in layout.items():
        block = obs[len(games) * start : len(games) * stop].reshape(len(games), *shape)
        for g, game in enumerate(games):
            np.testing.assert_array_equal(block[g], reference_observation(game)[name], err_msg=name)
    assert list(fields) == list(layout)


@pytest.mark.parametrize("variant", ["rank_and_file", "classic", "relaxed"])
def test_hidden_cards_never_leak(variant: str) -> None:
    v = get_variant(variant)
    rng = np.random.default_rng(3)
    dict_enc, flat_enc = ObservationEncoder(v, "dict"), ObservationEncoder(v, "flat")
    oracle_enc = ObservationEncoder(v, "oracle")
    compared = 0
    for game in random_states(variant, 30, seed=7, stock_bias=0.5):
        other = permute_hidden(game, rng)
        if other is None:
            continue
        compared += 1
        # The permuted position is a real, different position ...
        assert format_position(other) != format_position(game)
        # ... that the player's observation and the legal moves cannot tell apart,
        for key, value in dict_enc(game.array).items():
            np.testing.assert_array_equal(value, dict_enc(other.array)[key], err_msg=key)
        np.testing.assert_array_equal(flat_enc(game.array), flat_enc(other.array))
        np.testing.assert_array_equal(game.legal_mask(), other.legal_mask())
        # while the oracle can.
        a, b = oracle_enc(game.array), oracle_enc(other.array)
        assert not all(np.array_equal(a[k], b[k]) for k in a)
    assert compared >= 10


def test_spaces_have_no_degenerate_bounds() -> None:
    for name in PRESETS:
        v = get_variant(name)
        for mode in ("dict", "flat", "oracle"):
            space = observation_space(v, mode)
            boxes = [space] if mode == "flat" else list(space.spaces.values())
            for box in boxes:
                assert box.dtype == np.int8
                assert (box.low < box.high).all()
        flat = observation_space(v, "flat")
        assert flat.shape == (v.columns * v.max_depth + v.stock_size + 8 + 2,)
    with pytest.raises(ValueError, match="observation must be one of"):
        observation_space(get_variant("classic"), "pixels")


# ------------------------------------------------------------------------------ rewards


@pytest.mark.parametrize("reward", [FoundationReward(), WinReward(), ScoreReward(), Reward(0.5, -2.0, -0.25)])
def test_reward_spec_kernel_matches_object(reward: Reward) -> None:
    spec = reward.spec()
    assert spec.dtype == np.float64
    for moved in range(0, 6):
        for won in (False, True):
            assert reward_from_spec(spec, moved, won) == pytest.approx(reward(moved, won))
    assert spec[2] == reward.illegal


def test_reward_presets() -> None:
    foundation = make_reward("foundation")
    assert sum(foundation(1, False) for _ in range(N_CARDS)) == pytest.approx(1.0)
    assert foundation(1, True) == pytest.approx(1 / N_CARDS + foundation.win_bonus)
    assert foundation.win_bonus > 0 and foundation.illegal < 0
    assert make_reward("win")(3, False) == 0 and make_reward("win")(1, True) == 1
    assert make_reward("score")(2, True) == 20
    assert all(make_reward(name).illegal < 0 for name in ("foundation", "win", "score"))
    custom = FoundationReward(win_bonus=0.0)
    assert make_reward(custom) is custom
    with pytest.raises(ValueError, match="unknown reward"):
        make_reward("points")
    with pytest.raises(TypeError):
        make_reward(3)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="finite"):
        Reward(per_card=float("nan"))
