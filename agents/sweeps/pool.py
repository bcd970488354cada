"""A sweep over deals: which deals (:func:`parse_deals`), and one job per deal in this process,
on a pool of worker processes or on Ray (:func:`run_jobs`), as the evaluator and the solve sweeps use."""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import signal
import threading
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from forty_thieves_env.engine.deals import SPLITS, check_deal_number, deal_split

if TYPE_CHECKING:
    from .ray_pool import RayPool


def parse_deals(spec: str | Sequence[int], n: int | None = None) -> list[int]:
    """Deal numbers from a split name, a range ``"a-b"`` (both ends), a comma list, or numbers.

    Args:
        spec: ``"test"``, ``"validation"``, ``"1-50"``, ``"3,17,99"`` (ranges may appear in
            the list: ``"1-5,9"``) or a sequence of ints.
        n: Keep only the first ``n`` deals.

    Raises:
        ValueError: an unknown split, a malformed range, a bad or repeated deal number.
    """
    if isinstance(spec, str):
        text = spec.strip()
        if text in SPLITS:
            deals = deal_split(text).tolist()
        else:
            deals = []
            for part in filter(None, (p.strip() for p in text.split(","))):
                lo, sep, hi = part.partition("-")
                if not (lo.strip().isdigit() and (not sep or hi.strip().isdigit())):
                    splits = ", ".join(SPLITS)
                    raise ValueError(f"bad deals {spec!r}: use {splits}, a range like 1-50 or numbers like 3,17,99")
                a = int(lo)
                b = int(hi) if sep else a
                if b < a:
                    raise ValueError(f"empty deal range {part!r}")
                deals.extend(range(a, b + 1))
    else:
        deals = [int(x) for x in spec]
    deals = [check_deal_number(d) for d in deals]
    if len(set(deals)) != len(deals):
        raise ValueError("a deal number is listed twice")
    if n is not None:
        if n < 1:
            raise ValueError(f"n must be at least 1, got {n}")
        deals = deals[:n]
    if not deals:
        raise ValueError("no deals to play")
    return deals


def deals_meta(spec: str | Sequence[int], deals: Sequence[int]) -> dict[str, Any]:
    """How a sweep's deals were chosen, for its summary: the split name (or ``"list"``), how
    many, the first and the last."""
    return {
        "deals": spec if isinstance(spec, str) else "list",
        "n": len(deals),
        "first_deal": deals[0],
        "last_deal": deals[-1],
    }


def add_sweep_arguments(
    parser: argparse.ArgumentParser, verb: str, out: str | None, out_help: str, workers_help: str
) -> None:
    """Add the flags every sweep over deals shares (``--workers``, ``--ray``, ``--out``,
    ``--quiet``) to ``parser``: ``forty-thieves evaluate`` and ``forty-thieves solve`` both
    call it, so that the two read them alike.

    Args:
        parser: the subcommand's parser.
        verb: what the sweep does with a deal, for ``--ray``'s help ("play", "solve").
        out: ``--out``'s default folder (None: the command picks a fresh one).
        out_help: what ``--out`` holds, for its help.
        workers_help: ``--workers``' help (its default differs by sweep).
    """
    parser.add_argument("--workers", type=int, help=workers_help)
    parser.add_argument(
        "--ray",
        nargs="?",
        const="local",
        metavar="ADDRESS",
        help=f"{verb} on Ray: alone, a local Ray instance; auto or ray://HOST:PORT joins a cluster (docs/ray.md)",
    )
    parser.add_argument("--out", default=out, help=out_help)
    parser.add_argument("--quiet", action="store_true", help="no progress bar")


def worker_count(workers: int | None, jobs: int) -> int:
    """Processes for ``jobs`` jobs: ``workers`` (default: every core), at least 1, at most ``jobs``."""
    if workers is None:
        workers = os.cpu_count() or 1
    return max(1, min(int(workers), max(1, jobs)))


def _raise_interrupt(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt


def run_jobs(
    deals: Sequence[int],
    workers: int,
    local: Callable[[int], Any],
    remote: Callable[[int], Any],
    initializer: Callable[..., None],
    initargs: tuple[Any, ...],
    stop_on_sigterm: bool = False,
    pool: RayPool | None = None,
    memory_mb: float | None = None,
) -> Iterator[Any]:
    """The result of each deal's job, as they finish.

    With a Ray ``pool`` (:class:`~.ray_pool.RayPool`) its tasks run ``remote(deal)`` in
    chunks, each worker set up by ``initializer(*initargs)`` and given ``memory_mb`` (Ray's
    ``memory`` resource; None: no reservation). Else with one worker ``local(deal)`` runs
    here, in deal order; else a pool of ``workers`` spawned processes, each set up by
    ``initializer(*initargs)``, runs ``remote(deal)`` (a module-level function, so that it
    pickles). With ``stop_on_sigterm``, ``kill`` (SIGTERM) stops the pool or the Ray tasks
    like Ctrl-C: leaving the pool's ``with`` terminates the workers, Ray's tasks are cancelled.
    """
    if pool is None and workers == 1:
        for d in deals:
            yield local(d)
        return
    old = None
    if stop_on_sigterm and threading.current_thread() is threading.main_thread():
        old = signal.signal(signal.SIGTERM, _raise_interrupt)
    try:
        if pool is not None:
            yield from pool.map(deals, initializer, initargs, remote, memory_mb)
        else:
            with mp.get_context("spawn").Pool(workers, initializer=initializer, initargs=initargs) as procs:
                yield from procs.imap_unordered(remote, deals, chunksize=1)
    finally:
        if old is not None:
            signal.signal(signal.SIGTERM, old)
