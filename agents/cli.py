"""The ``forty-thieves`` command line.

Subcommands are added by the parts of the project they drive; each keeps its imports inside
its handler so ``forty-thieves --help`` stays instant.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence


def _cmd_deal(args: argparse.Namespace) -> int:
    from forty_thieves_env import deal, format_position, get_variant

    print(format_position(deal(get_variant(args.variant), args.number)), end="")
    return 0


def _cmd_moves(args: argparse.Namespace) -> int:
    from pathlib import Path

    from forty_thieves_env import format_move, parse_position

    text = sys.stdin.read() if args.position == "-" else Path(args.position).read_text(encoding="utf-8")
    state = parse_position(text)
    for action in state.legal_actions():
        print(format_move(state.variant, action))
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="forty-thieves", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("deal", help="print the starting position of a numbered deal (PySolFC game number)")
    p.add_argument("number", type=int, help="deal number, 1..10**20")
    p.add_argument("--variant", default="classic", help="preset name (default: classic)")
    p.set_defaults(func=_cmd_deal)

    p = sub.add_parser("moves", help="list the legal moves of a position file ('-' reads stdin)")
    p.add_argument("position", help="file in the position format, or '-'")
    p.set_defaults(func=_cmd_moves)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``forty-thieves`` console script."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except (ValueError, OSError) as err:
        print(f"forty-thieves {args.command}: error: {err}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
