"""``forty-thieves deal``: print the starting position of a numbered deal."""

from __future__ import annotations

import argparse
import sys


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The ``forty-thieves deal`` arguments (read by :func:`run_cli`)."""
    parser.add_argument(
        "number", type=int, help="deal number, 1..10**20 (PySolFC's range; the environments play 1..2**63-1)"
    )
    parser.add_argument("--variant", default="classic", help="preset name (default: classic)")


def run_cli(args: argparse.Namespace) -> int:
    """The ``forty-thieves deal`` handler."""
    from forty_thieves_env import deal, format_position, get_variant
    from forty_thieves_env.engine.deals import MAX_ENV_DEAL

    print(format_position(deal(get_variant(args.variant), args.number)), end="")
    if args.number > MAX_ENV_DEAL:  # the two ranges name each other, so neither surprises
        print(
            f"note: deal {args.number} is beyond the environments' range 1..2**63-1: "
            "gym.make(..., deals=...) and reset(options={'deal': n}) refuse it",
            file=sys.stderr,
        )
    return 0
