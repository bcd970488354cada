"""``forty-thieves deal``: print the starting position of a numbered deal."""

from __future__ import annotations

import argparse


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The ``forty-thieves deal`` arguments (read by :func:`run_cli`)."""
    parser.add_argument("number", type=int, help="deal number, 1..10**20")
    parser.add_argument("--variant", default="classic", help="preset name (default: classic)")


def run_cli(args: argparse.Namespace) -> int:
    """The ``forty-thieves deal`` handler."""
    from forty_thieves_env import deal, format_position, get_variant

    print(format_position(deal(get_variant(args.variant), args.number)), end="")
    return 0
