"""Benchmark the perfect-information solver on a range of numbered deals: the script of
:mod:`agents.bench.solver` (its docstring, and ``--help``, say what it prints and how to split a
range over processes).

    .venv/bin/python benchmarks/solver_bench.py --first 1 --last 200 --seconds 10
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agents.bench.solver import main

if __name__ == "__main__":
    raise SystemExit(main())
