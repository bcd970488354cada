"""The ``forty-thieves`` command line.

This module only dispatches. Each subcommand lives with the code it drives, as a module with ``add_arguments(parser)``
(its flags) and ``run_cli(args)`` (its handler). Only the chosen subcommand's module is
imported, so ``forty-thieves --help`` stays instant.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from agents.extras import MissingExtraError, missing_extra_message, require_extra

#: Subcommand -> (the module with its ``add_arguments`` and ``run_cli``, its one-line help).
COMMANDS: dict[str, tuple[str, str]] = {
    "deal": ("agents.cli.deal", "print the starting position of a numbered deal (PySolFC game number)"),
    "moves": ("agents.cli.moves", "list the legal moves of a position file ('-' reads stdin)"),
    "play": ("agents.cli.play", "play a deal in the terminal: undo, hints, levels, score, statistics, save/resume"),
    "replay": (
        "agents.play.replay",
        "write one self-contained HTML page replaying an agent's game, a saved game or an evaluate row",
    ),
    "evaluate": (
        "agents.evaluation.evaluate",
        "play an agent once on each deal of a split; write results.json/.csv",
    ),
    "compare": (
        "agents.evaluation.comparison",
        "compare evaluate results: win rates, seed means/IQM with bootstrap intervals, McNemar tests",
    ),
    "solve": (
        "agents.solving.sweep",
        "solve deals with the perfect-information solver (resumable); winnable sets",
    ),
    "winnability": (
        "agents.solving.winnability",
        "the winnability table from solve folders: won/lost/unknown with Wilson intervals, times, agents beside",
    ),
    "train": (
        "agents.training.train",
        "train a config file's algo: MaskablePPO or TorchPPO (configs/ppo.yaml), RLlib PPO (configs/rllib_ppo.yaml)",
    ),
    "ship": (
        "agents.training.shipping",
        "ship a run's model into agents/models/NAME.zip (+ NAME.json): --model NAME plays it",
    ),
    "dataset": (
        "agents.datasets.command",
        "demonstration data sets: collect a teacher's games with its votes (resumable), info",
    ),
    "bench": (
        "agents.bench.command",
        "steps/s of the env (single, SyncVectorEnv, native vector) and MaskablePPO training fps",
    ),
}

#: Subcommand -> the extra it needs (:data:`agents.extras.EXTRA_MODULES`); missing: the core install runs it.
COMMAND_EXTRAS: dict[str, str] = {
    "play": "play",
    "evaluate": "eval",
    "compare": "eval",
    "solve": "eval",
    "winnability": "eval",
    "train": "train",
    "ship": "train",
    "dataset": "eval",
}


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("forty-thieves-env")
    except PackageNotFoundError:  # run from a source tree that was never installed
        from forty_thieves_env import __version__

        return __version__


def build_parser(argv: Sequence[str] = ()) -> argparse.ArgumentParser:
    """The parser, with the arguments of the subcommand named in ``argv`` (the first word).

    Raises:
        MissingExtraError: the chosen subcommand's extra is not installed (checked before its module is imported).
    """
    parser = argparse.ArgumentParser(prog="forty-thieves", description=__doc__.splitlines()[0])
    parser.add_argument("--version", action="version", version=f"%(prog)s {_version()}")
    sub = parser.add_subparsers(dest="command", required=True)
    chosen = next((a for a in argv if not a.startswith("-")), None)
    for name, (module_name, help_text) in COMMANDS.items():
        p = sub.add_parser(name, help=help_text, description=help_text)
        if name == chosen:
            require_extra(COMMAND_EXTRAS.get(name), name)
            module = importlib.import_module(module_name)
            module.add_arguments(p)
            p.set_defaults(func=module.run_cli)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``forty-thieves`` console script."""
    argv = sys.argv[1:] if argv is None else list(argv)
    try:
        args = build_parser(argv).parse_args(argv)
    except MissingExtraError as err:
        print(err, file=sys.stderr)
        return 2
    try:
        return int(args.func(args) or 0)
    except MissingExtraError as err:  # a check inside the command (bench's training rows)
        print(err, file=sys.stderr)
        return 2
    except ModuleNotFoundError as err:
        # An import the up-front check cannot foresee (e.g. --agent ppo needs torch): still one line.
        advice = missing_extra_message(err, args.command)
        if advice is None:
            raise
        print(advice, file=sys.stderr)
        return 2
    except (ValueError, OSError) as err:
        print(f"forty-thieves {args.command}: error: {err}", file=sys.stderr)
        return 2
