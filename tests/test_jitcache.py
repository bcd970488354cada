"""numba's cached kernels are dropped when any source they were built from changes."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from forty_thieves_env import jitcache


def _cached(pkg: Path) -> set[str]:
    return {p.name for p in (pkg / "__pycache__").iterdir()}


def test_sync_drops_kernels_only_when_a_source_changes(tmp_path: Path) -> None:
    pkg = tmp_path / "pkg"
    (pkg / "__pycache__").mkdir(parents=True)
    rules, batch = pkg / "rules.py", pkg / "batch.py"
    rules.write_text("A = 1\n")
    batch.write_text("B = 2\n")

    def plant() -> None:
        for name in ("batch.step-1.py311.nbi", "batch.step-1.py311.1.nbc", "batch.cpython-311.pyc"):
            (pkg / "__pycache__" / name).write_bytes(b"x")

    plant()
    assert jitcache.sync(pkg, [rules, batch])  # no stamp yet: built from unknown sources
    assert _cached(pkg) == {"batch.cpython-311.pyc", jitcache.STAMP}
    plant()
    assert not jitcache.sync(pkg, [rules, batch])  # same sources: kept
    assert "batch.step-1.py311.1.nbc" in _cached(pkg)
    rules.write_text("A = 2\n")  # an edit of another module than the kernel's own
    assert jitcache.sync(pkg, [rules, batch])
    assert _cached(pkg) == {"batch.cpython-311.pyc", jitcache.STAMP}


def test_digest_depends_on_content_and_names(tmp_path: Path) -> None:
    a, b = tmp_path / "a.py", tmp_path / "b.py"
    a.write_text("x = 1\n")
    b.write_text("x = 1\n")
    assert jitcache.digest([a]) != jitcache.digest([b])
    before = jitcache.digest([a, b])
    assert jitcache.digest([b, a]) == before  # order given does not matter
    a.write_text("x = 2\n")
    assert jitcache.digest([a, b]) != before


def test_package_stamp_matches_its_sources_after_import() -> None:
    """Importing the package leaves the stamp of its present sources (a fresh interpreter)."""
    code = (
        "import pathlib, forty_thieves_env as f, agents;"
        "from forty_thieves_env import jitcache as j;"
        "p = pathlib.Path(f.__file__).parent;"
        "print((p / '__pycache__' / j.STAMP).read_text() == j.digest(j.package_sources(p)))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "True"


def test_sync_reads_and_drops_subpackages(tmp_path: Path) -> None:
    """A kernel cached in a subpackage compiles in the engine's modules too: an edit anywhere
    under the package drops it, and the sources are every ``.py`` file below the package."""
    pkg = tmp_path / "pkg"
    sub = pkg / "envs"
    (sub / "__pycache__").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    rules = pkg / "engine" / "rules.py"
    rules.parent.mkdir()
    rules.write_text("A = 1\n")
    (sub / "batch.py").write_text("B = 2\n")
    assert set(jitcache.package_sources(pkg)) == {pkg / "__init__.py", rules, sub / "batch.py"}
    jitcache.sync(pkg, jitcache.package_sources(pkg))
    (sub / "__pycache__" / "batch.step-1.py311.nbi").write_bytes(b"x")
    assert not jitcache.sync(pkg, jitcache.package_sources(pkg))
    assert _cached(sub) == {"batch.step-1.py311.nbi"}
    rules.write_text("A = 2\n")
    assert jitcache.sync(pkg, jitcache.package_sources(pkg))
    assert _cached(sub) == set()


def test_a_slow_first_call_says_what_it_is_compiling(monkeypatch, capsys) -> None:
    import time

    from forty_thieves_env import jitcache

    monkeypatch.setattr(jitcache, "_NOTICE_DELAY", 0.05)
    with jitcache.compile_notice("the test kernel"):
        time.sleep(0.3)
    err = capsys.readouterr().err.splitlines()
    assert err[0].startswith("forty-thieves-env: compiling the test kernel (first run only")
    assert err[1].startswith("forty-thieves-env: ... compiled in")
    with jitcache.compile_notice("the test kernel"):
        pass  # a cache load: quick, and nothing said
    assert capsys.readouterr().err == ""
