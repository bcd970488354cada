"""``forty-thieves dataset``: ``collect`` a teacher's games into a data set folder (resumable),
``info`` to summarise one."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The ``forty-thieves dataset`` subcommands and their arguments (read by :func:`run_cli`)."""
    sub = parser.add_subparsers(dest="action", required=True)
    c = sub.add_parser(
        "collect",
        help="play a teacher on training deals; write every position, its mask, the move and the votes (resumable)",
        description="Play a teacher on training deals drawn with --seed and write a data set folder in chunks "
        "that each finish whole; the same command on the same --out resumes (docs/datasets.md).",
    )
    c.add_argument(
        "--teacher",
        required=True,
        help="a registered agent reading the Dict observation (sampling_solver, heuristic, ...)",
    )
    c.add_argument(
        "--teacher-opt",
        action="append",
        metavar="KEY=VALUE",
        help="a teacher option (repeatable), e.g. samples=8, nodes_per_solve=10000",
    )
    game = c.add_mutually_exclusive_group()
    game.add_argument("--variant", help="preset name (default: classic)")
    game.add_argument("--env", help="a registered env id (FortyThieves-Easy-v0, ...)")
    c.add_argument("--games", type=int, required=True, help="games, one a training deal")
    c.add_argument("--out", required=True, help="the data set folder (an existing one of this command resumes)")
    c.add_argument("--seed", type=int, default=0, help="draws the deals and seeds the teacher per deal (default: 0)")
    c.add_argument("--workers", type=int, help="processes (default: every core)")
    c.add_argument("--chunk", type=int, default=25, help="games per chunk file: what a kill can lose (default: 25)")
    c.add_argument(
        "--idle-cut",
        type=int,
        default=100,
        help="end a game after this many moves without a reward or a stock turn (default: 100; 0: never)",
    )
    c.add_argument("--quiet", action="store_true", help="no progress bar")
    i = sub.add_parser("info", help="games, positions, decisive share, the teacher's win rate of a data set")
    i.add_argument("folder", help="a data set folder")
    i.add_argument("--json", action="store_true", help="print the figures as JSON")


def run_cli(args: Any) -> int:
    """The ``forty-thieves dataset`` handler (arguments from :func:`add_arguments`)."""
    if args.action == "collect":
        return _collect(args)
    return _info(args)


def _collect(args: Any) -> int:
    from agents.evaluation.evaluate import parse_option

    from .collection import collect
    from .dataset import load_dataset

    options = dict(parse_option(t) for t in args.teacher_opt or ())
    try:
        done = collect(
            args.out,
            args.teacher,
            args.env or args.variant or "classic",
            args.games,
            teacher_options=options,
            seed=args.seed,
            workers=args.workers,
            chunk=args.chunk,
            idle_cut=args.idle_cut,
            progress=not args.quiet,
            log=lambda line: print(line, file=sys.stderr),
        )
    except KeyboardInterrupt:
        print(f"\ninterrupted: the finished chunks are in {Path(args.out)}; run the same command again to resume",
              file=sys.stderr)  # fmt: skip
        return 130
    kept = f", {done.kept} kept from before" if done.kept else ""
    redone = f", {len(done.redone)} damaged collected again" if done.redone else ""
    print(
        f"wrote {done.written} of {done.chunks} chunks into {done.folder} ({done.games} games, "
        f"{done.positions:,} positions in {done.seconds:.0f} s{kept}{redone})"
    )
    print(format_info(load_dataset(args.out, log=None).summary()))
    return 0


def _info(args: Any) -> int:
    import json

    from .dataset import load_dataset

    summary = load_dataset(args.folder, log=lambda line: print(line, file=sys.stderr)).summary()
    if args.json:
        print(json.dumps(summary, indent=1))
    else:
        print(format_info(summary))
    return 0


def format_info(s: dict[str, Any]) -> str:
    """The lines ``forty-thieves dataset info`` prints for a :meth:`.dataset.Dataset.summary`."""
    from agents.evaluation.statistics import wilson_interval

    g, n = s["games"], s["positions"]
    lo, hi = wilson_interval(s["won"], g)
    opts = ", ".join(f"{k}={v}" for k, v in s["teacher_options"].items())
    env = s["env_id"] + (f" {s['env_kwargs']}" if s["env_kwargs"] else "")
    share = (lambda k: f"{s[k] / n:.1%}") if n else (lambda k: "-")
    lines = [
        f"{s['folder']}: {s['teacher']}{f' ({opts})' if opts else ''} on {env}, seed {s['seed']}",
        f"  chunks      {s['chunks']}/{s['chunks_expected']}"
        + (f" ({s['damaged']} damaged, skipped)" if s["damaged"] else ""),
        f"  games       {g}/{s['games_expected']}: won {s['won']} = {s['won'] / max(g, 1):.1%} "
        f"(Wilson 95 % {lo:.1%}-{hi:.1%}), {s['mean_home']:.1f} cards home, {s['cut']} cut",
        f"  positions   {n:,} ({s['mean_length']:.0f} a game): decisive {s['decisive']:,} = {share('decisive')}, "
        f"searched {s['searched']:,} = {share('searched')}",
        f"  cost        {s['seconds_per_game']:.3g} CPU s a game; {s['bytes'] / 1e6:.2f} MB on disk, "
        f"{s['bytes'] / 1e3 / max(n, 1):.3f} MB per 1000 positions",
    ]
    return "\n".join(lines)
