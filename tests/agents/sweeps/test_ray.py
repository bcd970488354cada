"""``evaluate --ray`` and ``solve --ray`` (agents/sweeps/ray_pool.py) on a local Ray of 2 CPUs:
the same per-deal rows as the process pool, an interrupted solve resumed without a deal solved or
written twice, bad addresses refused at once, and a clear message when Ray is missing.

The tests that need Ray share one local instance per test process (``local_ray``); under
``pytest -n 2`` each worker that runs one starts its own.
"""

from __future__ import annotations

import _thread
import json
import os
import signal
import subprocess
import sys
import threading
import time
from dataclasses import asdict
from pathlib import Path

import pytest

from agents.cli import main
from agents.evaluation.evaluate import evaluate
from agents.solving.sweep import solve_deals
from agents.solving.verdicts import Budget, read_verdicts
from agents.sweeps import ray_pool
from agents.sweeps.ray_pool import RayError, chunks, parse_address

ray = pytest.importorskip("ray")

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture
def local_ray():
    """A local Ray of 2 CPUs, started by the first test that needs it and stopped after the
    module (a test that needs Ray stopped, the bad-address ones, stops it itself)."""
    if not ray.is_initialized():
        ray.init(num_cpus=2, include_dashboard=False, object_store_memory=ray_pool.LOCAL_OBJECT_STORE_BYTES,
                 logging_level="ERROR")  # fmt: skip
    return ray


@pytest.fixture(scope="module", autouse=True)
def _stop_ray():
    yield
    if ray.is_initialized():
        ray.shutdown()


def _rows(evaluation) -> list[dict]:
    """Per-deal rows without the wall time of each game."""
    return [{k: v for k, v in asdict(r).items() if k not in ("seconds", "cpu_seconds")} for r in evaluation.results]


# ----------------------------------------------------------------------------- no Ray needed


def test_parse_address():
    assert parse_address("local") == ("local", None, None)
    assert parse_address("auto") == ("auto", None, None)
    assert parse_address("ray://head.example:10001") == ("client", "head.example", 10001)
    assert parse_address("10.0.0.5:6379") == ("gcs", "10.0.0.5", 6379)
    for bad in ("", "bogus", "ray://head", "ray://head:port", "head:0", "head:70000", "http://head:1"):
        with pytest.raises(RayError, match="bad Ray address"):
            parse_address(bad)


def test_chunks_cover_every_deal_once_in_order():
    deals = list(range(1, 201))
    parts = chunks(deals, 2)
    assert [d for part in parts for d in part] == deals
    sizes = [len(p) for p in parts]
    assert sizes == sorted(sizes, reverse=True) and sizes[0] == 50 and sizes[-1] == 1  # shrinking
    assert len(parts) < 40  # far fewer tasks than deals
    assert chunks([5, 6], 4) == [[5], [6]]


def test_missing_ray_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)  # import ray now fails
    with pytest.raises(RayError, match=r"forty-thieves-env\[ray\]"):
        ray_pool.import_ray()


@pytest.mark.parametrize(
    "address",
    ["bogus", "ray://127.0.0.1:1", "127.0.0.1:1", "auto"],
)
def test_bad_address_fails_fast_and_writes_nothing(tmp_path, capsys, monkeypatch, address):
    if ray.is_initialized():  # a Ray already joined in this process would be used as it is
        ray.shutdown()
    monkeypatch.setenv("RAY_ADDRESS", "127.0.0.1:1")  # what `auto` finds: nothing listens there
    out = tmp_path / "run"
    t0 = time.monotonic()
    code = main(["solve", "--variant", "relaxed", "--n", "2", "--quiet", "--out", str(out), "--ray", address])
    assert time.monotonic() - t0 < 15
    err = capsys.readouterr().err
    assert code == 2
    assert f"at {address}" in err or repr(address) in err, err
    assert not out.exists()  # no meta.json, no verdicts
    assert not ray.is_initialized()
    code = main(["evaluate", "--n", "2", "--quiet", "--out", str(out), "--ray", address])
    assert code == 2 and address in capsys.readouterr().err
    assert not out.exists()


# ----------------------------------------------------------------------------- on a local Ray


def test_evaluate_on_ray_gives_the_pools_rows(local_ray):
    for agent, n, seed in (("random", 16, 7), ("heuristic", 10, 0)):
        pool = evaluate(agent, "classic", "test", n=n, seed=seed, workers=2, progress=False)
        on_ray = evaluate(agent, "classic", "test", n=n, seed=seed, ray="local", progress=False)
        assert _rows(on_ray) == _rows(pool), agent
        assert on_ray.settings["ray"] == "local" and on_ray.settings["workers"] == 2
    assert ray.is_initialized()  # the pool used the Ray it found and left it running


def test_evaluate_cli_on_ray(local_ray, tmp_path, capsys):
    out = tmp_path / "ev"
    assert main(["evaluate", "--agent", "random", "--n", "6", "--quiet", "--out", str(out), "--ray"]) == 0
    results = json.loads((out / "results.json").read_text())
    assert [r["deal"] for r in results["results"]] == list(range(1, 7))
    assert results["settings"]["ray"] == "local"


def test_task_errors_come_back_as_themselves(local_ray):
    """An error in a worker reaches the caller as its own exception (not Ray's wrapper)."""
    from agents.evaluation import evaluate as ev

    init = ("no-such-agent", "classic", {}, 0, 10, {})  # the initializer fails in the worker
    with ray_pool.RayPool("local") as pool, pytest.raises(ValueError, match="no-such-agent"):
        list(pool.map([1, 2], ev._worker_init, init, ev._worker_play))


def test_interrupted_solve_resumes_the_missing_deals_once(local_ray, tmp_path):
    """Ctrl-C (a KeyboardInterrupt in the main thread) after the first verdict: the finished
    deals are kept, the tasks cancelled; the same call again solves only the others."""
    out = tmp_path / "run"
    budget = Budget(seconds=2.0, memory_mb=256.0)
    deals = "1-8"  # classic deals: most of them run to the time budget
    verdicts = out / "verdicts.jsonl"
    stopped = threading.Event()
    sent: list[tuple[float, int]] = []  # (seconds, verdict lines) at each Ctrl-C sent
    t0 = time.monotonic()

    def interrupt_after_first_verdict() -> None:
        while not (verdicts.exists() and verdicts.stat().st_size > 0):
            time.sleep(0.05)
        # Pressed again while verdicts still come: in four fresh-clone `make test` runs (cold
        # kernel caches, the other xdist worker busy) one Ctrl-C did not stop the solve, which a
        # lone run never showed; ``sent`` says when, if a run ever ignores them all. (Not again
        # once the verdicts stop: the first one is then being handled.)
        lines = -1
        while not stopped.is_set() and len(sent) < 10:
            now = verdicts.read_text().count("\n")
            if now > lines:
                sent.append((round(time.monotonic() - t0, 2), now))
                _thread.interrupt_main()
                lines = now
            stopped.wait(1.0)

    # Ctrl-C raises KeyboardInterrupt only under Python's default SIGINT handler. In the whole
    # suite an xdist worker can reach this test with SIGINT ignored (a hook logging the handler
    # around each test saw SIG_IGN set outside any test's call, by something the worker imported
    # or ran earlier), and ``_thread.interrupt_main`` then does nothing: two clean-clone
    # `make test` runs failed so, the test alone never. The default for the solve, as a shell has it.
    before = signal.signal(signal.SIGINT, signal.default_int_handler)
    watcher = threading.Thread(target=interrupt_after_first_verdict, daemon=True)
    watcher.start()
    try:
        solve_deals("classic", deals, out=out, budget=budget, ray="local", progress=False)
    except KeyboardInterrupt:
        pass
    else:
        pytest.fail(
            f"the solve ended without a KeyboardInterrupt after {time.monotonic() - t0:.1f} s; sent: {sent}; "
            f"SIGINT handler before the test: {before!r}"
        )
    finally:
        stopped.set()
        signal.signal(signal.SIGINT, before)
    watcher.join(timeout=5)
    first = read_verdicts(verdicts)
    assert 1 <= len(first) < 8
    summary = solve_deals("classic", deals, out=out, budget=budget, ray="local", progress=False)
    assert summary["solved_now"] == 8 - len(first)
    lines = [json.loads(line)["deal"] for line in verdicts.read_text().splitlines()]
    assert sorted(lines) == list(range(1, 9))  # each deal written once
    assert summary["summary"]["deals"] == 8 and summary["ray"] == "local"


def test_solve_on_ray_reserves_memory_it_can_get(local_ray, tmp_path):
    with pytest.raises(RayError, match="lower --memory"):
        solve_deals("relaxed", "32000", out=tmp_path / "r", budget=Budget(memory_mb=10_000_000), ray="local")


# ----------------------------------------------------------------------------- the command line, Ctrl-C


@pytest.mark.slow
def test_solve_cli_interrupted_by_sigint_and_resumed(tmp_path):
    """The real thing: `forty-thieves solve --ray` (its own local Ray) stopped by SIGINT."""
    if ray.is_initialized():
        ray.shutdown()
    out = tmp_path / "run"
    exe = [sys.executable, "-m", "agents.cli"]
    args = ["solve", "--variant", "classic", "--deals", "1-8", "--seconds", "3", "--memory", "256"]
    args += ["--out", str(out), "--quiet", "--ray", "--workers", "2"]
    proc = subprocess.Popen([*exe, *args], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    verdicts = out / "verdicts.jsonl"
    deadline = time.monotonic() + 300
    while not (verdicts.exists() and verdicts.stat().st_size > 0):
        assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()[0]
        time.sleep(0.1)
    proc.send_signal(signal.SIGINT)
    output = proc.communicate(timeout=120)[0]
    assert proc.returncode == 130, output
    assert "run the same command again to resume" in output
    first = read_verdicts(verdicts)
    assert 1 <= len(first) < 8
    done = subprocess.run([*exe, *args], cwd=ROOT, capture_output=True, text=True, timeout=600, env=os.environ)
    assert done.returncode == 0, done.stderr[-2000:]
    lines = [json.loads(line)["deal"] for line in verdicts.read_text().splitlines()]
    assert sorted(lines) == list(range(1, 9))
    assert json.loads((out / "summary.json").read_text())["solved_now"] == 8 - len(first)
