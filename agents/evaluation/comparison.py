"""``forty-thieves compare``: several agents (or training seeds of a recipe) on the same deals.

Reads the ``results.json`` files of ``forty-thieves evaluate`` (their per-deal rows) and
reports, for the deals they share:

* **per file**: wins / deals and the Wilson 95 % interval (as ``evaluate`` prints it);
* **per group** (one agent or recipe; several files = several training seeds): the mean and
  the interquartile mean (IQM) of the files' win rates, each with a percentile bootstrap
  95 % interval that resamples the seeds and the deals
  (:func:`~agents.evaluation.statistics.seed_statistics`, seeded by ``--seed``);
* **between groups**: McNemar's exact test (:func:`~agents.evaluation.statistics.mcnemar`)
  for each *pair of seeds*: the ``i``-th file of one group against the ``i``-th of the other
  (files in the order given; the larger group's extra files sit out), on the deals both
  played; then *pooled*: the discordant counts of those pairs added up and tested once.
  Different seeds' models play independently on a given deal, so under "equally good" every
  discordant (pair, deal) is its own fair coin and the pooled test is exact too.

Groups: ``--group NAME=a.json,b.json`` names one (repeatable): the only way to join files of
different models or settings (a recipe's training seeds). A file given plainly joins the
files that played with the same agent, the same **model** and the same options that change
play: one agent with one model (``ppo model=classic``, ``ppo model=runs/a deterministic=False``).
The model is told apart by the digest ``evaluate`` records (``model_sha256``: a run folder and
its ``best_model.zip`` are one model, a model retrained in place is another), else by the
path as given. The group's name is the ``--label`` it was evaluated with, else the agent, its
model and those options; files of one label that differ in model or options are separate
groups named by both, and the report says so. Two groups that share deals always get the
paired test (McNemar) below. An evaluate ``--out`` folder stands for its ``results.json``.

Refused, with the files named: files of different variants or move caps, files of one group
that played different deals (a group's seeds must be comparable), groups that share no deal,
a file given twice, a file without per-deal rows.
"""

from __future__ import annotations

import argparse
import json
import os
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from .statistics import N_BOOT, McNemarResult, mcnemar, seed_statistics, wilson_interval

#: Agent options that do not change how the agent plays: left out of a file's group.
NOT_PLAY = frozenset({"seed", "threads", "device", "batched", "batch_size"})


@dataclass
class ResultsFile:
    """The rows of one ``results.json`` and what they were played with.

    Attributes:
        path: Where it was read from.
        settings: Its ``settings`` (agent, variant, deals, seed, ...).
        won: Deal number -> won, for every row.
    """

    path: Path
    settings: dict[str, Any]
    won: dict[int, bool]

    @property
    def agent(self) -> str:
        return str(self.settings.get("agent") or self.path.stem)

    @property
    def model(self) -> str | None:
        """The model as ``evaluate --model`` was given it (normalised as a path), or None."""
        model = (self.settings.get("agent_options") or {}).get("model")
        return None if model is None else os.path.normpath(str(model))

    @property
    def play_options(self) -> list[str]:
        """``key=value`` of the agent options that change play, ``model`` aside, sorted."""
        options = self.settings.get("agent_options") or {}
        return [f"{k}={v}" for k, v in sorted(options.items()) if k not in NOT_PLAY and k != "model"]

    @property
    def key(self) -> tuple[Any, ...]:
        """What a plain file's group is: its label, agent, model (digest, else path) and play options."""
        model = self.settings.get("model_sha256") or self.model
        return (self.settings.get("label") or None, self.agent, model, tuple(self.play_options))

    @property
    def description(self) -> str:
        """The agent, its model and its play options: ``ppo model=runs/a deterministic=False``."""
        model = [] if self.model is None else [f"model={self.model}"]
        return " ".join([self.agent, *model, *self.play_options])

    @property
    def label(self) -> str:
        """A plain file's group name: its evaluate ``--label``, else :attr:`description`."""
        return str(self.settings.get("label") or self.description)

    @property
    def deals(self) -> frozenset[int]:
        return frozenset(self.won)

    def describe_deals(self) -> str:
        d = sorted(self.won)
        return f"{len(d)} deals, {d[0]}..{d[-1]}"


class Groups(dict[str, list[ResultsFile]]):
    """Group name -> its files, in order, with :attr:`notes` on how plain files were grouped."""

    def __init__(self) -> None:
        super().__init__()
        self.notes: list[str] = []


def load_results(path: str | Path) -> ResultsFile:
    """Read an evaluate ``results.json`` (or a folder holding one).

    Raises:
        ValueError: No such file, not JSON, or no per-deal rows.
    """
    p = Path(path)
    if p.is_dir():
        p = p / "results.json"
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ValueError(f"{path}: no such results file") from None
    except json.JSONDecodeError as err:
        raise ValueError(f"{p}: not a JSON file ({err})") from None
    rows = data.get("results") if isinstance(data, dict) else None
    if not rows:
        raise ValueError(f"{p}: no per-deal rows (give the results.json that forty-thieves evaluate writes)")
    won: dict[int, bool] = {}
    for row in rows:
        deal = int(row["deal"])
        if deal in won:
            raise ValueError(f"{p}: deal {deal} appears twice")
        won[deal] = bool(row["won"])
    return ResultsFile(p, dict(data.get("settings") or {}), won)


def group_files(files: Sequence[str | Path], groups: Sequence[str] = ()) -> Groups:
    """Read and group the files: ``groups`` entries ``NAME=a.json,b.json`` first, then the
    plain ``files`` by :attr:`ResultsFile.key` (see the module docstring); group and file
    order as given.

    Raises:
        ValueError: A malformed ``--group``, no file, a file given twice, or a plain file's
            group named like a ``--group``.
    """
    out = Groups()
    for spec in groups:
        name, sep, paths = spec.partition("=")
        parts = [s.strip() for s in paths.split(",") if s.strip()]
        if not sep or not name.strip() or not parts:
            raise ValueError(f"--group must look like NAME=a.json,b.json, got {spec!r}")
        out.setdefault(name.strip(), []).extend(load_results(s) for s in parts)
    plain: dict[tuple[Any, ...], list[ResultsFile]] = {}
    for path in files:
        r = load_results(path)
        plain.setdefault(r.key, []).append(r)
    for name, members in _name_plain_groups(list(plain.values()), out.notes).items():
        if name in out:
            raise ValueError(
                f"{members[0].path} would form a group named {name!r}, which --group names too: "
                f"give it in that --group to join it, or evaluate it with another --label"
            )
        out[name] = members
    seen: dict[Path, str] = {}
    for name, members in out.items():
        for r in members:
            key = r.path.resolve()
            if key in seen:
                raise ValueError(f"{r.path} is given twice (groups {seen[key]!r} and {name!r})")
            seen[key] = name
    if not seen:
        raise ValueError("no results files to compare")
    return out


def _name_plain_groups(buckets: list[list[ResultsFile]], notes: list[str]) -> dict[str, list[ResultsFile]]:
    """Name each bucket of plain files (one key each): its label, else its description; a
    label (or description) shared by several buckets names each with its description (then
    with its model's digest), and ``notes`` says which files a label did not join."""
    named: dict[str, list[ResultsFile]] = {}
    by_label: dict[str, list[list[ResultsFile]]] = {}
    for b in buckets:
        by_label.setdefault(b[0].label, []).append(b)
    for label, same in by_label.items():
        if len(same) == 1:
            named[label] = same[0]
            continue
        names = [b[0].description if b[0].settings.get("label") is None else f"{label} ({b[0].description})"
                 for b in same]  # fmt: skip
        if len(set(names)) < len(names):  # one path, different digests: a model retrained in place
            names = [f"{n} {_digest(b[0])}" for n, b in zip(names, same, strict=True)]
        named.update(zip(names, same, strict=True))
        notes.append(
            f"{sum(len(b) for b in same)} files named {label!r} played different models or options: "
            f"{len(same)} groups (--group NAME=a.json,b.json joins them, e.g. a recipe's seeds)"
        )
    return named


def _digest(r: ResultsFile) -> str:
    sha = r.settings.get("model_sha256")
    return f"sha256 {sha[:12]}" if sha else "(no digest)"


def check_comparable(groups: dict[str, list[ResultsFile]]) -> None:
    """Refuse what cannot be compared (see the module docstring), naming the files."""
    everything = [r for members in groups.values() for r in members]
    for key, what in (("variant", "variants"), ("max_moves", "move caps")):
        values = {str(r.settings.get(key)) for r in everything}
        if len(values) > 1:
            listing = ", ".join(f"{r.path} ({r.settings.get(key)})" for r in everything)
            raise ValueError(f"the files play different {what}: {listing}")
    for name, members in groups.items():
        if len({r.deals for r in members}) > 1:
            listing = ", ".join(f"{r.path} ({r.describe_deals()})" for r in members)
            raise ValueError(f"group {name!r}: its files played different deals: {listing}")
    names = list(groups)
    for i, a in enumerate(names):
        for b in names[i + 1 :]:
            if not groups[a][0].deals & groups[b][0].deals:
                fa = ", ".join(str(r.path) for r in groups[a])
                fb = ", ".join(str(r.path) for r in groups[b])
                raise ValueError(f"groups {a!r} ({fa}) and {b!r} ({fb}) share no deal")


def compare(
    groups: dict[str, list[ResultsFile]], n_boot: int = N_BOOT, seed: int = 0, confidence: float = 0.95
) -> dict[str, Any]:
    """Everything ``forty-thieves compare`` prints, as data (what ``--json`` writes).

    Args:
        groups: From :func:`group_files` (checked here with :func:`check_comparable`).
        n_boot: Bootstrap resamples per group.
        seed: Seeds the bootstrap.
        confidence: Interval level of the bootstrap intervals (Wilson intervals are 95 %).
    """
    check_comparable(groups)
    files, summary, tests = [], [], []
    for name, members in groups.items():
        for r in members:
            wins, n = sum(r.won.values()), len(r.won)
            files.append(
                {
                    "group": name,
                    "path": str(r.path),
                    "agent": r.settings.get("agent"),
                    "model": r.model,
                    "seed": r.settings.get("seed"),
                    "deals": n,
                    "wins": wins,
                    "win_rate": wins / n,
                    "wilson_95": list(wilson_interval(wins, n)),
                }
            )
        deals = sorted(members[0].deals)
        stats = seed_statistics(
            [[r.won[d] for d in deals] for r in members], n_boot=n_boot, confidence=confidence, seed=seed
        )
        summary.append({"group": name, "seeds": len(members), "deals": len(deals), **asdict(stats)})
    names = list(groups)
    for i, a in enumerate(names):
        for b in names[i + 1 :]:
            pairs = list(zip(groups[a], groups[b], strict=False))
            rows, a_won, b_won = [], [], []
            for ra, rb in pairs:
                shared = sorted(ra.deals & rb.deals)
                a_won += [ra.won[d] for d in shared]
                b_won += [rb.won[d] for d in shared]
                res = mcnemar([ra.won[d] for d in shared], [rb.won[d] for d in shared])
                rows.append({"a": str(ra.path), "b": str(rb.path), "shared_deals": len(shared), **_mcnemar_dict(res)})
            pooled = mcnemar(a_won, b_won)  # every (pair, deal) once
            tests.append(
                {
                    "a": a,
                    "b": b,
                    "pairs": rows,
                    "pooled": {"pairs": len(pairs), "games": pooled.n, **_mcnemar_dict(pooled)},
                    "left_out": [str(r.path) for r in (groups[a][len(pairs) :] + groups[b][len(pairs) :])],
                }
            )
    variant = next(iter(groups.values()))[0].settings.get("variant")
    settings = {"variant": variant, "n_boot": int(n_boot), "seed": int(seed), "confidence": float(confidence)}
    notes = list(getattr(groups, "notes", []))
    return {"settings": settings, "notes": notes, "files": files, "groups": summary, "mcnemar": tests}


def _mcnemar_dict(r: McNemarResult) -> dict[str, Any]:
    return {"a_only": r.a_only, "b_only": r.b_only, "both": r.both, "neither": r.neither, "pvalue": r.pvalue}


# ------------------------------------------------------------------------ the table


def _pct(x: float) -> str:
    return f"{100 * x:.1f} %"


def _span(ci: Sequence[float]) -> str:
    return f"{100 * ci[0]:.1f}-{100 * ci[1]:.1f} %"


def _table(head: Sequence[str], lines: Sequence[Sequence[str]]) -> str:
    widths = [max(len(c) for c in col) for col in zip(head, *lines, strict=True)]
    fmt = lambda cells: "  ".join(c.ljust(w) for c, w in zip(cells, widths, strict=True)).rstrip()  # noqa: E731
    return "\n".join([fmt(head), fmt(["-" * w for w in widths]), *(fmt(line) for line in lines)])


def format_report(report: dict[str, Any]) -> str:
    """The tables ``forty-thieves compare`` prints."""
    cfg = report["settings"]
    level = f"{100 * cfg['confidence']:g} %"
    parts = [f"note: {n}" for n in report.get("notes", [])]
    parts.append(f"{cfg['variant']}: files (wins / deals, Wilson 95 %)")
    parts.append(
        _table(
            ["group", "file", "eval seed", "won", "win rate", "Wilson 95 %"],
            [
                [f["group"], f["path"], str(f["seed"]), f"{f['wins']}/{f['deals']}", _pct(f["win_rate"]),
                 _span(f["wilson_95"])]
                for f in report["files"]
            ],
        )
    )  # fmt: skip
    parts.append(
        f"\ngroups: the files' win rates; bootstrap {level} over seeds and deals "
        f"({cfg['n_boot']} resamples, seed {cfg['seed']}); IQM = mean of the middle half (the mean under 4 seeds)"
    )
    parts.append(
        _table(
            ["group", "seeds", "deals", "mean", f"{level}", "IQM", f"{level}"],
            [
                [g["group"], str(g["seeds"]), str(g["deals"]), _pct(g["mean"]), _span(g["mean_ci"]), _pct(g["iqm"]),
                 _span(g["iqm_ci"])]
                for g in report["groups"]
            ],
        )
    )  # fmt: skip
    if report["mcnemar"]:
        parts.append(
            "\nMcNemar's exact test on the shared deals: i-th file of A against i-th of B, then pooled "
            "(A only / B only = deals just one of them won; p two-sided)"
        )
        lines = []
        for t in report["mcnemar"]:
            for i, p in enumerate(t["pairs"], start=1):
                lines.append([t["a"], t["b"], f"seed pair {i}", str(p["shared_deals"]), str(p["a_only"]),
                              str(p["b_only"]), f"{p['pvalue']:.3g}"])  # fmt: skip
            if len(t["pairs"]) > 1:
                q = t["pooled"]
                lines.append([t["a"], t["b"], f"pooled ({q['pairs']} pairs)", str(q["games"]), str(q["a_only"]),
                              str(q["b_only"]), f"{q['pvalue']:.3g}"])  # fmt: skip
        parts.append(_table(["A", "B", "", "deals", "A only", "B only", "p"], lines))
        left = [p for t in report["mcnemar"] for p in t["left_out"]]
        if left:
            parts.append(f"(not paired, the other group has fewer files: {', '.join(sorted(set(left)))})")
    return "\n".join(parts)


# --------------------------------------------------------------------- command line


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The ``forty-thieves compare`` arguments (read by :func:`run_cli`)."""
    parser.add_argument("files", nargs="*", help="evaluate results.json files (or their folders); grouped by label")
    parser.add_argument(
        "--group", action="append", default=[], metavar="NAME=A.json,B.json", help="a named group of files (repeatable)"
    )
    parser.add_argument("--resamples", type=int, default=N_BOOT, help=f"bootstrap resamples (default: {N_BOOT})")
    parser.add_argument("--seed", type=int, default=0, help="bootstrap seed (default: 0)")
    parser.add_argument("--json", metavar="OUT", help="also write the report as JSON")


def run_cli(args: Any) -> int:
    """The ``forty-thieves compare`` handler."""
    from agents.storage.files import check_writable, write_json

    if args.json:  # before the bootstrap
        check_writable(Path(args.json).parent, "the report")
    groups = group_files(args.files, args.group)
    report = compare(groups, n_boot=args.resamples, seed=args.seed)
    print(format_report(report))
    if args.json:
        out = write_json(args.json, report)
        print(f"wrote {out}")
    return 0
