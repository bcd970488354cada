"""Every training command the docs and the config files show works end to end, at a tiny size.

The commands are read from the pages (code blocks of README.md and docs/*.md, not the research
notes) and from the configs' comments, so a page cannot show a command that fails after training.
Each runs as written with its sizes scaled down (``--smoke``, and a tiny rollout, evaluation and step
count after its own settings): it trains, evaluates and writes its final evaluation, or it is
refused in one line before any run folder is made, for a reason this machine has (no GPU, no Ray
cluster, a start model or a data set the page makes first). Every registered id trains from configs/ppo.yaml.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from agents.cli import main
from forty_thieves_env.envs.registration import ALL_IDS

ROOT = Path(__file__).resolve().parents[3]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
CONFIGS = [ROOT / "configs" / "ppo.yaml", ROOT / "configs" / "rllib_ppo.yaml"]
#: A command at the start of a line, or in a shell loop's body (``for s in 0 1 2; do ...``).
COMMAND = re.compile(r"(?:^|\bdo )(forty-thieves train(?=\s|$)[^;#\n]*)", re.M)
#: Tiny sizes, set after the command's own settings.
TINY_PPO = [
    "num_envs=8",
    "n_steps=32",
    "batch_size=64",
    "eval_freq=128",
    "n_eval_episodes=2",
    "save_freq=128",
    "final_eval_episodes=2",
    "torch_threads=1",
]
TINY_RLLIB = ["iterations=1", "train_batch_size=128", "batch_size=64", "num_cpus=2", "eval_freq=1", "n_eval_episodes=2"]
#: Why a documented command may be refused here, by what it asks for (the message must say so).
REFUSALS = {
    "device=cuda": "no CUDA GPU",
    "ray_address=auto": "the Ray cluster at auto",
    "init_model=runs/": "init_model: no shipped model",
    "imitation.dataset=runs/": "not a data set",  # the page collects it first
}


def code_blocks(text: str) -> list[str]:
    """The fenced code blocks of a page, with shell line continuations joined."""
    blocks = re.findall(r"```[a-z]*\n(.*?)```", text, flags=re.S)
    return [re.sub(r"\\\n\s*", " ", block) for block in blocks]


def documented_commands() -> list[tuple[str, str]]:
    """``(where, command)`` for every ``forty-thieves train`` command shown, in page order, once each."""
    found: dict[str, str] = {}
    for page in PAGES:
        for block in code_blocks(page.read_text(encoding="utf-8")):
            for command in COMMAND.findall(block):
                found.setdefault(command.strip(), page.name)
    for config in CONFIGS:
        for line in config.read_text(encoding="utf-8").splitlines():
            if line.startswith("#"):
                for command in COMMAND.findall(line[1:].strip()):
                    found.setdefault(command.strip(), config.name)
    return [(where, command) for command, where in found.items()]


COMMANDS = documented_commands()


def test_the_pages_show_training_commands() -> None:
    assert len(COMMANDS) >= 10, COMMANDS  # the reader above finds what the pages show
    assert any("--resume" in c for _, c in COMMANDS) and any("rllib" in c for _, c in COMMANDS)


def tiny_argv(command: str, runs: Path) -> list[str]:
    """The command's arguments with paths made absolute (runs/ into ``runs``) and sizes scaled down."""
    words = shlex.split(command.replace("$s", "0"))[2:]  # after "forty-thieves train"
    argv: list[str] = []
    skip = False
    for i, word in enumerate(words):
        if skip:
            skip = False
            continue
        if word in ("--total-timesteps", "--max-minutes"):
            skip = True
            continue
        if word.startswith("runs/"):
            word = str(runs / word.removeprefix("runs/"))
        elif i == 0 and (ROOT / word).exists():
            word = str(ROOT / word)
        argv.append(word)
    resume = argv[argv.index("--resume") + 1] if "--resume" in argv else None
    rllib = "rllib" in command or (resume is not None and (Path(resume) / "progress.jsonl").exists())
    tiny = TINY_RLLIB if rllib else TINY_PPO
    if "--resume" not in argv:
        argv += ["--runs-dir", str(runs), "--smoke"]
    else:
        tiny = [] if rllib else ["final_eval_episodes=2", "eval_freq=128", "n_eval_episodes=2"]
    for item in tiny:
        argv += ["--set", item]
    if not rllib:
        argv += ["--total-timesteps", "256" if "--resume" not in argv else "384"]
    return [*argv, "--quiet"]


def run_folders(runs: Path) -> set[Path]:
    return {p for p in runs.iterdir() if p.is_dir()} if runs.is_dir() else set()


def resumed_folder(command: str, runs: Path) -> str:
    """The run folder a documented ``--resume`` names, made by the command the page shows before it."""
    target = shlex.split(command)[shlex.split(command).index("--resume") + 1].removeprefix("runs/")
    position = [c for _, c in COMMANDS].index(command)
    for _, before in reversed(COMMANDS[:position]):
        if "--resume" in before:
            continue
        name = re.search(r"--name (\S+)", before)
        if (name is None) == ("<" in target) and (name is None or name.group(1) == target):
            assert main(["train", *tiny_argv(before, runs)]) == 0, before
            made = sorted(run_folders(runs), key=lambda p: p.stat().st_mtime)
            return f"runs/{made[-1].name}"
    raise AssertionError(f"no command before {command!r} makes its run folder")


@pytest.mark.parametrize(("where", "command"), COMMANDS, ids=[c for _, c in COMMANDS])
def test_a_documented_command_trains_or_is_refused_before_the_run_folder(
    where: str, command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # "auto" means the cluster this machine joined, or any Ray running here (another test's, in
    # parallel): point it at a port where none answers, as on a machine that joined none.
    if "ray_address=auto" in command:
        monkeypatch.setenv("RAY_ADDRESS", "127.0.0.1:9")
    runs = tmp_path / "runs"
    resumed = None
    if "--resume" in command:
        folder = resumed_folder(command, runs)
        command = re.sub(r"--resume \S+", f"--resume {folder}", command)
        resumed = runs / folder.removeprefix("runs/")
    before = run_folders(runs)
    capsys.readouterr()
    rc = main(["train", *tiny_argv(command, runs)])
    out, err = capsys.readouterr()
    reason = next((why for asks, why in REFUSALS.items() if asks in command), None)
    if reason is not None:
        assert rc == 2, (where, out)
        assert err.startswith("forty-thieves train: error: ") and err.count("\n") == 1 and reason in err, err
        assert run_folders(runs) == before  # refused before the run folder was made
        return
    assert rc == 0, (where, err)
    if resumed is not None:
        run = resumed
    else:
        (run,) = run_folders(runs) - before
    if "rllib" in command or (run / "progress.jsonl").exists():
        assert (run / "eval_state.json").is_file() and (run / "checkpoint").is_dir(), where
    else:
        assert (run / "final_eval.json").is_file() and (run / "eval_state.json").is_file(), where


@pytest.mark.parametrize("config", CONFIGS, ids=[c.name for c in CONFIGS])
def test_every_config_file_has_a_section_for_every_registered_id(config: Path) -> None:
    from agents.configs.config_file import load_env_config

    for env_id in ALL_IDS:
        env, _ = load_env_config(config, env_id)
        assert env.env_id == env_id


@pytest.mark.parametrize("env_id", ALL_IDS)
def test_every_registered_id_trains_from_the_recipe(env_id: str, tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    argv = tiny_argv(f"forty-thieves train configs/ppo.yaml --env {env_id}", runs)
    assert main(["train", *argv]) == 0
    (run,) = run_folders(runs)
    assert (run / "final_eval.json").is_file() and run.name.startswith(env_id)
