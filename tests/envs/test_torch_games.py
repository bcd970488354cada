"""``TorchGames``: the batch engine as torch tensors, held to the native vector env step by step."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
import torch
from gymnasium.vector import AutoresetMode

import forty_thieves_env  # noqa: F401  (registers the ids)
from forty_thieves_env.envs.torch_games import TorchGames, torch_device


@pytest.mark.parametrize(
    ("env_id", "kwargs", "limit"),
    [
        ("FortyThieves-v0", {}, 40),
        ("FortyThieves-v0", {"observation": "oracle"}, 1000),
        ("FortyThieves-Relaxed-v0", {"observation": "flat"}, 25),
        ("FortyThieves-RankAndFile-v0", {"reward": "score"}, 60),
    ],
)
def test_same_trajectories_as_the_native_vector_env(env_id: str, kwargs: dict, limit: int) -> None:
    n, steps = 16, 150
    games = TorchGames(n, env_id, seed=7, max_episode_steps=limit, **kwargs)
    ref = gym.make_vec(
        env_id,
        num_envs=n,
        vectorization_mode="vector_entry_point",
        autoreset_mode=AutoresetMode.SAME_STEP,
        max_episode_steps=limit,
        **kwargs,
    )
    obs, info = games.reset()
    ref_obs, ref_info = ref.reset(seed=7)
    rng = np.random.default_rng(0)
    ended = 0
    for _ in range(steps):
        _compare(obs, ref_obs)
        assert np.array_equal(info["action_mask"].numpy(), ref_info["action_mask"])
        assert np.array_equal(info["deal"].numpy(), ref_info["deal"])
        actions = games.random_actions(rng)
        obs, rewards, terminated, truncated, info = games.step(actions)
        ref_obs, ref_rewards, ref_term, ref_trunc, ref_info = ref.step(actions.numpy())
        assert np.array_equal(rewards.numpy(), ref_rewards)
        assert np.array_equal(terminated.numpy(), ref_term) and np.array_equal(truncated.numpy(), ref_trunc)
        assert np.array_equal(info["cards_on_foundations"].numpy(), ref_info["cards_on_foundations"])
        for i in np.flatnonzero(ref_term | ref_trunc):
            ended += 1
            last = ref_info["final_obs"][i]
            mine = info["final_obs"]
            if isinstance(last, dict):
                for k, v in last.items():
                    assert np.array_equal(mine[k][i].numpy(), v), k
            else:
                assert np.array_equal(mine[i].numpy(), last)
            assert info["final_cards"][i] == ref_info["final_info"]["cards_on_foundations"][i]
            assert info["won"][i] == ref_info["final_info"]["won"][i]
    assert ended > 0, "no episode ended: the autoreset was not exercised"
    ref.close()


def _compare(obs: object, ref: object) -> None:
    if isinstance(ref, dict):
        assert isinstance(obs, dict) and set(obs) == set(ref)
        for k, v in ref.items():
            assert np.array_equal(obs[k].numpy(), v), k
    else:
        assert np.array_equal(obs.numpy(), ref)


def test_info_keys_shared_with_the_gymnasium_env_have_its_names() -> None:
    env_info = gym.make("FortyThieves-v0").reset(seed=0)[1]
    games = TorchGames(2, "FortyThieves-v0", seed=0)
    _, info = games.reset()
    assert set(env_info) <= set(info), set(env_info) - set(info)  # cards_on_foundations, illegal_action, ...
    assert info["cards_on_foundations"].tolist() == [env_info["cards_on_foundations"]] * 2 == [0, 0]
    mask = info["action_mask"]
    refused = int(torch.nonzero(~mask[0])[0, 0])  # an action outside game 0's mask
    games.step(torch.tensor([refused, int(torch.nonzero(mask[1])[0, 0])]))
    assert info["illegal_action"].tolist() == [True, False]


def test_tensors_are_views_of_the_live_arrays() -> None:
    games = TorchGames(4, "classic", seed=0)
    assert games.num_envs == games.num_games == 4  # num_games: the alias kept for older code
    obs, info = games.reset()
    before = obs["waste"].clone()
    ptr = obs["waste"].data_ptr()
    turn = torch.zeros(4, dtype=torch.int64)  # action 0 turns the stock: the waste changes
    obs2, rewards, _, _, info2 = games.step(turn)
    assert obs2 is obs and info2 is info and obs["waste"].data_ptr() == ptr
    assert not torch.equal(before, obs["waste"]), "the view did not follow the step"
    assert rewards.data_ptr() == torch.from_numpy(games.games.rewards).data_ptr()
    assert info["episode_return"].dtype == torch.float64 and info["action_mask"].dtype == torch.bool


def test_deals_follow_the_seed_and_the_deal_option() -> None:
    a = TorchGames(3, "FortyThieves-Josephine-v0", seed=11)
    b = TorchGames(3, "josephine", seed=11)
    assert torch.equal(a.reset()[1]["deal"], b.reset()[1]["deal"])
    _, info = a.reset(deal=[5, 6, 7])
    assert info["deal"].tolist() == [5, 6, 7]
    one = gym.make("FortyThieves-Josephine-v0")
    assert one.reset(seed=12)[1]["deal"] == int(b.reset(seed=11)[1]["deal"][1])


def test_bad_actions_and_devices_are_refused() -> None:
    games = TorchGames(2, "classic", seed=0)
    games.reset()
    with pytest.raises(TypeError, match="torch tensor"):
        games.step(np.zeros(2, dtype=np.int64))
    with pytest.raises(TypeError, match="integers"):
        games.step(torch.zeros(2))
    with pytest.raises(ValueError, match="2"):
        games.step(torch.zeros(3, dtype=torch.int64))
    games.step(torch.zeros(2, dtype=torch.int32))  # other integer types are taken
    with pytest.raises(ValueError, match="'cpu' or 'cuda'"):
        TorchGames(2, "classic", device="mps")
    with pytest.raises(ValueError, match="'cpu' or 'cuda'"):
        torch_device("gpu")


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the error on a machine without a GPU")
def test_cuda_without_a_gpu_says_what_is_missing() -> None:
    with pytest.raises(ValueError, match=r"device='cuda'.*no CUDA GPU"):
        TorchGames(2, "classic", device="cuda")


@pytest.mark.cuda
@pytest.mark.parametrize("env_id", ["FortyThieves-v0", "FortyThieves-RankAndFile-v0"])
def test_cuda_tensors_follow_the_cpu_games(env_id: str) -> None:
    """On a GPU: the same trajectories as on the CPU, the tensors on the device and zero-copy."""
    n = 512
    cpu = TorchGames(n, env_id, seed=3, max_episode_steps=50, observation="oracle")
    gpu = TorchGames(n, env_id, device="cuda", seed=3, max_episode_steps=50, observation="oracle")
    obs_c, info_c = cpu.reset()
    obs_g, info_g = gpu.reset()
    assert obs_g["tableau"].device.type == "cuda" and info_g["action_mask"].device.type == "cuda"
    ptr = obs_g["tableau"].data_ptr()
    rng = np.random.default_rng(1)
    for _ in range(120):
        for k in obs_c:
            assert torch.equal(obs_c[k], obs_g[k].cpu()), k
        assert torch.equal(info_c["action_mask"], info_g["action_mask"].cpu())
        actions = cpu.random_actions(rng)
        obs_c, r_c, te_c, tr_c, info_c = cpu.step(actions)
        obs_g, r_g, te_g, tr_g, info_g = gpu.step(actions.cuda())
        assert torch.equal(r_c, r_g.cpu()) and torch.equal(te_c, te_g.cpu()) and torch.equal(tr_c, tr_g.cpu())
        assert torch.equal(info_c["deal"], info_g["deal"].cpu())
    assert obs_g["tableau"].data_ptr() == ptr, "the observation tensor was copied"
