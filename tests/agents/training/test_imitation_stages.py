"""The imitation's stages saved as each finishes (agents/training/imitation_stages.py): a Ctrl-C or
a kill in the teacher's games, a fit or a DAgger round leaves a run that ``--resume`` finishes
without playing or fitting a finished stage again, and with the data, figures and models of the
run that was never stopped (the fits are bit-for-bit on one torch thread)."""

from __future__ import annotations

import json
import shutil
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch
from tiny_training import PPO_YAML, ROLLOUT, network, schedule, train_quietly

from agents.storage.files import DamagedFileError
from agents.storage.modelfile import read_parameters
from agents.training import imitation
from agents.training.imitation_stages import StageRecord, read_demonstrations, stage_names, stage_title
from agents.training.runs import resume_point
from agents.training.train import train

sys.path.insert(0, str(Path(__file__).parents[1] / "storage"))
from test_files import kill_while_running

GAMES, DAGGER_GAMES, ROUNDS = 2, 2, 2
#: A warm start of 2 teacher games and 2 DAgger rounds of 2 games (one epoch each, one process),
#: then 64 PPO steps with a checkpoint, no evaluation.
TINY = [
    *ROLLOUT,
    network(),
    *schedule(64, 2, 0),
    "eval_freq=0",
    f"imitation.games={GAMES}",
    "imitation.epochs=1",
    f"imitation.dagger_rounds={ROUNDS}",
    f"imitation.dagger_games={DAGGER_GAMES}",
    "imitation.dagger_epochs=1",
    "imitation.workers=1",
]
STAGES = stage_names(ROUNDS)  # games_0, model_0, games_1, model_1, games_2, model_2
SEED = 4


class Stages:
    """Stands in for :func:`imitation.collect` and :func:`imitation.clone`: records the stage each call
    runs, raises AssertionError for a stage in ``finished`` and Ctrl-C in stage ``stop`` (a games
    stage after one game; a fit after it changed the policy, before its model is saved)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, stop: str | None = None, finished: Iterable[str] = ()) -> None:
        self.calls: list[str] = []
        self.finished = set(finished)
        real_collect, real_clone = imitation.collect, imitation.clone

        def collect(env: Any, deals: Any, teacher: str, **kwargs: Any) -> imitation.Demonstrations:
            student = kwargs.get("student")
            name = "games_0" if student is None else f"games_{int(Path(student).stem.split('_')[1]) + 1}"
            self.enter(name)
            if name == stop:
                real_collect(env, deals[:1], teacher, **kwargs)
                raise KeyboardInterrupt
            return real_collect(env, deals, teacher, **kwargs)

        def clone(policy: Any, data: imitation.Demonstrations, **kwargs: Any) -> dict[str, float]:
            name = f"model_{(len(data.games) - GAMES) // DAGGER_GAMES}"
            self.enter(name)
            stats = real_clone(policy, data, **kwargs)
            if name == stop:
                raise KeyboardInterrupt
            return stats

        monkeypatch.setattr(imitation, "collect", collect)
        monkeypatch.setattr(imitation, "clone", clone)

    def enter(self, name: str) -> None:
        if name in self.finished:
            raise AssertionError(f"{name} had finished, and ran again")
        self.calls.append(name)


def tiny_run(runs: Path, name: str, log: Any = None) -> Path:
    torch.set_num_threads(1)
    if log is None:
        return train_quietly(TINY, runs, name, 64, seed=SEED)
    return train(PPO_YAML, overrides=TINY, total_timesteps=64, seed=SEED, runs_dir=runs, name=name,
                 progress=False, log=log)  # fmt: skip


def record(run: Path) -> dict[str, Any]:
    return json.loads((run / "imitation" / "stages.json").read_text())


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The run never stopped."""
    return tiny_run(tmp_path_factory.mktemp("runs"), "whole")


def assert_same_imitation(run: Path, reference: Path) -> None:
    """The same stage figures, the same data arrays and the same models as the run never stopped,
    and a run that ended: PPO's checkpoint and ``imitation.json``."""
    assert (run / "checkpoints" / "rl_model_64_steps.zip").is_file()
    got, want = record(run), record(reference)
    assert [s["name"] for s in got["stages"]] == STAGES
    assert [s["figures"] for s in got["stages"]] == [s["figures"] for s in want["stages"]]
    for r in range(ROUNDS + 1):
        with (
            np.load(run / "imitation" / f"games_{r}.npz") as a,
            np.load(reference / "imitation" / f"games_{r}.npz") as b,
        ):
            assert sorted(a.files) == sorted(b.files)
            for k in a.files:
                assert np.array_equal(a[k], b[k]), (r, k)
    for model in [*(f"imitation/model_{r}.zip" for r in range(ROUNDS + 1)), "imitation_model.zip"]:
        mine, theirs = read_parameters(run / model)["policy"], read_parameters(reference / model)["policy"]
        assert mine.keys() == theirs.keys()
        assert all(torch.equal(mine[k], theirs[k]) for k in mine), model
    info, whole = (json.loads((r / "imitation.json").read_text()) for r in (run, reference))
    assert info["rounds"] == whole["rounds"] and len(info["rounds"]) == ROUNDS + 1
    assert not [p.name for p in (run / "imitation").iterdir() if p.name.endswith(".tmp")]


def test_an_uninterrupted_imitation_saves_every_stage(reference: Path) -> None:
    doc = record(reference)
    assert [s["name"] for s in doc["stages"]] == STAGES
    assert sorted(p.name for p in (reference / "imitation").iterdir()) == sorted(
        ["stages.json", *(f"{s}.npz" if s.startswith("games") else f"{s}.zip" for s in STAGES)]
    )
    first = doc["stages"][0]["figures"]
    assert first["games"] == GAMES and first["positions"] > 0 and "teacher_won" in first
    assert "student_won" in doc["stages"][2]["figures"] and "train_accuracy" in doc["stages"][1]["figures"]
    data = StageRecord.read(reference / "imitation").games(1)  # type: ignore[union-attr]
    assert len(data.games) == DAGGER_GAMES and len(data) == doc["stages"][2]["figures"]["positions"]
    info = json.loads((reference / "imitation.json").read_text())
    assert info["rounds"][0] == {**first, **doc["stages"][1]["figures"]}


@pytest.mark.parametrize("k", range(len(STAGES)), ids=STAGES)
def test_ctrl_c_in_any_stage_resumes_after_the_last_finished_one(
    reference: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, k: int
) -> None:
    stop = STAGES[k]
    with monkeypatch.context() as patch:
        stages = Stages(patch, stop=stop)
        logs: list[str] = []
        with pytest.raises(KeyboardInterrupt):
            tiny_run(tmp_path, "r", logs.append)
    run = tmp_path / "r"
    assert stages.calls == STAGES[: k + 1]
    assert [s["name"] for s in record(run)["stages"]] == STAGES[:k]
    if k == 0:
        assert logs[-2] == (
            "interrupted in the imitation during the teacher's games: no stage had finished; --resume plays them again"
        )
        assert logs[-1].endswith("# starts the run again from its beginning (no stage had finished)")
    else:
        last, now = stage_title(STAGES[k - 1]), stage_title(stop)
        assert logs[-2] == (
            f"interrupted in the imitation during {now}: {last} had finished (saved in imitation/); "
            f"--resume goes on with {now}"
        )
        assert logs[-1] == (
            f"to continue: forty-thieves train --resume {run}  "
            f"# continues the imitation with {now} ({last} had finished, in imitation/)"
        )
    assert not (run / "imitation.json").exists() and not (run / "checkpoints").exists()

    with monkeypatch.context() as patch:
        stages = Stages(patch, finished=STAGES[:k])
        logs.clear()
        train(resume=run, progress=False, log=logs.append)
    assert stages.calls == STAGES[k:]  # only what had not finished
    if k:
        assert (
            f"imitation: {stage_title(STAGES[k - 1])} had finished ({run / 'imitation'}); going on with"
            in " | ".join(logs)
        )
    assert_same_imitation(run, reference)


@pytest.mark.parametrize("damaged", ["games_1.npz", "model_1.zip", "stages.json"])
def test_a_stage_file_cut_short_is_named_and_runs_again(
    reference: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, damaged: str
) -> None:
    run = tmp_path / "r"
    shutil.copytree(reference, run)
    shutil.rmtree(run / "checkpoints")
    (run / "imitation.json").unlink()  # stopped before the imitation finished
    path = run / "imitation" / damaged
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    logs: list[str] = []
    point = resume_point(run, True, logs.append)
    said = " | ".join(logs)
    assert len(logs) == 1 and f"{path} is damaged (" in said and f"set aside as {damaged}.damaged" in said
    assert (run / "imitation" / f"{damaged}.damaged").is_file()
    first = {"games_1.npz": 2, "model_1.zip": 3, "stages.json": 0}[damaged]  # the stage that runs again
    if first:
        assert point.stage == "imitation_stage" and point.next_stage == STAGES[first]
        assert said.endswith(f"; the imitation goes on after {stage_title(STAGES[first - 1])}")
    else:
        assert point.stage == "start" and said.endswith("; the imitation starts again")
    if damaged.endswith(".npz"):
        with pytest.raises(DamagedFileError, match=f"{path}.damaged is damaged \\(not an .npz of arrays: "):
            read_demonstrations(path.with_name(damaged + ".damaged"), "")
    with monkeypatch.context() as patch:
        stages = Stages(patch, finished=STAGES[:first])
        train(resume=run, progress=False, log=logs.append)
    assert stages.calls == STAGES[first:]
    assert_same_imitation(run, reference)


def test_stages_of_other_settings_are_moved_aside(
    reference: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run = tmp_path / "r"
    shutil.copytree(reference, run)
    shutil.rmtree(run / "checkpoints")
    (run / "imitation.json").unlink()
    logs: list[str] = []
    with monkeypatch.context() as patch:
        stages = Stages(patch)
        train(resume=run, overrides=["imitation.dagger_rounds=1"], progress=False, log=logs.append)
    assert stages.calls == stage_names(1)  # the deals drawn depend on the rounds: every stage again
    said = " | ".join(logs)
    assert (
        "holds stages of other settings (imitation.dagger_rounds 2 there, 1 now): moved to imitation.replaced" in said
    )
    aside = json.loads((run / "imitation.replaced" / "stages.json").read_text())
    assert [s["name"] for s in aside["stages"]] == STAGES and (run / "imitation.replaced" / "model_2.zip").is_file()
    assert [s["name"] for s in record(run)["stages"]] == stage_names(1)


@pytest.mark.parametrize(("after", "seed", "within"), [("games_0", 0, 0.15), ("model_1", 1, 0.5)])
def test_a_run_killed_in_the_imitation_resumes_after_its_last_finished_stage(
    reference: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, after: str, seed: int, within: float
) -> None:
    """A real SIGKILL of a training process at a random moment (up to ``within`` seconds) after stage
    ``after``'s file was written: in the next stages, often mid-write, or between a file and its record."""
    runs = tmp_path / "runs"
    script = f"""
        import sys
        sys.path.insert(0, {str(Path(__file__).parents[2])!r})
        from pathlib import Path
        from tiny_training import train_quietly
        train_quietly({TINY!r}, Path({str(runs)!r}), "r", 64, seed={SEED})
    """
    started = runs / "r" / "imitation" / (after + (".npz" if after.startswith("games") else ".zip"))
    kill_while_running(script, started, seed, tmp_path, within=within)
    run = runs / "r"
    kept = StageRecord.read(run / "imitation", mend=False)
    assert kept is not None
    finished = [s["name"] for s in kept.stages]
    assert finished == STAGES[: len(finished)]
    whole = (run / "imitation.json").is_file()
    with monkeypatch.context() as patch:
        stages = Stages(patch, finished=STAGES if whole else finished)
        train(resume=run, progress=False, log=lambda _: None)
    assert stages.calls == ([] if whole else STAGES[len(finished) :])
    assert_same_imitation(run, reference)
