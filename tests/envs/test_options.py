"""The constructor options, checked once (:mod:`forty_thieves_env.envs.options`) for every env."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import run_fresh

from forty_thieves_env.envs.batch import BatchGames
from forty_thieves_env.envs.env import FortyThievesEnv
from forty_thieves_env.envs.options import EnvOptions
from forty_thieves_env.envs.rewards import WinReward
from forty_thieves_env.envs.vector import FortyThievesVectorEnv

BAD = [
    ({"variant": "klondike"}, "unknown variant"),
    ({"colums": 9}, "unknown variant option"),
    ({"observation": "pixels"}, "observation must be one of 'dict', 'flat', 'oracle', got 'pixels'"),
    ({"reward": "points"}, "unknown reward"),
    ({"illegal_action": "ignore"}, "illegal_action must be one of 'penalize', 'raise', 'terminate', got 'ignore'"),
    ({"render_mode": "human"}, "render_mode must be one of 'ansi', 'rgb_array', got 'human'"),
    ({"deals": []}, "non-empty sequence"),
    ({"deals": [0, 5]}, r"deals\[0\] must be an integer 1\.\.9223372036854775807, got 0"),
]


@pytest.mark.parametrize(("kwargs", "message"), BAD)
def test_every_env_refuses_bad_options_with_the_same_message(kwargs, message) -> None:
    for make in (EnvOptions.make, FortyThievesEnv, lambda **k: FortyThievesVectorEnv(2, **k)):
        with pytest.raises(ValueError, match=message):
            make(**kwargs)


def test_options_are_made_once_and_shared() -> None:
    opts = EnvOptions.make("classic", observation="flat", reward="win", deals="test", redeals=1)
    assert (opts.variant.redeals, opts.observation, opts.illegal_action) == (1, "flat", "penalize")
    assert isinstance(opts.reward, WinReward)
    assert opts.deals.dtype == np.int64 and opts.deals[0] == 1
    games = BatchGames(3, opts)
    assert games.options is opts and games.variant == opts.variant
    assert EnvOptions.of(opts) is opts
    with pytest.raises(TypeError, match="not both"):
        EnvOptions.of(opts, reward="win")


def test_sb3_adapter_without_sb3_names_the_extra() -> None:
    run_fresh(
        "import sys; sys.modules['stable_baselines3'] = None",
        "import gymnasium as gym, forty_thieves_env",
        "env = gym.make('FortyThieves-v0'); env.reset(seed=0); env.step(0)",
        "try:",
        "    import forty_thieves_env.envs.sb3",
        "except ImportError as e:",
        "    assert 'pip install \"forty-thieves-env[train]\"' in str(e), e",
        "else:",
        "    raise AssertionError('no ImportError')",
    )


@pytest.mark.parametrize("make", [FortyThievesEnv, lambda **kw: FortyThievesVectorEnv(2, **kw)], ids=["env", "vector"])
def test_an_unknown_keyword_is_a_type_error_in_pythons_words(make) -> None:
    # Wrappers try a keyword and fall back on exactly this (TorchRL's GymEnv passes frameskip).
    with pytest.raises(TypeError, match=r"__init__\(\) got an unexpected keyword argument 'frameskip'"):
        make(frameskip=4)
    with pytest.raises(ValueError, match=r"unknown variant option\(s\) \['frameskip'\]"):  # as before, too
        make(frameskip=4)
