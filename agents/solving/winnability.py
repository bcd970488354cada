"""The winnability table: how many deals of each preset the solver wins, proves lost or leaves open.

``forty-thieves winnability FOLDER [FOLDER ...]`` reads ``forty-thieves solve`` output folders
(one per preset) and prints one row per folder: the deals, the ``won`` / ``lost`` /
``unknown`` counts, each with its Wilson 95 % interval, the share decided, the median, 90th
percentile and largest solve time, and the solver's budget and commit. ``--deals`` keeps
the same deals in every folder (a folder missing one of them is an error, so that no row
silently covers fewer deals).

Beside each row, ``--agent PRESET=RESULTS`` puts an agent's win rate on the same deals (an
``evaluate`` results folder or ``results.json``): how much of the ceiling a player who does
not see the stock reaches. A deal the agent won but the solver did not decide is counted
too (it is winnable: the agent's game is a certificate). ``--json`` writes the rows,
``--plot`` a bar chart with the intervals (matplotlib, the ``notebooks`` extra).

The solver's ``won`` share is a lower bound on the winnable share and ``won + unknown`` an
upper bound; the table is only as tight as the ``unknown`` column is short.
"""

from __future__ import annotations

import argparse
import statistics
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import forty_thieves_env
from agents.evaluation.statistics import wilson_interval
from agents.storage.files import check_writable, read_json, write_json
from agents.sweeps.pool import parse_deals

from .verdicts import META_ADVICE, META_FILE, VERDICTS, VERDICTS_FILE, read_verdicts

#: The table as measured (docs/solver.md#the-winnability-table), shipped with the package:
#: ``load_rows(TABLE_PATH)``.
TABLE_PATH = Path(forty_thieves_env.__file__).resolve().parent / "data" / "winnability.json"


@dataclass
class AgentColumn:
    """An agent's games on a row's deals."""

    agent: str
    games: int
    wins: int
    win_rate: float
    ci95: tuple[float, float]
    #: Wins on deals the solver won, the share of the solver's wins they are, and wins on
    #: deals the solver left ``unknown`` (``lost`` ones would contradict the solver).
    wins_on_solver_won: int
    share_of_solver_wins: float
    wins_on_unknown: int


@dataclass
class Row:
    """One preset's line of the table."""

    variant: str
    deals: int
    first_deal: int
    last_deal: int
    counts: dict[str, int]
    ci95: dict[str, tuple[float, float]]
    decided: float
    median_seconds: float
    p90_seconds: float
    max_seconds: float
    budget: dict[str, Any]
    source: str
    command: str
    agent: AgentColumn | None = None
    extra: dict[str, Any] = field(default_factory=dict)


def load_results(path: str | Path) -> tuple[str, dict[int, bool]]:
    """An ``evaluate`` results folder or file: the agent's name and ``{deal: won}``."""
    p = Path(path)
    if p.is_dir():
        p = p / "results.json"
    if not p.is_file():
        raise ValueError(f"no evaluate results at {path} (a folder with results.json, or the file)")
    data = read_json(p, "run the evaluation again to write it")
    try:
        won = {int(r["deal"]): bool(r["won"]) for r in data["results"]}
        return str(data["settings"].get("agent", p.parent.name)), won
    except (KeyError, TypeError, ValueError, AttributeError) as err:
        raise ValueError(f"{p} is not an evaluate results.json (no {err})") from None


def table_row(folder: str | Path, deals: Sequence[int] | None = None, agent: str | Path | None = None) -> Row:
    """The row of one ``solve`` folder, over ``deals`` (default: every deal it holds).

    Raises:
        ValueError: not a solve folder, no verdicts, a requested deal missing, an agent
            results file missing a deal or from another variant, or an agent winning a deal
            the solver proved lost (one of the two is wrong).
    """
    folder = Path(folder)
    meta_path = folder / META_FILE
    if not meta_path.is_file():
        raise ValueError(f"{folder} is not a solve folder (no {META_FILE})")
    meta = read_json(meta_path, META_ADVICE)
    verdicts = read_verdicts(folder / VERDICTS_FILE)
    if not verdicts:
        raise ValueError(f"{folder} holds no verdicts")
    if deals is None:
        chosen = sorted(verdicts)
    else:
        chosen = list(deals)
        missing = [d for d in chosen if d not in verdicts]
        if missing:
            raise ValueError(f"{folder} has no verdict for {len(missing)} of the deals (first: {missing[0]})")
    rows = [verdicts[d] for d in chosen]
    n = len(rows)
    counts = {v: sum(r["verdict"] == v for r in rows) for v in VERDICTS}
    seconds = sorted(float(r["seconds"]) for r in rows)
    row = Row(
        variant=str(meta["variant"]),
        deals=n,
        first_deal=min(chosen),
        last_deal=max(chosen),
        counts=counts,
        ci95={v: wilson_interval(counts[v], n) for v in VERDICTS},
        decided=(counts["won"] + counts["lost"]) / n,
        median_seconds=statistics.median(seconds),
        p90_seconds=seconds[max(0, round(0.9 * n) - 1)],
        max_seconds=seconds[-1],
        budget=dict(meta.get("budget", {})),
        source=str(meta.get("source", "")),
        command=str(meta.get("command", "")),
    )
    if agent is not None:
        name, won = load_results(agent)
        missing = [d for d in chosen if d not in won]
        if missing:
            raise ValueError(f"{agent} has no game on {len(missing)} of the deals (first: {missing[0]})")
        wins = [d for d in chosen if won[d]]
        contradicted = [d for d in wins if verdicts[d]["verdict"] == "lost"]
        if contradicted:
            raise ValueError(f"{name} won deal {contradicted[0]}, which the solver in {folder} proved lost")
        on_won = sum(verdicts[d]["verdict"] == "won" for d in wins)
        row.agent = AgentColumn(
            agent=name,
            games=n,
            wins=len(wins),
            win_rate=len(wins) / n,
            ci95=wilson_interval(len(wins), n),
            wins_on_solver_won=on_won,
            share_of_solver_wins=on_won / counts["won"] if counts["won"] else 0.0,
            wins_on_unknown=len(wins) - on_won,
        )
    return row


def load_rows(path: str | Path) -> list[Row]:
    """The rows a ``--json`` file holds (as :func:`table_row` made them)."""
    rows = []
    for d in read_json(path, "write it again with forty-thieves winnability --json", kind=list):
        d = dict(d)
        d["ci95"] = {k: tuple(v) for k, v in d["ci95"].items()}
        if d.get("agent") is not None:
            a = dict(d["agent"])
            a["ci95"] = tuple(a["ci95"])
            d["agent"] = AgentColumn(**a)
        rows.append(Row(**d))
    return rows


def _pct(x: float) -> str:
    return f"{100 * x:.1f}"


def format_table(rows: Sequence[Row]) -> str:
    """The rows as a Markdown table (shares in %, Wilson 95 % intervals in brackets)."""
    head = (
        "| preset | deals | won | lost | unknown | decided | median / p90 / max s | agent wins | agent / solver wins |"
    )
    lines = [head, "|---" * (head.count("|") - 1) + "|"]
    for r in rows:
        cells = [
            f"{r.counts[v]} = {_pct(r.counts[v] / r.deals)} % ({_pct(r.ci95[v][0])}–{_pct(r.ci95[v][1])})"
            for v in VERDICTS
        ]
        agent = "–"
        share = "–"
        if r.agent is not None:
            a = r.agent
            agent = f"{a.agent}: {a.wins} = {_pct(a.win_rate)} % ({_pct(a.ci95[0])}–{_pct(a.ci95[1])})"
            share = f"{a.wins_on_solver_won}/{r.counts['won']}" + (
                f" (+{a.wins_on_unknown} unknown)" if a.wins_on_unknown else ""
            )
        lines.append(
            f"| {r.variant} | {r.first_deal}..{r.last_deal} ({r.deals}) | {cells[0]} | {cells[1]} | {cells[2]} "
            f"| {_pct(r.decided)} % | {r.median_seconds:.2f} / {r.p90_seconds:.2f} / {r.max_seconds:.2f} "
            f"| {agent} | {share} |"
        )
    return "\n".join(lines)


def plot_table(rows: Sequence[Row], path: str | Path | None = None) -> Any:
    """Stacked bars (won, unknown, lost) per preset with the won share's interval, and the
    agents' win rates as points with theirs: saved to ``path`` (returned), or, without a
    path, the matplotlib figure (for a notebook)."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(1.3 * len(rows) + 2, 4))
    xs = range(len(rows))
    bottom = [0.0] * len(rows)
    colours = {"won": "#4c9a2a", "unknown": "#c8c8c8", "lost": "#b03a2e"}
    for v in ("won", "unknown", "lost"):
        share = [r.counts[v] / r.deals for r in rows]
        ax.bar(xs, share, bottom=bottom, color=colours[v], label=f"solver: {v}", width=0.6)
        bottom = [b + s for b, s in zip(bottom, share, strict=True)]
    won = [r.counts["won"] / r.deals for r in rows]
    err = [
        [w - r.ci95["won"][0] for w, r in zip(won, rows, strict=True)],
        [r.ci95["won"][1] - w for w, r in zip(won, rows, strict=True)],
    ]
    ax.errorbar(xs, won, yerr=err, fmt="none", ecolor="black", capsize=3)
    with_agent = [(i, r.agent) for i, r in enumerate(rows) if r.agent is not None]
    if with_agent:
        ax.errorbar(
            [i + 0.2 for i, _ in with_agent],
            [a.win_rate for _, a in with_agent],
            yerr=[[a.win_rate - a.ci95[0] for _, a in with_agent], [a.ci95[1] - a.win_rate for _, a in with_agent]],
            fmt="o",
            color="#1f4e99",
            capsize=3,
            label="agent (no stock seen): won",
        )
    labels = [f"{r.variant}\n{r.deals} deals" + (f"\n• {r.agent.agent}" if r.agent else "") for r in rows]
    ax.set_xticks(list(xs), labels, fontsize=8)
    ax.set_ylim(0, 1)
    ax.set_ylabel("share of deals")
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1), fontsize=8)
    fig.tight_layout()
    if path is None:
        return fig
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=120)
    plt.close(fig)
    return out


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("folders", nargs="+", help="forty-thieves solve output folders, one per row")
    parser.add_argument("--deals", help="only these deals in every folder (1-200, test, ...); default: all each holds")
    parser.add_argument(
        "--agent",
        action="append",
        default=[],
        metavar="PRESET=RESULTS",
        help="an evaluate results folder (or results.json) of that preset, shown beside its row; repeatable",
    )
    parser.add_argument("--json", help="also write the rows to this JSON file")
    parser.add_argument("--plot", help="also draw the table to this image (matplotlib)")


def run_cli(args: argparse.Namespace) -> int:
    agents: dict[str, str] = {}
    for spec in args.agent:
        preset, sep, path = spec.partition("=")
        if not sep or not preset or not path:
            raise ValueError(f"--agent {spec!r}: expected PRESET=RESULTS")
        agents[preset] = path
    deals = parse_deals(args.deals) if args.deals else None
    for out, what in ((args.json, "the rows"), (args.plot, "the chart")):
        if out:
            check_writable(Path(out).parent, what)
    rows = []
    for folder in args.folders:
        meta = Path(folder) / META_FILE
        variant = read_json(meta, META_ADVICE).get("variant") if meta.is_file() else None
        rows.append(table_row(folder, deals, agents.pop(variant, None) if variant else None))
    if agents:
        raise ValueError(f"--agent for {', '.join(sorted(agents))}: no folder of that preset")
    print(format_table(rows))
    if args.json:
        write_json(args.json, [asdict(r) for r in rows], indent=2)
    if args.plot:
        print(f"wrote {plot_table(rows, args.plot)}")
    return 0
