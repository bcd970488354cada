"""The pictures of ``docs/play.md``: the terminal game and a replay page, as PNG files.

``python -m agents.play.figures docs/images`` writes ``play-tui.png`` (textual's SVG export of
the game after a few hinted moves, rasterised by headless Chromium) and ``replay.png`` (a
replay page, screenshot by headless Chromium). Needs textual and the ``chromium`` package
(``make browser``); nothing is fetched from the network.
"""

from __future__ import annotations

import asyncio
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

#: Chromium's flags for a closed network and a throwaway profile (the profile is added per run).
CHROMIUM_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--hide-scrollbars",
)


def screenshot(url: str, out: Path, width: int, height: int) -> Path:
    """A PNG of ``url`` (a ``file://`` page or SVG) at ``width`` x ``height`` by headless Chromium.

    Raises:
        RuntimeError: no chromium, or it wrote no picture.
    """
    binary = shutil.which("chromium") or shutil.which("chromium-browser")
    if binary is None:
        raise RuntimeError("chromium is not installed (make browser)")
    with tempfile.TemporaryDirectory() as profile:
        cmd = [binary, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", f"--window-size={width},{height}"]
        subprocess.run([*cmd, f"--screenshot={out}", url], check=False, capture_output=True, timeout=120)
    if not out.is_file():
        raise RuntimeError(f"chromium wrote no screenshot of {url}")
    return out


def tui_svg(deal: int = 7, moves: int = 6) -> str:
    """The terminal game on Normal, deal ``deal``, after ``moves`` hinted moves, as textual's SVG."""
    from .session import PlaySession
    from .tui import PlayApp

    session = PlaySession("normal", deal=deal, clock=lambda: 0.0)
    app = PlayApp(session, tick=0)
    out: list[str] = []

    async def run() -> None:
        async with app.run_test(size=(104, 30)) as pilot:
            for _ in range(moves):
                await pilot.press("ctrl+t", "enter")
                await pilot.pause()
            await pilot.press("ctrl+t")  # the next hint waits in the input line
            await pilot.pause()
            out.append(app.export_screenshot(title="forty-thieves play"))

    asyncio.run(run())
    return out[0]


def main(folder: str) -> None:
    from .replay import agent_replay, write_page

    where = Path(folder)
    where.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        svg = Path(tmp) / "tui.svg"
        svg.write_text(tui_svg(), encoding="utf-8")
        box = re.search(r'viewBox="0 0 ([\d.]+) ([\d.]+)"', svg.read_text(encoding="utf-8"))
        width, height = (int(float(box.group(1))), int(float(box.group(2)))) if box else (1280, 800)
        screenshot(svg.as_uri(), where / "play-tui.png", width, height)
        page = write_page(agent_replay("heuristic", "classic", 3, seed=0), Path(tmp) / "replay.html")
        screenshot(page.as_uri() + "#60", where / "replay.png", 900, 640)  # mid-game, move 60 current
    print(f"wrote {where / 'play-tui.png'} and {where / 'replay.png'}")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "docs/images")
