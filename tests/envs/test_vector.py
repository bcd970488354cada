"""The native vector environments: Gymnasium's (``gym.make_vec``) and SB3's ``VecEnv``.

The central check: for the same seed and actions, the native vector env and a
``SyncVectorEnv`` of ``gym.make`` envs return identical observations, rewards,
terminations, truncations and infos (masks included), step by step, in both autoreset
modes, over thousands of episodes in every variant and observation / reward option; and the
SB3 ``VecEnv`` matches ``DummyVecEnv`` the same way.
"""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from conftest import NEAR_WIN, NEAR_WIN_SCRIPT, run_fresh
from gymnasium.utils.env_checker import data_equivalence
from gymnasium.vector import AutoresetMode

import forty_thieves_env
from forty_thieves_env import ENV_IDS, IllegalMoveError, deal, format_position, get_variant, parse_move
from forty_thieves_env.engine.deals import SPLITS, TRAIN_RANGE
from forty_thieves_env.envs.batch import PARALLEL_MIN_GAMES, BatchGames
from forty_thieves_env.envs.levels import LEVELS
from forty_thieves_env.envs.observation import ObservationEncoder, encode_obs, flat_place
from forty_thieves_env.envs.registration import LEVEL_IDS, MAX_EPISODE_STEPS
from forty_thieves_env.envs.rewards import FoundationReward
from forty_thieves_env.envs.vector import FortyThievesVectorEnv
from forty_thieves_env.text.errors import ActionSpaceError

NEXT, SAME = AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP


def native(env_id: str, n: int, **kwargs) -> FortyThievesVectorEnv:
    return gym.make_vec(env_id, num_envs=n, vectorization_mode="vector_entry_point", **kwargs)


def sync(env_id: str, n: int, mode: AutoresetMode = NEXT, **kwargs) -> gym.vector.SyncVectorEnv:
    return gym.make_vec(env_id, num_envs=n, vectorization_mode="sync", vector_kwargs={"autoreset_mode": mode}, **kwargs)


def choose(masks: np.ndarray, rng: np.random.Generator, p_any: float) -> np.ndarray:
    """A random legal action per row; with probability ``p_any`` any action in range instead."""
    n, k = masks.shape
    out = np.zeros(n, dtype=np.int64)
    for i in range(n):
        legal = np.flatnonzero(masks[i])
        if legal.size and rng.random() >= p_any:
            out[i] = legal[rng.integers(legal.size)]
        else:
            out[i] = rng.integers(k)
    return out


# ------------------------------------------------------------------------------ creation


def test_make_vec_returns_the_native_env_for_every_id() -> None:
    rules = {env_id: get_variant(preset) for env_id, preset in ENV_IDS.items()}
    rules.update({env_id: LEVELS[name].variant for env_id, name in LEVEL_IDS.items()})  # the levels too
    for env_id, variant in rules.items():
        for mode in (None, "vector_entry_point"):
            envs = gym.make_vec(env_id, num_envs=3, vectorization_mode=mode)
            assert isinstance(envs, FortyThievesVectorEnv)
            assert envs.variant == variant and envs.num_envs == 3
            assert envs.max_episode_steps == MAX_EPISODE_STEPS
            assert envs.metadata["autoreset_mode"] == NEXT
            ref = sync(env_id, 3)
            assert envs.single_observation_space == ref.single_observation_space
            assert envs.observation_space == ref.observation_space
            assert envs.single_action_space == ref.single_action_space
            assert envs.action_space == ref.action_space
    envs = native(
        "FortyThieves-v0", 2, redeals=1, run_moves="supermove", max_episode_steps=7, autoreset_mode="SameStep"
    )
    assert envs.variant == get_variant("classic", redeals=1, run_moves="supermove")
    assert envs.action_space == gym.spaces.MultiDiscrete([2 + 20 + 90 * 13] * 2)
    assert envs.max_episode_steps == 7 and envs.metadata["autoreset_mode"] == SAME
    for bad in ({"observation": "pixels"}, {"reward": "points"}, {"illegal_action": "ignore"}, {"colums": 9}):
        with pytest.raises(ValueError):
            native("FortyThieves-v0", 2, **bad)
    with pytest.raises(ValueError):
        native("FortyThieves-v0", 2, autoreset_mode="Disabled")
    with pytest.raises(ValueError):
        FortyThievesVectorEnv(0)


def test_num_envs_is_the_one_word_and_num_games_a_read_only_alias() -> None:
    from forty_thieves_env.envs.sb3 import make_sb3_vec_env

    b = BatchGames(3, "classic")
    assert b.num_envs == b.num_games == 3
    with pytest.raises(AttributeError):
        b.num_games = 4  # type: ignore[misc]
    assert BatchGames(num_envs=2).num_envs == 2  # the keyword is num_envs
    assert native("FortyThieves-v0", 2).num_envs == 2
    assert make_sb3_vec_env(num_envs=2).num_envs == 2
    assert make_sb3_vec_env(n_envs=5).num_envs == 5  # SB3's make_vec_env word, kept as an alias
    assert make_sb3_vec_env().num_envs == 8
    with pytest.raises(TypeError, match="not both"):
        make_sb3_vec_env(num_envs=2, n_envs=2)


def test_sb3_vec_env_name_is_apart_from_gymnasiums_and_the_old_name_still_imports() -> None:
    from forty_thieves_env.envs import sb3

    assert sb3.FortyThievesVecEnv is sb3.FortyThievesSB3VecEnv  # the alias kept for older code
    assert type(sb3.make_sb3_vec_env(num_envs=1)) is sb3.FortyThievesSB3VecEnv


def test_engine_import_pulls_in_neither_sb3_nor_torch() -> None:
    run_fresh(
        "import sys, gymnasium as gym, forty_thieves_env",
        "envs = gym.make_vec('FortyThieves-v0', num_envs=2)",
        "envs.reset(seed=0); envs.step(envs.random_legal_actions())",
        "assert 'stable_baselines3' not in sys.modules and 'torch' not in sys.modules, sorted(sys.modules)",
    )


# ------------------------------------------------------------------ spaces, dtypes, infos


@pytest.mark.parametrize("observation", ["dict", "flat", "oracle"])
def test_spaces_dtypes_and_info_layout(observation: str) -> None:
    n = 5
    envs = native("FortyThieves-RankAndFile-v0", n, observation=observation)
    obs, infos = envs.reset(seed=0)
    assert envs.observation_space.contains(obs)
    if observation == "flat":
        assert obs.shape == (n, 10 * 16 + 64 + 10)
    else:
        assert obs.keys() == envs.single_observation_space.keys()
    rng = np.random.default_rng(0)
    for _ in range(30):
        obs, rewards, terminated, truncated, infos = envs.step(choose(infos["action_mask"], rng, 0.2))
        assert envs.observation_space.contains(obs)
        leaves = obs.values() if isinstance(obs, dict) else [obs]
        assert all(v.dtype == np.int8 and v.shape[0] == n for v in leaves)
        assert rewards.dtype == np.float64 and rewards.shape == (n,)
        assert terminated.dtype == truncated.dtype == np.bool_ and terminated.shape == truncated.shape == (n,)
        assert set(infos) == {
            *(f"{p}{k}" for p in ("", "_") for k in ("deal", "moves", "cards_on_foundations", "won", "illegal_action")),
            "action_mask",
            "_action_mask",
        }
        for key in ("deal", "moves", "cards_on_foundations"):
            assert infos[key].dtype == np.int64 and infos[key].shape == (n,)
        assert infos["won"].dtype == infos["illegal_action"].dtype == np.bool_
        assert infos["action_mask"].shape == (n, 1192) and infos["action_mask"].dtype == np.bool_
        assert all(infos["_" + k].all() for k in ("deal", "moves", "action_mask"))
        np.testing.assert_array_equal(envs.action_masks(), infos["action_mask"])


def test_returned_arrays_are_fresh_unless_copy_is_false() -> None:
    envs = native("FortyThieves-v0", 4)
    obs, infos = envs.reset(seed=1)
    before = {k: v.copy() for k, v in obs.items()}
    mask_before = infos["action_mask"].copy()
    envs.step(envs.random_legal_actions(np.random.default_rng(0)))
    assert data_equivalence(obs, before, exact=True)
    np.testing.assert_array_equal(infos["action_mask"], mask_before)
    shared = native("FortyThieves-v0", 4, copy=False, observation="flat")
    first, _ = shared.reset(seed=1)
    second = shared.step(shared.random_legal_actions(np.random.default_rng(0)))[0]
    assert second is first  # the live buffer, as documented
    # ... which holds what a copying env returns for the same seed and actions.
    copying = native("FortyThieves-v0", 4, observation="flat")
    copying.reset(seed=1)
    fresh = copying.step(copying.random_legal_actions(np.random.default_rng(0)))[0]
    np.testing.assert_array_equal(second, fresh)
    assert fresh is not copying.step(copying.random_legal_actions(np.random.default_rng(1)))[0]


# ----------------------------------------------------------- equivalence with SyncVectorEnv

# (id, keyword arguments, autoreset mode, games, steps, max_episode_steps, share of random actions)
CONFIGS = [
    ("FortyThieves-v0", {}, NEXT, 32, 500, 20, 0.03),
    ("FortyThieves-Josephine-v0", {"observation": "flat"}, SAME, 24, 400, 25, 0.03),
    ("FortyThieves-Streets-v0", {"reward": "win"}, NEXT, 24, 400, 20, 0.05),
    ("FortyThieves-Maria-v0", {"reward": "score", "illegal_action": "terminate"}, SAME, 24, 400, 40, 0.05),
    ("FortyThieves-Limited-v0", {"observation": "oracle"}, NEXT, 24, 400, 20, 0.03),
    (
        "FortyThieves-RankAndFile-v0",
        {"observation": "oracle", "reward": FoundationReward(win_bonus=0.5)},
        SAME,
        32,
        400,
        20,
        0.03,
    ),
    ("FortyThieves-Relaxed-v0", {"redeals": 2, "auto_play_safe": True}, NEXT, 24, 400, 20, 0.03),
    ("FortyThieves-v0", {"run_moves": "supermove", "deals": [1, 2, 3, 12345]}, SAME, 24, 400, 20, 0.03),
    # Long episodes with a helping hand (auto-play): games end by themselves, won or stuck.
    ("FortyThieves-v0", {"auto_play_safe": True}, NEXT, 12, 700, 1000, 0.0),
]


@pytest.mark.parametrize(("env_id", "kwargs", "mode", "n", "steps", "limit", "p_any"), CONFIGS)
def test_native_matches_sync_vector_env_step_by_step(env_id, kwargs, mode, n, steps, limit, p_any) -> None:
    a = native(env_id, n, max_episode_steps=limit, autoreset_mode=mode, **kwargs)
    b = sync(env_id, n, mode, max_episode_steps=limit, **kwargs)
    rng = np.random.default_rng(n + steps)
    out_a, out_b = a.reset(seed=11), b.reset(seed=11)
    assert data_equivalence(out_a, out_b, exact=True)
    infos = out_a[1]
    ended = terminated_count = illegal = 0
    for t in range(steps):
        actions = choose(infos["action_mask"], rng, p_any)
        out_a, out_b = a.step(actions), b.step(actions)
        assert data_equivalence(out_a, out_b, exact=True), f"step {t} differs"
        _, _, terminated, truncated, infos = out_a
        np.testing.assert_array_equal(a.action_masks(), infos["action_mask"])
        ended += int((terminated | truncated).sum())
        terminated_count += int(terminated.sum())
        illegal += int(infos["illegal_action"].sum())
        illegal += int(infos.get("final_info", {}).get("illegal_action", np.zeros(0)).sum())
    # The run must cover what it claims to: many episodes, and the paths under test.
    assert ended >= (4 if limit == 1000 else n * steps // (limit + 5))
    if limit == 1000:
        assert terminated_count == ended  # ended by the rules, not the time limit
    if p_any:
        assert illegal > 0


def test_thousands_of_episodes_across_the_configs() -> None:
    """The configs above (each a test) end this many episodes between them."""
    total = sum(n * steps // (limit + 1) for _, _, _, n, steps, limit, _ in CONFIGS if limit < 1000)
    assert total >= 2000


def test_parallel_and_serial_kernels_agree() -> None:
    n = PARALLEL_MIN_GAMES
    par = native("FortyThieves-Relaxed-v0", n, max_episode_steps=60)
    ser = native("FortyThieves-Relaxed-v0", n, max_episode_steps=60, num_threads=1)
    assert par._batch._parallel and not ser._batch._parallel
    ra, rb = np.random.default_rng(5), np.random.default_rng(5)
    assert data_equivalence(par.reset(seed=3), ser.reset(seed=3), exact=True)
    for _ in range(150):
        assert data_equivalence(
            par.step(par.random_legal_actions(ra)), ser.step(ser.random_legal_actions(rb)), exact=True
        )


def test_batch_observations_equal_the_single_game_encoder() -> None:
    """The batch's observations, refreshed step by step by the kernels, against a full encode
    of each game's state by the single-game :class:`ObservationEncoder` (itself held to a
    reference in test_encoding), on states of random play, in both buffer layouts (flat
    rows; one block per field), and the fields handed out."""
    for variant in ("classic", "rank_and_file", "relaxed", "limited", "maria"):
        for mode in ("flat", "dict", "oracle"):
            b = BatchGames(40, variant, observation=mode, max_episode_steps=200)
            b.reset(seed=2)
            reference = ObservationEncoder(b.variant, mode)
            expected = np.zeros((40, b.obs_size), dtype=np.int8)
            rng = np.random.default_rng(0)
            for _ in range(150):
                b.step(b.sample_legal(rng))  # encodes every game into b.obs
                for i in range(40):
                    reference.encode(b.states[i])
                    expected[i] = reference.buffer
                assert np.array_equal(b.flat_rows(), expected), (variant, mode)
            obs = b.observations()
            if mode == "flat":
                np.testing.assert_array_equal(obs, expected)
            else:
                for name, (start, stop, shape) in b.layout.items():
                    assert obs[name].flags.c_contiguous and obs[name].shape == (40, *shape)
                    np.testing.assert_array_equal(obs[name].reshape(40, -1), expected[:, start:stop])
            row = np.full(b.obs_size, 99, dtype=np.int8)
            encode_obs(b.states[7], b.cfg, row, flat_place(b.layout), b.params[0])  # on its own
            np.testing.assert_array_equal(row, expected[7])


# ------------------------------------------------------------------ autoreset and seeding


def _ended(envs, rng) -> tuple:
    """Step until some game's episode ends; return that step's output and the games."""
    infos = envs.reset(seed=4)[1]
    for _ in range(50):
        actions = choose(infos["action_mask"], rng, 0.0)
        actions[0] = int(np.flatnonzero(~infos["action_mask"][0])[0])  # illegal: ends game 0
        out = envs.step(actions)
        infos = out[4]
        if out[2].any() or out[3].any():
            return out
    raise AssertionError("no episode ended")


def test_next_step_autoreset() -> None:
    envs = native("FortyThieves-v0", 3, illegal_action="terminate", max_episode_steps=1000)
    rng = np.random.default_rng(0)
    _, rewards, terminated, truncated, infos = _ended(envs, rng)
    assert terminated[0] and infos["illegal_action"][0] and rewards[0] == -1 / 104
    old_deal = infos["deal"][0]
    moves = infos["moves"].copy()
    _, rewards, terminated, truncated, infos = envs.step(np.array([5, 0, 0]))  # game 0's action is ignored
    assert rewards[0] == 0.0 and not terminated[0] and not truncated[0]
    assert infos["moves"][0] == 0 and infos["deal"][0] != old_deal and not infos["illegal_action"][0]
    assert (infos["moves"][1:] == moves[1:] + 1).all()  # the others played on
    assert envs.position_text(0) == format_position(deal("classic", int(infos["deal"][0])))
    assert infos["action_mask"][0].any()


def test_same_step_autoreset_and_time_limit() -> None:
    envs = native("FortyThieves-v0", 4, autoreset_mode=SAME, max_episode_steps=3)
    obs, infos = envs.reset(seed=0)
    deals = infos["deal"].copy()
    rng = np.random.default_rng(1)
    for _ in range(3):
        obs, _, terminated, truncated, infos = envs.step(choose(infos["action_mask"], rng, 0.0))
    assert truncated.all() and not terminated.any()
    assert infos["_final_obs"].all() and infos["_final_info"].all()
    final = infos["final_info"]
    assert (final["deal"] == deals).all() and (final["moves"] == 3).all()
    assert (infos["moves"] == 0).all() and (infos["deal"] != deals).all()
    for i in range(4):  # the last observation is the finished game's, the returned one the new deal's
        assert final["cards_on_foundations"][i] == int(infos["final_obs"][i]["foundations"].sum())
        assert (obs["waste"][i] == 53).all() and obs["counts"][i][0] == 64


def test_same_seed_same_batch_of_deals() -> None:
    def deals(seed, n=6, resets=4, **kw):
        envs = native("FortyThieves-v0", n, **kw)
        seq = [envs.reset(seed=seed)[1]["deal"]]
        seq += [envs.reset()[1]["deal"] for _ in range(resets - 1)]
        return np.stack(seq)

    a = deals(7)
    np.testing.assert_array_equal(a, deals(7))
    assert not (a == deals(8)).any()
    assert len(np.unique(a)) == a.size
    assert ((a >= TRAIN_RANGE[0]) & (a <= TRAIN_RANGE[1])).all()
    # Game i plays the deals of a single env seeded seed + i.
    for i in range(6):
        env = gym.make("FortyThieves-v0")
        single = [env.reset(seed=7 + i)[1]["deal"]] + [env.reset()[1]["deal"] for _ in range(3)]
        assert list(a[:, i]) == single
    assert set(deals(3, n=20, resets=3, deals="test").ravel()) <= set(SPLITS["test"])
    assert set(deals(3, n=20, resets=5, deals=[5, 6, 7]).ravel()) == {5, 6, 7}
    # A list of seeds; None keeps that game's generator.
    envs = native("FortyThieves-v0", 3)
    envs.reset(seed=[10, 20, 30])
    again = envs.reset(seed=[10, None, 30])[1]["deal"]
    first = native("FortyThieves-v0", 3).reset(seed=[10, 20, 30])[1]["deal"]
    assert again[0] == first[0] and again[2] == first[2] and again[1] != first[1]
    assert envs.np_random_seed == (10, 20, 30) and len(envs.np_random) == 3


def test_reset_options() -> None:
    envs = native("FortyThieves-Maria-v0", 3)
    _, infos = envs.reset(seed=0, options={"deal": 12345})
    assert (infos["deal"] == 12345).all()
    assert envs.position_text(2) == format_position(deal("maria", 12345))
    _, infos = envs.reset(options={"deal": [1, 2, 3]})
    assert list(infos["deal"]) == [1, 2, 3]
    mask = np.array([False, True, False])
    _, infos = envs.reset(options={"deal": [7, 8, 9], "reset_mask": mask})
    assert list(infos["deal"]) == [0, 8, 0] and list(infos["_deal"]) == [False, True, False]
    assert envs.position_text(0) == format_position(deal("maria", 1))
    for bad in ({"deal": 0}, {"deal": [1, 2]}, {"position": "x"}, {"reset_mask": np.zeros(3, bool)}):
        with pytest.raises(ValueError):
            envs.reset(options=bad)


@pytest.mark.parametrize("mode", [NEXT, SAME])
@pytest.mark.parametrize("reward", ["foundation", "win", "score"])
def test_scripted_win_from_a_position_matches_sync_vector_env(mode: AutoresetMode, reward: str) -> None:
    a = native("FortyThieves-v0", 3, autoreset_mode=mode, reward=reward)
    b = sync("FortyThieves-v0", 3, mode, reward=reward)
    options = {"position": NEAR_WIN}
    out = a.reset(seed=0, options=options)
    assert data_equivalence(out, b.reset(seed=0, options=options), exact=True)
    assert (out[1]["deal"] == 0).all() and (out[1]["cards_on_foundations"] == 99).all()
    script = [parse_move(get_variant("classic"), m) for m in NEAR_WIN_SCRIPT]
    for t in range(len(script) + 2):
        actions = np.array([script[min(t, len(script) - 1)]] * 3)
        actions[2] = script[t - 1] if 0 < t <= len(script) else 7  # game 2: one refused move first
        out = a.step(actions)
        assert data_equivalence(out, b.step(actions), exact=True), f"step {t}"
        _, rewards, terminated, _, infos = out
        won = infos["won"] if mode == NEXT else infos.get("final_info", {}).get("won", np.zeros(3, bool))
        if t == len(script) - 1:
            assert list(terminated) == [True, True, False] and list(won) == [True, True, False]
            bonus = {"foundation": 1.0 + 1 / 104, "win": 1.0, "score": 10.0}[reward]  # last card + bonus
            assert rewards[0] == pytest.approx(bonus)
        if t == len(script):
            assert terminated[2] and won[2]
            if mode == NEXT:
                assert rewards[0] == 0.0 and infos["deal"][0] > 0  # reset by this step


def test_position_option_errors() -> None:
    from forty_thieves_env import parse_position

    envs = native("FortyThieves-v0", 2)
    envs.reset(seed=0, options={"position": [NEAR_WIN, parse_position(NEAR_WIN)]})
    assert envs.position_text(1) == format_position(parse_position(NEAR_WIN))
    streets = format_position(deal("streets", 3))
    for bad, error in (
        ({"position": streets}, ValueError),
        ({"position": [NEAR_WIN]}, ValueError),
        ({"position": NEAR_WIN, "deal": 3}, ValueError),
        ({"position": 5}, TypeError),
    ):
        with pytest.raises(error):
            envs.reset(options=bad)


# ------------------------------------------------------------------------ illegal actions


def test_illegal_actions_penalize_and_raise() -> None:
    envs = native("FortyThieves-v0", 3)
    _, infos = envs.reset(seed=0)
    before = envs._batch.states.copy()
    illegal = int(np.flatnonzero(~infos["action_mask"][1])[0])
    _, rewards, terminated, _, infos = envs.step(np.array([illegal, illegal, illegal]))
    assert infos["illegal_action"][1] and rewards[1] == -1 / 104 and not terminated.any()
    np.testing.assert_array_equal(envs._batch.states, before)
    strict = native("FortyThieves-v0", 3, illegal_action="raise")
    _, infos = strict.reset(seed=0)
    before = strict._batch.states.copy()
    actions = choose(infos["action_mask"], np.random.default_rng(0), 0.0)
    actions[2] = int(np.flatnonzero(~infos["action_mask"][2])[0])
    with pytest.raises(IllegalMoveError, match="game 2: illegal move"):
        strict.step(actions)
    actions[2] = 500
    with pytest.raises(ActionSpaceError, match=r"game 2: action 500 is out of range .*Discrete\(112\)"):
        strict.step(actions)
    np.testing.assert_array_equal(strict._batch.states, before)  # no game moved


def test_render_modes() -> None:
    envs = native("FortyThieves-v0", 2, render_mode="ansi")
    envs.reset(seed=0)
    frames = envs.render()
    assert len(frames) == 2 and all(isinstance(f, str) and "deal" in f for f in frames)
    pictures = native("FortyThieves-v0", 2, render_mode="rgb_array")
    pictures.reset(seed=0)
    frames = pictures.render()
    assert len(frames) == 2 and frames[0].ndim == 3 and frames[0].dtype == np.uint8


# ------------------------------------------------------------------------- SB3 VecEnv


@pytest.mark.parametrize(
    ("env_id", "kwargs"),
    [
        ("FortyThieves-Relaxed-v0", {}),
        ("FortyThieves-Streets-v0", {"observation": "flat", "reward": "score"}),
        ("FortyThieves-RankAndFile-v0", {"observation": "oracle", "illegal_action": "terminate"}),
    ],
)
def test_sb3_vec_env_matches_dummy_vec_env(env_id: str, kwargs: dict) -> None:
    from stable_baselines3.common.vec_env import DummyVecEnv

    from forty_thieves_env.envs.sb3 import make_sb3_vec_env

    n = 6
    ours = make_sb3_vec_env(env_id, num_envs=n, seed=5, max_episode_steps=30, **kwargs)
    ref = DummyVecEnv([lambda: gym.make(env_id, max_episode_steps=30, **kwargs) for _ in range(n)])
    ref.seed(5)
    assert ours.observation_space == ref.observation_space and ours.action_space == ref.action_space
    assert data_equivalence(ours.reset(), ref.reset(), exact=True)
    rng = np.random.default_rng(3)
    ends = 0
    for t in range(200):
        masks = ours.action_masks()
        np.testing.assert_array_equal(masks, np.stack(ref.env_method("action_masks")))
        actions = choose(masks, rng, 0.05)
        (o1, r1, d1, i1), (o2, r2, d2, i2) = ours.step(actions), ref.step(actions)
        assert data_equivalence(o1, o2, exact=True), t
        assert r1.dtype == r2.dtype == np.float32 and (r1 == r2).all()
        assert d1.dtype == d2.dtype == np.bool_ and (d1 == d2).all()
        for i in np.flatnonzero(d1):
            assert data_equivalence(i1[i]["terminal_observation"], i2[i]["terminal_observation"], exact=True)
            assert i1[i]["TimeLimit.truncated"] == i2[i]["TimeLimit.truncated"]
            for key in ("deal", "moves", "cards_on_foundations", "won"):
                assert i1[i][key] == i2[i][key], key
            ends += 1
        assert all(not info for info, done in zip(i1, d1, strict=True) if not done)
    assert ends >= 20


def test_sb3_vec_env_infos_and_attributes() -> None:
    from sb3_contrib.common.maskable.utils import get_action_masks, is_masking_supported
    from stable_baselines3.common.monitor import Monitor

    from forty_thieves_env.envs.sb3 import FortyThievesSB3VecEnv

    venv = FortyThievesSB3VecEnv(4, "classic", max_episode_steps=5, reward="score")
    venv.seed(0)
    venv.reset()
    assert is_masking_supported(venv)
    masks = get_action_masks(venv)
    np.testing.assert_array_equal(masks, venv.batch.masks)
    assert masks.shape == (4, 112)
    np.testing.assert_array_equal(venv.env_method("action_masks", indices=[2]), venv.batch.masks[[2]])
    assert venv.get_attr("n_actions") == [112] * 4 and venv.env_is_wrapped(Monitor) == [True] * 4
    assert venv.env_method("legal_moves", indices=0)[0] == venv._game_legal_moves(0)
    assert venv.env_method("action_for", "s") == [0] * 4
    with pytest.raises(AttributeError):
        venv.env_method("fly")
    total = np.zeros(4)
    for _ in range(5):
        masks = venv.action_masks()
        obs, rewards, dones, infos = venv.step(np.array([np.flatnonzero(m)[0] for m in masks]))
        total += rewards
    assert dones.all()
    for i, info in enumerate(infos):
        assert info["TimeLimit.truncated"] and not info["is_success"]
        assert info["episode"]["l"] == 5 and info["episode"]["r"] == pytest.approx(total[i])
        assert info["moves"] == 5 and info["terminal_observation"]["foundations"].sum() == info["cards_on_foundations"]
    assert (obs["counts"][:, 0] == 64).all()  # new deals
    venv.set_options({"deal": 12345})
    venv.reset()
    assert venv.env_method("position_text") == [format_position(deal("classic", 12345))] * 4
    venv.set_options([{"deal": d} for d in (1, 2, 3, 4)])
    venv.reset()
    assert [venv.reset_infos[i]["deal"] for i in range(4)] == [1, 2, 3, 4]
    venv.set_options([{"deal": 1}, {}, {}, {}])
    with pytest.raises(ValueError, match="every game or to none"):
        venv.reset()


@pytest.mark.parametrize("env_id", list(ENV_IDS))
def test_maskable_ppo_on_the_native_vec_env(env_id: str, one_torch_thread) -> None:
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.vec_env import VecEnvWrapper

    from forty_thieves_env.envs.sb3 import make_sb3_vec_env

    class Checked(VecEnvWrapper):
        """Counts mask fetches and asserts every action MaskablePPO sends is legal."""

        calls = 0

        def reset(self):
            return self.venv.reset()

        def env_method(self, name, *args, indices=None, **kwargs):
            Checked.calls += 1
            return self.venv.env_method(name, *args, indices=indices, **kwargs)

        def step_async(self, actions):
            masks = self.venv.action_masks()
            assert masks[np.arange(self.num_envs), actions].all(), "an action outside the mask"
            self.venv.step_async(actions)

        def step_wait(self):
            return self.venv.step_wait()

    venv = Checked(make_sb3_vec_env(env_id, num_envs=4, seed=0, max_episode_steps=6))
    model = MaskablePPO("MultiInputPolicy", venv, n_steps=8, batch_size=32, n_epochs=1, seed=0, verbose=0)
    model.learn(32)
    assert model.num_timesteps == 32
    assert Checked.calls == 8  # one mask fetch per step, for all 4 games at once
    assert len(model.ep_info_buffer) == 4  # each game's 6-step episode, reported without a Monitor


def test_package_does_not_export_sb3_module() -> None:
    assert "sb3" not in forty_thieves_env.__all__


@pytest.mark.parametrize("n", [1, 7, 8, 9, 17, 92, 112, 158, 1192])
def test_sample_legal_picks_the_floor_u_times_count_th_legal_action(n) -> None:
    """The word-at-a-time samplers (counting, and given the count) against the plain
    definition, on every action-space width of the presets and odd ones, sparse to full
    rows, contiguous or not."""
    from forty_thieves_env.envs.sampling import sample_counted, sample_legal
    from forty_thieves_env.envs.step import G_LEGAL, G_LEN

    rng = np.random.default_rng(n)
    for p in (0.0, 0.01, 0.3, 1.0):
        wide = rng.random((300, n + 3)) < p
        for masks in (np.ascontiguousarray(wide[:, 1 : n + 1]), wide[:, 1 : n + 1]):
            u = rng.random(300)
            u[:3] = (0.0, 0.5, np.nextafter(1.0, 0.0))
            out = np.full(300, -1, dtype=np.int64)
            sample_legal(masks, u, out)
            # The batch's sampler, given each row's count (as the step keeps it).
            games = np.zeros((300, G_LEN), dtype=np.int64)
            games[:, G_LEGAL] = masks.sum(axis=1)
            counted = np.full(300, -1, dtype=np.int64)
            sample_counted(np.ascontiguousarray(masks), games, u, counted)
            for i in range(300):
                legal = np.flatnonzero(masks[i])
                want = legal[min(int(u[i] * len(legal)), len(legal) - 1)] if len(legal) else 0
                assert out[i] == want
                assert counted[i] == want
