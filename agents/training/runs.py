"""Run folders: naming a new one, its checkpoints, config, command log, versions and training record.

Every file here is written atomically (:mod:`agents.storage.files`) and read back checked: a damaged
``config.yaml`` is refused on one line rather than filled in with defaults
(:func:`read_run_config`), and a damaged checkpoint is set aside for the previous good one,
saying so (:func:`resume_point`), which also tells where ``--resume`` continues a run that
was stopped in any stage (the imitation's own stages: :mod:`.imitation_stages`).
"""

from __future__ import annotations

import os
import platform
import re
import subprocess
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from agents.configs.config_file import load_env_config
from agents.configs.run_file import CONFIG_FILE, check_run_config
from agents.configs.train_config import RunConfig
from agents.storage.files import DamagedFileError, LineLog, damaged, read_json, set_aside, write_json
from agents.storage.modelfile import check_model

from .imitation_stages import IMITATION_STAGES, RECORD, StageRecord, stage_title

if TYPE_CHECKING:
    from forty_thieves_env.envs.resolved import ResolvedEnv

RUNS_DIR = Path("runs")
FINAL_MODEL = "final_model.zip"
CHECKPOINT_PREFIX = "rl_model"
_CKPT = re.compile(rf"^{CHECKPOINT_PREFIX}_(\d+)_steps\.zip$")
IMITATION_MODEL = "imitation_model.zip"
IMITATION_INFO = "imitation.json"

def library_versions() -> dict[str, Any]:
    """Python, platform, library versions and the git commit (for ``versions.json``)."""
    from importlib import metadata

    out: dict[str, Any] = {"python": platform.python_version(), "platform": platform.platform()}
    for pkg in (
        "forty-thieves-env",
        "numpy",
        "numba",
        "gymnasium",
        "torch",
        "stable-baselines3",
        "sb3-contrib",
        "pydantic",
        "tensorboard",
    ):
        try:
            out[pkg] = metadata.version(pkg)
        except metadata.PackageNotFoundError:
            out[pkg] = None
    try:
        root = Path(__file__).resolve().parents[2]
        commit = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True, timeout=5, check=False
        ).stdout.strip()
        out["git_commit"] = commit or None
        status = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            cwd=root,
            capture_output=True,
            text=True,
            timeout=5,
            check=False,
        )
        out["git_dirty"] = bool(status.stdout.strip()) if commit else None
    except (OSError, subprocess.SubprocessError):
        out["git_commit"] = out["git_dirty"] = None
    try:
        import torch

        out["torch_threads"] = torch.get_num_threads()
    except ImportError:  # pragma: no cover
        pass
    out["cpu_count"] = os.cpu_count()
    return out


def new_run_dir(runs_dir: Path, env_id: str, algo: str, name: str | None) -> Path:
    """A new, empty run folder: ``runs_dir/name``, else ``runs_dir/<env>_<algo>_<time>``."""
    if name:
        run_dir = runs_dir / name
        if run_dir.exists() and any(run_dir.iterdir()):
            raise ValueError(f"run folder {run_dir} exists: --resume {run_dir} to continue it, or another --name")
    else:
        stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
        run_dir = runs_dir / f"{env_id}_{algo}_{stamp}"
        k = 1
        while run_dir.exists():
            k += 1
            run_dir = runs_dir / f"{env_id}_{algo}_{stamp}-{k}"
    run_dir.mkdir(parents=True, exist_ok=True)
    return run_dir


def checkpoint_path(run_dir: Path, steps: int) -> Path:
    """``run_dir/checkpoints/rl_model_<steps>_steps.zip``."""
    return run_dir / "checkpoints" / f"{CHECKPOINT_PREFIX}_{int(steps)}_steps.zip"


def checkpoint_steps(path: Path) -> int | None:
    """The step count in a checkpoint's file name, or None when it is not one."""
    m = _CKPT.match(path.name)
    return int(m.group(1)) if m else None


def checkpoints(run_dir: Path) -> list[Path]:
    """The checkpoints in ``run_dir/checkpoints``, the most steps first."""
    pattern = f"{CHECKPOINT_PREFIX}_*_steps.zip"
    found = [(s, p) for p in (run_dir / "checkpoints").glob(pattern) if (s := checkpoint_steps(p)) is not None]
    return [p for _, p in sorted(found, reverse=True)]


# ------------------------------------------------------------------------- config.yaml


def read_run_config(
    run_dir: Path, env_id: str | None = None, overrides: Sequence[str] | Mapping[str, Any] = ()
) -> tuple[ResolvedEnv, RunConfig]:
    """A run folder's ``(env, config)``, checked whole (:func:`check_run_config`), with ``overrides``.

    Raises:
        ValueError: not a run folder, or a config of another env than ``env_id``.
        DamagedFileError: a damaged ``config.yaml``.
    """
    path = run_dir / CONFIG_FILE
    run_env = next(iter(check_run_config(path)))
    if env_id and env_id != run_env:
        raise ValueError(f"{run_dir} trains {run_env}, not {env_id}")
    return load_env_config(path, run_env, overrides)


# ------------------------------------------------------------------------- the record


def record_command(run_dir: Path, line: str) -> None:
    """Append ``line`` to ``command.txt`` (a line cut short by a kill gets its newline first)."""
    with LineLog(run_dir / "command.txt", keep=lambda _tail: True) as log:
        log.append(line)


def write_versions(run_dir: Path, extra: Mapping[str, Any] | None = None) -> None:
    """Write ``versions.json`` (:func:`library_versions`, and a trainer's ``extra`` ones) atomically."""
    write_json(run_dir / "versions.json", {**library_versions(), **(extra or {})})


def make_logger(run_dir: Path, verbose: bool) -> Any:
    from stable_baselines3.common.logger import CSVOutputFormat, HumanOutputFormat, Logger, TensorBoardOutputFormat

    logs = run_dir / "logs"
    logs.mkdir(exist_ok=True)
    session = len(list(logs.glob("progress-*.csv")))
    formats: list[Any] = [CSVOutputFormat(str(logs / f"progress-{session}.csv")), TensorBoardOutputFormat(str(logs))]
    if verbose:
        formats.append(HumanOutputFormat(sys.stdout))
    return Logger(str(logs), formats)


def update_train_info(
    run_dir: Path, num_timesteps: int, seconds: float, why: str, log: Callable[[str], None] = print
) -> None:
    """Add a session to ``train_info.json`` (steps and seconds per session).

    It is written after the session's checkpoint: a damaged file is set aside (saying so)
    and a new record begun, rather than failing a run whose training is already saved.
    """
    path = run_dir / "train_info.json"
    info: dict[str, Any] = {"sessions": []}
    if path.exists():
        try:
            info = read_json(path, "")
            if not isinstance(info.get("sessions"), list):
                raise damaged(path, "no list of sessions", "")
        except DamagedFileError as err:
            aside = set_aside(path)
            log(f"{path} is damaged ({err.why}): set aside as {aside.name}; its record starts again")
            info = {"sessions": []}
    info["sessions"].append({"num_timesteps": int(num_timesteps), "seconds": round(seconds, 1), "stopped": why})
    info["num_timesteps"] = int(num_timesteps)
    info["train_seconds"] = round(sum(float(s.get("seconds", 0)) for s in info["sessions"]), 1)
    write_json(path, info)


# ------------------------------------------------------------------------- resuming


@dataclass(frozen=True)
class ResumePoint:
    """Where ``--resume`` continues a run folder: after its last finished stage.

    Attributes:
        stage: ``"checkpoint"`` (PPO goes on from :attr:`path`), ``"imitation"`` (the
            imitation finished: PPO starts from :attr:`path`, the imitation model),
            ``"imitation_stage"`` (the imitation goes on after its last finished stage,
            :attr:`last_stage`, recorded in :attr:`path`, ``imitation/stages.json``) or
            ``"start"`` (nothing finished: the run starts again, in the same folder).
        path: The checkpoint, the imitation model or the imitation's record (None at ``"start"``).
        done: The steps trained, when not in the checkpoint's name.
        last_stage: At ``"imitation_stage"``, the last finished one (``games_0``, ``model_1``, ...).
        next_stage: At ``"imitation_stage"``, the one that runs next (None: only the last step is left).
    """

    run_dir: Path
    stage: Literal["start", "imitation_stage", "imitation", "checkpoint"]
    path: Path | None = None
    done: int | None = None
    last_stage: str | None = None
    next_stage: str | None = None

    @property
    def steps(self) -> int:
        """The steps (RLlib: iterations) already trained: ``done`` when given, else those in the
        checkpoint's name (0 before the first checkpoint)."""
        if self.done is not None:
            return self.done
        return (checkpoint_steps(self.path) or 0) if self.stage == "checkpoint" and self.path else 0

    def describe(self) -> str:
        """What ``--resume`` does from here, for the screen."""
        if self.stage == "checkpoint":
            assert self.path is not None
            return f"continues from {self.path.relative_to(self.run_dir)} ({self.steps:,} trained)"
        if self.stage == "imitation":
            return f"starts PPO from the finished imitation ({IMITATION_MODEL})"
        if self.stage == "imitation_stage":
            return (
                f"continues the imitation with {stage_title(self.next_stage)} "
                f"({stage_title(self.last_stage)} had finished, in {IMITATION_STAGES}/)"
            )
        return "starts the run again from its beginning (no stage had finished)"


def resume_point(run_dir: Path, imitation: bool, log: Callable[[str], None] = print, mend: bool = True) -> ResumePoint:
    """The last finished stage of a run folder: its newest good checkpoint, else a finished
    imitation (when the config has one), else the imitation's last finished stage, else the start.

    Each checkpoint is read whole (:func:`~agents.storage.modelfile.check_model`). With ``mend``,
    a damaged checkpoint newer than a good one is set aside (``.damaged``), saying so, and
    the good one is used. A finished imitation is one with its ``imitation.json`` (written
    last) and a good ``imitation_model.zip``. An unfinished one's stages are those recorded in
    ``imitation/stages.json`` whose files are whole; with ``mend`` the first damaged one is set
    aside, saying so (:meth:`~agents.training.imitation_stages.StageRecord.read`).

    Raises:
        DamagedFileError: every checkpoint is damaged (nothing is set aside then: moving
            ``checkpoints/`` away is the user's choice, as it restarts PPO).
    """
    bad: list[DamagedFileError] = []
    for path in checkpoints(run_dir):
        try:
            check_model(path)
        except DamagedFileError as err:
            bad.append(err)
            continue
        if mend:
            for err in bad:
                assert err.path is not None
                aside = set_aside(err.path)
                log(f"{err.path} is damaged ({err.why}): set aside as {aside.name}; resuming from {path.name}")
        return ResumePoint(run_dir, "checkpoint", path)
    if bad:
        first = bad[0]
        raise DamagedFileError(
            f"{run_dir}: every checkpoint is damaged ({first.path.name if first.path else '?'}: {first.why}); "
            "restore one from a copy, or move checkpoints/ away to train PPO again from the start",
            first.path,
            first.why,
        )
    model, info = run_dir / IMITATION_MODEL, run_dir / IMITATION_INFO
    if imitation and info.is_file():
        again = "the imitation runs again"
        try:
            read_json(info, again)
            check_model(model, again)
        except DamagedFileError as err:
            if mend:
                log(str(err))
        except ValueError as err:  # no imitation_model.zip
            if mend:
                log(f"{err}: {again}")
        else:
            return ResumePoint(run_dir, "imitation", model)
    if imitation:
        record = StageRecord.read(run_dir / IMITATION_STAGES, log, mend)
        if record is not None and record.last is not None:
            return ResumePoint(
                run_dir, "imitation_stage", record.folder / RECORD, last_stage=record.last, next_stage=record.next
            )
    return ResumePoint(run_dir, "start")


def resume_hint(run_dir: Path, point: ResumePoint | DamagedFileError, total: int) -> str:
    """The last line of an interrupted run: the command that continues it, and from where
    (``point``: where ``--resume`` would continue, or why it cannot)."""
    if isinstance(point, DamagedFileError):
        return f"interrupted; --resume cannot continue {run_dir} as it is: {point}"
    where = point.describe()
    if point.steps >= total:
        where += "; training is done: it runs the final evaluation"
    return f"to continue: forty-thieves train --resume {run_dir}  # {where}"
