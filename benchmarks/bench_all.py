"""The benchmark suite: the same run as ``forty-thieves bench`` (see :mod:`agents.bench.command`).

Usage (from the repository root; every option of ``forty-thieves bench`` works)::

    .venv/bin/python benchmarks/bench_all.py
    .venv/bin/python benchmarks/bench_all.py --env FortyThieves-Josephine-v0 --no-ppo
"""

from __future__ import annotations

import sys

from agents.cli import main

if __name__ == "__main__":
    sys.exit(main(["bench", *sys.argv[1:]]))
