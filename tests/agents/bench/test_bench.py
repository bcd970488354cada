"""``forty-thieves bench``: a tiny run prints every row and the summary; the summary's verdicts."""

from __future__ import annotations

import re

import pytest

from agents.bench.command import summary
from agents.bench.envs import Row
from agents.cli import main

ROWS = (
    "gym.make (one env)",
    "SyncVectorEnv",
    "native vector env",
    "MaskablePPO, native VecEnv",
    "MaskablePPO, DummyVecEnv",
    "MaskablePPO, trivial env",
    "config, training VecEnv",
    "config, trivial env",
)


@pytest.fixture
def one_torch_thread():
    import torch

    threads = torch.get_num_threads()
    yield
    torch.set_num_threads(threads)


def test_bench_command_prints_the_table(capsys, one_torch_thread) -> None:
    args = ["bench", "--seconds", "0.2", "--num-envs", "600", "--sync-envs", "2", "--ppo-envs", "2"]
    args += ["--ppo-timesteps", "64", "--ppo-n-steps", "16", "--config-timesteps", "64", "--no-trainers"]
    assert main(args) == 0
    out = capsys.readouterr().out
    table = [line for line in out.splitlines() if line.startswith("| ") and not line.startswith("| measurement")]
    assert [line.split("|")[1].strip() for line in table] == [ROWS[0], ROWS[1], ROWS[2], ROWS[2], *ROWS[3:]]
    for line in table:
        steps, rate = (int(x.replace(",", "")) for x in (line.split("|")[4], line.split("|")[5]))
        assert steps > 0 and rate > 0
    native = [line for line in table if "native vector env" in line]
    assert "| 1 " in native[0] and "all (" in native[1]
    assert all(re.search(r"env share \d+\.\d %", line) for line in table if "MaskablePPO" in line)
    assert "target env share of MaskablePPO time <= 25 %" in out
    assert re.search(r"target config training >= 30,000 steps/s: [\d,]+ \((met|NOT met)\)", out)
    assert re.search(r"\d+ s in all", out)


def test_bench_without_ppo(capsys) -> None:
    assert main(["bench", "--seconds", "0.1", "--num-envs", "16", "--sync-envs", "2", "--no-ppo"]) == 0
    out = capsys.readouterr().out
    assert "| MaskablePPO" not in out and "MaskablePPO fps" not in out and "| config" not in out
    assert "native vector env / SyncVectorEnv" in out


def _row(name: str, steps_per_s: float, note: str = "", threads: str = "1") -> Row:
    return Row(name, 1, threads, int(steps_per_s), 1.0, 1.0, note)


def test_summary_verdicts() -> None:
    fast = [
        _row("gym.make (one env)", 60_000),
        _row("SyncVectorEnv", 40_000),
        _row("native vector env", 900_000),
        _row("native vector env", 2_500_000, threads="all (2)"),
        _row("MaskablePPO, native VecEnv", 1000, "env share 4.0 %"),
        _row("MaskablePPO, trivial env", 1100, "env share 0.5 %"),
        _row("config, training VecEnv", 32_000, "env share 9.0 %"),
        _row("config, trivial env", 40_000, "env share 0.5 %"),
    ]
    text = "\n".join(summary(fast))
    assert "config training >= 30,000 steps/s: 32,000 (met)" in text and "(training/trivial 0.80)" in text
    assert "2,500,000 (met)" in text and "60,000 (met)" in text and "4.0 % (met)" in text
    assert "native vector env / SyncVectorEnv:     62x" in text
    slow = [
        _row("gym.make (one env)", 20_000),
        _row("native vector env", 1_500_000),
        _row("MaskablePPO, native VecEnv", 500, "env share 40.0 %"),
        _row("MaskablePPO, trivial env", 1100, "env share 0.5 %"),
        _row("config, training VecEnv", 4_600, "env share 3.0 %"),
        _row("config, trivial env", 5_000, "env share 0.5 %"),
    ]
    text = "\n".join(summary(slow))
    assert "config training >= 30,000 steps/s: 4,600 (NOT met)" in text
    assert "1,500,000 (NOT met)" in text and "20,000 (NOT met)" in text and "40.0 % (NOT met)" in text


def test_bench_pairs_the_two_trainers_on_a_config(capsys, one_torch_thread, tmp_path) -> None:
    config = tmp_path / "tiny.yaml"
    config.write_text(
        "default:\n  num_envs: 4\n  n_steps: 16\n  batch_size: 32\n  n_epochs: 1\n  torch_threads: 1\n"
        "  policy_kwargs: {features_extractor: lookup_scorer, features_extractor_kwargs: {hidden: 8}}\n"
        "FortyThieves-v0: {}\n"
    )
    args = ["bench", "--seconds", "0.1", "--num-envs", "16", "--sync-envs", "2", "--ppo-envs", "2"]
    args += ["--ppo-timesteps", "32", "--ppo-n-steps", "16", "--config", str(config), "--config-timesteps", "64"]
    assert main([*args, "--trainer-rounds", "2"]) == 0
    out = capsys.readouterr().out
    rows = {line.split("|")[1].strip(): line for line in out.splitlines() if line.startswith("| ")}
    for name in ("MaskablePPO, paired", "TorchPPO, paired"):
        assert int(rows[name].split("|")[4].replace(",", "")) == 2 * 64, name  # two turns of one rollout each
    assert re.search(r"TorchPPO / MaskablePPO on the config's network and games: \d+\.\d\dx", out)


def test_summary_states_the_trainer_ratio() -> None:
    rows = [_row("gym.make (one env)", 60_000), _row("MaskablePPO, paired", 40_000), _row("TorchPPO, paired", 90_000)]
    line = next(x for x in summary(rows) if x.startswith("TorchPPO / MaskablePPO"))
    assert line.startswith("TorchPPO / MaskablePPO on the config's network and games: 2.25x (90,000 vs 40,000")
    assert line.endswith("target >= 2x on 2 cores, met)")
