"""``make demo``: watch PPO learn from scratch, then compare the shipped models.

    python -m agents.training.demo [--minutes 2.5] [--timesteps 50000000] [--n 200] [--workers 2]

1. trains ``configs/ppo.yaml``'s Relaxed section (``FortyThieves-Relaxed-v0``, where a policy
   learns from nothing in minutes) with TorchPPO from random weights, no imitation
   (:data:`DEMO_OVERRIDES`), on 1024 games for ``--minutes`` (on the GPU when one can run the
   games) into ``runs/demo_<time>``, evaluating on the first 200 validation deals before it
   starts and every :data:`DEMO_EVAL_EVERY` steps: the first table is the win rate and cards
   home over the run;
2. plays the first ``--n`` test deals (the same deals and seeds for all;
   :mod:`agents.evaluation.evaluate`) with random legal moves and with the run's best network,
   then the shipped models (classic and relaxed, trained by the full recipe: imitation of the
   heuristic, then PPO; streets, PPO from the classic model's weights) beside the random and
   heuristic players;
3. prints the tables (win rate with its Wilson 95 % interval, mean cards on the foundations,
   moves and seconds per game) and writes them to ``runs/demo_<time>/comparison.json``.

On classic, PPO from scratch learns too slowly to show in minutes on two cores (and collapses
after its first gains: docs/training.md), which is why the recipe starts from imitation there.
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
ENV_ID = "FortyThieves-Relaxed-v0"

#: Steps between the demo's evaluations on the validation deals (about 20 s of TorchPPO on 2 cores).
DEMO_EVAL_EVERY = 262_144
#: The demo's settings on top of configs/ppo.yaml's Relaxed section (the rest as it is).
DEMO_OVERRIDES = [
    "algo=TorchPPO",  # games, rollouts and updates on one device: tens of thousands of steps a second
    "device=auto",  # the GPU when one can run the games, else the CPU
    "imitation=null",  # from random weights: what PPO alone learns
    f"eval_freq={DEMO_EVAL_EVERY}",
    "n_eval_episodes=200",
    "save_freq=0",
    "final_eval_episodes=0",  # the tables below play the test deals
]
#: The shipped models the demo compares (name, variant), when they are shipped.
SHIPPED = (("classic", "classic"), ("relaxed", "relaxed"), ("streets", "streets"))


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


def learning_table(evaluations: Sequence[dict[str, Any]]) -> str:
    """The run's validation evaluations as a plain-text table (the first row: the start, 0 steps)."""
    head = ("PPO steps", "won", "win rate", "cards home", "mean reward")
    rows = list(evaluations)
    lines = []
    for e in rows:
        games = int(e["episodes"])
        won = round(e["win_rate"] * games)
        lines.append(
            (f"{e['timesteps']:,}", f"{won}/{games}", f"{100 * e['win_rate']:.1f} %", f"{e['mean_cards']:.1f}",
             f"{e['mean_reward']:.3f}")
        )  # fmt: skip
    widths = [max(len(h), *(len(line[i]) for line in lines)) for i, h in enumerate(head)] if lines else []
    return "\n".join("  ".join(c.rjust(w) for c, w in zip(cells, widths, strict=True)) for cells in [head, *lines])


def run_demo(
    minutes: float = 2.5,
    timesteps: int = 50_000_000,
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
    print(
        f"== 1/3  TorchPPO from random weights on Relaxed ({ENV_ID}) for up to {minutes:g} min"
        f" ({timesteps:,} steps at most)"
    )
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
    state_path = run_dir / "eval_state.json"
    evaluations = json.loads(state_path.read_text(encoding="utf-8"))["evaluations"] if state_path.exists() else []
    curve = learning_table(evaluations)
    deals = int(evaluations[0]["episodes"]) if evaluations else 0
    print(f"\nTorchPPO on Relaxed, validation deals 1001..{1000 + deals} (sampled moves):")
    print(curve)
    best = run_dir / "best_model.zip"
    after = best if best.exists() else run_dir / "final_model.zip"

    def play(label: str, agent: str, variant: str, **kwargs: Any) -> dict[str, Any]:
        ev = evaluate(agent, variant, "test", n=n, seed=seed, workers=workers, agent_kwargs=kwargs, progress=progress)
        return {"agent": label, "variant": variant, "settings": ev.settings, "summary": ev.summary}

    print(f"== 2/3  random moves and the trained network on the first {n} Relaxed test deals (sampled moves)")
    stages = [
        play("untrained (random legal moves)", "random", "relaxed"),
        play(f"after PPO ({trained['num_timesteps']:,} steps, {after.stem})", "ppo", "relaxed",
             model=str(after), deterministic=False),
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
    rate = trained["num_timesteps"] / max(trained["train_seconds"], 1e-9)
    print(
        f"Learning on Relaxed from random weights: TorchPPO trained {trained['num_timesteps']:,} steps in"
        f" {trained['train_seconds']:.0f} s ({rate:,.0f} steps/s, evaluations included)"
    )
    print(f"over the run, validation deals:\n{curve}")
    print(f"test deals 1..{n} (seed {seed}):\n{learning}")
    print(f"\nShipped models (the full recipe: docs/training.md), test deals 1..{n}:")
    print(table)
    print(f"\nrun folder: {run_dir}  (demo took {minutes_total:.1f} min)")
    print("the full recipe: forty-thieves train configs/ppo.yaml; forty-thieves evaluate --agent ppo --model classic")
    result = {
        "run_dir": str(run_dir),
        "trained": trained,
        "evaluations": evaluations,
        "curve": curve,
        "stages": stages,
        "rows": rows,
        "learning": learning,
        "table": table,
    }
    (run_dir / "comparison.json").write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    return result


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m agents.training.demo", description=__doc__.splitlines()[0])
    p.add_argument("--minutes", type=float, default=2.5, help="PPO time limit (default: 2.5)")
    p.add_argument("--timesteps", type=int, default=50_000_000, help="PPO steps at most (default: 50M)")
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
