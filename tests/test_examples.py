"""The recipes of docs/recipes.md in examples/ (CleanRL-style, TorchRL, rl-baselines3-zoo, PufferLib),
each with a tiny budget (seconds)."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("tensorboard")

ROOT = Path(__file__).resolve().parents[1]


def _require(module: str, reason: str):
    """The module, or a skip; under CI (CI set), where `make test` installs [dev], a failure."""
    try:
        return __import__(module)
    except ImportError:
        if os.environ.get("CI"):
            pytest.fail(f"CI must run this recipe's test: {module} is missing ({reason})")
        pytest.skip(f"{module} is not installed ({reason})")


def _load_example(name: str):
    spec = importlib.util.spec_from_file_location(f"example_{name}", ROOT / "examples" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def _scalars(run_dir: Path) -> dict[str, list[float]]:
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    events = EventAccumulator(str(run_dir))
    events.Reload()
    return {tag: [e.value for e in events.Scalars(tag)] for tag in events.Tags()["scalars"]}


def test_cleanrl_ppo_takes_no_illegal_move(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every action the script sends is legal under the mask the env gave for that step, checked
    here on an env that would let an illegal move through ("penalize"), not by the script."""
    import gymnasium as gym

    example = _load_example("cleanrl_ppo")
    checked = {"steps": 0, "illegal": 0}

    class CheckMasks(gym.vector.VectorWrapper):
        def reset(self, **kwargs):
            obs, info = self.env.reset(**kwargs)
            self.mask = info["action_mask"]
            return obs, info

        def step(self, actions):
            actions = np.asarray(actions)
            checked["steps"] += len(actions)
            checked["illegal"] += int((~self.mask[np.arange(len(actions)), actions]).sum())
            obs, reward, terminated, truncated, info = self.env.step(actions)
            checked["illegal"] += int(info["illegal_action"].sum())
            self.mask = info["action_mask"]
            return obs, reward, terminated, truncated, info

    def make_env(args, num_envs):
        env = gym.make_vec(
            args.env_id,
            num_envs=num_envs,
            autoreset_mode=gym.vector.AutoresetMode.SAME_STEP,
            illegal_action="penalize",
            num_threads=1,
        )
        return CheckMasks(env)

    monkeypatch.setattr(example, "make_env", make_env)
    args = ["--total-timesteps", "1024", "--num-envs", "8", "--num-steps", "64", "--num-minibatches", "2"]
    run_dir = example.main([*args, "--eval-deals", "2", "--runs-dir", str(tmp_path), "--seed", "3"])
    assert checked["steps"] >= 1024 and checked["illegal"] == 0
    assert run_dir.parent == tmp_path and (run_dir / "agent.pt").is_file()
    scalars = _scalars(run_dir)
    assert scalars["charts/illegal_actions"] == [0.0, 0.0]  # the script's own count, once per iteration
    assert len(scalars["eval/win_rate"]) == 2  # before and after
    from agents.evaluation.comparison import load_results

    after = load_results(run_dir)  # results.json, as forty-thieves compare reads it
    assert sorted(after.won) == [1, 2] and after.settings["variant"] == "relaxed"
    assert after.settings["max_moves"] == 1000
    from agents.evaluation.comparison import group_files

    groups = group_files([run_dir / "results_before.json", run_dir])  # two models: two groups
    assert [len(g) for g in groups.values()] == [1, 1]
    for tag in ("losses/policy_loss", "losses/value_loss", "losses/approx_kl", "charts/SPS"):
        assert len(scalars[tag]) == 2 and all(np.isfinite(scalars[tag])), tag


def test_cleanrl_ppo_masks_illegal_logits() -> None:
    """The agent gives illegal moves no probability, however its logits lean."""
    import gymnasium as gym

    example = _load_example("cleanrl_ppo")
    args = example.parse_args(["--num-envs", "4"])
    envs = example.make_env(args, 4)
    obs, info = envs.reset(seed=0)
    agent = example.Agent(envs)
    mask = torch.from_numpy(info["action_mask"])
    scores = agent.scores
    agent.scores = lambda o: scores(o) + 1e6 * (~mask)  # push every illegal move up
    with torch.no_grad():
        obs_t = example.to_torch(obs)
        for _ in range(20):
            action, logprob, _, value = agent.get_action_and_value(obs_t, mask)
            assert mask.gather(1, action[:, None]).all()
        assert value.shape == (4, 1) and torch.isfinite(logprob).all()
    envs.close()
    assert isinstance(envs.single_action_space, gym.spaces.Discrete)


def _zoo(tmp_path: Path, algo: str) -> subprocess.CompletedProcess[str]:
    """examples/zoo_ppo_mask.py for 512 steps on Relaxed, the env raising at any illegal move."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    conf = tmp_path / "hyperparams.yml"
    conf.write_text(
        "FortyThieves-Relaxed-v0:\n  policy: MultiInputPolicy\n  n_envs: 2\n  n_timesteps: 512\n"
        "  n_steps: 128\n  batch_size: 128\n  n_epochs: 1\n"
    )
    args = ["--algo", algo, "--env", "FortyThieves-Relaxed-v0", "--gym-packages", "forty_thieves_env"]
    args += ["--conf-file", str(conf), "-f", str(tmp_path / "logs"), "--eval-freq", "-1", "--seed", "1"]
    args += ["--env-kwargs", "illegal_action:'raise'", "--num-threads", "1", "--verbose", "0"]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    script = str(ROOT / "examples" / "zoo_ppo_mask.py")
    return subprocess.run([sys.executable, script, *args], capture_output=True, text=True, env=env, timeout=600)


def test_rl_zoo3_ppo_mask_takes_no_illegal_move(tmp_path: Path) -> None:
    """MaskablePPO through the zoo trains with the env raising at any illegal move; the zoo's
    plain PPO (no mask) on the same settings meets that error, so the check can fail."""
    _require("rl_zoo3", "`make test` installs it: pip install --no-deps rl_zoo3==2.9.2 sb3-team-hf-integration==3.2")
    masked = _zoo(tmp_path / "masked", "ppo_mask")
    assert masked.returncode == 0, masked.stderr[-3000:]
    run = tmp_path / "masked" / "logs" / "ppo_mask" / "FortyThieves-Relaxed-v0_1"
    assert (run / "FortyThieves-Relaxed-v0.zip").is_file()
    plain = _zoo(tmp_path / "plain", "ppo")
    assert plain.returncode != 0 and "IllegalMoveError" in plain.stderr


def test_torchrl_ppo_takes_no_illegal_move(monkeypatch: pytest.MonkeyPatch) -> None:
    """examples/torchrl_ppo.py counts no illegal move in two tiny batches; with the mask taken
    out of its distribution the same count sees them, so the check can fail."""
    pytest.importorskip("torchrl")
    example = _load_example("torchrl_ppo")
    args = ["--frames", "1024", "--num-envs", "4", "--steps", "128", "--minibatch", "256", "--hidden", "32"]
    assert example.main(args)["illegal"] == 0

    from torchrl.modules import OneHotCategorical

    class Unmasked(OneHotCategorical):
        def __init__(self, logits, mask=None, **kwargs):
            super().__init__(logits=logits)

    monkeypatch.setattr(example, "MaskedOneHotCategorical", Unmasked)
    assert example.main(args)["illegal"] > 0


def _puffer_run(monkeypatch: pytest.MonkeyPatch, unmasked: bool = False) -> tuple[dict, dict]:
    """examples/pufferlib_ppo.py for two updates of 4 games x 128 steps on the Serial backend, each
    game's moves checked here against the mask it was given (the env lets an illegal move through)."""
    import gymnasium as gym

    example = _load_example("pufferlib_ppo")
    checked = {"steps": 0, "illegal": 0}

    class CheckMasks(gym.Wrapper):
        def reset(self, **kwargs):
            obs, info = self.env.reset(**kwargs)
            self.mask = info["action_mask"]
            return obs, info

        def step(self, action):
            checked["steps"] += 1
            checked["illegal"] += int(not self.mask[action])
            obs, reward, terminated, truncated, info = self.env.step(action)
            checked["illegal"] += int(info["illegal_action"])
            self.mask = info["action_mask"]
            return obs, reward, terminated, truncated, info

    def make_game(env_id):
        game = gym.make(env_id, mask_in_observation=True, illegal_action="penalize")
        return example.EpisodeInfo(CheckMasks(game))

    monkeypatch.setattr(example, "make_game", make_game)
    if unmasked:
        monkeypatch.setattr(example.MaskedPolicy, "mask_logits", staticmethod(lambda logits, mask: logits))
    args = ["--total-timesteps", "1024", "--num-envs", "4", "--num-steps", "128", "--hidden", "32", "--seed", "3"]
    return example.main(args), checked


def test_pufferlib_ppo_takes_no_illegal_move(monkeypatch: pytest.MonkeyPatch) -> None:
    """The masked policy reads the mask from PufferLib's flat rows and plays no illegal move, by the
    script's count and by this test's; the update ran. Without the mask both counts see illegal moves."""
    _require("pufferlib", "the [puffer] extra: pip install .[puffer]")
    counts, checked = _puffer_run(monkeypatch)
    assert checked["illegal"] == 0 and counts["illegal"] == 0
    assert checked["steps"] == counts["steps"] >= 1000  # 1024 but the steps that reset a finished game
    assert counts["updates"] >= 2 * 2 * 4 and np.isfinite(counts["loss"])  # 2 rollouts x 2 epochs x 4 minibatches
    counts, checked = _puffer_run(monkeypatch, unmasked=True)
    assert checked["illegal"] > 0 and counts["illegal"] > 0


@pytest.mark.filterwarnings("ignore:_check_is_size:FutureWarning")  # pufferlib's nativize_tensor, torch 2.13
def test_pufferlib_snippet_in_the_docs() -> None:
    """docs/recipes.md's PufferLib snippet runs, and the moves it samples are legal under the mask
    it read from PufferLib's rows."""
    import re

    _require("pufferlib", "the [puffer] extra: pip install .[puffer]")
    section = (ROOT / "docs" / "recipes.md").read_text(encoding="utf-8").split("\n## PufferLib\n", 1)[1]
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    scope: dict = {}
    exec(compile(code, "docs/recipes.md (PufferLib)", "exec"), scope)
    obs, mask, action = scope["obs"], scope["mask"], scope["action"]
    assert obs.shape == (8, 346) and mask.shape == (8, 112) and mask.sum(1).min() > 0
    assert (mask.gather(1, action.long()[:, None]) == 1).all()
    assert not any(info["illegal_action"] for info in scope["infos"])  # the env's own flags


def test_pufferlib_multiprocessing_and_bench() -> None:
    """The Multiprocessing backend (2 worker processes) trains with no illegal move (the workers'
    games report one in their infos), and --bench measures the three step rates the docs give.

    Multiprocessing runs as the documented command, in a process of its own: in this one the
    start method may be spawn (importing torchrl sets it), under which the workers cannot import
    an env creator loaded from a file path, die at start, and leave the main process waiting."""
    import re

    _require("pufferlib", "the [puffer] extra: pip install .[puffer]")
    args = ["--total-timesteps", "512", "--num-envs", "4", "--num-steps", "128", "--hidden", "32"]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    script = [sys.executable, str(ROOT / "examples" / "pufferlib_ppo.py")]
    done = subprocess.run(
        [*script, *args, "--backend", "Multiprocessing", "--num-workers", "2"],
        capture_output=True, text=True, env=env, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    last = re.findall(r"^step +([\d,]+) .* illegal (\d+) +loss (\S+)$", done.stdout, re.M)[-1]
    assert int(last[0].replace(",", "")) >= 500 and last[1] == "0" and np.isfinite(float(last[2]))
    rates = _load_example("pufferlib_ppo").main(["--bench", "--bench-seconds", "0.05", "--num-envs", "2"])
    assert len(rates) == 3 and all(r > 0 for r in rates.values())
