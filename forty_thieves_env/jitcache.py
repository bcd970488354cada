"""Keep numba's on-disk cache of compiled kernels in step with the source it was built from.

numba caches each ``cache=True`` function's machine code in the ``__pycache__`` folder beside
its module and checks only that module's own file when it loads it. A kernel compiles in
every function it calls from other modules (``envs.batch_kernels.step_games`` holds the rules
of ``engine/rules.py``), so after an edit of ``rules.py`` alone numba would go on running the
old rules inside the batch step, silently. :func:`sync` guards against that: it keeps a digest
of every source file a package's kernels are built from (its subpackages included) and, when
that digest changes, drops the cached kernels of the package and its subpackages so that they
compile again from the present source.

An installed package never changes, so the check costs a read of its sources (~1 ms) once per
import; a read-only install is left alone.
"""

from __future__ import annotations

import hashlib
import sys
import threading
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

#: The file in ``__pycache__`` that holds the digest of the sources the cached kernels came from.
STAMP = "numba-sources.sha256"


def digest(sources: Iterable[Path]) -> str:
    """One digest of the names and contents of ``sources``."""
    h = hashlib.sha256()
    for path in sorted(sources):
        h.update(path.name.encode())
        h.update(b"\0")
        h.update(path.read_bytes())
    return h.hexdigest()


def sync(package_dir: Path, sources: Iterable[Path]) -> bool:
    """Drop the cached numba kernels of ``package_dir`` and its subpackages if ``sources``
    changed since they were cached.

    Returns whether it dropped them (or would have, where the folder is read-only).
    """
    cache = package_dir / "__pycache__"
    stamp = cache / STAMP
    now = digest(sources)
    try:
        if stamp.read_text() == now:
            return False
    except OSError:
        pass
    try:
        cache.mkdir(exist_ok=True)
        for pattern in ("*.nbi", "*.nbc"):
            for f in package_dir.rglob(f"__pycache__/{pattern}"):
                f.unlink(missing_ok=True)
        stamp.write_text(now)
    except OSError:
        pass  # read-only install: its sources cannot have changed since it was built
    return True


def package_sources(*package_dirs: Path) -> list[Path]:
    """The ``.py`` files in each of ``package_dirs`` and their subpackages."""
    return [p for d in package_dirs for p in d.rglob("*.py")]


_NOTICE_DELAY = 1.0  # seconds a first call may take before the notice is printed (a cache load takes ~0.1 s)


@contextmanager
def compile_notice(what: str) -> Iterator[None]:
    """Say on stderr what is happening when the call inside takes long: numba compiling ``what``.

    A cold cache makes the first reset or step of a process compile the kernels (tens of
    seconds on a slow machine); a warm one loads them in a fraction of a second. The line is
    printed only if the call is still running after :data:`_NOTICE_DELAY` seconds, and a
    second line says how long it took, so that a first run never looks like a hang::

        forty-thieves-env: compiling the vector env's step kernel (first run only; cached for the next) ...
        forty-thieves-env: ... compiled in 21 s

    Running ``python -m forty_thieves_env.warmup`` once after installing compiles everything ahead.
    """
    start = time.perf_counter()
    shown = threading.Event()

    def notice() -> None:
        shown.set()
        print(f"forty-thieves-env: compiling {what} (first run only; cached for the next) ...", file=sys.stderr)

    timer = threading.Timer(_NOTICE_DELAY, notice)
    timer.daemon = True
    timer.start()
    try:
        yield
    finally:
        timer.cancel()
        if shown.is_set():
            print(f"forty-thieves-env: ... compiled in {time.perf_counter() - start:.0f} s", file=sys.stderr)
