"""Time the first run from an empty numba cache: ``gym.make`` and ``gym.make_vec``, each with a
reset and one step, in a fresh interpreter whose ``NUMBA_CACHE_DIR`` is an empty folder.

    python benchmarks/first_run.py [--id FortyThieves-v0] [--num-envs 64] [--src DIR] [--profile]

Prints the seconds of each case: the import, the first reset and step (what compiles), and a
second, warm interpreter on the cache the first one wrote. ``--src DIR`` imports the package
from another checkout (``git worktree add /tmp/main main``: before vs after, same interpreter);
``--profile`` adds the seconds numba spent compiling each function (its compile events; a
function's time includes that of the functions it compiles under it; the import figure then
leaves out numba's own import, done before the timer starts).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import textwrap

# Records each numba compilation's seconds by function, before the package is imported.
PROFILE = textwrap.dedent(
    """
    import time as _time
    from numba.core import event as _event
    _compiled = {}
    class _Listener(_event.Listener):
        def on_start(self, ev):
            self.t0 = getattr(self, "t0", []) + [_time.perf_counter()]
        def on_end(self, ev):
            name = ev.data["dispatcher"].py_func.__qualname__
            _compiled[name] = _compiled.get(name, 0.0) + _time.perf_counter() - self.t0.pop()
    _event.register("numba:compile", _Listener())
    """
)

CASE = textwrap.dedent(
    """
    import time
    t0 = time.perf_counter()
    import gymnasium as gym
    import forty_thieves_env
    t1 = time.perf_counter()
    env = {make}
    obs, info = env.reset(seed=0)
    obs, *_ = env.step({action})
    t2 = time.perf_counter()
    {report}
    print(forty_thieves_env.__file__)
    print(f"{{t1 - t0:.1f}} {{t2 - t1:.1f}}")
    """
)

REPORT = "print(sorted(((round(v, 2), k) for k, v in _compiled.items()), reverse=True)[:8])"


def run(code: str, cache: str, src: str | None) -> tuple[float, float, str, str]:
    """Run ``code`` in a fresh interpreter on ``cache``; returns (import s, first reset+step s,
    other output, the imported package's ``__init__.py``)."""
    env = {**os.environ, "NUMBA_CACHE_DIR": cache}
    if src is not None:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [os.path.abspath(src), env.get("PYTHONPATH")]))
    # Run in the empty cache folder: ``python -c`` puts the working directory first on sys.path,
    # so from a checkout's root the child would import that checkout, whatever --src says.
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True, cwd=cache)
    lines = out.stdout.splitlines()
    imp, first = lines[-1].split()
    return float(imp), float(first), "\n".join(lines[:-2]), lines[-2]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--id", default="FortyThieves-v0")
    parser.add_argument("--num-envs", type=int, default=64)
    parser.add_argument("--src", default=None, help="import forty_thieves_env from this checkout")
    parser.add_argument("--profile", action="store_true", help="print the slowest compilations too")
    args = parser.parse_args()
    cases = {
        "gym.make": (f"gym.make({args.id!r})", "int(info['action_mask'].argmax())"),
        "gym.make_vec": (
            f"gym.make_vec({args.id!r}, num_envs={args.num_envs})",
            "info['action_mask'].argmax(axis=1)",
        ),
    }
    package = None
    for name, (make, action) in cases.items():
        code = CASE.format(make=make, action=action, report=REPORT if args.profile else "")
        if args.profile:
            code = PROFILE + code
        with tempfile.TemporaryDirectory() as cache:
            cold = run(code, cache, args.src)
            warm = run(code, cache, args.src)
        print(
            f"{name:13s} cold: import {cold[0]:5.1f} s, first reset+step {cold[1]:5.1f} s | "
            f"warm: import {warm[0]:5.1f} s, first reset+step {warm[1]:5.1f} s"
        )
        if args.profile:
            print(f"  compiled (s, function; inclusive): {cold[2]}")
        if package != cold[3]:
            package = cold[3]
            print(f"  (package: {os.path.dirname(package)})")


if __name__ == "__main__":
    main()
