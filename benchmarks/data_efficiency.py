"""Data efficiency: a student's win rate on the test deals against the teacher-labelled positions it learnt from.

Reads training run folders (``forty-thieves train ... --total-timesteps 0``: the imitation alone,
then the final evaluation) and, per curve, pools the seeds run at each data size: the positions
come from the run's ``imitation.json`` (every round's positions), the wins from its
``final_eval.json``. Prints a Markdown table and, with ``--plot``, draws the curves (win rate
with Wilson 95 % intervals, positions on a log axis) to a PNG.

    python benchmarks/data_efficiency.py \\
        --curve "sampling_solver=runs/de_ss_*" --curve "heuristic=runs/de_h_*" \\
        --plot docs/images/data-efficiency.png

The runs behind the figure in docs/datasets.md, and their commands, are in
docs/research/2026-12-06-search-teacher.md.
"""

from __future__ import annotations

import argparse
import glob
import json
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

from agents.evaluation.statistics import wilson_interval
from agents.storage.yamlfile import load_yaml


@dataclass(frozen=True)
class Point:
    """One run: how many labelled positions it imitated and how it played the test deals."""

    run: str
    positions: int
    wins: int
    games: int
    seed: int


def read_run(folder: Path) -> Point:
    """The point of one run folder; a folder without its three files is a ``ValueError`` naming it."""
    try:
        imitation = json.loads((folder / "imitation.json").read_text(encoding="utf-8"))
        final = json.loads((folder / "final_eval.json").read_text(encoding="utf-8"))
        (section,) = load_yaml(folder / "config.yaml").values()  # one section, keyed by the env id
    except (OSError, ValueError) as err:  # a YAMLFileError is a ValueError
        raise ValueError(f"{folder}: not a finished imitation run ({err})") from err
    positions = sum(int(r["positions"]) for r in imitation["rounds"])
    summary = final["summary"]
    return Point(folder.name, positions, int(summary["wins"]), int(summary["games"]), int(section["seed"]))


def rows(points: list[Point]) -> list[tuple[int, int, int, int, list[Point]]]:
    """``(positions, seeds, wins, games, points)`` per data size (mean positions over the seeds),
    wins and games pooled, smallest size first. Runs within 15 % of the smallest of a size are that size
    (the heuristic's games give a few per cent more or fewer positions from seed to seed)."""
    sizes: dict[int, list[Point]] = defaultdict(list)
    for p in sorted(points, key=lambda p: p.positions):
        key = next((k for k in sizes if abs(k - p.positions) <= 0.15 * k), p.positions)
        sizes[key].append(p)
    out = []
    for group in sizes.values():
        positions = round(sum(p.positions for p in group) / len(group))
        out.append((positions, len(group), sum(p.wins for p in group), sum(p.games for p in group), group))
    return out


def table(curves: dict[str, list[Point]]) -> str:
    """The Markdown table of every curve's sizes."""
    lines = [
        "| teacher | positions | seeds | won | win rate | Wilson 95 % | per seed |",
        "|---------|-----------|-------|-----|----------|-------------|----------|",
    ]
    for name, points in curves.items():
        for positions, seeds, wins, games, group in rows(points):
            lo, hi = wilson_interval(wins, games)
            per_seed = ", ".join(f"{p.wins}/{p.games}" for p in sorted(group, key=lambda p: p.seed))
            lines.append(
                f"| {name} | {positions:,} | {seeds} | {wins}/{games} | {100 * wins / games:.2f} % "
                f"| {100 * lo:.2f}–{100 * hi:.2f} % | {per_seed} |"
            )
    return "\n".join(lines)


def plot(curves: dict[str, list[Point]], out: Path) -> None:
    """Win rate (pooled over seeds, Wilson 95 % bars) against positions, log x."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.4, 4.0), dpi=110)
    for name, points in curves.items():
        r = rows(points)
        xs = [row[0] for row in r]
        ys = [100 * row[2] / row[3] for row in r]
        cis = [wilson_interval(row[2], row[3]) for row in r]
        below = [y - 100 * lo for y, (lo, _) in zip(ys, cis, strict=True)]
        above = [100 * hi - y for y, (_, hi) in zip(ys, cis, strict=True)]
        err = [below, above]
        ax.errorbar(xs, ys, yerr=err, marker="o", capsize=3, label=f"student of {name}")
    ax.set_xscale("log")
    ax.set_xlabel("teacher-labelled positions imitated (classic)")
    ax.set_ylabel("win rate on test deals 1..1000 (%)")
    ax.set_title("Imitation alone (lookup_scorer, one forward pass a move)")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    fig.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--curve", action="append", required=True, metavar="NAME=GLOB",
                        help="a curve's name and the glob of its run folders (repeat for each curve)")
    parser.add_argument("--plot", type=Path, help="write the figure to this PNG")
    args = parser.parse_args(argv)
    curves: dict[str, list[Point]] = {}
    for spec in args.curve:
        name, sep, pattern = spec.partition("=")
        if not sep or not name:
            parser.error(f"--curve {spec!r}: expected NAME=GLOB")
        folders = sorted(Path(p) for p in glob.glob(pattern) if Path(p).is_dir())
        if not folders:
            parser.error(f"--curve {spec!r}: no run folder matches {pattern!r}")
        try:
            curves[name] = [read_run(f) for f in folders]
        except ValueError as err:
            parser.error(str(err))
    print(table(curves))
    if args.plot:
        plot(curves, args.plot)
        print(f"plot -> {args.plot}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
