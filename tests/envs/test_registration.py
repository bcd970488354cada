"""One function turns an env id into its variant and options; every id, the levels' included, is
made by it: gym.make, the SB3 vector env and the torch games agree."""

from __future__ import annotations

import gymnasium as gym
import pytest

import forty_thieves_env  # noqa: F401  (registers the ids)
from forty_thieves_env.engine.variants import get_variant
from forty_thieves_env.envs.levels import LEVELS
from forty_thieves_env.envs.registration import ALL_IDS, ENV_IDS, LEVEL_IDS, id_kwargs, id_variant, is_env_id
from forty_thieves_env.envs.sb3 import make_sb3_vec_env


def test_every_id_is_registered_with_its_kwargs() -> None:
    assert set(ALL_IDS) == set(ENV_IDS) | set(LEVEL_IDS)
    for env_id in ALL_IDS:
        assert gym.spec(env_id).kwargs == id_kwargs(env_id)


def test_a_preset_id_is_its_preset() -> None:
    assert id_kwargs("FortyThieves-Relaxed-v0") == {"variant": "relaxed"}
    assert id_variant("FortyThieves-Relaxed-v0") == (get_variant("relaxed"), {})


def test_a_level_id_is_its_rules_and_deal_pool() -> None:
    rules, options = id_variant("FortyThieves-Easy-v0")
    assert rules == LEVELS["easy"].variant
    assert (rules.redeals, rules.run_moves) == (1, "supermove")
    assert options == {"winnable_only": True}
    assert id_variant("FortyThieves-Hard-v0") == (get_variant("classic"), {"winnable_only": False})


def test_an_unknown_id_is_refused_naming_the_ids() -> None:
    assert not is_env_id("classic")
    with pytest.raises(ValueError, match=r"unknown env id 'FortyThieves-v9'; env ids are FortyThieves-v0, .*Easy-v0"):
        id_kwargs("FortyThieves-v9")


@pytest.mark.parametrize("env_id", ["FortyThieves-Easy-v0", "FortyThieves-Relaxed-v0"])
def test_the_vector_envs_play_the_ids_rules(env_id: str) -> None:
    rules, _ = id_variant(env_id)
    venv = make_sb3_vec_env(env_id, num_envs=2, seed=0)
    assert venv.variant == rules
    assert gym.make(env_id).unwrapped.variant == rules
    torch_games = pytest.importorskip("forty_thieves_env.envs.torch_games")
    assert torch_games.TorchGames(2, env_id).variant == rules
