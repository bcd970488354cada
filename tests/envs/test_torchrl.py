"""TorchRL as its users reach for it (docs/recipes.md, "TorchRL"): ``GymEnv`` by id and ``GymWrapper`` of the
native vector env pass ``check_env_specs``, and with the action mask read into the tensordict and TorchRL's
``ActionMask`` transform a random rollout plays only legal moves."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("torchrl")

import gymnasium as gym  # noqa: E402
from gymnasium.vector import AutoresetMode  # noqa: E402
from torchrl.data import Binary  # noqa: E402
from torchrl.envs import ActionMask, GymEnv, GymWrapper, TransformedEnv  # noqa: E402
from torchrl.envs.libs.gym import default_info_dict_reader  # noqa: E402
from torchrl.envs.utils import check_env_specs  # noqa: E402

import forty_thieves_env  # noqa: E402, F401 (registers the ids)

N_ACTIONS = 112  # FortyThieves-v0 (classic)


def with_mask(env, masked: bool = True):
    """``info["action_mask"]`` into the tensordict, and (``masked``) the ``ActionMask`` transform."""
    spec = Binary(n=N_ACTIONS, shape=(*env.batch_size, N_ACTIONS), dtype=torch.bool)
    env.set_info_dict_reader(default_info_dict_reader(["action_mask"], spec={"action_mask": spec}))
    return TransformedEnv(env, ActionMask()) if masked else env


def illegal_moves(td) -> int:
    """Actions (one-hot) outside the mask of the observation they were chosen on."""
    return int((~(td["action_mask"] & td["action"].bool()).any(-1)).sum())


def single():
    return GymEnv("FortyThieves-v0")  # passes frameskip first: needs the TypeError for an unknown keyword


def vector():
    return GymWrapper(gym.make_vec("FortyThieves-v0", num_envs=8, autoreset_mode=AutoresetMode.SAME_STEP))


@pytest.mark.parametrize("make", [single, vector], ids=["GymEnv", "GymWrapper-vector"])
def test_masked_random_rollout_takes_no_illegal_move(make):
    env = with_mask(make())
    check_env_specs(env)
    torch.manual_seed(0)
    td = env.rollout(1000, break_when_any_done=False)
    assert td["action"].shape[-2:] == (1000, N_ACTIONS)
    assert td["next", "done"].any()  # games ended and were reset within the rollout
    assert illegal_moves(td) == 0
    unmasked = with_mask(make(), masked=False).rollout(200, break_when_any_done=False)
    assert illegal_moves(unmasked) > 0  # the count above can see an illegal move
