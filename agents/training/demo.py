"""``make demo``: train the default recipe briefly on classic, then compare it with the shipped models.

    python -m agents.training.demo [--minutes 3] [--timesteps 65536] [--n 200] [--workers 2]

1. trains ``configs/ppo.yaml``'s classic section (``FortyThieves-v0``) on a demo budget
   (:data:`DEMO_OVERRIDES`: the heuristic's games on 300 deals and one DAgger round of 100, then
   ``--timesteps`` steps of PPO) into ``runs/demo_<time>``;
2. plays the first ``--n`` test deals (the same deals and seeds for all;
   :mod:`agents.evaluation.evaluate`) with the network at each stage of that run (untrained
   random moves, after imitation, after PPO), then with the shipped models (classic and
   relaxed, trained by the full recipe) beside the random and heuristic players;
3. prints the learning table and the comparison (win rate with its Wilson 95 % interval, mean
   cards on the foundations, moves and seconds per game); writes them to
   ``runs/demo_<time>/comparison.json``.
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
    "imitation.games=300",
    "imitation.epochs=2",
    "imitation.dagger_rounds=1",
    "imitation.dagger_games=100",
    "n_envs=128",  # rollouts of 8192 steps
    "batch_size=2048",
    "eval_freq=0",  # the tables below play the test deals
    "save_freq=0",
    "final_eval_episodes=0",
]
#: The shipped models the demo compares (name, variant), when they are shipped.
SHIPPED = (("classic", "classic"), ("relaxed", "relaxed"))


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
    minutes: float = 3.0,
    timesteps: int = 65_536,
    n: int = 200,
    workers: int = 2,
    runs_dir: str | Path = "runs",
    seed: int = 0,
    progress: bool = True,
    overrides: Sequence[str] = (),
) -> dict[str, Any]:
    """Train, evaluate and compare (see the module docstring); returns what it printed as data."""
    from agents.evaluation.evaluate import evaluate
    from agents.players.shipped import shipped_models

    from .train import train

    t0 = time.monotonic()
    name = f"demo_{datetime.now().strftime('%Y%m%d-%H%M%S')}"
    print(f"== 1/3  training on classic ({ENV_ID}): imitation of the heuristic, then up to {timesteps:,} PPO steps")
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
    trained = json.loads((run_dir / "train_info.json").read_text(encoding="utf-8"))
    imitation = json.loads((run_dir / "imitation.json").read_text(encoding="utf-8"))

    def play(label: str, agent: str, variant: str, **kwargs: Any) -> dict[str, Any]:
        ev = evaluate(agent, variant, "test", n=n, seed=seed, workers=workers, agent_kwargs=kwargs, progress=progress)
        return {"agent": label, "variant": variant, "settings": ev.settings, "summary": ev.summary}

    print(f"== 2/3  the network at each stage of the run, on the first {n} test deals (sampled moves)")
    positions = sum(r["positions"] for r in imitation["rounds"])
    stages = [
        play("untrained (random legal moves)", "random", "classic"),
        play(f"after imitation ({positions:,} positions)", "ppo", "classic",
             model=str(run_dir / "imitation_model.zip"), deterministic=False),
        play(f"after PPO (+{trained['num_timesteps']:,} steps)", "ppo", "classic",
             model=str(run_dir / "final_model.zip"), deterministic=False),
    ]  # fmt: skip
    print(f"== 3/3  the shipped models beside the random and heuristic players, first {n} test deals")
    shipped = shipped_models()
    rows = []
    for model, variant in SHIPPED:
        if model in shipped:
            rows.append(play(f"ppo --model {model}", "ppo", variant, model=model))
        else:
            print(f"   (no shipped model {model!r}: skipped)")
        rows.append(play("random", "random", variant))
        rows.append(play("heuristic", "heuristic", variant))
    learning = comparison_table(stages)
    table = "\n\n".join(
        f"{variant}:\n" + comparison_table([r for r in rows if r["variant"] == variant])
        for variant in dict.fromkeys(r["variant"] for r in rows)
    )
    minutes_total = (time.monotonic() - t0) / 60
    print()
    print(
        f"Learning on classic Forty Thieves, test deals 1..{n} (seed {seed}): imitation took "
        f"{imitation['seconds']:.0f} s, PPO {trained['train_seconds']:.0f} s"
    )
    print(learning)
    print(f"\nShipped models (the full recipe: docs/training.md), test deals 1..{n}:")
    print(table)
    print(f"\nrun folder: {run_dir}  (demo took {minutes_total:.1f} min)")
    print("the full recipe: forty-thieves train configs/ppo.yaml; forty-thieves evaluate --agent ppo --model classic")
    result = {
        "run_dir": str(run_dir),
        "trained": trained,
        "imitation": imitation,
        "stages": stages,
        "rows": rows,
        "learning": learning,
        "table": table,
    }
    (run_dir / "comparison.json").write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    return result


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m agents.training.demo", description=__doc__.splitlines()[0])
    p.add_argument("--minutes", type=float, default=3.0, help="PPO time limit (default: 3)")
    p.add_argument("--timesteps", type=int, default=65_536, help="PPO steps at most (default: 65536)")
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
