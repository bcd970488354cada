"""``mask_in_observation=True``: the action mask inside the observation, in every environment.

A ``Dict`` observation gets an ``action_mask`` key (``int8`` 0/1), a ``flat`` row ends with the
mask. Every environment is held to the same things, step by step over random games (legal and
refused actions, autoresets): the observation space contains the observation, the mask in the
observation equals ``info["action_mask"]``, and the rest of the observation is exactly what the
environment returns without the option (which itself is unchanged). The native vector env and
the SB3 ``VecEnv`` are also held to ``SyncVectorEnv`` / ``DummyVecEnv`` of single envs with the
option, final observations included.
"""

from __future__ import annotations

import pickle

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import data_equivalence
from gymnasium.vector import AutoresetMode

import forty_thieves_env  # noqa: F401  (registers the ids)
from forty_thieves_env import get_variant
from forty_thieves_env.envs.batch import BatchGames
from forty_thieves_env.envs.env import FortyThievesEnv
from forty_thieves_env.envs.observation import (
    MASK_KEY,
    flat_mask_start,
    observation_layout,
    observation_space,
    split_flat,
)

NEXT, SAME = AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP
MODES = ["dict", "flat", "oracle"]


def choose(masks: np.ndarray, rng: np.random.Generator, p_any: float = 0.05) -> np.ndarray:
    """A random legal action per row of ``masks`` (``(N, n)`` or ``(n,)``); with probability
    ``p_any`` any action instead (a refused one, mostly)."""
    rows = np.atleast_2d(masks)
    out = np.zeros(rows.shape[0], dtype=np.int64)
    for i, row in enumerate(rows):
        legal = np.flatnonzero(row)
        out[i] = legal[rng.integers(legal.size)] if legal.size and rng.random() >= p_any else rng.integers(row.size)
    return out


def split(obs, variant, mode: str):
    """``(the observation without its mask, the mask as bool)`` of one observation or a batch."""
    if mode == "flat":
        fields, mask = split_flat(obs, variant)
        return fields, mask.view(np.bool_)
    rest = {k: v for k, v in obs.items() if k != MASK_KEY}
    return rest, obs[MASK_KEY].view(np.bool_)


# ------------------------------------------------------------------------------ spaces


@pytest.mark.parametrize("preset", ["classic", "josephine"])
def test_spaces_and_the_flat_layout(preset: str) -> None:
    v = get_variant(preset)
    n = int(FortyThievesEnv(v).n_actions)
    c, d, t = v.columns, v.max_depth, v.stock_size
    f = c * d + t + 10
    # Off: the spaces of before, with no mask anywhere.
    assert set(observation_space(v, "dict").spaces) == {"tableau", "waste", "foundations", "counts"}
    assert observation_space(v, "flat").shape == (f,)
    assert observation_space(v, "dict", False) == observation_space(v, "dict")
    assert MASK_KEY not in observation_layout(v, "flat")
    # On: an int8 0/1 Box of n, as a Dict key or n more entries of the flat Box.
    for mode in ("dict", "oracle"):
        space = observation_space(v, mode, True)
        box = space[MASK_KEY]
        assert isinstance(box, gym.spaces.Box) and box.shape == (n,) and box.dtype == np.int8
        assert (box.low == 0).all() and (box.high == 1).all()
        assert set(space.spaces) - set(observation_space(v, mode).spaces) == {MASK_KEY}
    flat = observation_space(v, "flat", True)
    assert flat.shape == (f + n,) and flat.dtype == np.int8
    assert (flat.high[f:] == 1).all() and (flat.high[:f] == observation_space(v, "flat").high).all()
    assert flat_mask_start(v) == f
    assert observation_layout(v, "flat", True)[MASK_KEY] == (f, f + n, (n,))
    assert MASK_KEY not in observation_layout(v, "dict", True)  # a Dict's mask is not in the encoder's row


# ------------------------------------------------------------------------------ single env


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("env_id", ["FortyThieves-v0", "FortyThieves-Limited-v0"])
def test_single_env_mask_equals_info_and_the_rest_is_unchanged(env_id: str, mode: str) -> None:
    on = gym.make(env_id, observation=mode, mask_in_observation=True, max_episode_steps=60)
    off = gym.make(env_id, observation=mode, max_episode_steps=60)
    v = on.unwrapped.variant
    assert on.unwrapped.observation_space == observation_space(v, mode, True)
    assert off.unwrapped.observation_space == observation_space(v, mode)
    rng = np.random.default_rng(7)
    steps = 0
    for game in range(4):
        (obs, info), (ref, ref_info) = on.reset(seed=game), off.reset(seed=game)
        done = False
        while not done:
            assert on.observation_space.contains(obs)
            rest, mask = split(obs, v, mode)
            np.testing.assert_array_equal(mask, info["action_mask"])
            assert data_equivalence(rest, ref, exact=True)
            assert data_equivalence({**info, "action_mask": info["action_mask"].copy()}, ref_info, exact=True)
            action = int(choose(info["action_mask"], rng)[0])
            obs, r, terminated, truncated, info = on.step(action)
            ref, ref_r, ref_term, ref_trunc, ref_info = off.step(action)
            assert (r, terminated, truncated) == (ref_r, ref_term, ref_trunc)
            done = terminated or truncated
            steps += 1
        # The last observation too: its mask is the info's (all False once terminated).
        np.testing.assert_array_equal(split(obs, v, mode)[1], info["action_mask"])
        assert data_equivalence(split(obs, v, mode)[0], ref, exact=True)
    assert steps > 100


def test_single_env_observations_are_fresh_and_check_env_passes() -> None:
    from gymnasium.utils.env_checker import check_env

    for mode in MODES:
        env = gym.make("FortyThieves-v0", observation=mode, mask_in_observation=True)
        check_env(env.unwrapped, skip_render_check=True)
        obs, _ = env.reset(seed=0)
        kept = split(obs, env.unwrapped.variant, mode)[1].copy()
        env.step(0)  # turn the stock: the mask changes
        np.testing.assert_array_equal(split(obs, env.unwrapped.variant, mode)[1], kept)  # not overwritten
        # A pickled copy goes on alike (the flat mask lives in the encoder's buffer: rebuilt).
        twin = pickle.loads(pickle.dumps(env.unwrapped))
        for a in (0, 0, 5):
            assert data_equivalence(twin.step(a), env.unwrapped.step(a), exact=True)


# ------------------------------------------------------------------------------ vector envs


def native(env_id: str, n: int, **kwargs):
    return gym.make_vec(env_id, num_envs=n, vectorization_mode="vector_entry_point", **kwargs)


def sync(env_id: str, n: int, mode: AutoresetMode, **kwargs):
    return gym.make_vec(env_id, num_envs=n, vectorization_mode="sync", vector_kwargs={"autoreset_mode": mode}, **kwargs)


@pytest.mark.parametrize(
    ("env_id", "observation", "mode"),
    [
        ("FortyThieves-v0", "dict", NEXT),
        ("FortyThieves-v0", "flat", SAME),
        ("FortyThieves-Josephine-v0", "flat", NEXT),
        ("FortyThieves-Maria-v0", "oracle", SAME),
    ],
)
def test_make_vec_matches_sync_vector_env_and_the_mask_equals_infos(env_id, observation, mode) -> None:
    n, limit = 12, 25
    kw = {"observation": observation, "mask_in_observation": True, "max_episode_steps": limit}
    a = native(env_id, n, autoreset_mode=mode, **kw)
    b = sync(env_id, n, mode, **kw)
    plain = native(env_id, n, autoreset_mode=mode, observation=observation, max_episode_steps=limit)
    assert a.single_observation_space == b.single_observation_space
    assert a.observation_space == b.observation_space
    v = a.unwrapped.variant
    out_a, out_b, out_p = a.reset(seed=3), b.reset(seed=3), plain.reset(seed=3)
    assert data_equivalence(out_a, out_b, exact=True)
    rng = np.random.default_rng(1)
    ended = 0
    kept = None
    for t in range(150):
        obs, infos = out_a[0], out_a[-1]
        assert a.observation_space.contains(obs)
        rest, mask = split(obs, v, observation)
        np.testing.assert_array_equal(mask, infos["action_mask"])
        if kept is not None:  # the last step's mask, still as it was: observations are fresh arrays
            np.testing.assert_array_equal(kept[0], kept[1])
        kept = (mask, mask.copy())
        assert data_equivalence(rest, out_p[0], exact=True), f"step {t}: the fields differ from the plain env's"
        actions = choose(infos["action_mask"], rng)
        out_a, out_b, out_p = a.step(actions), b.step(actions), plain.step(actions)
        assert data_equivalence(out_a, out_b, exact=True), f"step {t} differs from SyncVectorEnv"
        ended += int((out_a[2] | out_a[3]).sum())
        # The live buffer, read after a step that handed out fresh rows, has the masks too.
        live = a.unwrapped._batch.observations()
        assert data_equivalence(live, out_a[0], exact=True)
    assert ended >= n  # autoresets (and, SAME_STEP, final observations with their masks) were exercised


@pytest.mark.parametrize("observation", MODES)
def test_make_vec_with_copy_false(observation: str) -> None:
    kw = {"observation": observation, "mask_in_observation": True, "max_episode_steps": 20}
    shared = native("FortyThieves-v0", 6, copy=False, **kw)
    copying = native("FortyThieves-v0", 6, **kw)
    first, _ = shared.reset(seed=2)
    copying.reset(seed=2)
    rng = np.random.default_rng(0)
    v = shared.unwrapped.variant
    for _ in range(60):
        actions = shared.unwrapped.random_legal_actions(rng)
        obs, *_, infos = shared.step(actions)
        ref, *_, ref_infos = copying.step(actions)
        assert data_equivalence(obs, ref, exact=True) and data_equivalence(infos, ref_infos, exact=True)
        np.testing.assert_array_equal(split(obs, v, observation)[1], infos["action_mask"])
    if observation == "flat":
        assert obs is first  # the live buffer, as without the option


@pytest.mark.parametrize("observation", ["dict", "flat"])
def test_sb3_vec_env_matches_dummy_vec_env(observation: str) -> None:
    from stable_baselines3.common.vec_env import DummyVecEnv

    from forty_thieves_env.envs.sb3 import make_sb3_vec_env

    n, env_id = 5, "FortyThieves-Streets-v0"
    kw = {"observation": observation, "mask_in_observation": True, "max_episode_steps": 30}
    ours = make_sb3_vec_env(env_id, num_envs=n, seed=5, **kw)
    ref = DummyVecEnv([lambda: gym.make(env_id, **kw) for _ in range(n)])
    ref.seed(5)
    assert ours.observation_space == ref.observation_space
    obs = ours.reset()
    assert data_equivalence(obs, ref.reset(), exact=True)
    v = ours.variant
    rng = np.random.default_rng(3)
    ends = 0
    for _ in range(120):
        np.testing.assert_array_equal(split(obs, v, observation)[1], ours.action_masks())
        actions = choose(ours.action_masks(), rng)
        obs, rewards, dones, infos = ours.step(actions)
        r_obs, r_rewards, r_dones, r_infos = ref.step(actions)
        assert data_equivalence((obs, rewards, dones), (r_obs, r_rewards, r_dones), exact=True)
        for i in np.flatnonzero(dones):
            ends += 1
            assert data_equivalence(infos[i]["terminal_observation"], r_infos[i]["terminal_observation"], exact=True)
    assert ends > 0


# ------------------------------------------------------------------------------ batch engines


def test_batch_flat_rows_end_with_the_masks_after_every_kind_of_step() -> None:
    b = BatchGames(9, "classic", observation="flat", mask_in_observation=True, autoreset="same_step")
    start = flat_mask_start(b.variant)
    assert b.obs_size == start + b.n_actions
    rows = b.obs.reshape(9, b.obs_size)
    b.reset(seed=0)
    np.testing.assert_array_equal(rows[:, start:].view(np.bool_), b.masks)
    rng = np.random.default_rng(0)
    for t in range(40):
        b.step(b.sample_legal(rng), emit=t % 3 > 0, emit_obs=t % 3 == 1)
        if t % 3 == 1:  # fresh rows handed out, with the masks in them
            out = b.out_obs.reshape(9, b.obs_size)
            np.testing.assert_array_equal(out[:, start:].view(np.bool_), b.masks)
            assert np.shares_memory(b.out_masks, b.out_obs)  # written once, into the rows
        np.testing.assert_array_equal(b.flat_rows()[:, start:].view(np.bool_), b.masks)
    b.step(b.sample_legal(rng), emit=True)  # the live rows' masks are now behind ...
    b.reset(deal=5, which=np.arange(9) % 2 == 0)  # ... and a reset brings them up to date
    np.testing.assert_array_equal(rows[:, start:].view(np.bool_), b.masks)
    b.step(b.sample_legal(rng), emit=True)
    np.testing.assert_array_equal(b.observations()[:, start:].view(np.bool_), b.masks)  # so does a read


def test_torch_games_mask_equals_info_and_final_observations_match_make_vec() -> None:
    import torch

    from forty_thieves_env.envs.torch_games import TorchGames

    for observation in MODES:
        kw = {"observation": observation, "mask_in_observation": True, "max_episode_steps": 15}
        games = TorchGames(8, "FortyThieves-v0", seed=4, **kw)
        ref = native("FortyThieves-v0", 8, autoreset_mode=SAME, **kw)
        assert games.observation_space() == ref.single_observation_space
        obs, info = games.reset()
        ref_obs, _ = ref.reset(seed=4)
        v = games.variant
        rng = np.random.default_rng(0)
        ended = 0
        for _ in range(40):
            numpy_obs = obs.numpy() if isinstance(obs, torch.Tensor) else {k: x.numpy() for k, x in obs.items()}
            assert data_equivalence(numpy_obs, ref_obs, exact=True)
            np.testing.assert_array_equal(split(numpy_obs, v, observation)[1], info["action_mask"].numpy())
            actions = games.random_actions(rng)
            obs, _, terminated, truncated, info = games.step(actions)
            ref_obs, _, _, _, ref_info = ref.step(actions.numpy())
            for i in np.flatnonzero((terminated | truncated).numpy()):
                ended += 1
                final = info["final_obs"]
                mine = (
                    final[i].numpy() if isinstance(final, torch.Tensor) else {k: x[i].numpy() for k, x in final.items()}
                )
                assert data_equivalence(mine, ref_info["final_obs"][i], exact=True)
        assert ended > 0, observation


def test_cuda_twin_keeps_the_flat_rows_masks_as_the_cpu_batch() -> None:
    from cuda_twin import check_parity, twin_games

    for autoreset in ("same_step", "next_step"):
        counts = check_parity(
            twin_games,
            8,
            60,
            "classic",
            autoreset=autoreset,
            max_episode_steps=12,
            observation="flat",
            mask_in_observation=True,
        )
        assert counts["ended"] > 0
    gpu = twin_games(4, "classic", observation="flat", mask_in_observation=True)
    gpu.reset(seed=0)
    gpu.step(np.zeros(4, dtype=np.int64))
    host = gpu.to_host()
    start = flat_mask_start(host.variant)
    np.testing.assert_array_equal(host.obs.reshape(4, -1)[:, start:].view(np.bool_), host.masks)


# ------------------------------------------------------------------------------ refusals


@pytest.mark.parametrize("bad", ["yes", 1, None, np.int64(1)])
def test_a_bad_value_is_refused_naming_the_option(bad) -> None:
    from forty_thieves_env.envs.torch_games import TorchGames

    makers = [
        lambda: gym.make("FortyThieves-v0", mask_in_observation=bad),
        lambda: gym.make_vec("FortyThieves-v0", num_envs=2, mask_in_observation=bad),
        lambda: TorchGames(2, "classic", mask_in_observation=bad),
        lambda: BatchGames(2, "classic", mask_in_observation=bad),
    ]
    for make in makers:
        with pytest.raises(TypeError, match=r"mask_in_observation must be True or False, got"):
            make()
