"""benchmarks/data_efficiency.py: seeds pooled per data size, the table's figures, the plot, a bad folder refused."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks.data_efficiency import main


def fake_run(folder: Path, positions: list[int], wins: int, games: int = 1000, seed: int = 0) -> None:
    folder.mkdir(parents=True)
    rounds = [{"positions": p} for p in positions]
    (folder / "imitation.json").write_text(json.dumps({"rounds": rounds}))
    (folder / "final_eval.json").write_text(json.dumps({"summary": {"wins": wins, "games": games}}))
    (folder / "config.yaml").write_text(f"FortyThieves-v0:\n  seed: {seed}\n")


def test_seeds_pool_per_size_and_rounds_add_up(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    fake_run(tmp_path / "a_small_s0", [10_000], 3, seed=0)
    fake_run(tmp_path / "a_small_s1", [10_200], 5, seed=1)  # within 5 %: the same size
    fake_run(tmp_path / "a_big_s0", [60_000, 40_000], 20)  # a DAgger round's positions count too
    fake_run(tmp_path / "b_s0", [10_000], 1)
    curves = ["--curve", f"x={tmp_path}/a_*", "--curve", f"y={tmp_path}/b_*"]
    assert main([*curves, "--plot", str(tmp_path / "p.png")]) == 0
    out = capsys.readouterr().out
    assert "| x | 10,100 | 2 | 8/2000 | 0.40 % |" in out and "3/1000, 5/1000" in out
    assert "| x | 100,000 | 1 | 20/1000 | 2.00 % |" in out
    assert "| y | 10,000 | 1 | 1/1000 | 0.10 % |" in out
    assert (tmp_path / "p.png").stat().st_size > 1000


def test_an_unfinished_run_is_named(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "r").mkdir()
    with pytest.raises(SystemExit) as exc:
        main(["--curve", f"x={tmp_path}/r"])
    assert exc.value.code == 2 and "not a finished imitation run" in capsys.readouterr().err
