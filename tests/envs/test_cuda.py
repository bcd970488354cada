"""The batch engine on a GPU (CudaGames) behaves exactly as BatchGames.

Tests marked ``cuda`` run the CUDA kernels on a GPU (skipped without one: tests/conftest.py).
The others run everywhere: CudaGames over a CPU twin of the device (tests/cuda_twin.py: the
same per-game code, the same array traffic), the kernels compiled to PTX without a GPU, the
IntEnum index shim, and the errors without numba-cuda or a GPU.
"""

from __future__ import annotations

import functools
import importlib
import importlib.util
import subprocess
import sys
import types as pytypes

import numpy as np
import pytest
from cuda_twin import TwinArray, assert_same, check_parity, twin_games

from forty_thieves_env.envs.batch import BatchGames
from forty_thieves_env.envs.cuda_games import INSTALL_HINT, CudaGames
from forty_thieves_env.envs.sampling import sample_counted
from forty_thieves_env.text.errors import ResetNeededError

PRESETS = ["classic", "josephine", "rank_and_file", "relaxed"]


@functools.cache
def _has_nvvm() -> bool:
    """numba-cuda installed with an NVVM to compile with (no GPU needed)."""
    if importlib.util.find_spec("numba_cuda") is None:
        return False
    from numba import cuda

    def nothing(a):
        pass

    try:
        cuda.compile_ptx(nothing, "void(int64[::1])", cc=(9, 0))
    except Exception:  # no libnvvm found (numba-cuda without its toolkit extra)
        return False
    return True


def _need_nvvm() -> None:
    if not _has_nvvm():
        pytest.skip("needs numba-cuda and its NVVM (the [cuda] extra)")


# ------------------------------------------------------------------------------ CPU twin


@pytest.mark.parametrize("variant", PRESETS)
@pytest.mark.parametrize("autoreset", ["next_step", "same_step"])
def test_twin_steps_as_batch(variant: str, autoreset: str) -> None:
    counts = check_parity(
        twin_games, 48, 120, variant, seed=3, autoreset=autoreset, max_episode_steps=45, illegal_every=11
    )
    # Episodes last 45 steps at most: every game ends (and is dealt again from its generator) twice at least.
    assert counts["ended"] >= 48 * 2
    assert counts["illegal"] > 0


@pytest.mark.parametrize(
    "variant, options",
    [
        ("classic", {"observation": "flat"}),
        ("rank_and_file", {"observation": "oracle", "autoreset": "same_step"}),
        ("classic", {"deals": "test", "autoreset": "same_step"}),
        ("josephine", {"winnable_only": True, "observation": "flat"}),
        ("classic", {"illegal_action": "terminate", "reward": "score"}),
        ("classic", {"run_moves": "supermove", "redeals": 1, "observation": "oracle"}),
    ],
)
def test_twin_options(variant: str, options: dict) -> None:
    counts = check_parity(twin_games, 32, 100, variant, seed=5, max_episode_steps=30, illegal_every=13, **options)
    assert counts["ended"] >= 32 * 3


def test_twin_parity_check_can_fail() -> None:
    gpu = twin_games(8, "classic")
    cpu = BatchGames(8, "classic")
    gpu.reset(seed=1)
    cpu.reset(seed=1)
    gpu.step(cpu.sample_legal(np.random.default_rng(0), np.zeros(8, dtype=np.int64)))
    with pytest.raises(AssertionError, match="states"):
        assert_same(gpu, cpu, "one side stepped")


def test_twin_resets_as_batch() -> None:
    """Resets without a seed run on the device; with a seed or a position, on the host."""
    n = 16
    gpu = twin_games(n, "classic", autoreset="same_step", max_episode_steps=20)
    cpu = BatchGames(n, "classic", autoreset="same_step", max_episode_steps=20)
    rng = np.random.default_rng(7)
    half = np.arange(n) % 2 == 0
    deals = rng.integers(1, 40000, n)
    resets = [
        {"seed": 11},
        {},
        {"which": half},
        {"deal": 12345},
        {"deal": deals, "which": ~half},
        {"seed": [None, 4] * (n // 2), "which": half},
    ]
    for k, kwargs in enumerate(resets):
        before = len(gpu._dev.launches)
        gpu.reset(**kwargs)
        cpu.reset(**kwargs)
        on_device = "seed" not in kwargs and k > 0
        assert ("reset_kernel" in gpu._dev.launches[before:]) == on_device, kwargs
        assert_same(gpu, cpu, f"reset {kwargs}")
        for _ in range(25):  # through the time limit: the next deals drawn after each reset
            a = cpu.sample_legal(rng)
            gpu.step(a)
            cpu.step(a)
        assert_same(gpu, cpu, f"steps after reset {kwargs}")


def test_twin_reset_from_position() -> None:
    from forty_thieves_env import deal, format_position

    text = format_position(deal("classic", 9))
    gpu, cpu = twin_games(4, "classic"), BatchGames(4, "classic")
    for games in (gpu, cpu):
        games.reset(seed=2)
        games.reset(position=text, which=np.array([True, False, True, False]))
    assert_same(gpu, cpu, "reset from a position")
    assert (gpu.to_host().games[[0, 2], 0] == 0).all()  # no deal number: a position


def test_twin_refused_reset_changes_nothing() -> None:
    gpu = twin_games(4, "classic")
    with pytest.raises(ValueError, match="first reset"):
        gpu.reset(which=np.array([True, False, True, True]))
    assert not gpu.started
    gpu.reset(seed=0)
    before = gpu.to_host().states.copy()
    with pytest.raises(ValueError, match="deal"):
        gpu.reset(deal=[1, 2])
    with pytest.raises(TypeError):
        gpu.reset(deal=1.5)
    np.testing.assert_array_equal(gpu.to_host().states, before)


def test_twin_sample_legal() -> None:
    n = 64
    gpu, cpu = twin_games(n, "josephine"), BatchGames(n, "josephine")
    gpu.reset(seed=0)
    cpu.reset(seed=0)
    out = TwinArray((n,), dtype=np.int64)
    for step in range(20):
        u = np.random.default_rng(step).random(n)
        gpu.sample_legal(u, out)  # host uniforms
        expected = cpu.sample_legal(np.random.default_rng(step))  # the same uniforms
        np.testing.assert_array_equal(out, expected)
        gpu.sample_legal(gpu._dev.to_device(u), out)  # device uniforms
        np.testing.assert_array_equal(out, expected)
        gpu.step(out)
        cpu.step(expected)
    seeded = [gpu.sample_legal(s, TwinArray((n,), dtype=np.int64)).copy() for s in (1, 1, 2)]
    np.testing.assert_array_equal(seeded[0], seeded[1])  # a seed fixes the draws
    assert (seeded[0] != seeded[2]).any()  # another seed, other draws
    assert gpu.to_host().masks[np.arange(n), seeded[2]].all()  # legal in every game
    fresh = gpu.sample_legal(1)  # without out: a new device array
    assert gpu._dev.is_device_array(fresh) and fresh is not out
    np.testing.assert_array_equal(fresh, seeded[0])
    with pytest.raises(TypeError, match="out must be a device array"):
        gpu.sample_legal(out, np.random.default_rng(0).random(n))  # the old order (out first): refused, not misread


def test_twin_step_inputs() -> None:
    gpu = twin_games(4, "classic")
    with pytest.raises(ResetNeededError):
        gpu.step([0, 0, 0, 0])
    gpu.reset(seed=0)
    gpu.step([0, 1, 2, 3])  # host integers: checked, uploaded
    gpu.step(gpu._dev.to_device(np.zeros(4, dtype=np.int64)))  # a device array: as it is
    with pytest.raises(ValueError, match="int64"):
        gpu.step(gpu._dev.to_device(np.zeros(4, dtype=np.int32)))
    with pytest.raises(ValueError, match=r"\(4,\)"):
        gpu.step(gpu._dev.to_device(np.zeros(5, dtype=np.int64)))
    with pytest.raises(TypeError):
        gpu.step([0.5, 1, 2, 3])
    with pytest.raises(TypeError, match="device array"):
        gpu.sample_legal(0, np.zeros(4, dtype=np.int64))  # out must be a device array


def test_twin_attributes_match_batch() -> None:
    gpu = twin_games(6, "rank_and_file", observation="oracle", autoreset="same_step", max_episode_steps=9)
    cpu = BatchGames(6, "rank_and_file", observation="oracle", autoreset="same_step", max_episode_steps=9)
    for name in ("num_envs", "n_actions", "variant", "observation_mode", "layout", "obs_size", "autoreset"):
        assert getattr(gpu, name) == getattr(cpu, name), name
    assert gpu.max_episode_steps == 9 and gpu.options.observation == "oracle"
    assert gpu.num_games == gpu.num_envs == 6  # the alias kept for older code
    for name in ("states", "masks", "obs", "obs_lay", "games", "ep_return", "rewards", "flags", "final_obs"):
        a, b = getattr(gpu, name), getattr(cpu, name)
        assert (a.shape, a.dtype) == (b.shape, b.dtype), name
    for name in ("final_masks", "final_games", "final_return", "gens"):
        a, b = getattr(gpu, name), getattr(cpu, name)
        assert (a.shape, a.dtype) == (b.shape, b.dtype), name


def test_raise_on_illegal_is_refused() -> None:
    with pytest.raises(ValueError, match="illegal_action"):
        twin_games(4, "classic", illegal_action="raise")


# ------------------------------------------------------------------------------ no GPU


@pytest.mark.skipif(importlib.util.find_spec("numba_cuda") is None, reason="numba-cuda not installed")
def test_error_without_gpu() -> None:
    from numba import cuda

    if cuda.is_available():
        pytest.skip("a GPU is visible")
    # The first thing checked: a bad variant is not even looked at.
    with pytest.raises(RuntimeError, match="NVIDIA GPU and its CUDA driver"):
        CudaGames(4, "no-such-variant")


def test_error_without_numba_cuda(monkeypatch: pytest.MonkeyPatch) -> None:
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "numba_cuda" else real(name, *a))
    with pytest.raises(ImportError, match="numba-cuda") as err:
        CudaGames(4, "no-such-variant")
    assert INSTALL_HINT in str(err.value) and "\n" not in str(err.value)


def test_import_does_not_import_numba_cuda() -> None:
    code = (
        "import sys, forty_thieves_env, forty_thieves_env.envs.batch, forty_thieves_env.envs.cuda_games;"
        "print(sorted(m for m in sys.modules if m.startswith('numba.cuda') or m.endswith('cuda_kernels')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


# ------------------------------------------------------------------------------ PTX without a GPU


def _array_type(a: np.ndarray):
    from numba import from_dtype
    from numba.core import types

    return types.Array(from_dtype(a.dtype), a.ndim, "C")  # what a device array of ``a`` is typed as


def kernel_signatures(b: BatchGames) -> dict[str, tuple]:
    """The argument types of each kernel for a batch like ``b``'s arrays on the device."""
    from numba.core import types

    t = _array_type
    bufs = types.Tuple([t(a) for a in b.bufs])  # one tuple argument: its arrays are passed one by one
    which, uniforms = np.zeros(1, dtype=np.bool_), np.zeros(1)
    return {
        "step_kernel": (t(b.cfg), t(b.spec), t(b.params), t(b.actions), bufs),
        "reset_kernel": (t(b.cfg), t(b.params), t(which), t(b.actions), bufs),
        "mask_rows_kernel": (t(b.masks), t(b.obs), t(b.obs_lay)),
        "sample_kernel": (t(b.masks), t(b.games), t(uniforms), t(b.actions)),
        "sample_seeded_kernel": (t(b.masks), t(b.games), types.int64, t(b.actions)),
    }


def test_kernels_compile_to_ptx(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every kernel compiles for an H100/H200 (cc 9.0), with nothing left to link or call."""
    _need_nvvm()
    from numba import cuda

    from forty_thieves_env.envs import cuda_kernels

    # Calling an @njit function from a kernel makes numba-cuda ask the current GPU's compute
    # capability: without a GPU, answer for it (the PTX is for the cc given anyway).
    dispatcher = importlib.import_module(cuda.__name__ + ".dispatcher")
    gpu = pytypes.SimpleNamespace(compute_capability=(9, 0))
    monkeypatch.setattr(dispatcher, "get_current_device", lambda: gpu)
    # The kernels' argument types do not depend on the variant, observation mode or autoreset
    # (those are array contents): one compile per distinct signature covers them all.
    signatures: dict[tuple, str] = {}
    for variant in ("classic", "rank_and_file"):
        for observation in ("dict", "oracle"):
            for autoreset in ("next_step", "same_step"):
                b = BatchGames(2, variant, observation=observation, autoreset=autoreset, deals="test")
                for name, sig in kernel_signatures(b).items():
                    signatures.setdefault((name, sig), name)
    kernels = ["mask_rows_kernel", "reset_kernel", "sample_kernel", "sample_seeded_kernel", "step_kernel"]
    assert sorted(signatures.values()) == kernels
    for (name, sig), _ in signatures.items():
        ptx, _ = cuda.compile_ptx(getattr(cuda_kernels, name).py_func, sig, cc=(9, 0))
        assert ".visible .entry" in ptx, name
        assert ".extern" not in ptx, name  # no runtime function (an allocation, an exception) to link
        assert "call" not in ptx, name  # every device function inlined


def test_enum_index_shim_is_needed_exactly_when_detected() -> None:
    """The shim's detection agrees with what a fresh numba-cuda does with an IntEnum index."""
    _need_nvvm()
    code = """
import importlib, types
from numba import cuda
from numba.core.errors import TypingError
from forty_thieves_env.engine.layout import Cfg
dispatcher = importlib.import_module(cuda.__name__ + ".dispatcher")  # no GPU: see test_kernels_compile_to_ptx
dispatcher.get_current_device = lambda: types.SimpleNamespace(compute_capability=(9, 0))
def k(a, out):
    out[0] = a[Cfg.COLUMNS]
    out[Cfg.DEPTH] = 1
try:
    cuda.compile_ptx(k, "void(int64[::1], int64[::1])", cc=(9, 0))
    compiled = True
except TypingError:
    compiled = False
from forty_thieves_env.envs import cuda_kernels  # detects, and installs the shim if needed
refused = cuda_kernels.enum_index_refused()
cuda.compile_ptx(k, "void(int64[::1], int64[::1])", cc=(9, 0))  # compiles now, either way
print(compiled, refused, cuda_kernels._INSTALLED)
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    compiled, refused, installed = out.stdout.split()
    assert (compiled == "True") == (refused == "False"), out.stdout  # detection matches the compiler
    assert installed == refused


# ------------------------------------------------------------------------------ on a GPU


def _cuda_games(*args, **kwargs) -> CudaGames:
    return CudaGames(*args, **kwargs)


@pytest.mark.cuda
@pytest.mark.parametrize("variant", PRESETS)
def test_cuda_parity(variant: str) -> None:
    """10,000 games, 300 steps of random legal actions: every array equal after every step."""
    counts = check_parity(_cuda_games, 10_000, 300, variant, seed=0, autoreset="same_step", max_episode_steps=100)
    # Episodes last 100 steps at most: every game ends, and the device deals it again from its
    # generator, twice at least.
    assert counts["ended"] >= 10_000 * 2


@pytest.mark.cuda
@pytest.mark.parametrize(
    "variant, options",
    [
        ("classic", {"autoreset": "next_step", "observation": "flat"}),
        ("rank_and_file", {"autoreset": "next_step", "observation": "oracle"}),
        ("classic", {"deals": "test", "autoreset": "same_step"}),
        ("josephine", {"winnable_only": True}),
        ("classic", {"illegal_action": "terminate", "observation": "oracle"}),
    ],
)
def test_cuda_options(variant: str, options: dict) -> None:
    counts = check_parity(_cuda_games, 2000, 150, variant, seed=1, max_episode_steps=40, illegal_every=17, **options)
    assert counts["ended"] >= 2000 * 3


@pytest.mark.cuda
def test_cuda_resets_and_sampler() -> None:
    from numba import cuda

    n = 3000
    kw = {"autoreset": "same_step", "max_episode_steps": 20}
    gpu, cpu = CudaGames(n, "classic", **kw), BatchGames(n, "classic", **kw)
    rng = np.random.default_rng(0)
    for kwargs in ({"seed": 5}, {}, {"which": np.arange(n) % 3 == 0}, {"deal": 42}):
        gpu.reset(**kwargs)
        cpu.reset(**kwargs)
        assert_same(gpu, cpu, f"reset {kwargs}")
        out = cuda.device_array(n, dtype=np.int64)
        for _ in range(30):
            u = rng.random(n)
            gpu.sample_legal(cuda.to_device(u), out)
            expected = np.zeros(n, dtype=np.int64)
            sample_counted(cpu.masks, cpu.games, u, expected)
            np.testing.assert_array_equal(out.copy_to_host(), expected)
            gpu.step(out)
            cpu.step(expected)
        assert_same(gpu, cpu, f"steps after reset {kwargs}")
    picked = gpu.sample_legal(123).copy_to_host()  # a new device array
    assert gpu.to_host().masks[np.arange(n), picked].all()


@pytest.mark.cuda
def test_cuda_torch_tensors() -> None:
    """Torch wraps the device arrays without a copy, and its int64 tensors are valid actions."""
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("torch without CUDA")
    n = 512
    gpu, cpu = CudaGames(n, "classic"), BatchGames(n, "classic")
    gpu.reset(seed=3)
    cpu.reset(seed=3)
    masks = torch.as_tensor(gpu.masks, device="cuda")  # a view: follows every step
    rng = np.random.default_rng(3)
    for _ in range(20):
        a = cpu.sample_legal(rng)
        gpu.step(torch.as_tensor(a, device="cuda"))
        cpu.step(a)
        np.testing.assert_array_equal(masks.cpu().numpy(), cpu.masks)
    assert_same(gpu, cpu, "after torch actions")
