"""The batched ppo evaluation (agents/evaluation/policy_eval.py) gives the per-game agent's rows."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")
sb3_contrib = pytest.importorskip("sb3_contrib")

from agents.cli import main  # noqa: E402
from agents.evaluation.evaluate import evaluate  # noqa: E402
from agents.evaluation.policy_eval import DEFAULT_BATCH_SIZE, batched_options  # noqa: E402


def _model(path: Path, observation: str) -> Path:
    """An untrained MaskablePPO policy (seeded, small): it plays legal but arbitrary moves."""
    from forty_thieves_env.envs.env import FortyThievesEnv

    torch.set_num_threads(1)
    env = FortyThievesEnv("classic", observation=observation)
    policy = "MultiInputPolicy" if observation == "dict" else "MlpPolicy"
    model = sb3_contrib.MaskablePPO(policy, env, seed=1, policy_kwargs={"net_arch": [32]}, n_steps=64, device="cpu")
    model.save(str(path))
    return path


@pytest.fixture(scope="module")
def dict_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _model(tmp_path_factory.mktemp("ppo") / "dict.zip", "dict")


@pytest.fixture(scope="module")
def flat_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _model(tmp_path_factory.mktemp("ppo") / "flat.zip", "flat")


def _rows(ev):
    return [(r.deal, r.won, r.cards_on_foundations, r.moves, r.truncated) for r in ev.results]


def _both(model: Path, deals: str, max_moves: int, **options):
    kwargs = {"model": str(model), **options}
    run = dict(variant="classic", deals=deals, seed=4, workers=1, max_moves=max_moves, progress=False)
    batched = evaluate("ppo", agent_kwargs=kwargs, **run)
    single = evaluate("ppo", agent_kwargs={**kwargs, "batched": False}, **run)
    assert batched.settings["batched"] is True and "batched" not in single.settings
    return batched, single


def test_deterministic_rows_equal_the_per_game_agent(dict_model: Path) -> None:
    batched, single = _both(dict_model, "11-22", 150)
    assert _rows(batched) == _rows(single)
    assert [r.deal for r in batched.results] == list(range(11, 23))
    s, t = batched.summary, single.summary
    assert {k: s[k] for k in ("games", "wins", "truncated", "mean_moves")} == {
        k: t[k] for k in ("games", "wins", "truncated", "mean_moves")
    }
    # The seconds of the rows share the evaluation's time.
    assert sum(r.seconds for r in batched.results) <= s["wall_seconds"] + 1e-6


def test_sampled_rows_equal_the_per_game_agent_and_games_end_on_their_own(dict_model: Path) -> None:
    batched, single = _both(dict_model, "1-10", 200, deterministic=False)
    assert _rows(batched) == _rows(single)
    ended = [r for r in batched.results if not r.truncated]
    assert ended, "some sampled games get stuck before 200 moves"
    assert all(r.moves < 200 for r in ended)
    assert all(r.moves == 200 for r in batched.results if r.truncated)


def test_sampling_temperature(dict_model: Path) -> None:
    """A temperature reaches both paths alike; a small one plays the greedy moves."""
    batched, single = _both(dict_model, "1-6", 120, deterministic=False, temperature=0.5)
    assert _rows(batched) == _rows(single)
    assert batched.settings["agent_options"]["temperature"] == 0.5
    cold, greedy = _both(dict_model, "1-6", 120, deterministic=False, temperature=1e-6), _both(dict_model, "1-6", 120)
    assert _rows(cold[0]) == _rows(greedy[0])
    with pytest.raises(ValueError, match="temperature must be a positive number"):
        _both(dict_model, "1", 10, deterministic=False, temperature=0)


def test_flat_observation_model(flat_model: Path) -> None:
    batched, single = _both(flat_model, "3,5,8", 60)
    assert _rows(batched) == _rows(single)


def test_chunks_and_seeds(dict_model: Path) -> None:
    """A deal's game depends on (seed, deal) only: not on the chunk it is played in."""
    kwargs = {"model": str(dict_model), "deterministic": False}
    run = dict(variant="classic", seed=2, max_moves=80, progress=False)
    whole = evaluate("ppo", deals="1-7", agent_kwargs=kwargs, **run)
    chunked = evaluate("ppo", deals="1-7", agent_kwargs={**kwargs, "batch_size": 3}, **run)
    alone = evaluate("ppo", deals=[6], agent_kwargs=kwargs, **run)
    assert _rows(whole) == _rows(chunked)
    assert _rows(alone) == _rows(whole)[5:6]
    assert chunked.settings["batch_size"] == 3 and whole.settings["batch_size"] == 7
    other = evaluate("ppo", deals="1-7", agent_kwargs=kwargs, **{**run, "seed": 3})
    assert _rows(other) != _rows(whole)


def test_move_cap(dict_model: Path) -> None:
    ev = evaluate("ppo", "classic", "1-3", max_moves=5, agent_kwargs={"model": str(dict_model)}, progress=False)
    assert all(r.moves == 5 and r.truncated and not r.won for r in ev.results)
    assert ev.summary["truncated"] == 3


def test_options_choose_the_path() -> None:
    assert batched_options({"model": "m"}) == (True, DEFAULT_BATCH_SIZE)
    assert batched_options({"model": "m", "batch_size": 64, "threads": 2, "device": "cpu"}) == (True, 64)
    assert batched_options({"model": "m", "batched": False})[0] is False
    assert batched_options({"model": "m", "something_new": 1})[0] is False  # the per-game agent decides
    with pytest.raises(ValueError, match="batch_size"):
        batched_options({"model": "m", "batch_size": 0})


def test_cli(dict_model: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    base = ["evaluate", "--agent", "ppo", "--model", str(dict_model), "--deals", "1-4", "--max-moves", "40", "--quiet"]
    assert main([*base, "--out", str(tmp_path / "a")]) == 0
    assert main([*base, "--opt", "batched=false", "--workers", "1", "--out", str(tmp_path / "b")]) == 0
    assert "ppo on classic, 4 deals" in capsys.readouterr().out
    a = json.loads((tmp_path / "a" / "results.json").read_text())
    b = json.loads((tmp_path / "b" / "results.json").read_text())
    assert a["settings"]["batched"] is True and a["settings"]["workers"] == 1
    strip = lambda rows: [{k: v for k, v in r.items() if k not in ("seconds", "cpu_seconds")} for r in rows]  # noqa: E731
    assert strip(a["results"]) == strip(b["results"])
    assert (tmp_path / "a" / "results.csv").read_text().splitlines()[0] == (
        "deal,won,cards_on_foundations,moves,seconds,truncated,cpu_seconds"
    )
    assert main([*base, "--opt", "bogus=1", "--out", str(tmp_path / "c")]) == 2
    assert "bogus" in capsys.readouterr().err


# ----- play_policy: the one batched evaluation, with a live policy ---------------------------
def _live_policy(variant: str = "classic", seed: int = 1, **env_options):
    """A fresh MaskablePPO model's policy, in training mode as a trainer holds it between updates."""
    from forty_thieves_env.envs.env import FortyThievesEnv

    env = FortyThievesEnv(variant, **env_options)
    model = sb3_contrib.MaskablePPO(
        "MultiInputPolicy", env, seed=seed, policy_kwargs={"net_arch": [32]}, n_steps=64, device="cpu"
    )
    model.policy.set_training_mode(True)
    return model.policy


def _gym_game(policy, env_id: str, env_kwargs: dict, deal: int, seed: int, deterministic: bool, max_moves: int):
    """One deal in ``gym.make(env_id, **env_kwargs)``, the moves chosen as the per-game ppo agent chooses them.

    Returns the row's figures and the sum of the env's rewards.
    """
    import gymnasium as gym
    import numpy as np

    from agents.evaluation.games import agent_seed
    from agents.players.policy import greedy_actions, policy_input, policy_logits, sample_move

    env = gym.make(env_id, **env_kwargs)
    rng = np.random.default_rng(agent_seed(seed, deal))
    obs, info = env.reset(options={"deal": deal})
    total, moves, terminated = 0.0, 0, False
    while moves < max_moves:
        logits = policy_logits(policy, policy_input(policy, {k: v[None] for k, v in obs.items()}))
        mask = info["action_mask"]
        if deterministic:
            action = int(greedy_actions(logits, torch.from_numpy(mask[None]))[0])
        else:
            action = sample_move(logits[0].numpy(), np.flatnonzero(mask), rng)
        obs, reward, terminated, truncated, info = env.step(action)
        total += float(reward)
        moves += 1
        if terminated or truncated:
            break
    env.close()
    row = (deal, bool(info["won"]), int(info["cards_on_foundations"]), moves, not terminated)
    return row, total


def _figures(games):
    return [
        (g.result.deal, g.result.won, g.result.cards_on_foundations, g.result.moves, g.result.truncated) for g in games
    ]


def test_a_live_policy_is_left_as_it_was_found() -> None:
    """A training run's periodic evaluation (the first validation deals, its live policy): the
    policy's training mode and torch's threads are as they were, and the figures are the games'."""
    from agents.evaluation.policy_eval import eval_figures, play_policy
    from forty_thieves_env.engine.deals import deal_split
    from forty_thieves_env.envs.options import EnvOptions

    env_kwargs = {"reward": "score"}
    policy = _live_policy(**env_kwargs)
    policy.set_training_mode(True)
    torch.set_num_threads(2)
    deals = [int(d) for d in deal_split("validation")[:8]]
    games = play_policy(policy, EnvOptions.make("classic", **env_kwargs), deals, seed=0, deterministic=True)
    assert policy.training and all(m.training for m in policy.modules())
    assert torch.get_num_threads() == 2
    torch.set_num_threads(1)
    got = eval_figures(games)
    assert got["mean_reward"] == pytest.approx(np.mean([g.reward for g in games]))
    assert got["win_rate"] == np.mean([g.result.won for g in games]) and got["episodes"] == 8
    assert got["mean_reward"] != 0
    assert [g.result.deal for g in games] == deals


@pytest.mark.parametrize(
    ("variant", "env_kwargs"),
    [("classic", {"redeals": 1, "reward": "score"}), ("relaxed", {"reward": "win"})],
)
def test_non_default_options_play_their_rules_and_rewards(variant: str, env_kwargs: dict) -> None:
    """A policy on non-default options plays those rules; each game's return is the sum of the
    env's rewards in gym.make of the same options with the same moves."""
    from agents.evaluation.policy_eval import play_policy
    from forty_thieves_env.envs.options import EnvOptions

    env_id = {"classic": "FortyThieves-v0", "relaxed": "FortyThieves-Relaxed-v0"}[variant]
    policy = _live_policy(variant, **env_kwargs)
    deals, seed, max_moves = [3, 11, 12, 40], 7, 400
    options = EnvOptions.make(variant, **env_kwargs)
    for deterministic in (False, True):
        games = play_policy(
            policy, options, deals, seed=seed, deterministic=deterministic, max_moves=max_moves, batch_size=3
        )
        one_by_one = [_gym_game(policy, env_id, env_kwargs, d, seed, deterministic, max_moves) for d in deals]
        assert _figures(games) == [row for row, _ in one_by_one]
        assert [g.reward for g in games] == [total for _, total in one_by_one]
    if variant == "classic":  # the redeal changes the games: the options are not ignored
        plain = play_policy(policy, "classic", deals, seed=seed, deterministic=False, max_moves=max_moves)
        games = play_policy(policy, options, deals, seed=seed, deterministic=False, max_moves=max_moves)
        assert _figures(plain) != _figures(games)


def test_play_policy_refuses_a_policy_of_other_options() -> None:
    from agents.evaluation.policy_eval import play_policy
    from forty_thieves_env.envs.options import EnvOptions

    oracle = _live_policy(observation="oracle")
    with pytest.raises(ValueError, match="needs options with observation='oracle'"):
        play_policy(oracle, EnvOptions.make("classic"), [1], seed=0, deterministic=True)
    assert play_policy(
        oracle, EnvOptions.make("classic", observation="oracle"), [1], seed=0, deterministic=True, max_moves=3
    )
    with pytest.raises(ValueError, match="another variant"):
        play_policy(_live_policy(), "maria", [1], seed=0, deterministic=True)  # 9 columns
    with pytest.raises(ValueError, match="temperature"):
        play_policy(_live_policy(), "classic", [1], seed=0, deterministic=False, temperature=0.0)


def test_results_name_the_model_and_compare_keeps_models_apart(
    dict_model: Path, flat_model: Path, tmp_path: Path
) -> None:
    """evaluate records the model's digest (both paths); compare makes one group per model and pairs them."""
    import hashlib
    import shutil

    from agents.evaluation.comparison import compare, group_files

    copy = tmp_path / "copy" / "dict.zip"
    copy.parent.mkdir()
    shutil.copy(dict_model, copy)
    base = ["evaluate", "--agent", "ppo", "--deals", "1-4", "--max-moves", "40", "--quiet"]
    runs = {"dict": (dict_model, []), "copy": (copy, ["--opt", "batched=false", "--workers", "1"]),
            "flat": (flat_model, [])}  # fmt: skip
    for name, (model, extra) in runs.items():
        assert main([*base, "--model", str(model), *extra, "--out", str(tmp_path / name)]) == 0
        settings = json.loads((tmp_path / name / "results.json").read_text())["settings"]
        assert settings["model_sha256"] == hashlib.sha256(model.read_bytes()).hexdigest()
        assert settings["model_file"] == str(model)
    groups = group_files([tmp_path / "dict", tmp_path / "flat", tmp_path / "copy"])
    assert [(k, len(v)) for k, v in groups.items()] == [(f"ppo model={dict_model}", 2), (f"ppo model={flat_model}", 1)]
    ((pair,),) = [t["pairs"] for t in compare(groups, n_boot=20)["mcnemar"]]
    assert pair["shared_deals"] == 4
