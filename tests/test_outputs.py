"""Where the commands write by default: never a tracked path, and a rerun never silently replaces a result."""

from __future__ import annotations

import json
import shutil
import subprocess
from datetime import datetime
from pathlib import Path

import pytest

from agents import cli
from agents.evaluation.outputs import default_out

ROOT = Path(__file__).resolve().parent.parent


def _defaults() -> dict[str, Path]:
    """Each command's default output file, from its own parser (not restated here)."""
    solve = cli.build_parser(["solve"]).parse_args(["solve", "--deals", "1"])
    train = cli.build_parser(["train"]).parse_args(["train", "configs/ppo.yaml"])
    return {
        "evaluate": default_out("heuristic", "classic") / "results.json",
        "solve": Path(solve.out) / "verdicts.jsonl",
        "train": Path(train.runs_dir) / "x" / "model.zip",
        # The docs' examples write evaluate results under results/NAME.
        "docs' --out": Path("results") / "heuristic" / "results.json",
    }


@pytest.mark.skipif(shutil.which("git") is None or not (ROOT / ".git").exists(), reason="needs the git checkout")
@pytest.mark.parametrize("command", sorted(_defaults()))
def test_default_outputs_are_untracked_and_ignored(command):
    path = _defaults()[command]
    tracked = subprocess.run(["git", "ls-files", str(path.parts[0])], cwd=ROOT, capture_output=True, text=True)
    assert tracked.stdout == "", f"{command}'s output folder {path.parts[0]} holds tracked files"
    ignored = subprocess.run(["git", "check-ignore", "-q", str(path)], cwd=ROOT)
    assert ignored.returncode == 0, f"{path} ({command}'s default) is not ignored by .gitignore"


def test_default_out_is_new_each_time(tmp_path):
    now = datetime(2026, 1, 2, 3, 4, 5)
    first = default_out("heuristic", "classic", tmp_path, now)
    assert first == tmp_path / "evaluate-heuristic-classic-20260102-030405"
    first.mkdir()
    assert default_out("heuristic", "classic", tmp_path, now).name.endswith("-2")


def _evaluate(out: Path, *extra: str) -> int:
    return cli.main(
        ["evaluate", "--agent", "random", "--deals", "1-2", "--workers", "1", "--quiet", "--out", str(out), *extra]
    )


def test_rerun_is_refused_and_force_replaces(tmp_path, capsys):
    out = tmp_path / "res"
    assert _evaluate(out) == 0
    before = (out / "results.json").read_bytes()
    assert _evaluate(out) == 2  # the same settings
    err = capsys.readouterr().err
    assert "already holds random on classic (the same agent and variant)" in err and "--force" in err
    assert cli.main(["evaluate", "--agent", "heuristic", "--deals", "1", "--quiet", "--out", str(out)]) == 2
    assert "already holds random on classic: give another --out" in capsys.readouterr().err  # other settings
    assert (out / "results.json").read_bytes() == before
    assert _evaluate(out, "--seed", "5", "--force") == 0
    assert json.loads((out / "results.json").read_text())["settings"]["seed"] == 5


def test_default_out_lands_under_runs(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    for _ in range(2):
        assert cli.main(["evaluate", "--agent", "random", "--deals", "1", "--workers", "1", "--quiet"]) == 0
    folders = sorted((tmp_path / "runs").iterdir())
    assert len(folders) == 2 and all(f.name.startswith("evaluate-random-classic-") for f in folders)
    assert all((f / "results.json").exists() for f in folders)
