"""Solve a list of deals with the perfect-information solver; resumable; winnable-set export.

``forty-thieves solve --variant classic --deals test --seconds 10`` runs
:func:`agents.search.solver.solve` once on the starting position of each deal (a process pool,
every core by default) and writes into ``--out``:

* ``meta.json``: the variant and the solver budget (seconds, nodes, memory, strategy,
  clock) the verdicts were made with. A later run into the same folder must use the same
  ones (else it stops with an error; ``--restart`` discards the old verdicts instead).
* ``verdicts.jsonl``: one JSON line per deal, appended and flushed as each deal finishes:
  ``deal, verdict, moves, nodes, states, seconds, reason, decided_by``. ``moves`` is the
  winning line (move text, :meth:`GameState.play` reads it) for ``won``, else empty. Every
  won line is replayed through the engine (it must end in a won position) before it is
  written; one that does not replay stops the run with :class:`ReplayError`.
* ``summary.json``: for the deals of this command, the counts of ``won``, ``lost`` (proved:
  every line searched) and ``unknown`` (a budget ran out), each with its share and Wilson
  95 % interval, plus seconds and nodes.

**Resume**: running the same command again skips the deals already in ``verdicts.jsonl``
(a run stopped by Ctrl-C, ``kill`` or a crash loses only the deals being solved at that
moment). A
wider selection (``--n 4`` after ``--n 2``) solves only the new deals. A last line cut short
by a kill is removed before the next verdict is appended (:class:`agents.storage.files.LineLog`),
so it is never glued to a fragment; a line glued so by an older version is read back
(:func:`read_verdicts`). ``meta.json`` and ``summary.json`` are written atomically.

**On Ray** (``--ray [ADDRESS]``): the same solver in chunks of deals on a local Ray instance
or a cluster (:mod:`agents.sweeps.ray_pool`); each task reserves the memory budget plus
:data:`SOLVER_TASK_BASE_MB` (Ray's ``memory`` resource), and the rows are written as they
come, as with the pool.

**Winnable sets**: ``--export-winnable`` then writes the won deals of the selection with
their lines (the certificates) and a meta block (budget, date, command, the deals
searched, the counts) to ``forty_thieves_env/data/winnable/<variant>.json.gz`` (or a
given path), which :mod:`forty_thieves_env.envs.winnable` loads. Only deals of the training
range (:data:`forty_thieves_env.engine.deals.TRAIN_RANGE`) may go into a set, so that agents
trained on it are still evaluated on unseen deals.
"""

from __future__ import annotations

import argparse
import contextlib
import gzip
import json
import os
import shlex
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from agents.evaluation.statistics import wilson_interval
from agents.storage.files import (
    LineLog,
    check_writable,
    is_json_line,
    read_json,
    write_bytes,
    write_json,
)
from agents.sweeps.pool import add_sweep_arguments, deals_meta, parse_deals, run_jobs, worker_count

from .verdicts import (
    DEFAULT_NODES,
    META_ADVICE,
    META_FILE,
    SUMMARY_FILE,
    VERDICTS,
    VERDICTS_FILE,
    Budget,
    now,
    open_folder,
    read_verdicts,
)

#: Memory a solver task needs besides its budget (the worker process with its compiled kernels,
#: measured in docs/ray.md), reserved with the budget for each Ray task.
SOLVER_TASK_BASE_MB = 512.0


class ReplayError(RuntimeError):
    """A ``won`` line from the solver does not replay to a win in the engine."""


def replay(variant: Any, deal_number: int, moves: Sequence[str]) -> None:
    """Play ``moves`` from the start of ``deal_number``; raise :class:`ReplayError` unless it wins."""
    from forty_thieves_env.text.errors import IllegalMoveError
    from forty_thieves_env.text.game import deal

    state = deal(variant, deal_number)
    for i, move in enumerate(moves):
        try:
            state.play(move)
        except (IllegalMoveError, ValueError) as err:
            raise ReplayError(
                f"deal {deal_number}: move {i + 1} ({move!r}) of the won line does not play: {err}"
            ) from err
    if not state.is_won():
        raise ReplayError(
            f"deal {deal_number}: the won line ({len(moves)} moves) ends with "
            f"{state.cards_on_foundations} cards home, not a win"
        )


def solve_deal(variant: Any, deal_number: int, budget: Budget) -> dict[str, Any]:
    """Solve one deal from its start; the verdict row (not yet replayed).

    With the portfolio, the heuristic first plays ``budget.heuristic_tries`` games from the
    deal (a few milliseconds each, on the budget's clock); the first it wins is the verdict
    (``decided_by`` ``heuristic/seed K``, ``nodes`` its moves). On Rank and File it wins many
    deals the searches do not (docs/solver.md).
    """
    from agents.players.heuristic import heuristic_win
    from agents.search.solver import solve
    from forty_thieves_env.text.game import deal
    from forty_thieves_env.text.notation import format_move

    state = deal(variant, deal_number)
    tries = budget.heuristic_tries if budget.strategy == "portfolio" else 0
    if tries:
        heuristic_win(state.variant, state.array, [0], max_moves=1)  # compiled before the clock starts
    now = time.perf_counter if budget.clock == "wall" else time.process_time
    t0 = now()
    found = heuristic_win(state.variant, state.array, range(tries))
    spent = now() - t0
    if found is not None:
        seed, line = found
        moves = [format_move(state.variant, a) for a in line]
        return {"deal": int(deal_number), "verdict": "won", "moves": moves, "nodes": len(line), "states": 0,
                "seconds": round(spent, 4), "reason": "", "decided_by": f"heuristic/seed {seed}"}  # fmt: skip
    r = solve(
        state,
        max_nodes=budget.nodes,
        max_seconds=max(budget.seconds - spent, 1e-3),
        max_memory_mb=budget.memory_mb,
        strategy=budget.strategy,  # type: ignore[arg-type]
        clock=budget.clock,  # type: ignore[arg-type]
    )
    return {
        "deal": int(deal_number),
        "verdict": r.verdict,
        "moves": list(r.moves),
        "nodes": int(r.nodes),
        "states": int(r.states),
        "seconds": round(float(r.seconds + spent), 4),
        "reason": r.reason,
        "decided_by": r.decided_by,
    }


# ----------------------------------------------------------------------- workers

#: Wall seconds a process pool costs a solve before its workers' first deal (processes started, the
#: solver's compiled kernels loaded from the cache), measured on 2 cores: 3 deals with a 0.2 s budget
#: took 1.8 s with 1 worker against 3.8 s with 2 (paired runs, medians).
POOL_START_SECONDS = 2.0


def default_workers(jobs: int, seconds_per_job: float, cpus: int | None = None) -> int:
    """Processes for ``jobs`` deals of at most ``seconds_per_job`` each when ``--workers`` is not given.

    Every core (at most one a deal), unless a pool cannot pay for itself: when even deals that each
    use their whole budget would save less time in parallel than the pool costs to start
    (:data:`POOL_START_SECONDS`), the deals are solved in this process.
    """
    workers = worker_count(cpus, jobs)
    if workers > 1:
        saved = (jobs - -(-jobs // workers)) * seconds_per_job  # serial minus parallel rounds, at most
        if saved < POOL_START_SECONDS:
            return 1
    return workers


_WORKER: dict[str, Any] = {}


def _worker_init(variant: str, budget: Budget) -> None:
    _WORKER.update(variant=variant, budget=budget)
    from agents.search.solver import warm_up

    warm_up(budget.strategy)  # compile before the first deal's clock starts


def _worker_solve(deal_number: int) -> dict[str, Any]:
    return solve_deal(_WORKER["variant"], deal_number, _WORKER["budget"])


def summarise(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Counts of each verdict with its share and Wilson 95 % interval, seconds and nodes."""
    n = len(rows)
    out: dict[str, Any] = {"deals": n}
    for v in VERDICTS:
        k = sum(r["verdict"] == v for r in rows)
        low, high = wilson_interval(k, n)
        out[v] = {"count": k, "share": k / n if n else 0.0, "ci95": [low, high]}
    seconds = [r["seconds"] for r in rows]
    out["solver_seconds_total"] = float(sum(seconds))
    out["solver_seconds_mean"] = float(sum(seconds) / n) if n else 0.0
    out["nodes_total"] = int(sum(r["nodes"] for r in rows))
    unknown_reasons: dict[str, int] = {}
    for r in rows:
        if r["verdict"] == "unknown":
            unknown_reasons[r["reason"]] = unknown_reasons.get(r["reason"], 0) + 1
    out["unknown_reasons"] = unknown_reasons
    return out


def format_table(summary: dict[str, Any], title: str) -> str:
    lines = [title, f"{'verdict':<8} {'deals':>6} {'share':>7}   Wilson 95 %"]
    for v in VERDICTS:
        s = summary[v]
        low, high = s["ci95"]
        lines.append(f"{v:<8} {s['count']:>6} {100 * s['share']:>6.1f}%   {100 * low:5.1f}-{100 * high:5.1f} %")
    lines.append(f"{'total':<8} {summary['deals']:>6}")
    return "\n".join(lines)


def solve_deals(
    variant: str = "classic",
    deals: str | Sequence[int] = "test",
    out: str | os.PathLike[str] = "solved",
    n: int | None = None,
    budget: Budget | None = None,
    workers: int | None = None,
    restart: bool = False,
    progress: bool = True,
    command: str | None = None,
    ray: str | None = None,
) -> dict[str, Any]:
    """Solve every selected deal not yet in ``out/verdicts.jsonl``; write and return the summary.

    Args:
        variant: A preset name.
        deals: As ``forty-thieves evaluate --deals`` (:func:`agents.sweeps.pool.parse_deals`);
            ``n`` keeps the first ``n``.
        out: The run folder (see the module docstring).
        budget: Solver settings per deal (default :class:`Budget`).
        workers: Processes (default: :func:`default_workers`, by the job's size); 1 solves in this process.
        restart: Discard the folder's verdicts (and meta) instead of resuming.
        progress: Show a tqdm progress bar.
        command: Recorded in ``meta.json`` and the summary (default: this process's argv).
        ray: Solve on Ray instead of the process pool: ``"local"`` (a Ray instance on
            ``workers`` cores, default every core), ``"auto"``, ``"ray://HOST:PORT"`` or
            ``"HOST:PORT"`` (a cluster; ``workers`` then caps the tasks in flight). The
            address is checked before the folder is touched.

    Raises:
        ValueError: bad deals or budget, or a folder made with another variant or budget.
        ReplayError: a won line does not replay to a win.
        RayError: Ray is missing, or ``ray`` is malformed or does not answer (nothing written).
    """
    from forty_thieves_env.engine.variants import get_variant

    preset = get_variant(variant)
    variant_name = preset.name
    budget = (budget or Budget()).check()
    deal_list = parse_deals(deals, n)
    command = command if command is not None else shlex.join(["forty-thieves", *sys.argv[1:]])
    out_dir = Path(out)
    pool = None
    if ray is not None:  # join (or fail) before the folder is touched
        from agents.sweeps.ray_pool import RayPool

        pool = RayPool(ray, workers)
    with pool if pool is not None else contextlib.nullcontext():
        done = open_folder(out_dir, variant_name, budget, restart, command)
        todo = [d for d in deal_list if d not in done]
        if pool is not None:
            workers = pool.in_flight
        elif workers is None:
            workers = default_workers(len(todo), budget.seconds)
        else:
            workers = worker_count(workers, len(todo))

        t0 = time.perf_counter()
        bar = None
        if progress:
            from tqdm import tqdm

            initial = len(deal_list) - len(todo)
            bar = tqdm(total=len(deal_list), initial=initial, desc=f"solve {variant_name}", unit="deal")
        counts = {v: sum(done[d]["verdict"] == v for d in deal_list if d in done) for v in VERDICTS}

        # Opened (and a torn last line repaired) before any deal is solved: an unwritable
        # folder stops the run here, not after the first verdict.
        with LineLog(out_dir / VERDICTS_FILE, keep=is_json_line, note=_warn) as f:

            def record(row: dict[str, Any]) -> None:
                if row["verdict"] == "won":
                    replay(preset, row["deal"], row["moves"])
                f.append(json.dumps(row, separators=(",", ":")))
                done[row["deal"]] = row
                counts[row["verdict"]] += 1
                if bar is not None:
                    bar.set_postfix(won=counts["won"], lost=counts["lost"], unknown=counts["unknown"], refresh=False)
                    bar.update(1)

            local = lambda d: solve_deal(preset, d, budget)  # noqa: E731
            init = (variant_name, budget)
            memory = budget.memory_mb + SOLVER_TASK_BASE_MB
            try:
                for row in run_jobs(todo, workers, local, _worker_solve, _worker_init, init, True, pool, memory):
                    record(row)
            finally:
                if bar is not None:
                    bar.close()

        rows = [done[d] for d in deal_list]
        summary = {
            "variant": variant_name,
            "budget": budget.to_json(),
            **deals_meta(deals, deal_list),
            "solved_now": len(todo),
            "workers": workers,
            **({"ray": pool.address} if pool is not None else {}),
            "wall_seconds": time.perf_counter() - t0,
            "finished": now(),
            "command": command,
            "summary": summarise(rows),
        }
        write_json(out_dir / SUMMARY_FILE, summary, indent=2)
    return summary


def _warn(text: str) -> None:
    print(text, file=sys.stderr)


# ------------------------------------------------------------------ winnable sets


def default_winnable_path(variant: str) -> Path:
    """``forty_thieves_env/data/winnable/<variant>.json.gz`` in the source tree / installed package."""
    import forty_thieves_env

    return Path(forty_thieves_env.__file__).parent / "data" / "winnable" / f"{variant}.json.gz"


def export_winnable(
    out: str | os.PathLike[str],
    deals: str | Sequence[int],
    n: int | None = None,
    path: str | os.PathLike[str] | None = None,
    command: str | None = None,
) -> Path:
    """Write the won deals of a finished run folder (with their lines) as a winnable set.

    Every selected deal must have a verdict, lie in the training range, and every won line
    is replayed again before it is written.
    """
    from forty_thieves_env.engine.deals import TRAIN_RANGE
    from forty_thieves_env.engine.variants import get_variant

    out_dir = Path(out)
    if not (out_dir / META_FILE).is_file():
        raise ValueError(f"{out_dir} is not a solve folder (no {META_FILE})")
    meta = read_json(out_dir / META_FILE, META_ADVICE)
    variant = get_variant(meta["variant"])
    deal_list = parse_deals(deals, n)
    bad = [d for d in deal_list if not TRAIN_RANGE[0] <= d <= TRAIN_RANGE[1]]
    if bad:
        raise ValueError(
            f"a winnable set may only hold training deals ({TRAIN_RANGE[0]}..{TRAIN_RANGE[1]}), "
            f"not deal {bad[0]} (the test and validation splits must stay unseen)"
        )
    rows = read_verdicts(out_dir / VERDICTS_FILE)
    missing = [d for d in deal_list if d not in rows]
    if missing:
        raise ValueError(f"{len(missing)} selected deals have no verdict yet (first {missing[0]}); finish the run")
    chosen = [rows[d] for d in deal_list]
    won = {}
    for r in chosen:
        if r["verdict"] == "won":
            replay(variant, r["deal"], r["moves"])
            won[str(r["deal"])] = " ".join(r["moves"])
    s = summarise(chosen)
    from forty_thieves_env import __version__

    doc = {
        "meta": {
            "what": (
                "Deals the solver proved winnable within its budget, each with a winning line "
                "(a certificate). A biased subset of the training deals: the easier ones."
            ),
            "variant": variant.name,
            "solver": "agents.search.solver.solve (perfect information)",
            "budget": meta["budget"],
            "deals_searched": {
                "spec": deals if isinstance(deals, str) else "list",
                "count": len(deal_list),
                "first": deal_list[0],
                "last": deal_list[-1],
            },
            "counts": {v: s[v]["count"] for v in VERDICTS},
            "solve_command": meta.get("command", ""),
            "solver_source": meta.get("source", ""),
            "export_command": command if command is not None else shlex.join(["forty-thieves", *sys.argv[1:]]),
            "solver_seconds_total": round(s["solver_seconds_total"], 1),
            "date": now(),
            "package_version": __version__,
            "moves": "space-separated move text; GameState.play each from the deal's start ends in a win",
        },
        "certificates": won,
    }
    target = Path(path) if path is not None else default_winnable_path(variant.name)
    data = json.dumps(doc, separators=(",", ":"), sort_keys=False).encode("utf-8")
    write_bytes(target, gzip.compress(data, mtime=0))
    return target


# ------------------------------------------------------------------- command line


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The ``forty-thieves solve`` arguments (read by :func:`run_cli`)."""
    parser.add_argument("--variant", default="classic", help="preset name (default: classic)")
    parser.add_argument("--deals", default="test", help="test (1..1000), validation (1001..2000), 1-50 or 3,17,99")
    parser.add_argument("--n", type=int, help="solve only the first N deals")
    parser.add_argument("--seconds", type=float, default=10.0, help="time budget per deal (default: 10)")
    parser.add_argument("--nodes", type=int, help="node budget per deal (default: 50000000)")
    parser.add_argument("--memory", type=float, default=2048.0, help="memory budget per deal in MB (default: 2048)")
    parser.add_argument(
        "--strategy", default="portfolio", help="portfolio, best, beam, dfs or prover (default: portfolio)"
    )
    parser.add_argument("--clock", default="wall", choices=("wall", "cpu"), help="clock of --seconds (default: wall)")
    parser.add_argument(
        "--heuristic-tries",
        type=int,
        default=32,
        help="games the heuristic plays from each deal before the portfolio searches (default: 32; 0: none)",
    )
    add_sweep_arguments(
        parser,
        "solve",
        out="solved",
        out_help="folder for meta.json, verdicts.jsonl, summary.json",
        workers_help="processes (default: every core, one a deal; 1 when a pool would not pay)",
    )
    parser.add_argument("--restart", action="store_true", help="discard the verdicts already in --out")
    parser.add_argument(
        "--export-winnable",
        nargs="?",
        const="",
        metavar="PATH",
        help="then write the won deals as a winnable set (default: forty_thieves_env/data/winnable/<variant>.json.gz)",
    )


def run_cli(args: Any) -> int:
    """The ``forty-thieves solve`` handler (arguments from :func:`add_arguments`)."""
    budget = Budget(
        seconds=float(args.seconds),
        nodes=int(args.nodes) if args.nodes is not None else DEFAULT_NODES,
        memory_mb=float(args.memory),
        strategy=args.strategy,
        clock=args.clock,
        heuristic_tries=int(args.heuristic_tries),
    )
    if args.export_winnable is not None:  # its folder too, before any deal is solved
        from forty_thieves_env.engine.variants import get_variant

        target = Path(args.export_winnable or default_winnable_path(get_variant(args.variant).name))
        check_writable(target.parent, "the winnable set")
    try:
        result = solve_deals(
            args.variant,
            args.deals,
            out=args.out,
            n=args.n,
            budget=budget,
            workers=args.workers,
            restart=args.restart,
            progress=not args.quiet,
            ray=args.ray,
        )
    except ReplayError as err:
        print(f"forty-thieves solve: error: {err}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(f"\ninterrupted: the finished deals are in {Path(args.out) / VERDICTS_FILE}; "
              "run the same command again to resume", file=sys.stderr)  # fmt: skip
        return 130
    s = result["summary"]
    b = result["budget"]
    title = (
        f"{result['variant']}, {result['n']} deals ({result['deals']}: {result['first_deal']}..{result['last_deal']}), "
        f"{b['seconds']:g} s ({b['clock']}) / {b['nodes']} nodes / {b['memory_mb']:g} MB per deal, {b['strategy']}; "
        f"{result['solved_now']} solved now in {result['wall_seconds']:.0f} s"
    )
    print(format_table(s, title))
    print(f"wrote {Path(args.out) / VERDICTS_FILE} and {Path(args.out) / SUMMARY_FILE}")
    if args.export_winnable is not None:
        path = export_winnable(args.out, args.deals, args.n, path=args.export_winnable or None)
        print(f"wrote the winnable set ({s['won']['count']} deals) to {path}")
    return 0
