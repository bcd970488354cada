"""A researcher's runs survive faults (issue 37): a damaged file is named on one line, never a
traceback or a silent default; no work is played and then thrown away.

One test (or group) per defect of the issue: a model zip cut short (``train --resume``,
``evaluate --model``, ``ship``, a zipped run folder), Ctrl-C during the imitation (each of its
stages: tests/agents/training/test_imitation_stages.py), a
``config.yaml`` cut short, a torn ``verdicts.jsonl`` line, an unwritable ``--out``, a play save
missing a field; then files cut at random offsets and writers killed at random moments
(checkpoints, ``verdicts.jsonl``, the config rewrite)."""

from __future__ import annotations

import json
import random
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest

from agents.cli import main
from agents.configs.run_file import CONFIG_END
from agents.solving import sweep as solving
from agents.solving.sweep import solve_deals
from agents.solving.verdicts import Budget, read_verdicts
from agents.storage.files import DamagedFileError
from agents.training.runs import read_run_config, resume_hint, resume_point
from agents.training.train import train

sys.path.insert(0, str(Path(__file__).parent / "storage"))
from test_files import kill_while_running
from tiny_training import IMITATION, PPO_YAML, ROLLOUT, TORCH, network, schedule, train_quietly

ROOT = Path(__file__).resolve().parents[2]

# No warm start; evaluations and checkpoints every 64 steps, no final evaluation.
TINY = [*ROLLOUT, network(), "imitation=null", *schedule(64, 2, 0)]


def quiet(_: str) -> None:
    pass


def one_line_error(capsys: pytest.CaptureFixture[str]) -> str:
    """The command's stderr, which must be one line and no traceback."""
    err = capsys.readouterr().err.strip()
    assert "Traceback" not in err and "\n" not in err, err
    return err


def files_of(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A MaskablePPO run of 128 steps: checkpoints at 64 and 128."""
    return train_quietly(TINY, tmp_path_factory.mktemp("runs"), "run", 128, seed=5)


def copy_of(run: Path, tmp_path: Path) -> Path:
    copy = tmp_path / run.name
    shutil.copytree(run, copy)
    return copy


def cut(path: Path, at: int | None = None) -> bytes:
    """Cut ``path`` short at ``at`` (default: half its size); return what it held."""
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2 if at is None else at])
    return data


# ------------------------------------------------- 1. a model zip cut short


def test_resume_sets_a_checkpoint_cut_short_aside_and_continues_from_the_previous(run: Path, tmp_path: Path) -> None:
    copy = copy_of(run, tmp_path)
    last = copy / "checkpoints" / "rl_model_128_steps.zip"
    cut(last)
    (copy / "train_info.json").write_text('{"sessions": [{"num_ti')
    logs: list[str] = []
    train(resume=copy, total_timesteps=192, progress=False, log=logs.append)
    said = " | ".join(logs)
    assert f"{last} is damaged (" in said and "set aside as rl_model_128_steps.zip.damaged" in said
    assert "resuming from rl_model_64_steps.zip" in said and "train_info.json is damaged" in said
    assert (copy / "checkpoints" / "rl_model_128_steps.zip.damaged").is_file()
    assert sorted(p.name for p in (copy / "checkpoints").glob("*.zip")) == [
        "rl_model_128_steps.zip",  # written again by the resumed run
        "rl_model_192_steps.zip",
        "rl_model_64_steps.zip",
    ]
    info = json.loads((copy / "train_info.json").read_text())
    assert info["num_timesteps"] == 192 and len(info["sessions"]) == 1


def test_a_checkpoint_cut_at_any_offset_falls_back_to_the_previous(run: Path, tmp_path: Path) -> None:
    data = (run / "checkpoints" / "rl_model_128_steps.zip").read_bytes()
    rng = random.Random(37)
    for k, at in enumerate([0, 1, len(data) // 2, len(data) - 1, *rng.sample(range(len(data)), 16)]):
        folder = tmp_path / f"r{k}"
        shutil.copytree(run / "checkpoints", folder / "checkpoints")
        (folder / "checkpoints" / "rl_model_128_steps.zip").write_bytes(data[:at])
        logs: list[str] = []
        point = resume_point(folder, imitation=False, log=logs.append)
        assert point.stage == "checkpoint" and point.steps == 64, at
        assert len(logs) == 1 and "rl_model_128_steps.zip is damaged (" in logs[0], at


def test_every_checkpoint_damaged_is_one_line_and_nothing_moves(
    run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    copy = copy_of(run, tmp_path)
    for path in (copy / "checkpoints").glob("*.zip"):
        cut(path)
    before = files_of(copy / "checkpoints")
    assert main(["train", "--resume", str(copy), "--quiet"]) == 2
    err = one_line_error(capsys)
    assert f"{copy}: every checkpoint is damaged (rl_model_128_steps.zip: " in err
    assert files_of(copy / "checkpoints") == before


def test_evaluate_and_ship_name_a_model_cut_short(
    run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    damaged = tmp_path / "cut.zip"
    damaged.write_bytes((run / "best_model.zip").read_bytes())
    cut(damaged)
    evaluate = ["evaluate", "--agent", "ppo", "--deals", "1-2", "--quiet", "--out", str(tmp_path / "ev")]
    assert main([*evaluate, "--model", str(damaged)]) == 2
    assert f"{damaged} is damaged (" in one_line_error(capsys)
    zipped = shutil.make_archive(str(tmp_path / "zipped"), "zip", run.parent, run.name)
    assert main([*evaluate, "--model", zipped]) == 2
    assert f"{zipped} is a zip of a run folder, not a model: unzip it" in one_line_error(capsys)
    copy = copy_of(run, tmp_path)
    cut(copy / "best_model.zip")
    models = tmp_path / "models"
    assert main(["ship", str(copy), "--name", "mine", "--models-dir", str(models)]) == 2
    assert f"{copy / 'best_model.zip'} is damaged (" in one_line_error(capsys)
    assert not (models / "mine.zip").exists() and not (models / "mine.json").exists()


# ------------------------------------------------- 2. Ctrl-C during the imitation


@pytest.mark.parametrize("algo", ["MaskablePPO", "TorchPPO"])
def test_ctrl_c_in_the_imitation_leaves_a_folder_that_resume_continues(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, algo: str
) -> None:
    from agents.training import imitation
    from agents.training import warm_start as warm_start_module

    overrides = [*TINY, *IMITATION, *(TORCH if algo == "TorchPPO" else [])]

    def ctrl_c(*args: Any, **kwargs: Any) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(imitation, "clone", ctrl_c)
    logs: list[str] = []
    with pytest.raises(KeyboardInterrupt):
        train(
            PPO_YAML,
            overrides=overrides,
            total_timesteps=64,
            runs_dir=tmp_path,
            name="r",
            progress=False,
            log=logs.append,
        )
    run = tmp_path / "r"
    assert logs[-2] == (
        "interrupted in the imitation during the first fit: the teacher's games had finished (saved in imitation/); "
        "--resume goes on with the first fit"
    )
    assert logs[-1] == (
        f"to continue: forty-thieves train --resume {run}  "
        "# continues the imitation with the first fit (the teacher's games had finished, in imitation/)"
    )
    monkeypatch.undo()

    def no_games(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("the teacher's games, saved, were played again")

    monkeypatch.setattr(imitation, "collect", no_games)
    train(resume=run, progress=False, log=quiet)  # the fit, then PPO: no dead end
    monkeypatch.undo()
    assert (run / "imitation.json").is_file() and (run / "checkpoints" / "rl_model_64_steps.zip").is_file()

    # Killed after the imitation, before PPO's first checkpoint: PPO starts from the imitation's model.
    shutil.rmtree(run / "checkpoints")
    _, config = read_run_config(run)
    hint = resume_hint(run, resume_point(run, True, mend=False), config.n_timesteps)
    assert "starts PPO from the finished imitation (imitation_model.zip)" in hint

    def no_imitation(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("the finished imitation ran again")

    monkeypatch.setattr(warm_start_module.WarmStart, "imitate", no_imitation)
    logs.clear()
    train(resume=run, progress=False, log=logs.append)
    assert f"{run}: the imitation had finished; PPO starts from imitation_model.zip" in logs
    assert (run / "checkpoints" / "rl_model_64_steps.zip").is_file()
    done = resume_hint(run, resume_point(run, True, mend=False), config.n_timesteps)
    assert "training is done: it runs the final evaluation" in done


# ------------------------------------------------- 3. a config.yaml cut short


def test_a_config_cut_at_any_offset_is_refused_not_filled_with_defaults(run: Path, tmp_path: Path) -> None:
    text = (run / "config.yaml").read_text()
    assert text.endswith(CONFIG_END + "\n")
    want = read_run_config(run)
    copy = copy_of(run, tmp_path)
    rng = random.Random(3)
    body = len(text) - len(CONFIG_END) - 1  # the offset where the end line starts
    for at in [0, text.index("    net_arch"), body - 1, body, body + 3, *rng.sample(range(len(text)), 30)]:
        (copy / "config.yaml").write_text(text[:at])
        try:
            got = read_run_config(copy)
        except DamagedFileError as err:
            message = str(err)
            assert message.startswith(f"{copy / 'config.yaml'} is damaged (") and "\n" not in message
        else:
            assert at >= body and got == want, at  # only the end line was cut: every key is there


def test_resume_refuses_a_config_cut_short_and_changes_nothing(
    run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    copy = copy_of(run, tmp_path)
    text = (copy / "config.yaml").read_text()
    (copy / "config.yaml").write_text(text[: text.index("    net_arch")])
    before = files_of(copy)
    assert main(["train", "--resume", str(copy), "--quiet"]) == 2
    err = one_line_error(capsys)
    assert "config.yaml is damaged (cut short: no policy_kwargs.net_arch, policy_kwargs.activation_fn" in err
    assert files_of(copy) == before


def test_a_config_rewrite_killed_at_a_random_moment_leaves_a_whole_config(run: Path, tmp_path: Path) -> None:
    copy = copy_of(run, tmp_path)
    started = tmp_path / "started"
    script = f"""
        import sys
        sys.path.insert(0, {str(ROOT)!r})
        from pathlib import Path
        from agents.configs.run_file import write_run_config
        from agents.training.runs import read_run_config
        run = Path({str(copy)!r})
        env_id, config = read_run_config(run)
        configs = [config.model_copy(update={{"n_timesteps": n}}) for n in (128, 256)]
        Path({str(started)!r}).touch()
        k = 0
        while True:
            k += 1
            write_run_config(run, env_id, configs[k % 2])
    """
    for seed in range(3):
        started.unlink(missing_ok=True)
        kill_while_running(script, started, seed, tmp_path)
        _, config = read_run_config(copy)
        assert config.n_timesteps in (128, 256)


def test_a_damaged_eval_state_stops_resume_before_training(
    run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    copy = copy_of(run, tmp_path)
    cut(copy / "eval_state.json")
    assert main(["train", "--resume", str(copy), "--total-timesteps", "192", "--quiet"]) == 2
    assert f"{copy / 'eval_state.json'} is damaged (not JSON" in one_line_error(capsys)
    assert not (copy / "checkpoints" / "rl_model_192_steps.zip").exists()


# ------------------------------------------------- 4. a torn line in verdicts.jsonl

BUDGET = Budget(seconds=1.0, nodes=1000)


def fake_verdict(variant: Any, deal: int, budget: Budget) -> dict[str, Any]:
    """A verdict without the solver (a lost or unknown one: a won one would be replayed)."""
    lost = deal % 2 == 1
    return {"deal": int(deal), "verdict": "lost" if lost else "unknown", "moves": [], "nodes": deal, "states": 0,
            "seconds": 0.001, "reason": "" if lost else "nodes", "decided_by": "fake"}  # fmt: skip


@pytest.fixture
def fake_solver(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(solving, "solve_deal", fake_verdict)


def solve(out: Path, deals: str) -> dict[str, Any]:
    return solve_deals("classic", deals, out=out, budget=BUDGET, workers=1, progress=False, command="test")


def test_a_torn_last_verdict_is_solved_again_and_every_later_resume_works(tmp_path: Path, fake_solver: None) -> None:
    from agents.solving.winnability import table_row

    out = tmp_path / "solved"
    solve(out, "1-6")
    path = out / "verdicts.jsonl"
    lines = path.read_text().splitlines(keepends=True)
    path.write_text("".join(lines[:5]) + lines[5][:17])  # killed while writing deal 6's line
    assert solve(out, "1-8")["solved_now"] == 3  # deal 6 again, then 7 and 8, each on its own line
    assert solve(out, "1-8")["solved_now"] == 0  # and the resume after that
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    assert sorted(r["deal"] for r in rows) == list(range(1, 9))
    assert table_row(out).deals == 8  # winnability reads the folder


def test_verdicts_cut_at_any_offset_lose_no_whole_verdict(tmp_path: Path, fake_solver: None) -> None:
    out = tmp_path / "solved"
    solve(out, "1-6")
    path = out / "verdicts.jsonl"
    full = path.read_bytes()
    rng = random.Random(4)
    for at in [0, len(full) - 1, *rng.sample(range(len(full)), 20)]:
        path.write_bytes(full[:at])
        whole = [line for line in full[:at].split(b"\n")[:-1]]  # the lines that kept their newline
        solve(out, "1-6")
        after = path.read_bytes()
        assert after == full, at  # the same verdicts, each on its line (the fake solver is deterministic)
        assert all(line in after.split(b"\n") for line in whole)


def test_a_line_glued_by_an_older_version_is_read_back(tmp_path: Path, fake_solver: None) -> None:
    out = tmp_path / "solved"
    solve(out, "1-4")
    path = out / "verdicts.jsonl"
    lines = path.read_text().splitlines()
    path.write_text("\n".join([lines[0], lines[1][:20] + lines[2], lines[3]]) + "\n")  # deal 2 torn, 3 glued on
    assert sorted(read_verdicts(path)) == [1, 3, 4]
    assert solve(out, "1-4")["solved_now"] == 1  # deal 2 only: no verdict lost


def test_a_damaged_verdict_line_is_named_with_what_to_do(
    tmp_path: Path, fake_solver: None, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "solved"
    solve(out, "1-3")
    path = out / "verdicts.jsonl"
    lines = path.read_text().splitlines()
    path.write_text("\n".join([lines[0], "garbage", *lines[1:]]) + "\n")
    args = ["solve", "--deals", "1-3", "--seconds", "1", "--nodes", "1000", "--workers", "1", "--quiet"]
    assert main([*args, "--out", str(out)]) == 2
    err = one_line_error(capsys)
    assert f"{path} is damaged (line 2 is not a verdict row: 'garbage'): delete that line" in err
    assert main(["winnability", str(out)]) == 2
    assert "line 2 is not a verdict row" in one_line_error(capsys)


@pytest.mark.parametrize("seed", range(3))
def test_solve_killed_at_a_random_moment_loses_no_finished_verdict(
    tmp_path: Path, fake_solver: None, seed: int
) -> None:
    out = tmp_path / "solved"
    path = out / "verdicts.jsonl"
    script = f"""
        from agents.solving import sweep as solving

        def fake(variant, deal, budget):  # fake_verdict's rows
            lost = deal % 2 == 1
            return {{"deal": int(deal), "verdict": "lost" if lost else "unknown", "moves": [], "nodes": deal,
                    "states": 0, "seconds": 0.001, "reason": "" if lost else "nodes", "decided_by": "fake"}}

        solving.solve_deal = fake
        budget = solving.Budget(seconds={BUDGET.seconds}, nodes={BUDGET.nodes})
        solving.solve_deals("classic", "1-300", out={str(out)!r}, budget=budget, workers=1, progress=False,
                            command="test")
    """
    kill_while_running(script, path, seed, tmp_path, slow_appends=True)  # often mid-line
    kept = path.read_bytes().split(b"\n")[:-1]  # every line that was written whole
    solve(out, "1-300")
    after = path.read_bytes().split(b"\n")
    assert after[: len(kept)] == kept
    assert sorted(json.loads(line)["deal"] for line in after if line) == list(range(1, 301))


# ------------------------------------------------- 5. outputs checked before the work


def test_evaluate_checks_its_out_before_playing_a_game(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import errno
    import os

    from agents.evaluation import evaluate
    from agents.storage import files

    def no_game(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("a game was played before the output was checked")

    monkeypatch.setattr(evaluate, "play_game", no_game)
    blocker = tmp_path / "file"
    blocker.write_text("")
    args = ["evaluate", "--agent", "random", "--deals", "1-3", "--workers", "1", "--quiet", "--out"]
    assert main([*args, str(blocker / "out")]) == 2
    assert f"cannot write the results into {blocker / 'out'}" in one_line_error(capsys)
    real_open = os.open

    def read_only(path: Any, flags: int, mode: int = 0o777) -> int:  # as on a read-only mount
        if ".write-test" in str(path):
            raise OSError(errno.EROFS, "Read-only file system")
        return real_open(path, flags, mode)

    monkeypatch.setattr(files.os, "open", read_only)
    assert main([*args, str(tmp_path / "out")]) == 2
    assert "cannot write the results into" in one_line_error(capsys)


@pytest.mark.parametrize(
    "command",
    [
        ["solve", "--deals", "1-2", "--workers", "1", "--quiet", "--out", "{tmp}/s", "--export-winnable", "{bad}/w.gz"],
        ["compare", "nowhere.json", "--json", "{bad}/report.json"],
        ["replay", "--agent", "random", "--deal", "1", "--html", "{bad}/page.html"],
        ["winnability", "{tmp}/s", "--json", "{bad}/rows.json"],
    ],
)
def test_other_commands_check_their_outputs_first(
    command: list[str], tmp_path: Path, fake_solver: None, capsys: pytest.CaptureFixture[str]
) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    assert main([a.format(tmp=tmp_path, bad=blocker) for a in command]) == 2
    assert f"into {blocker}" in one_line_error(capsys)
    assert not (tmp_path / "s").exists()  # solve solved nothing


# ------------------------------------------------- 6. a play save missing a field


def saved_game(tmp_path: Path) -> tuple[Path, dict[str, Any]]:
    from agents.play.session import PlaySession

    s = PlaySession("normal", deal=31)
    s.play(s.hint())
    path = s.save(tmp_path / "save.json")
    return path, json.loads(path.read_text())


@pytest.mark.parametrize("field", ["moves", "undos", "hints", "started", "seconds", "history", "position", "auto_play"])
def test_a_save_missing_a_field_is_reported_and_left_alone(tmp_path: Path, field: str) -> None:
    from agents.play.session import PlaySession

    path, doc = saved_game(tmp_path)
    del doc[field]
    path.write_text(json.dumps(doc))
    with pytest.raises(ValueError) as err:
        PlaySession.load(path)
    assert str(err.value) == f"{path} is not a saved game that can be resumed: no '{field}' field"
    assert json.loads(path.read_text()) == doc


def test_play_reports_a_damaged_save_on_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from agents.play.session import PlaySession

    path, doc = saved_game(tmp_path)
    text = path.read_text()
    for at in random.Random(6).sample(range(len(text) - 2), 15):  # cut short anywhere (the last 2: whitespace)
        path.write_text(text[:at])
        with pytest.raises(ValueError, match="is not a saved game that can be resumed"):
            PlaySession.load(path)
    del doc["moves"]
    path.write_text(json.dumps(doc))
    assert main(["play", "--data-dir", str(tmp_path)]) == 2
    err = one_line_error(capsys)
    assert err.endswith("no 'moves' field; --new starts a new game (and replaces the save)")
