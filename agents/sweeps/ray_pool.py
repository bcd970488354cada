"""Sweeps over deals on Ray: a local Ray instance or a cluster instead of the process pool.

``forty-thieves evaluate --ray`` and ``forty-thieves solve --ray`` hand their deals to a
:class:`RayPool` instead of :func:`~.sweep.run_jobs`'s process pool:

* **Where**: ``local`` (``--ray`` alone) starts a Ray instance on this machine's cores (or
  ``workers`` of them) and stops it at the end; ``auto`` joins the cluster this machine belongs
  to (``ray start --head`` / ``ray start --address=...``, or ``RAY_ADDRESS``); ``ray://HOST:PORT``
  joins one through the Ray Client; ``HOST:PORT`` names a head node's GCS. A Ray already
  initialised in this process (``ray.init`` before the call) is used as it is.
* **Fail fast**: a malformed address, or one where no Ray server answers within
  :data:`CONNECT_TIMEOUT` seconds (:func:`probe`; ``auto`` is first resolved the way Ray does,
  :func:`resolve_auto`), raises :class:`RayError` naming the address before anything else
  happens (``solve`` writes nothing into its folder), instead of Ray's retries of a minute or more.
* **Tasks carry chunks of deals** (:func:`chunks`), large at first and down to single deals at
  the end, so that few tasks carry many deals and the last ones still balance the load. Each
  task is a Ray streaming generator that yields each deal's result as soon as it is made;
  :meth:`RayPool.map` waits on all of them with ``ray.wait`` and yields the results as they
  come (the progress bar and ``verdicts.jsonl`` see every deal, not every chunk). At most
  ``workers`` (default: the cluster's CPUs) tasks are in flight; the rest are submitted as
  those finish.
* **Same workers, same results**: a task runs the pool's own ``initializer(*initargs)`` (once
  per worker process and set of arguments) and then ``remote(deal)`` for each deal, the very
  functions the process pool runs, so each deal's result is the pool's (per-deal seeds come from
  ``(seed, deal)``, never from the worker or the order).
* **Ctrl-C** (or an error, or the caller stopping) cancels the tasks still running and waits
  up to :data:`SETTLE_SECONDS` for them to end; what finished has been yielded already. The
  cancel is not forced: a forced one kills the worker process, and Ray delivers it even when the
  task has just ended, to the worker's next task (a later sweep's). A task stops at its next
  Python step, so a solver first ends the deal it is on (its ``--seconds`` at most); when the
  command ends, Ray stops the workers of its job anyway.
* **Shipped to workers** on a cluster: this checkout's ``agents`` and ``forty_thieves_env``
  packages (``runtime_env`` ``py_modules``, ``__pycache__`` left out), so that the workers run
  the driver's code; their dependencies (numpy, numba, gymnasium, ...) must be installed on every
  node. Arguments travel pickled: the agent's name and options, the variant name, the budget.
"""

from __future__ import annotations

import math
import os
import re
import socket
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

from agents.extras import install_line

#: ``--ray`` with no address: a Ray instance on this machine, for this command only.
LOCAL = "local"
#: What to install when Ray is missing.
INSTALL_HINT = install_line("ray")
#: Seconds to wait for a cluster address to answer before giving up.
CONNECT_TIMEOUT = 5.0
#: Each chunk takes 1 / (this * CPUs) of the deals left (more: smaller chunks, more tasks).
CHUNKS_PER_CPU = 2
#: Seconds a stopped sweep waits for its cancelled tasks to end (a solver ends its deal first).
SETTLE_SECONDS = 15.0
#: The local instance's object store: results are small rows, so a small store is enough.
LOCAL_OBJECT_STORE_BYTES = 256 * 2**20

_HOST_PORT = re.compile(r"^(?P<host>\[[0-9a-fA-F:]+\]|[A-Za-z0-9_.-]+):(?P<port>\d{1,5})$")


class RayError(ValueError):
    """Ray is missing, or an address is malformed or does not answer; the message names it."""


def import_ray() -> ModuleType:
    """The ``ray`` module, or :class:`RayError` telling which extra to install."""
    try:
        import ray
    except ImportError as err:
        raise RayError(f"Ray is not installed ({err}); install it with {INSTALL_HINT}") from None
    return ray


def parse_address(address: str) -> tuple[str, str | None, int | None]:
    """``(kind, host, port)`` of a ``--ray`` address; kind is ``local``, ``auto``, ``client``
    (``ray://HOST:PORT``) or ``gcs`` (``HOST:PORT``).

    Raises:
        RayError: anything else.
    """
    text = address.strip()
    if text in (LOCAL, "auto"):
        return text, None, None
    kind, rest = ("client", text[len("ray://") :]) if text.startswith("ray://") else ("gcs", text)
    m = _HOST_PORT.match(rest)
    if m is None or not 0 < int(m["port"]) < 65536:
        raise RayError(f"bad Ray address {address!r}: use local, auto, ray://HOST:PORT or HOST:PORT")
    return kind, m["host"].strip("[]"), int(m["port"])


def probe(address: str, kind: str, host: str, port: int, timeout: float = CONNECT_TIMEOUT) -> None:
    """Raise :class:`RayError` naming ``address`` unless the Ray server that ``kind`` expects
    (``client``: a head's Ray Client server; ``gcs``: a head's GCS) answers at ``host:port``
    within ``timeout`` seconds, and lets this process in.

    Ray itself retries for half a minute and more. A TCP connect, or even an HTTP/2 handshake, is
    not enough: a proxy may accept any connection (and answer HTTP 404, which gRPC reports as
    "Received http2 header with status: 404"). So the probe sends the Ray Client's own ping
    (with the token where this process has token authentication on): a client server answers it,
    a GCS says it has no such method, and a server that wants a token says so.
    """
    import grpc
    from ray._private.grpc_utils import init_grpc_channel
    from ray.core.generated import ray_client_pb2, ray_client_pb2_grpc

    try:
        with socket.create_connection((host, port), timeout=timeout):
            pass
    except OSError as err:
        why = "no answer" if isinstance(err, TimeoutError) else (err.strerror or str(err))
        raise RayError(f"cannot reach the Ray cluster at {address} ({why} within {timeout:g} s)") from None
    channel = init_grpc_channel(f"{host}:{port}")
    try:
        ping = ray_client_pb2.ClusterInfoRequest(type=ray_client_pb2.ClusterInfoType.PING)
        ray_client_pb2_grpc.RayletDriverStub(channel).ClusterInfo(ping, timeout=timeout)
        found = "client"
    except grpc.RpcError as err:
        code, details = err.code(), err.details() or ""
        if code == grpc.StatusCode.UNAUTHENTICATED:
            raise RayError(
                f"the Ray cluster at {address} wants its token: set RAY_AUTH_MODE=token and RAY_AUTH_TOKEN "
                "(`ray get-auth-token` on the head prints it)"
            ) from None
        if code != grpc.StatusCode.UNIMPLEMENTED or details.startswith("Received http2 header"):
            raise RayError(f"cannot reach the Ray cluster at {address} (no Ray server answers there: "
                           f"{details or code.name})") from None  # fmt: skip
        found = "gcs"
    finally:
        channel.close()
    if found != kind:
        hint = (
            f"ray://{host}:{port}" if found == "client" else f"{host}:{port} (or the client port, ray://{host}:10001)"
        )
        raise RayError(f"{address} is a Ray {'Client server' if found == 'client' else 'GCS'}: give it as {hint}")


def resolve_auto() -> str:
    """The cluster ``auto`` means, as ``ray.init`` finds it: ``RAY_ADDRESS``, else the address the
    last ``ray start`` on this machine wrote (or any Ray instance running here).

    Raises:
        RayError: there is none.
    """
    from ray._private.services import get_ray_address_from_environment

    try:
        found = get_ray_address_from_environment("auto", None)
    except ConnectionError:
        found = None
    if not found or found == "auto":
        raise RayError(
            "cannot join the Ray cluster at auto: no RAY_ADDRESS and no Ray started on this machine "
            "(`ray start --head`, or give its address)"
        )
    return found


def shipped_modules() -> list[str]:
    """The package folders a cluster's workers receive (this checkout's ``agents`` and ``forty_thieves_env``)."""
    import agents
    import forty_thieves_env

    return [str(Path(agents.__file__).parent), str(Path(forty_thieves_env.__file__).parent)]


def _run_chunk(
    initializer: Callable[..., None], initargs: tuple[Any, ...], remote: Callable[[int], Any], deals: Sequence[int]
) -> Iterator[Any]:
    """The task: set the worker up as the process pool does (once per process and arguments),
    then yield ``remote(deal)`` for each deal of the chunk."""
    key = (initializer.__module__, initializer.__qualname__, initargs)
    if _SETUP.get("key") != key:
        initializer(*initargs)
        _SETUP["key"] = key
    for deal in deals:
        yield remote(deal)


_SETUP: dict[str, Any] = {}


def _run_chunk_whole(
    initializer: Callable[..., None], initargs: tuple[Any, ...], remote: Callable[[int], Any], deals: Sequence[int]
) -> list[Any]:
    """:func:`_run_chunk` as one list, for the Ray Client (which has no streaming generators)."""
    return list(_run_chunk(initializer, initargs, remote, deals))


def chunks(deals: Sequence[int], cpus: int) -> list[list[int]]:
    """``deals`` cut into consecutive chunks that shrink towards the end (guided scheduling):
    each chunk holds ``1 / (CHUNKS_PER_CPU * cpus)`` of the deals still left, at least one. The
    big first chunks keep the tasks few; the small last ones keep the CPUs busy to the end."""
    out: list[list[int]] = []
    i, share = 0, CHUNKS_PER_CPU * max(1, cpus)
    while i < len(deals):
        size = max(1, math.ceil((len(deals) - i) / share))
        out.append(list(deals[i : i + size]))
        i += size
    return out


def check_address(address: str) -> str:
    """Check that ``address`` is well formed and answers (``auto``: that there is a cluster to mean),
    without joining it; return its kind (``local``, ``client`` or ``gcs``).

    Raises:
        RayError: the address is malformed, ``auto`` finds no cluster, or it does not answer.
    """
    kind, host, port = parse_address(address)
    shown = address
    if kind == "auto":
        resolved = resolve_auto()
        shown = f"auto ({resolved})"
        kind, host, port = parse_address(resolved)
    if host is not None and port is not None:
        probe(shown, kind, host, port)
    return kind


class RayPool:
    """A connection to Ray for one sweep (see the module docstring); use it as a context manager.

    Args:
        address: ``local``, ``auto``, ``ray://HOST:PORT`` or ``HOST:PORT``.
        workers: With ``local``, the instance's CPUs (default: every core); anywhere, the most
            tasks in flight at once (default: the cluster's CPUs).

    Raises:
        RayError: Ray is missing, the address is malformed or does not answer, or Ray refuses it.
    """

    def __init__(self, address: str = LOCAL, workers: int | None = None) -> None:
        parse_address(address)
        ray = import_ray()
        self.address = address
        self._ray = ray
        self._owned = False
        if workers is not None and workers < 1:
            raise ValueError(f"workers must be at least 1, got {workers}")
        if not ray.is_initialized():
            kind = check_address(address)
            try:
                if kind == LOCAL:
                    ray.init(
                        num_cpus=workers or os.cpu_count() or 1,
                        include_dashboard=False,
                        object_store_memory=LOCAL_OBJECT_STORE_BYTES,
                        logging_level="WARNING",
                    )
                else:
                    env = {"py_modules": shipped_modules(), "excludes": ["__pycache__"]}
                    ray.init(address=address, runtime_env=env, logging_level="WARNING")
            except (ConnectionError, RuntimeError, ValueError, TimeoutError) as err:
                first = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
                raise RayError(f"cannot join the Ray cluster at {address}: {first}") from None
            self._owned = True
        #: Whether tasks stream each deal's result (the Ray Client has no streaming generators:
        #: there a chunk's results come back together).
        self.streaming = not ray.util.client.ray.is_connected()
        self.cpus = max(1, int(ray.cluster_resources().get("CPU", 1)))
        self.in_flight = workers or self.cpus

    def __enter__(self) -> RayPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Disconnect (and stop a local instance) if this pool started the connection."""
        if self._owned:
            self._ray.shutdown()
            self._owned = False

    def check_memory(self, megabytes: float) -> None:
        """Raise :class:`RayError` unless some node can give a task ``megabytes`` of memory."""
        nodes = [n.get("Resources", {}).get("memory", 0.0) for n in self._ray.nodes() if n.get("Alive")]
        largest = max(nodes, default=0.0) / 2**20
        if megabytes > largest:
            raise RayError(
                f"a task asks for {megabytes:.0f} MB of memory but the largest node of the Ray cluster at "
                f"{self.address} offers {largest:.0f} MB; lower --memory"
            )

    def map(
        self,
        deals: Sequence[int],
        initializer: Callable[..., None],
        initargs: tuple[Any, ...],
        remote: Callable[[int], Any],
        memory_mb: float | None = None,
    ) -> Iterator[Any]:
        """``remote(deal)`` of each deal, as they finish, computed in chunks on Ray.

        Args:
            deals: The deals, in the order their chunks are submitted.
            initializer: Sets a worker up (``initializer(*initargs)``), as the process pool's.
            remote: Module-level function of one deal, as the process pool's.
            memory_mb: Memory to reserve for each task (Ray's ``memory`` resource); None: none.

        Raises:
            Whatever a task raised (the original exception, not Ray's wrapper).
        """
        ray = self._ray
        options: dict[str, Any] = {"num_cpus": 1, "max_retries": 0}
        if self.streaming:
            options["num_returns"] = "streaming"
        if memory_mb is not None:
            self.check_memory(memory_mb)
            options["memory"] = int(memory_mb * 2**20)
        task = ray.remote(_run_chunk if self.streaming else _run_chunk_whole).options(**options)
        todo = chunks(deals, self.in_flight)
        todo.reverse()  # pop() from the end submits the first chunk first
        running: list[Any] = []
        try:
            while todo or running:
                while todo and len(running) < self.in_flight:
                    running.append(task.remote(initializer, initargs, remote, todo.pop()))
                ready, _ = ray.wait(running, num_returns=1)
                for waited in ready:
                    yield from self._take(waited, running)
        finally:
            for waited in running:
                ray.cancel(waited)
            self._settle(running)

    def _settle(self, cancelled: list[Any], timeout: float = SETTLE_SECONDS) -> None:
        """Wait (at most ``timeout`` seconds) until the ``cancelled`` tasks have ended, so that
        the next sweep of this process starts on idle workers."""
        ray = self._ray
        deadline = time.monotonic() + timeout
        pending = list(cancelled)
        while pending and (left := deadline - time.monotonic()) > 0:
            ready, pending = ray.wait(pending, num_returns=1, timeout=left)
            for waited in ready:
                try:
                    ray.get(next(waited) if self.streaming else waited)
                except StopIteration:
                    continue  # the generator has ended
                except Exception:  # a cancelled or failed task: what it says does not matter
                    pass
                if self.streaming:
                    pending.append(waited)  # a generator ends with StopIteration

    def _take(self, waited: Any, running: list[Any]) -> list[Any]:
        """The results ``ray.wait`` found ready in ``waited`` (a generator: its next result, or none
        when it has ended; a task's list: all of it), dropping it from ``running`` once done."""
        ray = self._ray
        try:
            if self.streaming:
                try:
                    return [ray.get(next(waited))]
                except StopIteration:
                    running.remove(waited)
                    return []
            running.remove(waited)
            return ray.get(waited)
        except ray.exceptions.RayTaskError as err:
            raise err.as_instanceof_cause() from None
