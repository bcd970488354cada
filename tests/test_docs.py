"""The documentation holds together: README.md and docs/*.md link only to what exists, the
README stays a short front page that starts with the two set-up commands, and mkdocs renders
docs/ without a warning.

Links are checked here as well as by ``mkdocs build --strict`` because mkdocs sees only docs/:
the README's links into docs/ (and their ``#anchors``) would otherwise go unchecked, and
these checks run where mkdocs is not installed.
"""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
import unicodedata
from pathlib import Path

import pytest

ROOT = next(p for p in Path(__file__).resolve().parents if (p / "mkdocs.yml").is_file())
README = ROOT / "README.md"
DOCS = ROOT / "docs"
PAGES = sorted(DOCS.glob("**/*.md"))  # the research log in docs/research/ too
MAX_README_LINES = 250

# [text](target) and ![alt](target), with an optional "title" after the target.
LINK = re.compile(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
HEADING = re.compile(r"^(#{1,6})\s+(.+?)\s*#*\s*$")
# A target with a scheme (https:, mailto:) is not a file of this repository.
EXTERNAL = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")


def prose_lines(text: str) -> list[tuple[int, str]]:
    """The (line number, line) pairs outside fenced code blocks, inline code spans blanked,
    so that a ``[x](y)`` or ``# comment`` inside code is neither a link nor a heading."""
    out = []
    fence = None
    for n, line in enumerate(text.splitlines(), start=1):
        stripped = line.lstrip()
        if fence is None and stripped.startswith(("```", "~~~")):
            fence = stripped[:3]
            continue
        if fence is not None:
            if stripped.startswith(fence):
                fence = None
            continue
        out.append((n, re.sub(r"`[^`]*`", lambda m: " " * len(m.group()), line)))
    return out


def slugify(title: str) -> str:
    """The id Python-Markdown's toc extension (mkdocs's default) gives a heading."""
    title = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", title)  # a link's text only
    title = title.replace("`", "").replace("*", "")
    title = unicodedata.normalize("NFKD", title).encode("ascii", "ignore").decode("ascii")
    title = re.sub(r"[^\w\s-]", "", title).strip().lower()
    return re.sub(r"[-\s]+", "-", title)


def anchors(path: Path) -> set[str]:
    """Every heading id of a Markdown file, duplicates numbered ``_1``, ``_2`` as the toc does."""
    seen: set[str] = set()
    # Headings are read with code spans intact (a heading may name `code`), fences skipped.
    text = path.read_text(encoding="utf-8")
    code_free = {n for n, _ in prose_lines(text)}
    for n, line in enumerate(text.splitlines(), start=1):
        m = HEADING.match(line) if n in code_free else None
        if not m:
            continue
        slug = base = slugify(m.group(2))
        i = 1
        while slug in seen:
            slug = f"{base}_{i}"
            i += 1
        seen.add(slug)
    return seen


def broken_links(path: Path) -> list[str]:
    """``file:line: target (why)`` for each relative link in ``path`` that does not resolve."""
    problems = []
    for n, line in prose_lines(path.read_text(encoding="utf-8")):
        for target in LINK.findall(line):
            if EXTERNAL.match(target):
                continue
            file_part, _, anchor = target.partition("#")
            dest = (path.parent / file_part).resolve() if file_part else path
            where = f"{path.name}:{n}: {target}"
            if not dest.exists():
                problems.append(f"{where} (no such file)")
            elif anchor and dest.suffix == ".md" and anchor not in anchors(dest):
                problems.append(f"{where} (no heading with id #{anchor} in {dest.name})")
    return problems


def readme_problems(text: str) -> list[str]:
    """What keeps ``text`` from being the front page: too long, or not opening with the two commands."""
    problems = []
    lines = text.splitlines()
    if len(lines) > MAX_README_LINES:
        problems.append(f"{len(lines)} lines, at most {MAX_README_LINES}")
    block = re.search(r"^```[^\n]*\n(.*?)^```", text, re.S | re.M)
    commands = (
        []
        if block is None
        else [c.strip() for c in block.group(1).splitlines() if c.strip() and not c.strip().startswith("#")]
    )
    if len(commands) < 2 or not commands[0].startswith("make demo") or not commands[1].startswith("make test"):
        problems.append(f"the first code block should start with `make demo` and `make test`, got {commands[:2]}")
    return problems


@pytest.mark.parametrize("path", [README, *PAGES], ids=lambda p: p.relative_to(ROOT).as_posix())
def test_relative_links_resolve(path):
    assert broken_links(path) == []


def test_docs_has_the_pages_mkdocs_lists():
    listed = set(re.findall(r":\s*([\w./-]+\.md)\s*$", (ROOT / "mkdocs.yml").read_text(), re.M))
    assert listed == {p.relative_to(DOCS).as_posix() for p in PAGES}


def test_readme_is_short_and_starts_with_the_two_commands():
    assert readme_problems(README.read_text(encoding="utf-8")) == []


def test_the_checks_catch_what_they_are_for(tmp_path):
    (tmp_path / "a.md").write_text("# Title\n\n## Second `part`\n\nok [x](a.md#second-part)\n")
    bad = tmp_path / "b.md"
    bad.write_text(
        "[gone](missing.md) [anchor](a.md#nope) [ok](a.md#title) [web](https://x.org/y)\n"
        "```\n[in code](also-missing.md)\n```\n"
    )
    assert broken_links(tmp_path / "a.md") == []
    assert broken_links(bad) == [
        "b.md:1: missing.md (no such file)",
        "b.md:1: a.md#nope (no heading with id #nope in a.md)",
    ]
    assert slugify("The env and MaskablePPO: `forty-thieves bench`") == "the-env-and-maskableppo-forty-thieves-bench"
    assert readme_problems("# x\n\n```bash\nmake test\nmake demo\n```\n")
    assert readme_problems("# x\n" + "\n" * MAX_README_LINES + "```bash\nmake demo\nmake test\n```\n")
    assert readme_problems("# x\n\n```bash\nmake demo   # a\nmake test   # b\n```\n") == []


def test_mkdocs_build_strict(tmp_path):
    if importlib.util.find_spec("mkdocs") is None:
        pytest.skip("mkdocs is not installed (it comes with the [dev] extra: pip install -e '.[dev]')")
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "mkdocs",
            "build",
            "--strict",
            "--config-file",
            str(ROOT / "mkdocs.yml"),
            "--site-dir",
            str(tmp_path / "site"),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert (tmp_path / "site" / "index.html").is_file()


def test_the_front_page_links_every_page():
    index = DOCS / "index.md"
    linked = {(index.parent / t.split("#")[0]).resolve() for t in LINK.findall(index.read_text(encoding="utf-8"))}
    assert [p.relative_to(DOCS).as_posix() for p in PAGES if p != index and p.resolve() not in linked] == []


def _python_blocks(text: str) -> list[str]:
    return re.findall(r"```python\n(.*?)```", text, re.S)


def test_the_front_page_example_is_the_readmes_and_runs():
    example = _python_blocks((DOCS / "index.md").read_text(encoding="utf-8"))[0]
    assert example == _python_blocks(README.read_text(encoding="utf-8"))[0]
    done = subprocess.run([sys.executable, "-c", example], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert re.search(r"(True|False) \d+$", done.stdout.strip()), done.stdout[-200:]  # won, cards home
