"""Every ``forty-thieves`` subcommand works in a core-only install or says, in one line, which extra to install."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import pytest

from agents import cli
from agents.extras import EXTRA_MODULES, MissingExtraError, missing_extra_message, require_extra

tomllib = pytest.importorskip("tomllib")  # Python 3.11+

ROOT = Path(__file__).resolve().parent.parent
LINE = re.compile(r'^forty-thieves \S+ needs the \[(\w+)\] extra \(.+ missing\): pip install "forty-thieves-env\[\1\]"')

#: Requirement name in pyproject.toml -> the module the commands import (None: not imported by a command).
REQUIREMENT_MODULES = {
    "tqdm": "tqdm",
    "scipy": "scipy",
    "torch": "torch",
    "stable-baselines3": "stable_baselines3",
    "sb3-contrib": "sb3_contrib",
    "tensorboard": "tensorboard",
    "pyyaml": "yaml",
    "pydantic": "pydantic",
    "textual": "textual",
    "selenium": None,  # the replay page's browser test only
    "ray": "ray",
}


def _requirement_modules(extras: dict[str, list[str]], extra: str) -> set[str]:
    modules: set[str] = set()
    for req in extras[extra]:
        name = re.split(r"[<>=\[;]", req, maxsplit=1)[0].strip().lower()
        if name == "forty-thieves-env":
            modules |= _requirement_modules(extras, re.search(r"\[(\w+)\]", req).group(1))
        elif REQUIREMENT_MODULES[name]:
            modules.add(REQUIREMENT_MODULES[name])
    return modules


@pytest.mark.parametrize("extra", sorted(EXTRA_MODULES))
def test_extra_modules_match_pyproject(extra):
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    # rich comes with textual, and agents.play.tui imports it directly.
    assert set(EXTRA_MODULES[extra]) - {"rich"} == _requirement_modules(extras, extra)


@pytest.mark.parametrize("command", sorted(cli.COMMAND_EXTRAS))
def test_missing_extra_is_one_line_before_any_work(command, monkeypatch, capsys):
    extra = cli.COMMAND_EXTRAS[command]
    monkeypatch.setitem(sys.modules, EXTRA_MODULES[extra][-1], None)  # find_spec then finds nothing

    def no_import(name):
        raise AssertionError(f"{name} imported before the extra was checked")

    monkeypatch.setattr(cli.importlib, "import_module", no_import)
    assert cli.main([command]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and LINE.match(err), err
    assert f"[{extra}]" in err and EXTRA_MODULES[extra][-1] in err


def test_bench_names_train_or_no_ppo(monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "sb3_contrib", None)
    args = cli.build_parser(["bench"]).parse_args(["bench"])
    with pytest.raises(MissingExtraError, match=r"\[train\].*--no-ppo"):
        args.func(args)


def test_require_extra_passes_when_installed():
    require_extra(None, "deal")
    require_extra("eval", "evaluate")  # the test venv has [dev], so every extra


def test_late_import_names_its_extra():
    err = ModuleNotFoundError("No module named 'torch.nn'", name="torch.nn")
    assert missing_extra_message(err, "evaluate") == (
        'forty-thieves evaluate needs the [train] extra (torch missing): pip install "forty-thieves-env[train]"'
    )
    assert missing_extra_message(ModuleNotFoundError("x", name="nowhere"), "evaluate") is None


def test_version(capsys):
    with pytest.raises(SystemExit) as exit_:
        cli.main(["--version"])
    assert exit_.value.code == 0
    assert capsys.readouterr().out.strip() == f"forty-thieves {metadata.version('forty-thieves-env')}"


def _core_path(tmp_path: Path) -> Path:
    """A folder holding links to the core install's packages only (forty-thieves-env's requirements without
    extras, recursively), so that ``python -S`` with it on PYTHONPATH sees what ``pip install .`` would."""
    site = tmp_path / "core-site"
    site.mkdir()
    todo, seen = ["forty-thieves-env"], set()
    while todo:
        dist = metadata.distribution(todo.pop())
        if dist.metadata["Name"].lower() in seen:
            continue
        seen.add(dist.metadata["Name"].lower())
        for req in dist.requires or ():
            if "extra ==" not in req and ("sys_platform" not in req or sys.platform in req):
                todo.append(re.split(r"[<>=!~\[;( ]", req, maxsplit=1)[0])
        if dist.metadata["Name"].lower() == "forty-thieves-env":
            continue  # the checkout itself goes on the path below
        for f in dist.files or ():
            top = f.parts[0]
            if top.endswith((".dist-info", ".pth")) or top in ("..", "__pycache__", "bin"):
                continue
            src = Path(dist.locate_file(top))
            if src.exists() and not (site / top).exists():
                (site / top).symlink_to(src)
    return site


@pytest.fixture(scope="module")
def core_env(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("core")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV"))}
    env["PYTHONPATH"] = f"{_core_path(tmp)}{os.pathsep}{ROOT}"
    env["FORTY_THIEVES_DATA"] = str(tmp / "data")
    return tmp, env


def _run(core_env, *argv: str) -> subprocess.CompletedProcess:
    tmp, env = core_env
    code = "import sys; from agents.cli import main; sys.exit(main())"
    return subprocess.run(
        [sys.executable, "-S", "-c", code, *argv], env=env, cwd=tmp, capture_output=True, text=True, timeout=300
    )


def test_core_site_lacks_the_extras(core_env):
    names = ("tqdm", "scipy", "torch", "yaml", "textual", "rich")
    probe = f"import importlib.util as u; print([m for m in {names!r} if u.find_spec(m)])"
    _, env = core_env
    out = subprocess.run([sys.executable, "-S", "-c", probe], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


# Each subcommand with arguments that would do real work; the core ones must work, the others say what to install.
ARGS = {
    "deal": ["1"],
    "moves": ["pos.txt"],
    "replay": ["--agent", "heuristic", "--deal", "1", "--html", "page.html"],
    "bench": ["--no-ppo", "--seconds", "0.2", "--num-envs", "8", "--sync-envs", "2", "--device-envs", "8"],
    "play": ["--deal", "1"],
    "evaluate": ["--n", "2", "--quiet"],
    "compare": ["a", "b"],
    "solve": ["--deals", "1"],
    "winnability": ["solved"],
    "train": ["configs/ppo.yaml"],
    "ship": ["runs/x", "--name", "x"],
    "dataset": ["info", "data"],
}


@pytest.mark.parametrize("command", sorted(cli.COMMANDS))
def test_each_subcommand_in_a_core_install(command, core_env):
    assert set(ARGS) == set(cli.COMMANDS)
    tmp, _ = core_env
    if command == "moves":
        (tmp / "pos.txt").write_text(_run(core_env, "deal", "1").stdout)
    done = _run(core_env, command, *ARGS[command])
    assert "Traceback" not in done.stderr, done.stderr
    if command in cli.COMMAND_EXTRAS:
        assert done.returncode == 2 and done.stderr.count("\n") == 1 and LINE.match(done.stderr), done.stderr
        assert f"[{cli.COMMAND_EXTRAS[command]}]" in done.stderr
    else:
        assert done.returncode == 0, done.stderr
        if command == "bench":  # and with its training rows it names the extra first
            done = _run(core_env, command)
            assert done.returncode == 2 and "[train]" in done.stderr and "--no-ppo" in done.stderr, done.stderr


def test_readme_lists_every_extra():
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    readme = (ROOT / "README.md").read_text()
    assert [e for e in extras if f"`[{e}]`" not in readme] == []


def test_license_and_citation_agree_with_pyproject():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["license"] == "MIT" and (ROOT / "LICENSE").read_text().startswith("MIT License")
    citation = (ROOT / "CITATION.cff").read_text()
    assert f"version: {project['version']}\n" in citation and "license: MIT\n" in citation
    assert "cff-version: 1.2.0" in citation
