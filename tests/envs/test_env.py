"""The Gymnasium environment: registration, API checks, masks, seeds, illegal actions, SB3."""

from __future__ import annotations

import pickle
import warnings

import gymnasium as gym
import numpy as np
import pytest
from conftest import NEAR_WIN, NEAR_WIN_SCRIPT, ONE_MOVE_TO_STUCK, run_fresh
from gymnasium.utils.env_checker import data_equivalence

import forty_thieves_env
from forty_thieves_env import (
    ENV_IDS,
    FortyThievesEnv,
    GameState,
    IllegalMoveError,
    deal,
    format_move,
    format_position,
    get_variant,
    parse_position,
)
from forty_thieves_env.engine.cards import N_CARDS
from forty_thieves_env.engine.deals import SPLITS, TRAIN_RANGE
from forty_thieves_env.engine.rules import is_legal
from forty_thieves_env.envs.levels import LEVELS
from forty_thieves_env.envs.registration import LEVEL_IDS, MAX_EPISODE_STEPS
from forty_thieves_env.envs.rewards import FoundationReward

# The difficulty levels' ids go through the same checks as the presets' ids.
IDS = list(ENV_IDS) + list(LEVEL_IDS)


def masked_random_action(info: dict, rng: np.random.Generator) -> int:
    legal = np.flatnonzero(info["action_mask"])
    return int(legal[rng.integers(len(legal))])


# ------------------------------------------------------------------------ registration


def test_every_preset_has_an_id() -> None:
    assert IDS[0] == "FortyThieves-v0" and ENV_IDS["FortyThieves-v0"] == "classic"
    assert sorted(ENV_IDS.values()) == sorted(forty_thieves_env.PRESETS)
    for env_id, preset in ENV_IDS.items():
        spec = gym.spec(env_id)
        assert spec.max_episode_steps == MAX_EPISODE_STEPS
        env = gym.make(env_id)
        assert env.unwrapped.variant == get_variant(preset)
        assert env.action_space == gym.spaces.Discrete(env.unwrapped.n_actions)
        env.close()
    assert gym.make("FortyThieves-Josephine-v0").action_space.n == 1192
    assert gym.make("FortyThieves-v0").action_space.n == 112


def test_keyword_arguments_override_variant_options() -> None:
    env = gym.make("FortyThieves-v0", redeals=2, run_moves="supermove", auto_play_safe=True)
    v = env.unwrapped.variant
    assert (v.name, v.redeals, v.run_moves, v.auto_play_safe) == ("classic", 2, "supermove", True)
    assert env.action_space.n == 2 + 2 * 10 + 90 * 13
    _, info = env.reset(seed=1)
    assert info["action_mask"].shape == (env.action_space.n,)
    with pytest.raises(ValueError, match="unknown variant option"):
        gym.make("FortyThieves-v0", colums=9)
    for bad in (
        {"observation": "pixels"},
        {"reward": "points"},
        {"illegal_action": "ignore"},
    ):
        with pytest.raises(ValueError):
            gym.make("FortyThieves-v0", **bad)
    with pytest.raises(ValueError, match="render_mode"):
        FortyThievesEnv(render_mode="human")


def test_engine_imports_without_gymnasium_or_torch() -> None:
    run_fresh(
        "import sys; sys.modules['gymnasium'] = None",
        "import forty_thieves_env as f",
        "assert not hasattr(f, 'FortyThievesEnv')",
        "assert f.deal('classic', 5).legal_actions()",
        "assert 'torch' not in sys.modules",
    )
    # With gymnasium present, see test_render.test_pillow_is_imported_only_to_draw (no torch either).


# --------------------------------------------------------------------------- API checks


def _checker_warnings(run) -> list[str]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        run()
    return [str(w.message) for w in caught]


@pytest.mark.parametrize("env_id", IDS)
def test_gymnasium_check_env_without_warnings(env_id: str) -> None:
    from gymnasium.utils.env_checker import check_env

    env = gym.make(env_id)
    assert _checker_warnings(lambda: check_env(env.unwrapped)) == []


@pytest.mark.parametrize("kwargs", [{"observation": "flat"}, {"observation": "oracle"}, {"reward": "score"}])
def test_gymnasium_check_env_other_modes(kwargs: dict) -> None:
    from gymnasium.utils.env_checker import check_env

    env = gym.make("FortyThieves-RankAndFile-v0", **kwargs)
    assert _checker_warnings(lambda: check_env(env.unwrapped)) == []


@pytest.mark.parametrize("env_id", IDS)
def test_sb3_check_env(env_id: str) -> None:
    from stable_baselines3.common.env_checker import check_env

    found = _checker_warnings(lambda: check_env(gym.make(env_id)))
    # SB3 only advises flattening 2-D fields (MultiInputPolicy flattens them itself).
    assert all("tableau has an unconventional shape" in w for w in found), found
    assert _checker_warnings(lambda: check_env(gym.make(env_id, observation="flat"))) == []


# ------------------------------------------------------------------------ seeds, deals


def _rollout(env: gym.Env, seed: int, steps: int) -> list[tuple]:
    rng = np.random.default_rng(seed)
    obs, info = env.reset(seed=seed)
    trace: list[tuple] = [(obs, info)]
    for _ in range(steps):
        obs, reward, terminated, truncated, info = env.step(masked_random_action(info, rng))
        trace.append((obs, reward, terminated, truncated, info))
        if terminated or truncated:
            obs, info = env.reset()
            trace.append((obs, info))
    return trace


def test_same_seed_rollouts_are_identical() -> None:
    for env_id in ("FortyThieves-RankAndFile-v0", "FortyThieves-Relaxed-v0"):
        a = _rollout(gym.make(env_id, max_episode_steps=60), seed=42, steps=400)
        b = _rollout(gym.make(env_id, max_episode_steps=60), seed=42, steps=400)
        assert len(a) == len(b) > 400
        for x, y in zip(a, b, strict=True):
            assert data_equivalence(x, y, exact=True)
        c = _rollout(gym.make(env_id, max_episode_steps=60), seed=43, steps=50)
        assert c[0][1]["deal"] != a[0][1]["deal"]


def test_seeded_resets_give_a_reproducible_sequence_of_deals() -> None:
    def deals(seed: int) -> list[int]:
        env = gym.make("FortyThieves-v0")
        first = env.reset(seed=seed)[1]["deal"]
        return [first] + [env.reset()[1]["deal"] for _ in range(5)]

    seq = deals(7)
    assert seq == deals(7)
    assert seq != deals(8)
    assert len(set(seq)) == len(seq)
    assert all(TRAIN_RANGE[0] <= d <= TRAIN_RANGE[1] for d in seq)


def test_reset_deal_option_plays_that_deal() -> None:
    rules = {env_id: get_variant(preset) for env_id, preset in ENV_IDS.items()}
    rules.update({env_id: LEVELS[name].variant for env_id, name in LEVEL_IDS.items()})
    for env_id, variant in rules.items():
        env = gym.make(env_id)
        _, info = env.reset(seed=0, options={"deal": 12345})  # any deal, even on winnable-only Easy
        assert info["deal"] == 12345
        assert env.unwrapped.position_text() == format_position(deal(variant, 12345))
    env = gym.make("FortyThieves-v0")
    with pytest.raises(ValueError):
        env.reset(options={"deal": 0})
    with pytest.raises(ValueError, match="unknown reset option"):
        env.reset(options={"deals": 5})


def test_deals_argument_restricts_the_draw() -> None:
    env = gym.make("FortyThieves-v0", deals=[5, 6, 7])
    env.reset(seed=1)
    seen = {env.reset()[1]["deal"] for _ in range(40)}
    assert seen == {5, 6, 7}
    env = gym.make("FortyThieves-v0", deals="test")
    drawn = [env.reset(seed=s)[1]["deal"] for s in range(20)]
    assert all(d in SPLITS["test"] for d in drawn)
    for bad, error in (([], ValueError), ([0, 3], ValueError), (["x"], TypeError)):
        with pytest.raises(error):
            gym.make("FortyThieves-v0", deals=bad)


def test_reset_position_option() -> None:
    env = gym.make("FortyThieves-v0")
    _, info = env.reset(options={"position": NEAR_WIN})
    assert env.unwrapped.position_text() == format_position(parse_position(NEAR_WIN))
    assert info["deal"] == 0 and info["moves"] == 0 and info["cards_on_foundations"] == 99
    assert set(env.unwrapped.legal_moves()) == {"s", "2>1", "2>f"} | {f"{i}>{j}" for i in (1, 2) for j in range(3, 11)}
    # A GameState works too; a position of another variant or with nothing to play does not.
    env.reset(options={"position": deal("classic", 3)})
    assert env.unwrapped.position_text() == format_position(deal("classic", 3))
    with pytest.raises(ValueError, match="this environment plays"):
        env.reset(options={"position": format_position(deal("streets", 3))})
    stuck = parse_position(ONE_MOVE_TO_STUCK)
    stuck.play("s")
    with pytest.raises(ValueError, match="no legal move"):
        env.reset(options={"position": format_position(stuck)})
    with pytest.raises(ValueError, match="not both"):
        env.reset(options={"position": NEAR_WIN, "deal": 3})


# --------------------------------------------------------------------------------- masks


@pytest.mark.parametrize("env_id", IDS)
def test_mask_equals_engine_legal_moves_over_random_play(env_id: str) -> None:
    env = gym.make(env_id, max_episode_steps=150)
    base = env.unwrapped
    rng = np.random.default_rng(IDS.index(env_id))
    obs, info = env.reset(seed=IDS.index(env_id))
    terminated = truncated = False
    checked = 0
    for _ in range(400):
        mask = info["action_mask"]
        assert mask.dtype == np.bool_ and mask.shape == (base.n_actions,)
        np.testing.assert_array_equal(mask, env.get_wrapper_attr("action_masks")())
        game = base.game
        np.testing.assert_array_equal(mask, game.legal_mask())
        brute = np.array([is_legal(game.array, game.cfg, a) for a in range(base.n_actions)])
        np.testing.assert_array_equal(mask, brute)
        assert base.legal_moves() == [format_move(base.variant, a) for a in np.flatnonzero(mask)]
        if terminated:
            assert info["won"] or not mask.any()
        else:
            assert mask.any(), "all-False mask on a non-terminal state"
        checked += 1
        if terminated or truncated:
            obs, info = env.reset()
            terminated = truncated = False
            continue
        obs, _, terminated, truncated, info = env.step(masked_random_action(info, rng))
        assert obs in env.observation_space
        assert not info["illegal_action"]
        assert terminated == (info["won"] or not info["action_mask"].any())
    assert checked == 400


def _shuffle_hidden_cards(game: GameState, rng: np.random.Generator) -> GameState:
    """The same table with the stock and the face-down cards dealt out again in another order."""
    hidden = list(game.stock) + [c for col, d in zip(game.columns, game.face_down, strict=True) for c in col[:d]]
    perm = list(rng.permutation(hidden))
    stock, perm = perm[: len(game.stock)], perm[len(game.stock) :]
    columns = []
    for col, d in zip(game.columns, game.face_down, strict=True):
        columns.append(perm[:d] + col[d:])
        perm = perm[d:]
    return GameState.from_parts(
        game.variant, columns, stock, game.waste, game.foundations, game.face_down, game.redeals_left
    )


def test_hidden_cards_never_reach_the_observation() -> None:
    rng = np.random.default_rng(0)
    envs = {mode: gym.make("FortyThieves-RankAndFile-v0", observation=mode) for mode in ("dict", "flat", "oracle")}
    for number in (1, 2, 3):
        game = deal("rank_and_file", number)
        for move in ("s", "s", "s"):
            game.play(move)
        other = _shuffle_hidden_cards(game, rng)
        assert format_position(other) != format_position(game)
        for mode, env in envs.items():
            obs_a, info_a = env.reset(options={"position": format_position(game)})
            obs_b, info_b = env.reset(options={"position": format_position(other)})
            np.testing.assert_array_equal(info_a["action_mask"], info_b["action_mask"])
            if mode == "oracle":
                assert not data_equivalence(obs_a, obs_b)
            else:
                assert data_equivalence(obs_a, obs_b, exact=True), mode


def test_info_keys_on_reset_and_step() -> None:
    env = gym.make("FortyThieves-Maria-v0")
    keys = {"deal", "moves", "cards_on_foundations", "won", "illegal_action", "action_mask"}
    _, info = env.reset(seed=3)
    assert set(info) == keys
    _, _, _, _, info = env.step(0)
    assert set(info) == keys
    assert info["moves"] == 1 and info["won"] is False


def test_returned_masks_and_observations_are_never_reused() -> None:
    env = gym.make("FortyThieves-v0")
    obs, info = env.reset(options={"position": NEAR_WIN})
    mask, method_mask = info["action_mask"], env.unwrapped.action_masks()
    kept = (obs["waste"].copy(), mask.copy())
    obs2, *_, info2 = env.step(env.unwrapped.action_for("s"))  # KH to the waste: now w>f is legal
    assert info2["action_mask"][1] and not kept[1][1]
    assert obs2["waste"][-1] != kept[0][-1]
    np.testing.assert_array_equal(mask, kept[1])
    np.testing.assert_array_equal(method_mask, kept[1])
    np.testing.assert_array_equal(obs["waste"], kept[0])
    assert not np.shares_memory(info2["action_mask"], env.unwrapped.action_masks())


def test_stuck_position_terminates_with_an_all_false_mask() -> None:
    env = gym.make("FortyThieves-v0")
    _, info = env.reset(options={"position": ONE_MOVE_TO_STUCK})
    assert env.unwrapped.legal_moves() == ["s"]
    _, reward, terminated, truncated, info = env.step(env.unwrapped.action_for("s"))
    assert terminated and not truncated and not info["won"]
    assert reward == 0.0
    assert not info["action_mask"].any() and not env.unwrapped.action_masks().any()


def test_time_limit_truncates() -> None:
    env = gym.make("FortyThieves-v0", max_episode_steps=3)
    _, info = env.reset(options={"deal": 1})
    rng = np.random.default_rng(0)
    results = [env.step(masked_random_action(info, rng)) for _ in range(3)]
    assert [r[3] for r in results] == [False, False, True]
    assert not any(r[2] for r in results)


# ----------------------------------------------------------------------- illegal actions


def test_illegal_action_penalize() -> None:
    env = gym.make("FortyThieves-v0")
    _, info = env.reset(options={"position": NEAR_WIN})
    base = env.unwrapped
    before, text = base.get_state(), base.position_text()
    for move in ("w>f", "3>1", "1>2"):
        a = base.action_for(move)
        assert not info["action_mask"][a]
        _, reward, terminated, truncated, info = env.step(a)
        assert reward == base.reward.illegal < 0
        assert info["illegal_action"] and not terminated and not truncated
        assert base.position_text() == text and np.array_equal(base.get_state().array, before.array)
        assert info["moves"] == 0
    # A legal action afterwards is not flagged.
    _, _, _, _, info = env.step(0)
    assert not info["illegal_action"] and info["moves"] == 1


def test_illegal_action_raise_names_the_move_and_why() -> None:
    env = gym.make("FortyThieves-v0", illegal_action="raise")
    env.reset(options={"position": NEAR_WIN})
    base = env.unwrapped
    text = base.position_text()
    with pytest.raises(IllegalMoveError, match=r"illegal move 1>2: KS does not go on QS"):
        env.step(base.action_for("1>2"))
    with pytest.raises(IllegalMoveError, match=r"illegal move w>f: the waste is empty"):
        env.step(base.action_for("w>f"))
    with pytest.raises(IllegalMoveError, match=r"out of range 0\.\.111"):
        env.step(112)
    assert base.position_text() == text
    _, reward, *_ = env.step(base.action_for("s"))
    assert reward == 0.0


def test_illegal_action_terminate() -> None:
    env = gym.make("FortyThieves-v0", illegal_action="terminate", reward="win")
    _, info = env.reset(options={"position": NEAR_WIN})
    text = env.unwrapped.position_text()
    _, reward, terminated, truncated, info = env.step(env.unwrapped.action_for("1>2"))
    assert terminated and not truncated and info["illegal_action"]
    assert reward == env.unwrapped.reward.illegal < 0
    assert env.unwrapped.position_text() == text


# ------------------------------------------------------------------- rewards, a full game


@pytest.mark.parametrize(
    ("reward", "per_card", "bonus"),
    [
        ("foundation", 1 / N_CARDS, 1.0),
        ("win", 0.0, 1.0),
        ("score", 10.0, 0.0),
        (FoundationReward(win_bonus=0.0), 1 / N_CARDS, 0.0),
    ],
)
def test_scripted_game_from_a_position_to_a_win(reward, per_card: float, bonus: float) -> None:
    env = gym.make("FortyThieves-v0", reward=reward, illegal_action="raise")
    _, info = env.reset(options={"position": NEAR_WIN})
    base = env.unwrapped
    rewards = []
    for k, move in enumerate(NEAR_WIN_SCRIPT):
        assert move in base.legal_moves()
        home_before = info["cards_on_foundations"]
        _, r, terminated, truncated, info = env.step(base.action_for(move))
        rewards.append(r)
        moved = info["cards_on_foundations"] - home_before
        last = k == len(NEAR_WIN_SCRIPT) - 1
        assert r == pytest.approx(per_card * moved + (bonus if last else 0.0))
        assert terminated == last and info["won"] == last and not truncated
        assert info["moves"] == k + 1
    assert info["cards_on_foundations"] == N_CARDS
    assert sum(rewards) == pytest.approx(5 * per_card + bonus)
    assert not info["action_mask"].any()


# ------------------------------------------------------------------------------ helpers


def test_action_text_helpers() -> None:
    for env_id in ("FortyThieves-v0", "FortyThieves-Josephine-v0"):
        base = gym.make(env_id).unwrapped
        for a in range(base.n_actions):
            assert base.action_for(base.describe_action(a)) == a
    base = gym.make("FortyThieves-Josephine-v0").unwrapped
    assert base.describe_action(base.action_for("3>7x2")) == "3>7x2"
    assert base.action_for("s") == 0 and base.action_for("w>f") == 1


def test_get_state_and_set_state_restore_exactly() -> None:
    env = gym.make("FortyThieves-RankAndFile-v0")
    base = env.unwrapped
    rng = np.random.default_rng(1)
    _, info = env.reset(seed=5)
    for _ in range(20):
        _, _, _, _, info = env.step(masked_random_action(info, rng))
    snap, text, mask = base.get_state(), base.position_text(), info["action_mask"]
    action = masked_random_action(info, rng)
    first = env.step(action)
    step = first
    for _ in range(30):
        if step[2]:
            break
        step = env.step(masked_random_action(step[4], rng))
    base.set_state(snap)
    assert base.position_text() == text
    np.testing.assert_array_equal(base.action_masks(), mask)
    again = env.step(action)
    assert data_equivalence(first, again, exact=True)
    # The snapshot is a copy: playing on does not change it.
    assert not np.shares_memory(snap.array, base.get_state().array)
    with pytest.raises(ValueError):
        base.set_state(np.zeros(5, dtype=np.int8))


def test_pickle_round_trip_mid_episode() -> None:
    env = gym.make("FortyThieves-Relaxed-v0", render_mode="rgb_array")
    rng = np.random.default_rng(2)
    _, info = env.reset(seed=9)
    env.render()  # a renderer with fonts exists now; pickling must not trip over it
    for _ in range(25):
        _, _, _, _, info = env.step(masked_random_action(info, rng))
    clone = pickle.loads(pickle.dumps(env))
    assert clone.unwrapped.position_text() == env.unwrapped.position_text()
    np.testing.assert_array_equal(clone.unwrapped.action_masks(), info["action_mask"])
    # A refused action returns the current observation without playing: it must be intact.
    illegal = int(np.flatnonzero(~info["action_mask"])[0])
    assert data_equivalence(env.step(illegal), clone.step(illegal), exact=True)
    for _ in range(40):
        a = masked_random_action(info, rng)
        x, y = env.step(a), clone.step(a)
        assert data_equivalence(x, y, exact=True)
        info = x[4]
        if x[2] or x[3]:
            break
    assert clone.render().shape == env.render().shape


# ----------------------------------------------------------------------------- SB3 smoke


def _no_illegal_callback():
    from stable_baselines3.common.callbacks import BaseCallback

    class NoIllegal(BaseCallback):
        def _on_step(self) -> bool:
            for info in self.locals["infos"]:
                assert not info["illegal_action"], "MaskablePPO played an action outside the mask"
            return True

    return NoIllegal()


def test_maskable_ppo_learns_without_an_action_masker(one_torch_thread) -> None:
    from sb3_contrib import MaskablePPO

    env = gym.make("FortyThieves-RankAndFile-v0")
    model = MaskablePPO("MultiInputPolicy", env, n_steps=64, batch_size=32, n_epochs=2, seed=0)
    model.learn(512, callback=_no_illegal_callback())
    assert model.num_timesteps >= 512


def test_maskable_ppo_under_subproc_vec_env(one_torch_thread) -> None:
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.env_util import make_vec_env
    from stable_baselines3.common.vec_env import SubprocVecEnv

    venv = make_vec_env(
        "FortyThieves-v0", n_envs=2, seed=0, vec_env_cls=SubprocVecEnv, vec_env_kwargs={"start_method": "fork"}
    )
    try:
        venv.reset()
        masks = venv.env_method("action_masks")
        assert len(masks) == 2 and masks[0].shape == (112,) and masks[0].any()
        model = MaskablePPO("MultiInputPolicy", venv, n_steps=64, batch_size=32, n_epochs=2, seed=0)
        model.learn(512, callback=_no_illegal_callback())
        assert model.num_timesteps >= 512
    finally:
        venv.close()


def test_flat_observation_with_mlp_policy(one_torch_thread) -> None:
    from sb3_contrib import MaskablePPO

    env = gym.make("FortyThieves-Streets-v0", observation="flat")
    assert isinstance(env.observation_space, gym.spaces.Box) and env.observation_space.shape == (10 * 16 + 64 + 10,)
    model = MaskablePPO("MlpPolicy", env, n_steps=64, batch_size=32, n_epochs=1, seed=0)
    model.learn(128, callback=_no_illegal_callback())


def test_direct_construction_matches_gym_make() -> None:
    a = FortyThievesEnv("maria")
    b = gym.make("FortyThieves-Maria-v0").unwrapped
    assert a.variant == b.variant and a.observation_space == b.observation_space
    oa, ia = a.reset(seed=4)
    ob, ib = b.reset(seed=4)
    assert data_equivalence((oa, ia), (ob, ib), exact=True)
