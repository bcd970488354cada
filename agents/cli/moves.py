"""``forty-thieves moves``: list the legal moves of a position file."""

from __future__ import annotations

import argparse
import sys


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The ``forty-thieves moves`` arguments (read by :func:`run_cli`)."""
    parser.add_argument("position", help="file in the position format, or '-'")


def run_cli(args: argparse.Namespace) -> int:
    """The ``forty-thieves moves`` handler."""
    from pathlib import Path

    from forty_thieves_env import format_move, parse_position

    text = sys.stdin.read() if args.position == "-" else Path(args.position).read_text(encoding="utf-8")
    state = parse_position(text)
    for action in state.legal_actions():
        print(format_move(state.variant, action))
    return 0
