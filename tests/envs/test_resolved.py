"""ResolvedEnv: an env id and a run's options, checked once, and every env class built from them."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

from forty_thieves_env.envs.registration import ALL_IDS, id_variant
from forty_thieves_env.envs.resolved import ResolvedEnv


def test_an_id_with_options_is_its_rules_with_the_options() -> None:
    given = {"redeals": 1, "observation": "oracle", "reward": "win"}
    env = ResolvedEnv.resolve("FortyThieves-v0", given)
    assert env.variant.redeals == 1 and env.variant.name == "classic"
    assert env.observation == "oracle" and type(env.options.reward).__name__ == "WinReward"
    assert env.describe() == "variant 'classic' with redeals=1 (FortyThieves-v0)"
    assert env.record() == {"env_id": "FortyThieves-v0", "env_kwargs": given}
    assert ResolvedEnv.resolve(**env.record()) == env


@pytest.mark.parametrize("env_id", ALL_IDS)
def test_every_id_resolves_to_its_own_rules(env_id: str) -> None:
    env = ResolvedEnv.resolve(env_id)
    rules, options = id_variant(env_id)
    assert env.variant == rules
    assert env.options.winnable_only == options.get("winnable_only", False)
    assert env.env_kwargs == {} and env.describe().endswith(f"({env_id})")


@pytest.mark.parametrize(
    ("env_id", "kwargs", "error", "message"),
    [
        ("FortyThieves-v9", {}, ValueError, r"unknown env id 'FortyThieves-v9'; env ids are FortyThieves-v0"),
        ("FortyThieves-v0", {"redeal": 1}, TypeError, r"^env_kwargs: .*redeal"),
        ("FortyThieves-v0", {"redeals": -1}, ValueError, r"^env_kwargs: .*redeals"),
        ("FortyThieves-v0", {"reward": "nope"}, ValueError, r"^env_kwargs: unknown reward 'nope'"),
        ("FortyThieves-v0", {"variant": "relaxed"}, ValueError, r"'variant' is set by the env id \(FortyThieves-v0"),
    ],
)
def test_bad_options_are_refused_naming_env_kwargs(env_id: str, kwargs: dict, error: type, message: str) -> None:
    with pytest.raises(error, match=message):
        ResolvedEnv.resolve(env_id, kwargs)


def test_derive_changes_options_and_checks_them_again() -> None:
    env = ResolvedEnv.resolve("FortyThieves-Relaxed-v0", {"observation": "oracle"})
    player = env.derive(observation="dict")
    assert player.observation == "dict" and player.variant == env.variant
    assert env.derive(observation=None).env_kwargs == {}  # None removes an option
    with pytest.raises(ValueError, match="env_kwargs"):
        env.derive(observation="pixels")
    assert env.env_kwargs == {"observation": "oracle"}  # the original is frozen


def test_it_pickles_equal_and_hashes_by_id_and_options() -> None:
    env = ResolvedEnv.resolve("FortyThieves-Streets-v0", {"redeals": 2})
    back = pickle.loads(pickle.dumps(env))
    assert back == env and hash(back) == hash(env)
    assert back != ResolvedEnv.resolve("FortyThieves-Streets-v0")
    with pytest.raises(TypeError):
        env.env_kwargs["redeals"] = 0  # type: ignore[index]


def test_every_env_class_plays_the_resolved_rules() -> None:
    env = ResolvedEnv.resolve("FortyThieves-v0", {"redeals": 1, "observation": "flat"})
    single = env.make()
    assert single.variant.redeals == 1 and single.observation_mode == "flat"
    vec = env.sb3_vec_env(3, seed=4, num_threads=1)
    assert vec.num_envs == 3 and vec.variant.redeals == 1 and vec.max_episode_steps == 1000
    obs = vec.reset()
    assert obs.shape[0] == 3
    torch = pytest.importorskip("torch")
    games = env.torch_games(2, seed=4, num_threads=1)
    games.reset()
    assert games.variant.redeals == 1 and isinstance(games.obs, torch.Tensor)
    # The same deals as a single env seeded alike.
    single.reset(seed=4)
    np.testing.assert_array_equal(games.obs[0].numpy(), single.reset(seed=4)[0])
