"""``forty-thieves play``: a game in the terminal (the textual app of :mod:`agents.play.tui`).

A game in progress is saved after every move and on quit (``DATA_DIR/save.json``) and resumed by the next
``forty-thieves play`` without ``--deal``, ``--level``, ``--variant`` or ``--new``; the
statistics per level are in ``DATA_DIR/stats.json``. ``DATA_DIR`` is ``--data-dir``, else
``$FORTY_THIEVES_DATA``, else ``$XDG_DATA_HOME/forty-thieves`` (``~/.local/share/forty-thieves``).
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any


def data_dir(explicit: str | None = None) -> Path:
    """Where the save and the statistics live (see the module docstring)."""
    if explicit:
        return Path(explicit)
    if os.environ.get("FORTY_THIEVES_DATA"):
        return Path(os.environ["FORTY_THIEVES_DATA"])
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "forty-thieves"


def parse_rule(text: str) -> tuple[str, Any]:
    """``redeals=2`` -> ``("redeals", 2)``: a variant option and its value (int, bool or text).

    Raises:
        ValueError: not ``key=value``.
    """
    key, sep, raw = text.partition("=")
    if not sep or not key.strip():
        raise ValueError(f"--rule must look like key=value, got {text!r}")
    value: Any = raw.strip()
    if value.lower() in ("true", "false"):
        value = value.lower() == "true"
    elif value.lstrip("-").isdigit():
        value = int(value)
    return key.strip().replace("-", "_"), value


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The ``forty-thieves play`` arguments (read by :func:`run_cli`)."""
    parser.add_argument("--level", choices=("easy", "normal", "hard"), help="difficulty level (default: hard)")
    parser.add_argument("--variant", help="play a preset instead of a level (josephine, streets, ...)")
    parser.add_argument("--rule", action="append", metavar="KEY=VALUE", help="a variant option (repeatable)")
    parser.add_argument("--deal", type=int, help="deal number (default: a random deal)")
    parser.add_argument("--winnable-only", action="store_true", help="deal only deals proven winnable")
    parser.add_argument("--position", help="practise a position file instead of a deal")
    parser.add_argument("--auto-play", action="store_true", help="send safe cards home after each move")
    parser.add_argument(
        "--hint-agent", default="heuristic", choices=("heuristic", "lookahead"), help="who hints (default: heuristic)"
    )
    parser.add_argument("--new", action="store_true", help="start a new game even if one is saved")
    parser.add_argument("--data-dir", help="folder of save.json and stats.json")
    parser.add_argument("--seed", type=int, help="seed of the random deal draws")


def session_from_args(args: argparse.Namespace, clock: Callable[[], float] | None = None, stats: Any = None) -> Any:
    """The :class:`~agents.play.session.PlaySession` the arguments ask for (a new game).

    Raises:
        ValueError: conflicting or bad arguments.
    """
    import time

    from agents.play.session import PlaySession
    from forty_thieves_env.engine.variants import get_variant

    rules = dict(parse_rule(r) for r in args.rule or ())
    if args.level and (args.variant or rules):
        raise ValueError("--level fixes the rules: give --level, or --variant with --rule, not both")
    variant = get_variant(args.variant or "classic", **rules) if (args.variant or rules) else None
    position = Path(args.position).read_text(encoding="utf-8") if args.position else None
    if position is not None and variant is None and not args.level:
        from forty_thieves_env.text.game import parse_position

        variant = parse_position(position).variant
    return PlaySession(
        None if variant is not None else (args.level or "hard"),
        variant,
        deal=args.deal,
        winnable_only=args.winnable_only,
        auto_play=args.auto_play,
        stats=stats,
        hint_agent=args.hint_agent,
        clock=clock or time.monotonic,
        seed=args.seed,
        position=position,
    )


def run_cli(args: argparse.Namespace) -> int:
    """The ``forty-thieves play`` handler: resume the saved game or start the one asked for."""
    from agents.play.session import PlaySession
    from agents.play.stats import StatsFile
    from agents.play.tui import PlayApp
    from agents.storage.files import check_writable

    folder = data_dir(args.data_dir)
    # Before the game: a game played into a folder that cannot keep it would be lost.
    check_writable(folder, "the saved game and statistics")
    stats = StatsFile(folder / "stats.json")
    save = folder / "save.json"
    fresh = args.new or any(
        getattr(args, k) for k in ("level", "variant", "rule", "deal", "position", "winnable_only")
    )
    if save.exists() and not fresh:
        try:
            session = PlaySession.load(save, stats=stats)
        except ValueError as err:
            raise ValueError(f"{err}; --new starts a new game (and replaces the save)") from None
    else:
        session = session_from_args(args, stats=stats)
    PlayApp(session, save_path=save).run()
    return 0
