"""``make demo``: train a small MaskablePPO on classic, then compare it with random and heuristic.

    python -m agents.training.demo [--minutes 4] [--timesteps 120000] [--n 200] [--workers 2]

1. trains ``configs/ppo.yaml``'s classic section (``FortyThieves-v0``) with the demo budget
   below (at most ``--minutes`` of training, evaluated every 40k steps on 50 validation deals,
   the best model kept) into ``runs/demo_<time>``;
2. plays the best model (its most likely legal move, and a move drawn from its policy), the
   random agent and the heuristic agent once on each of the first ``--n`` test deals (the
   same deals and seeds for all; :mod:`agents.evaluation.evaluate`);
3. prints the comparison: win rate with its Wilson 95 % interval, mean cards on the
   foundations, moves and seconds per game; writes it to ``runs/demo_<time>/comparison.json``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
CONFIG = ROOT / "configs" / "ppo.yaml"
ENV_ID = "FortyThieves-v0"

#: The demo's budget on top of configs/ppo.yaml (the rest of the classic section as it is).
DEMO_OVERRIDES = [
    "eval_freq=40000",
    "n_eval_episodes=50",
    "save_freq=40000",
    "final_eval_episodes=0",  # the comparison below plays the test deals
]


def comparison_table(rows: Sequence[dict[str, Any]]) -> str:
    """A plain-text table of evaluation summaries (one row per agent)."""
    head = ("agent", "won", "win rate", "95 % interval (Wilson)", "cards home", "moves", "s/game")
    lines = []
    for r in rows:
        s = r["summary"]
        low, high = s["win_rate_ci95"]
        lines.append(
            (
                r["agent"],
                f"{s['wins']}/{s['games']}",
                f"{100 * s['win_rate']:.1f} %",
                f"{100 * low:.1f} - {100 * high:.1f} %",
                f"{s['mean_cards_on_foundations']:.1f}",
                f"{s['mean_moves']:.0f}",
                f"{s['seconds_per_game']:.3f}",
            )
        )
    widths = [max(len(h), *(len(line[i]) for line in lines)) for i, h in enumerate(head)]

    def fmt(cells: Sequence[str]) -> str:
        padded = [c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths, strict=True))]
        return "  ".join(padded)

    return "\n".join([fmt(head), fmt(["-" * w for w in widths]), *(fmt(line) for line in lines)])


def run_demo(
    minutes: float = 4.0,
    timesteps: int = 120_000,
    n: int = 200,
    workers: int = 2,
    runs_dir: str | Path = "runs",
    seed: int = 0,
    progress: bool = True,
    overrides: Sequence[str] = (),
) -> dict[str, Any]:
    """Train, evaluate and compare (see the module docstring); returns what it printed as data."""
    from agents.evaluation.evaluate import evaluate

    from .train import train

    t0 = time.monotonic()
    name = f"demo_{datetime.now().strftime('%Y%m%d-%H%M%S')}"
    print(f"== 1/2  training MaskablePPO on classic ({ENV_ID}): up to {timesteps:,} steps or {minutes:g} minutes")
    run_dir = train(
        CONFIG,
        ENV_ID,
        overrides=[*DEMO_OVERRIDES, *overrides],
        total_timesteps=timesteps,
        seed=seed,
        max_minutes=minutes,
        runs_dir=runs_dir,
        name=name,
        progress=progress,
        final_eval=False,
        argv=["train", str(CONFIG.relative_to(ROOT)), "--env", ENV_ID, "--total-timesteps", str(timesteps),
              "--max-minutes", f"{minutes:g}", "--seed", str(seed),
              *(f"--set={o}" for o in [*DEMO_OVERRIDES, *overrides])],
    )  # fmt: skip
    model = run_dir / "best_model.zip"
    if not model.exists():
        model = run_dir / "final_model.zip"
    trained = json.loads((run_dir / "train_info.json").read_text(encoding="utf-8"))
    print(f"== 2/2  playing the first {n} test deals with ppo ({model.name}; greedy, sampled), random, heuristic")
    rows = []
    players = [
        ("ppo", "ppo", {"model": str(model)}),  # its most likely legal move
        ("ppo (sampled)", "ppo", {"model": str(model), "deterministic": False}),  # a move drawn from it
        ("random", "random", {}),
        ("heuristic", "heuristic", {}),
    ]
    for label, agent, kwargs in players:
        ev = evaluate(agent, "classic", "test", n=n, seed=seed, workers=workers, agent_kwargs=kwargs, progress=progress)
        rows.append({"agent": label, "settings": ev.settings, "summary": ev.summary})
    table = comparison_table(rows)
    minutes_total = (time.monotonic() - t0) / 60
    print()
    print(
        f"Classic Forty Thieves, test deals 1..{n}, each played once per agent (seed {seed}); "
        f"ppo trained {trained['num_timesteps']:,} steps in {trained['train_seconds'] / 60:.1f} min"
    )
    print(table)
    print(f"\nrun folder: {run_dir}  (demo took {minutes_total:.1f} min)")
    print(f"again, longer: forty-thieves train configs/ppo.yaml; forty-thieves evaluate --agent ppo --model {model}")
    result = {"run_dir": str(run_dir), "model": str(model), "trained": trained, "rows": rows, "table": table}
    (run_dir / "comparison.json").write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    return result


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m agents.training.demo", description=__doc__.splitlines()[0])
    p.add_argument("--minutes", type=float, default=4.0, help="training time limit (default: 4)")
    p.add_argument("--timesteps", type=int, default=120_000, help="training steps at most (default: 120000)")
    p.add_argument("--n", type=int, default=200, help="test deals per agent (default: 200)")
    p.add_argument("--workers", type=int, default=2, help="evaluation processes (default: 2)")
    p.add_argument("--runs-dir", default="runs", help="where the run folder goes (default: runs)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--quiet", action="store_true", help="no progress bars")
    args = p.parse_args(argv)
    run_demo(args.minutes, args.timesteps, args.n, args.workers, args.runs_dir, args.seed, not args.quiet)
    return 0


if __name__ == "__main__":
    sys.exit(main())
