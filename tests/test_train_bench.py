"""benchmarks/train_bench.py: the rows it prints, one trainer or both, and its refusal of a bad name."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("sb3_contrib")

from benchmarks.train_bench import main

TINY = ["--device", "cpu", "--setups", "default", "--games", "32", "--steps", "8", "--batch", "128", "--rollouts", "1"]
SB3 = ["--sb3-envs", "32", "--sb3-rollout", "256", "--threads", "1"]


def test_each_trainer_alone_and_both_in_one_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main([*TINY, *SB3, "--trainers", "sb3", "--out", str(tmp_path / "a.json")]) == 0
    (sb3,) = json.loads((tmp_path / "a.json").read_text())
    assert sb3["trainer"] == "MaskablePPO" and sb3["steps"] == 256 and sb3["steps_per_s"] > 0
    assert main([*TINY, *SB3, "--sb3", "--out", str(tmp_path / "b.json")]) == 0
    rows = json.loads((tmp_path / "b.json").read_text())
    assert [r["trainer"] for r in rows] == ["TorchPPO", "MaskablePPO"]
    assert rows[0]["steps"] == 32 * 8 and rows[0]["games"] == 32 and rows[0]["steps_per_s"] > 0
    printed = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [r["trainer"] for r in printed] == ["MaskablePPO", "TorchPPO", "MaskablePPO"]


def test_an_unknown_trainer_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as e:
        main([*TINY, "--trainers", "torch,jax"])
    assert e.value.code == 2 and "unknown ['jax']" in capsys.readouterr().err
