"""Shipped winnable sets: loader, certificates replay to wins, ``winnable_only=True`` in every env."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from conftest import run_fresh

from forty_thieves_env import deal, get_variant
from forty_thieves_env.engine.deals import TRAIN_RANGE
from forty_thieves_env.envs.batch import BatchGames
from forty_thieves_env.envs.step import G_DEAL, G_NEXT_DEAL
from forty_thieves_env.envs.winnable import available, certificate, meta, restrict_deals, winnable_deals

SHIPPED = available()


def _replays(variant: str, number: int) -> bool:
    state = deal(variant, number)
    for move in certificate(variant, number):
        state.play(move)
    return state.is_won()


def test_sets_are_shipped():
    from forty_thieves_env.engine.variants import PRESETS

    assert sorted(PRESETS) == SHIPPED  # every preset, rank_and_file included


@pytest.mark.parametrize("variant", SHIPPED)
def test_set_contents_and_meta(variant):
    deals = winnable_deals(variant)
    assert deals.dtype == np.int64 and deals.size > 0
    assert (np.diff(deals) > 0).all()
    # only training deals: the test and validation splits stay unseen
    assert deals.min() >= TRAIN_RANGE[0] and deals.max() <= TRAIN_RANGE[1]
    m = meta(variant)
    assert m["variant"] == variant
    assert m["counts"]["won"] == deals.size
    searched = m["deals_searched"]
    assert searched["first"] >= TRAIN_RANGE[0] and searched["count"] == sum(m["counts"].values())
    assert searched["first"] <= deals.min() and deals.max() <= searched["last"]
    assert {"seconds", "nodes", "memory_mb", "strategy", "clock"} <= set(m["budget"])
    assert "forty-thieves solve" in m["export_command"] and m["date"]
    winnable_deals(variant)[0] = -1  # a copy: the cached set is not changed
    assert winnable_deals(variant)[0] == deals[0]


@pytest.mark.parametrize("variant", SHIPPED)
def test_sample_of_certificates_replays(variant):
    deals = winnable_deals(variant)
    rng = np.random.default_rng(0)
    for number in rng.choice(deals, size=min(8, deals.size), replace=False):
        assert _replays(variant, int(number))


@pytest.mark.slow
@pytest.mark.parametrize("variant", SHIPPED)
def test_every_certificate_replays(variant):
    for number in winnable_deals(variant):
        assert _replays(variant, int(number)), number


def test_loader_imports_without_gymnasium_or_torch():
    run_fresh(
        "import sys; sys.modules['gymnasium'] = None",
        "from forty_thieves_env.envs.winnable import certificate, winnable_deals",
        "d = int(winnable_deals('classic')[0]); assert certificate('classic', d)",
        "assert 'torch' not in sys.modules",
    )


def test_errors(monkeypatch):
    with pytest.raises(ValueError, match="unknown variant"):
        winnable_deals("klondike")
    # A preset whose set is missing (every preset ships one now, so hide the folder).
    from forty_thieves_env.envs import winnable

    with monkeypatch.context() as m:
        m.setattr(winnable, "_FOLDER", ("data", "no-such-folder"))
        winnable._load.cache_clear()
        with pytest.raises(ValueError, match="no winnable set for variant 'maria'"):
            winnable_deals("maria")
        with pytest.raises(ValueError, match="no winnable set"):
            gym.make("FortyThieves-v0", variant="maria", winnable_only=True)
    winnable._load.cache_clear()
    with pytest.raises(ValueError, match="custom variant"):
        winnable_deals(get_variant("classic", auto_play_safe=True))
    with pytest.raises(ValueError, match="custom variant"):
        gym.make("FortyThieves-v0", winnable_only=True, columns=11)  # no preset has 11 columns
    with pytest.raises(ValueError, match="not in the classic winnable set"):
        certificate("classic", 1)
    with pytest.raises(ValueError, match="leaves no deal"):
        restrict_deals("classic", np.array([1, 2, 3]))


def test_gym_make_deals_only_winnable():
    win = set(winnable_deals("classic").tolist())
    env = gym.make("FortyThieves-v0", winnable_only=True)
    seen = set()
    for seed in range(30):
        _, info = env.reset(seed=seed)
        seen.add(info["deal"])
    assert seen <= win and len(seen) > 1
    _, info = env.reset(options={"deal": 7})  # an explicit deal still plays
    assert info["deal"] == 7


def test_winnable_only_with_deals_intersects():
    win = winnable_deals("classic")
    outside = next(d for d in range(int(win[0]), int(win[-1]) + 2) if d not in set(win.tolist()))
    chosen = [int(win[0]), int(win[-1]), outside]
    env = gym.make("FortyThieves-v0", winnable_only=True, deals=chosen)
    assert sorted(env.unwrapped.deals.tolist()) == sorted(chosen[:2])
    assert {env.reset(seed=s)[1]["deal"] for s in range(20)} <= set(chosen[:2])
    with pytest.raises(ValueError, match="leaves no deal"):
        gym.make("FortyThieves-v0", winnable_only=True, deals="test")


def test_vector_envs_deal_only_winnable():
    variant = next(v for v in SHIPPED if v != "classic")
    win = set(winnable_deals(variant).tolist())
    env_id = {"relaxed": "FortyThieves-Relaxed-v0", "rank_and_file": "FortyThieves-RankAndFile-v0"}.get(variant)
    if env_id is not None:
        envs = gym.make_vec(env_id, num_envs=4, winnable_only=True)
        _, infos = envs.reset(seed=0)
        assert set(infos["deal"].tolist()) <= win
        envs.close()
    games = BatchGames(8, variant, winnable_only=True)
    games.reset(seed=1)
    assert set(games.games[:, G_DEAL].tolist()) <= win
    assert set(games.games[:, G_NEXT_DEAL].tolist()) <= win  # the next autoreset deals too

    from forty_thieves_env.envs.sb3 import FortyThievesSB3VecEnv

    venv = FortyThievesSB3VecEnv(3, "classic", winnable_only=True)
    assert set(venv.batch.deals.tolist()) == set(winnable_deals("classic").tolist())
    venv.seed(3)
    venv.reset()
    assert set(venv.batch.games[:, G_DEAL].tolist()) <= set(winnable_deals("classic").tolist())
    venv.close()


def test_a_variant_that_only_relaxes_a_preset_shares_its_set():
    """More redeals or longer run moves keep every winning line legal, so the set carries over."""
    classic = winnable_deals("classic")
    for changes in ({"redeals": 2}, {"run_moves": "supermove"}, {"redeals": 1, "run_moves": "supermove"}):
        v = get_variant("classic", **changes)
        np.testing.assert_array_equal(winnable_deals(v), classic)
        assert meta(v)["inherited_from"][0] == "classic"
        number = int(classic[5])
        state = deal(v, number)
        for move in certificate(v, number):
            state.play(move)
        assert state.is_won()
    # Fewer redeals is not a relaxation of relaxed (whose own set needs its redeal): relaxed
    # without its redeal is Josephine's rules, which relax classic's, so the sets of those two
    # apply, and relaxed's does not.
    tight = get_variant("relaxed", redeals=0)
    np.testing.assert_array_equal(winnable_deals(tight), np.union1d(classic, winnable_deals("josephine")))
    assert meta(tight)["inherited_from"] == ["classic", "josephine"]
