"""The ``forty-thieves`` command line.

Subcommands are added by the parts of the project they drive; each keeps its imports inside
its handler so ``forty-thieves --help`` stays instant.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence


def _cmd_deal(args: argparse.Namespace) -> int:
    from forty_thieves_env import deal, format_position, get_variant

    print(format_position(deal(get_variant(args.variant), args.number)), end="")
    return 0


def _cmd_moves(args: argparse.Namespace) -> int:
    from pathlib import Path

    from forty_thieves_env import format_move, parse_position

    text = sys.stdin.read() if args.position == "-" else Path(args.position).read_text(encoding="utf-8")
    state = parse_position(text)
    for action in state.legal_actions():
        print(format_move(state.variant, action))
    return 0


def _cmd_evaluate(args: argparse.Namespace) -> int:
    from agents.evaluation.evaluate import run_cli

    return run_cli(args)


def _cmd_solve(args: argparse.Namespace) -> int:
    from agents.evaluation.solving import run_cli

    return run_cli(args)


def _cmd_train(args: argparse.Namespace) -> int:
    from agents.training.train import run_cli

    return run_cli(args)


def _cmd_bench(args: argparse.Namespace) -> int:
    from agents.evaluation.bench import run_cli

    return run_cli(args)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="forty-thieves", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("deal", help="print the starting position of a numbered deal (PySolFC game number)")
    p.add_argument("number", type=int, help="deal number, 1..10**20")
    p.add_argument("--variant", default="classic", help="preset name (default: classic)")
    p.set_defaults(func=_cmd_deal)

    p = sub.add_parser("moves", help="list the legal moves of a position file ('-' reads stdin)")
    p.add_argument("position", help="file in the position format, or '-'")
    p.set_defaults(func=_cmd_moves)

    p = sub.add_parser("evaluate", help="play an agent once on each deal of a split; write results.json/.csv")
    p.add_argument("--agent", default="heuristic", help="random, heuristic, lookahead or solver (default: heuristic)")
    p.add_argument("--variant", default="classic", help="preset name (default: classic)")
    p.add_argument("--deals", default="test", help="test (1..1000), validation (1001..2000), 1-50 or 3,17,99")
    p.add_argument("--n", type=int, help="play only the first N deals")
    p.add_argument("--seed", type=int, default=0, help="base seed; deal d gets a seed from (seed, d) (default: 0)")
    p.add_argument("--workers", type=int, help="processes (default: every core)")
    p.add_argument("--out", default="results", help="folder for results.json and results.csv (default: results)")
    p.add_argument("--max-moves", type=int, default=1000, help="move cap per game (default: 1000)")
    p.add_argument("--samples", type=int, help="lookahead: determinizations per move")
    p.add_argument("--candidates", type=int, help="lookahead: moves searched per decision")
    p.add_argument("--rollout-steps", type=int, help="lookahead: longest rollout")
    p.add_argument("--max-seconds", type=float, help="lookahead: seconds per move; solver: seconds per deal")
    p.add_argument("--max-nodes", type=int, help="solver: node budget per deal")
    p.add_argument("--opt", action="append", metavar="KEY=VALUE", help="any other agent option (repeatable)")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.add_argument("--model", dest="opt", action="append", type="model={}".format, help="ppo: the model .zip")
    p.set_defaults(func=_cmd_evaluate)

    p = sub.add_parser("solve", help="solve deals with the perfect-information solver (resumable); winnable sets")
    p.add_argument("--variant", default="classic", help="preset name (default: classic)")
    p.add_argument("--deals", default="test", help="test (1..1000), validation (1001..2000), 1-50 or 3,17,99")
    p.add_argument("--n", type=int, help="solve only the first N deals")
    p.add_argument("--seconds", type=float, default=10.0, help="time budget per deal (default: 10)")
    p.add_argument("--nodes", type=int, help="node budget per deal (default: 50000000)")
    p.add_argument("--memory", type=float, default=2048.0, help="memory budget per deal in MB (default: 2048)")
    p.add_argument("--strategy", default="portfolio", help="portfolio, best, beam or dfs (default: portfolio)")
    p.add_argument("--clock", default="wall", choices=("wall", "cpu"), help="clock of --seconds (default: wall)")
    p.add_argument("--workers", type=int, help="processes (default: every core)")
    p.add_argument("--out", default="solved", help="folder for meta.json, verdicts.jsonl, summary.json")
    p.add_argument("--restart", action="store_true", help="discard the verdicts already in --out")
    p.add_argument(
        "--export-winnable",
        nargs="?",
        const="",
        metavar="PATH",
        help="then write the won deals as a winnable set (default: forty_thieves_env/data/winnable/<variant>.json.gz)",
    )
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=_cmd_solve)

    p = sub.add_parser("train", help="train MaskablePPO from a config file (configs/ppo.yaml) into a run folder")
    p.add_argument("config", nargs="?", help="config file, e.g. configs/ppo.yaml (not needed with --resume)")
    p.add_argument("--env", help="env id: a section of the config (default: its only one, else FortyThieves-v0)")
    p.add_argument("--total-timesteps", type=int, help="override n_timesteps")
    p.add_argument("--seed", type=int, help="override seed")
    p.add_argument("--max-minutes", type=float, help="stop training after this many minutes (then evaluate)")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="override a config key (a.b=v)")
    p.add_argument("--resume", metavar="RUN", help="continue the run folder RUN from its last checkpoint")
    p.add_argument("--runs-dir", default="runs", help="where new run folders go (default: runs)")
    p.add_argument("--name", help="run folder name (default: <env>_<algo>_<time>)")
    p.add_argument("--no-final-eval", action="store_true", help="skip the test-deal evaluation at the end")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.add_argument("--verbose", action="store_true", help="print SB3's log table after each rollout")
    p.set_defaults(func=_cmd_train)

    p = sub.add_parser("bench", help="steps/s of the env (single, SyncVectorEnv, native vector) and MaskablePPO fps")
    p.add_argument("--env", default="FortyThieves-v0", help="env id (default: FortyThieves-v0)")
    p.add_argument("--seconds", type=float, default=4.0, help="timed seconds per env row (default: 4)")
    p.add_argument("--num-envs", type=int, default=4096, help="games in the native vector env (default: 4096)")
    p.add_argument("--sync-envs", type=int, default=16, help="envs in the SyncVectorEnv (default: 16)")
    p.add_argument("--ppo-envs", type=int, default=16, help="envs for MaskablePPO (default: 16)")
    p.add_argument("--ppo-timesteps", type=int, default=16384, help="timed MaskablePPO steps per row (default: 16384)")
    p.add_argument("--ppo-n-steps", type=int, default=128, help="MaskablePPO n_steps (default: 128)")
    p.add_argument("--no-ppo", action="store_true", help="skip the MaskablePPO rows")
    p.add_argument("--seed", type=int, default=0, help="seed of deals and actions (default: 0)")
    p.set_defaults(func=_cmd_bench)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``forty-thieves`` console script."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except (ValueError, OSError) as err:
        print(f"forty-thieves {args.command}: error: {err}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
