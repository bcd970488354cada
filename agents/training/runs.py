"""Run folders: naming a new one, its checkpoints, config, command log, versions and training record."""

from __future__ import annotations

import json
import os
import platform
import re
import subprocess
import sys
from datetime import datetime
from pathlib import Path
from typing import Any

from .config import TrainConfig, load_config

RUNS_DIR = Path("runs")
CHECKPOINT_PREFIX = "rl_model"
_CKPT = re.compile(rf"^{CHECKPOINT_PREFIX}_(\d+)_steps\.zip$")


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


def new_run_dir(runs_dir: Path, env_id: str, config: TrainConfig, name: str | None) -> Path:
    """A new, empty run folder: ``runs_dir/name``, else ``runs_dir/<env>_<algo>_<time>``."""
    if name:
        run_dir = runs_dir / name
        if run_dir.exists() and any(run_dir.iterdir()):
            raise ValueError(f"run folder {run_dir} exists: --resume {run_dir} to continue it, or another --name")
    else:
        stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
        run_dir = runs_dir / f"{env_id}_{config.algo}_{stamp}"
        k = 1
        while run_dir.exists():
            k += 1
            run_dir = runs_dir / f"{env_id}_{config.algo}_{stamp}-{k}"
    run_dir.mkdir(parents=True, exist_ok=True)
    return run_dir


def checkpoint_steps(path: Path) -> int | None:
    """The step count in a checkpoint's file name, or None when it is not one."""
    m = _CKPT.match(path.name)
    return int(m.group(1)) if m else None


def find_last_checkpoint(run_dir: Path) -> Path | None:
    """The checkpoint with the most steps in ``run_dir/checkpoints``, or None."""
    best: tuple[int, Path] | None = None
    for p in (run_dir / "checkpoints").glob(f"{CHECKPOINT_PREFIX}_*_steps.zip"):
        steps = checkpoint_steps(p)
        if steps is not None and (best is None or steps > best[0]):
            best = (steps, p)
    return None if best is None else best[1]


def read_run_config(run_dir: Path) -> tuple[str, TrainConfig]:
    path = run_dir / "config.yaml"
    if not path.exists():
        raise ValueError(f"{run_dir} is not a run folder (no config.yaml)")
    return load_config(path)


def record_command(run_dir: Path, line: str) -> None:
    with (run_dir / "command.txt").open("a", encoding="utf-8") as f:
        f.write(line + "\n")


def make_logger(run_dir: Path, verbose: bool) -> Any:
    from stable_baselines3.common.logger import CSVOutputFormat, HumanOutputFormat, Logger, TensorBoardOutputFormat

    logs = run_dir / "logs"
    logs.mkdir(exist_ok=True)
    session = len(list(logs.glob("progress-*.csv")))
    formats: list[Any] = [CSVOutputFormat(str(logs / f"progress-{session}.csv")), TensorBoardOutputFormat(str(logs))]
    if verbose:
        formats.append(HumanOutputFormat(sys.stdout))
    return Logger(str(logs), formats)


def update_train_info(run_dir: Path, num_timesteps: int, seconds: float, why: str) -> None:
    path = run_dir / "train_info.json"
    info = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {"sessions": []}
    info["sessions"].append({"num_timesteps": int(num_timesteps), "seconds": round(seconds, 1), "stopped": why})
    info["num_timesteps"] = int(num_timesteps)
    info["train_seconds"] = round(sum(s["seconds"] for s in info["sessions"]), 1)
    path.write_text(json.dumps(info, indent=1) + "\n", encoding="utf-8")
