"""Benchmark the perfect-information solver on a range of numbered deals (one process).

    .venv/bin/python benchmarks/solver_bench.py --first 1 --last 200 --seconds 10

Prints one line per deal and a summary: won / lost / unknown, the fraction decided (with
Wilson 95 % intervals) and the time distribution (median and 90th percentile, all deals and
decided ones). Every ``won`` line is replayed through the engine before it counts. ``--json``
writes every result; ``--summarize A.json B.json ...`` prints the summary of several such
files together (a range split over processes):

    .venv/bin/python benchmarks/solver_bench.py --first 1 --last 100 --clock cpu --json a.json &
    .venv/bin/python benchmarks/solver_bench.py --first 101 --last 200 --clock cpu --json b.json
    .venv/bin/python benchmarks/solver_bench.py --summarize a.json b.json

The summary ends with the search speed, positions generated and stored per second
(``--deals 1,3,4 --seconds 5 --clock cpu --strategy S``: three classic deals no search
decides, so every second counts).
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

import numpy as np

from agents.evaluation.statistics import wilson_interval
from agents.search.solver import STRATEGIES, solve
from agents.sweeps.pool import parse_deals
from forty_thieves_env import deal, get_variant


def summarize(rows: list[dict], title: str) -> None:
    n = len(rows)
    counts = {v: sum(r["verdict"] == v for r in rows) for v in ("won", "lost", "unknown")}
    decided = counts["won"] + counts["lost"]
    secs = np.array([r["seconds"] for r in rows])
    dsecs = np.array([r["seconds"] for r in rows if r["verdict"] != "unknown"])

    def dist(x: np.ndarray) -> str:
        if len(x) == 0:
            return "-"
        return f"median {np.median(x):.2f}s, p90 {np.percentile(x, 90):.2f}s, max {x.max():.2f}s, mean {x.mean():.2f}s"

    def frac(k: int) -> str:
        lo, hi = wilson_interval(k, n)
        return f"{k / n:.1%} (Wilson 95 % {lo:.1%}-{hi:.1%})"

    reasons: dict[str, int] = {}
    for r in rows:
        if r["verdict"] == "unknown":
            reasons[r["reason"]] = reasons.get(r["reason"], 0) + 1
    print(f"\n{title}")
    print(f"won {counts['won']}  lost {counts['lost']}  unknown {counts['unknown']}  of {n}  (unknown by {reasons})")
    print(f"decided {decided}/{n} = {frac(decided)}")
    print(f"won {counts['won']}/{n} = {frac(counts['won'])}")
    print(f"time, all deals:     {dist(secs)}")
    print(f"time, decided deals: {dist(dsecs)}")
    total = float(secs.sum())
    if total > 0:
        nodes = sum(r["nodes"] for r in rows)
        states = sum(r.get("states", 0) for r in rows)
        print(f"speed: {nodes / total / 1e3:.0f}k positions generated and {states / total / 1e3:.0f}k stored a second")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--variant", default="classic", help="preset name (default classic)")
    p.add_argument("--first", type=int, default=1, help="first deal number (default 1)")
    p.add_argument("--last", type=int, default=200, help="last deal number (default 200)")
    p.add_argument("--deals", help="these deals instead of --first..--last: 1,3,4 or 1-5,9")
    p.add_argument("--seconds", type=float, default=10.0, help="time budget per deal (default 10)")
    p.add_argument("--nodes", type=int, default=100_000_000, help="node budget per deal")
    p.add_argument("--memory-mb", type=float, default=2048.0, help="memory budget per deal (default 2048)")
    p.add_argument("--strategy", default="portfolio", choices=list(STRATEGIES), help="search (default portfolio)")
    p.add_argument("--clock", default="wall", choices=["wall", "cpu"], help="budget clock: wall or process CPU time")
    p.add_argument("--json", type=Path, help="write every result to this JSON file")
    p.add_argument("--quiet", action="store_true", help="summary only")
    p.add_argument("--summarize", type=Path, nargs="+", help="only print the summary of these --json files")
    args = p.parse_args(argv)
    if args.summarize:
        rows, titles = [], []
        for path in args.summarize:
            data = json.loads(path.read_text())
            rows += data["results"]
            a = data["args"]
            titles.append(
                f"{a['variant']} {a['first']}..{a['last']} {a['strategy']} {a['seconds']}s ({a['clock']} clock) "
                f"{a['memory_mb']} MB"
            )
        rows.sort(key=lambda r: r["deal"])
        summarize(rows, f"{len(rows)} deals: " + "; ".join(titles))
        return 0

    variant = get_variant(args.variant)
    solve(deal(variant, 1), max_nodes=100, strategy=args.strategy)  # compile outside the timings
    rows = []
    load0 = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    t_start = time.perf_counter()
    numbers = parse_deals(args.deals) if args.deals else range(args.first, args.last + 1)
    for number in numbers:
        state = deal(variant, number)
        r = solve(
            state,
            max_nodes=args.nodes,
            max_seconds=args.seconds,
            max_memory_mb=args.memory_mb,
            strategy=args.strategy,
            clock=args.clock,
        )
        if r.verdict == "won":
            game = state.copy()
            for move in r.moves:
                game.play(move)
            if not game.is_won():
                raise SystemExit(f"deal {number}: the winning line does not replay to a win")
        rows.append(
            {
                "deal": number,
                "verdict": r.verdict,
                "reason": r.reason,
                "seconds": round(r.seconds, 4),
                "nodes": r.nodes,
                "states": r.states,
                "moves": len(r.moves),
                "decided_by": r.decided_by,
            }
        )
        if not args.quiet:
            print(
                f"{number:6d} {r.verdict:7s} {r.reason:7s} {r.seconds:7.2f}s {r.nodes:11d} nodes {len(r.moves):4d} mv",
                flush=True,
            )
    wall = time.perf_counter() - t_start

    summarize(
        rows,
        f"{variant.name} deals {args.deals or f'{args.first}..{args.last}'} ({len(rows)}), {args.strategy}, "
        f"budget {args.seconds:g}s "
        f"({args.clock} clock) / {args.nodes} nodes / {args.memory_mb:g} MB",
    )
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"wall {wall:.0f}s, load average {load0:.1f} at the start and {load:.1f} at the end on {os.cpu_count()} CPUs")
    if args.json:
        meta = {k: str(v) for k, v in vars(args).items()}
        meta.update(wall_seconds=f"{wall:.0f}", load_start=f"{load0:.1f}", load_end=f"{load:.1f}")
        args.json.write_text(json.dumps({"args": meta, "results": rows}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
