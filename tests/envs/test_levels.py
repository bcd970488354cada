"""The difficulty levels (Easy, Normal, Hard) as rules, deal pools and registered ids.

The level ids also run through every id-parametrised check of ``test_env.py`` (check_env,
SB3's checker, the mask against the engine over random play).
"""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

import forty_thieves_env  # noqa: F401 (registers the ids)
from forty_thieves_env import get_variant
from forty_thieves_env.envs.levels import LEVELS, get_level, level_of
from forty_thieves_env.envs.registration import LEVEL_IDS
from forty_thieves_env.envs.vector import FortyThievesVectorEnv
from forty_thieves_env.envs.winnable import winnable_deals

# A run of two spades (9S 8S) on column 1 and a 10S on column 2, with one empty column (10).
RUN_OF_TWO = """\
variant: classic run_moves=supermove redeals=1
redeals: 1
stock: 8S 9S TS
waste:
foundations: KC KC KH KH KD KD
1: 9S 8S
2: TS
3: 7S 2S
4: 6S 3S
5: 5S 4S
6: 4S 5S
7: 3S 6S
8: KS AS 7S
9: KS QS QS JS JS AS 2S
10:
"""


def test_levels_have_the_rule_pages_rules() -> None:
    easy, normal, hard = (get_level(n) for n in ("easy", "Normal", "HARD"))
    assert easy.variant == normal.variant == get_variant("classic", redeals=1, run_moves="supermove")
    assert hard.variant == get_variant("classic")
    assert (easy.winnable_only, normal.winnable_only, hard.winnable_only) == (True, False, False)
    assert level_of(get_variant("classic"), False) is hard
    assert level_of(get_variant("classic"), True) is None
    with pytest.raises(ValueError, match="levels are easy, normal, hard"):
        get_level("expert")


def test_level_ids_are_registered_with_the_level_rules() -> None:
    assert sorted(LEVEL_IDS.values()) == sorted(LEVELS)
    for env_id, name in LEVEL_IDS.items():
        env = gym.make(env_id)
        assert env.unwrapped.variant == LEVELS[name].variant
        assert env.unwrapped.winnable_only == LEVELS[name].winnable_only
        assert env.spec.max_episode_steps == gym.spec("FortyThieves-v0").max_episode_steps


def test_easy_deals_only_proven_winnable_deals_and_the_others_any() -> None:
    pool = set(winnable_deals("classic").tolist())
    easy, normal = gym.make("FortyThieves-Easy-v0"), gym.make("FortyThieves-Normal-v0")
    easy_deals = [easy.reset(seed=s)[1]["deal"] for s in range(20)]
    normal_deals = [normal.reset(seed=s)[1]["deal"] for s in range(20)]
    assert set(easy_deals) <= pool
    assert not set(normal_deals) <= pool  # 20 draws from ~2**31 deals all in a set of ~170: never


def test_runs_move_within_the_empty_column_cap() -> None:
    """Normal and Easy carry a run of two onto a card with one empty column, not into the empty one."""
    env = gym.make("FortyThieves-Normal-v0", illegal_action="raise")
    _, info = env.reset(options={"position": RUN_OF_TWO})
    base = env.unwrapped
    assert info["action_mask"][base.action_for("1>2x2")]
    assert not info["action_mask"][base.action_for("1>10x2")]  # the empty target is no stop: cap 1
    hard = gym.make("FortyThieves-Hard-v0")
    with pytest.raises(ValueError):
        hard.unwrapped.action_for("1>2x2")  # classic has no run moves at all


def test_normal_redeals_once_and_hard_never() -> None:
    for env_id, redeals in (("FortyThieves-Normal-v0", 1), ("FortyThieves-Hard-v0", 0)):
        env = gym.make(env_id, max_episode_steps=None)
        obs, info = env.reset(options={"deal": 5})
        base = env.unwrapped
        for _ in range(base.variant.stock_size):  # turn the whole stock
            obs, *_, info = env.step(0)
        assert obs["counts"][0] == 0 and bool(info["action_mask"][0]) == (redeals == 1)


@pytest.mark.parametrize("env_id", list(LEVEL_IDS))
def test_make_vec_gives_the_native_env_with_the_level(env_id: str) -> None:
    envs = gym.make_vec(env_id, num_envs=3)
    assert isinstance(envs, FortyThievesVectorEnv)
    level = LEVELS[LEVEL_IDS[env_id]]
    assert envs.variant == level.variant
    obs, info = envs.reset(seed=3)
    if level.winnable_only:
        assert np.isin(info["deal"], winnable_deals("classic")).all()
    for _ in range(30):
        actions = envs.random_legal_actions()
        obs, _, _, _, info = envs.step(actions)
        assert envs.single_observation_space.contains({k: v[0] for k, v in obs.items()})
