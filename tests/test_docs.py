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


def prose_lines(text: str, blank_inline_code: bool = True) -> list[tuple[int, str]]:
    """The (line number, line) pairs outside fenced code blocks, inline code spans blanked
    (unless told: figures name `agents`), so that a ``[x](y)`` or ``# comment`` inside code is
    neither a link nor a heading."""
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
        out.append((n, re.sub(r"`[^`]*`", lambda m: " " * len(m.group()), line) if blank_inline_code else line))
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


# ----------------------------------------------------------- figures quoted on several pages

FIGURES = DOCS / "figures.yaml"
#: The pages held to docs/figures.yaml: the product pages, not the dated research log.
PRODUCT_PAGES = [README, *(p for p in PAGES if "research" not in p.relative_to(DOCS).parts)]


def figures() -> dict:
    import yaml

    return yaml.safe_load(FIGURES.read_text(encoding="utf-8"))


def units(text: str) -> list[str]:
    """A page's table rows and prose paragraphs (lines joined), fenced code left out: the units
    a figure is read from."""
    out, para = [], []
    for _, line in prose_lines(text, blank_inline_code=False):
        starts_item = re.match(r"\s*(?:[*+-]|\d+\.)\s", line) is not None  # a list item is a unit of its own
        if (line.lstrip().startswith("|") or not line.strip() or starts_item) and para:
            out.append(" ".join(para))
            para = []
        if line.lstrip().startswith("|"):
            out.append(line)
        elif line.strip():
            para.append(line.strip())
    if para:
        out.append(" ".join(para))
    return out


OTHER_PRESETS = {"josephine", "streets", "maria", "limited", "rank_and_file", "relaxed"}


def _first_pct(row: str) -> float | None:
    m = re.search(r"(\d+(?:\.\d+)?) %", row)
    return float(m.group(1)) if m else None


def _cells(row: str) -> list[str]:
    return [c.strip() for c in row.strip().strip("|").split("|")]


def quoted_figures(text: str) -> list[tuple[str, float, str]]:
    """``(figure, value, the unit it was read from)`` for each figure of docs/figures.yaml that
    ``text`` quotes, read by the phrasings the pages use:

    * the solver's ceiling: in a table row or paragraph that says "ceiling", ``won N``,
      ``N/200``, ``N proved lost`` / ``N lost``, ``N unknown``, and the win rate (a row's first
      percentage; ``won N (x %`` in prose); and the winnability table's classic row;
    * a shipped model ``X``: a table row naming ``ppo --model X`` or starting with `` `X` ``
      (its first percentage, and ``N/1000`` or ``N = x %``), and prose ``ppo --model X`` ...
      ``wins N`` ... ``(x %``;
    * the first compile: ``about N s for `gym.make` `` and ``about N s for a `gym.make_vec``,
      and ``~N s`` after a first `` `gym.make` `` or `` `gym.make_vec` ``.
    """
    found: list[tuple[str, str, str]] = []
    add = lambda name, value, unit: found.append((name, figure_text(value), unit))  # noqa: E731
    shipped = list(figures()["shipped_models"])  # every shipped model docs/figures.yaml lists
    for unit in units(text):
        row = unit.lstrip().startswith("|")
        other_preset = row and any(c in OTHER_PRESETS for c in _cells(unit))  # another preset's ceiling
        if re.search(r"ceiling", unit, re.I) and not other_preset:
            for m in re.finditer(r"\bwon\W{0,4}(\d+)\b", unit):
                add("solver_ceiling.won", m.group(1), unit)
            for m in re.finditer(r"\b(\d+)/200\b", unit):
                add("solver_ceiling.won", m.group(1), unit)
            for m in re.finditer(r"\b(\d+) (?:proved )?lost\b", unit):
                add("solver_ceiling.lost", m.group(1), unit)
            for m in re.finditer(r"\b(\d+) unknown\b", unit):
                add("solver_ceiling.unknown", m.group(1), unit)
            if row and _first_pct(unit) is not None:
                add("solver_ceiling.win_rate", _first_pct(unit), unit)
                cells = _cells(unit)
                k = next(i for i, c in enumerate(cells) if re.search(r"\d %", c))
                if k > 0 and cells[k - 1].isdigit():  # the "won" column before the win rate
                    add("solver_ceiling.won", cells[k - 1], unit)
            for m in re.finditer(r"\bwon\W{0,4}\d+\W{0,4}\(?(\d+\.\d) %", unit):
                add("solver_ceiling.win_rate", m.group(1), unit)
        if row and re.match(r"\|\s*classic\s*\|\s*1\.\.200\b", unit):  # the winnability table
            m = re.search(r"\|\s*(\d+) = (\d+\.\d) %", unit)
            if m:
                add("solver_ceiling.won", m.group(1), unit)
                add("solver_ceiling.win_rate", m.group(2), unit)
        for name in shipped:
            key = f"shipped_models.{name}"
            # a row naming the agent, or a row of the shipped models' table (`NAME` | NAME | ...)
            named = re.search(rf"ppo --model {name}`", unit) or re.match(rf"\|\s*`{name}`\s*\|\s*{name}\s*\|", unit)
            if row and named and _first_pct(unit) is not None:
                add(f"{key}.win_rate", _first_pct(unit), unit)
                for m in re.finditer(r"\b(\d+)/1000\b|\b(\d+) = \d+(?:\.\d+)? %", unit):
                    add(f"{key}.wins", m.group(1) or m.group(2), unit)
            if not row:
                for m in re.finditer(rf"`ppo --model {name}`[^.]{{0,80}}?\bwins (\d+)", unit):
                    add(f"{key}.wins", m.group(1), unit)
                rate = rf"`ppo --model {name}`[^.%]{{0,120}}?\bwins \d+[^%]{{0,40}}?\((\d+\.\d) %"
                for m in re.finditer(rate, unit):
                    add(f"{key}.win_rate", m.group(1), unit)
        for m in re.finditer(r"(?:about|~)?\s*(\d+(?:–\d+)?) s for (?:a )?`gym\.make(_vec)?\b", unit):
            add("first_compile.make_vec_s" if m.group(2) else "first_compile.make_s", m.group(1), unit)
        later = r"first `gym\.make(_vec)?`[^.]{0,40}?(?:takes|another)\s*(?:about|~)\s*(\d+(?:–\d+)?) s"
        for m in re.finditer(later, unit):
            add("first_compile.make_vec_s" if m.group(1) else "first_compile.make_s", m.group(2), unit)
    return found


def figure_text(value: object) -> str:
    """A figure as compared: a number without trailing zeros (``54.5``, ``6``), or a range ``9–20``."""
    text = str(value).replace("-", "–")
    return text if "–" in text else f"{float(text):g}"


def figure_value(figs: dict, name: str) -> str:
    value = figs
    for part in name.split("."):
        value = value[part]
    return figure_text(value)


def figure_problems(pages: dict[str, str], figs: dict) -> list[str]:
    """``page: figure = value, not expected (in: ...)`` for each quoted figure that differs."""
    problems = []
    for page, text in pages.items():
        for name, value, unit in quoted_figures(text):
            expected = figure_value(figs, name)
            if value != expected:
                problems.append(f"{page}: {name} = {value}, docs/figures.yaml says {expected} (in: {unit[:160]})")
    return problems


def test_figures_yaml_is_what_the_stored_results_say():
    import json

    figs = figures()
    ceiling = figs["solver_ceiling"]
    rows = json.loads((ROOT / ceiling["source"]).read_text(encoding="utf-8"))
    (classic,) = [r for r in rows if r["variant"] == "classic"]
    assert (classic["deals"], classic["first_deal"], classic["last_deal"]) == (ceiling["deals"], 1, 200)
    assert classic["counts"] == {k: ceiling[k] for k in ("won", "lost", "unknown")}
    assert round(100 * classic["counts"]["won"] / classic["deals"], 1) == ceiling["win_rate"]
    for name, fig in figs["shipped_models"].items():
        summary = json.loads((ROOT / "agents" / "models" / f"{name}.json").read_text())["test_results"]["summary"]
        assert (summary["games"], summary["wins"]) == (fig["games"], fig["wins"]), name
        assert round(100 * summary["win_rate"], 1) == fig["win_rate"], name
    compile_ = figs["first_compile"]
    for key in ("make_s", "make_vec_s"):  # the range of the runs, low–high seconds
        low, high = (int(x) for x in str(compile_[key]).split("–"))
        assert 0 < low <= high, key


def test_no_two_pages_give_different_values_for_a_figure():
    """Every page that quotes the solver's ceiling, a shipped model's win rate or the first
    compile's seconds gives docs/figures.yaml's value; and the pages that must quote them do."""
    pages = {p.relative_to(ROOT).as_posix(): p.read_text(encoding="utf-8") for p in PRODUCT_PAGES}
    figs = figures()
    assert figure_problems(pages, figs) == []
    quoted = {name for text in pages.values() for name, _, _ in quoted_figures(text)}
    shipped = [f"shipped_models.{m}.{k}" for m in figs["shipped_models"] for k in ("wins", "win_rate")]
    ceiling = [f"solver_ceiling.{k}" for k in ("won", "win_rate", "lost", "unknown")]
    for name in (*ceiling, "first_compile.make_s", "first_compile.make_vec_s", *shipped):
        assert name in quoted, f"no page quotes {name} in a form the check reads: the check would miss a change"
    per_page = {page: {n for n, _, _ in quoted_figures(text)} for page, text in pages.items()}
    assert "solver_ceiling.win_rate" in per_page["docs/benchmark.md"]
    assert {"first_compile.make_s", "first_compile.make_vec_s"} <= per_page["README.md"]


def test_the_figure_check_catches_a_disagreement():
    """The phrasings of the pages as they disagreed before (issue 47): each is caught."""
    figs = figures()
    stale = {
        "training.md": "| `solver` (ceiling) | 10 CPU-s a deal (at 999c6d3) | 200 | 99 | 49.5 % (42.6–56.4 %) | – |\n\n"
        "**The solver's ceiling** comes from a bench. It **won 99** (49.5 %, Wilson 95 % 42.6–56.4 %),\n"
        "proved none lost, and left **101 unknown**.\n",
        "internals.md": "From an empty cache, the first `gym.make` takes ~25 s and the\n"
        "first `gym.make_vec` another ~80 s (serial and parallel kernels).\n",
        "README.md": "engine: about 8 s for `gym.make` on a busy machine, and about 15 s for a\n"
        "`gym.make_vec(..., num_envs=64)` in a process of its own.\n\n"
        "On Relaxed, `ppo --model relaxed` wins 990 of the 1000 test deals (99.0 %, 98.2-99.5 %).\n\n"
        "| `ppo --model classic` | shipped | 1000 | 38 | 3.8 % (2.7–5.2 %) | 35.5 |\n",
    }
    problems = "\n".join(figure_problems(stale, figs))
    for wrong in ("solver_ceiling.won = 99", "solver_ceiling.win_rate = 49.5", "solver_ceiling.unknown = 101",
                  "first_compile.make_s = 25", "first_compile.make_vec_s = 80", "first_compile.make_s = 8",
                  "first_compile.make_vec_s = 15", "shipped_models.relaxed.wins = 990",
                  "shipped_models.relaxed.win_rate = 99", "shipped_models.classic.win_rate = 3.8"):  # fmt: skip
        assert wrong in problems, (wrong, problems)
