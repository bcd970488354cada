"""The replay page: compact positions, a self-contained file, and a real headless Chromium.

The browser test needs the Debian packages ``chromium`` and ``chromium-driver`` (``make
browser`` installs them) and selenium. Without them it is skipped, except under CI
(``CI`` set), where a missing browser is a failure: CI must run it.
"""

from __future__ import annotations

import json
import os
import re
import shutil

import pytest
from conftest import NEAR_WIN, NEAR_WIN_SCRIPT, position, run_fresh

from agents.play.replay import (
    ALPHABET,
    FACE_DOWN,
    Replay,
    agent_replay,
    encode_game,
    encode_position,
    expand_game,
    page_html,
    write_page,
)
from agents.play.session import PlaySession
from forty_thieves_env import deal
from forty_thieves_env.engine.cards import N_RANKS

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMEDRIVER = shutil.which("chromedriver")


def decode(text: str) -> dict:
    """The page's decoder, written again in Python: what the page will draw."""
    f = text.split("|")
    return {
        "stock": int(f[0]),
        "redeals": int(f[1]),
        "found": [int(h, 16) for h in f[2]],
        "down": [int(h, 36) for h in f[3]],
        "waste": [ALPHABET.index(c) for c in f[4]],
        "columns": [[None if c == FACE_DOWN else ALPHABET.index(c) for c in col] for col in f[5:]],
    }


def visible(game) -> list[list[int | None]]:
    """The columns as a player sees them: face-down cards are ``None``."""
    pairs = zip(game.columns, game.face_down, strict=True)
    return [[None if t < d else c for t, c in enumerate(col)] for col, d in pairs]


def page_data(html: str) -> dict:
    blob = re.search(r'<script id="replay-data" type="application/json">(.*?)</script>', html, re.S).group(1)
    return json.loads(blob)


def test_positions_encode_what_a_player_sees() -> None:
    assert any(deal("rank_and_file", 9).face_down)  # hidden cards that must stay out of the page
    for variant, number in (("classic", 4), ("rank_and_file", 9), ("limited", 2)):
        game = deal(variant, number)
        for _ in range(3):
            game.play("s")  # a waste to encode too
        d = decode(encode_position(game))
        assert d["stock"] == len(game.stock) and d["redeals"] == game.redeals_left
        assert d["found"] == game.foundations and d["down"] == game.face_down
        assert d["waste"] == game.waste and d["columns"] == visible(game)


def test_page_is_self_contained_and_holds_every_position() -> None:
    replay = Replay(position(NEAR_WIN), list(NEAR_WIN_SCRIPT), "near win </script><b>", "a test")
    html = page_html(replay)
    assert not re.search(r"(src|href)\s*=\s*[\"']?(https?:)?//", html)  # nothing fetched from anywhere
    data = page_data(html)
    assert data["moves"] == NEAR_WIN_SCRIPT and len(data["positions"]) == len(NEAR_WIN_SCRIPT) + 1
    states = replay.positions()
    assert expand_game(data["positions"]) == [encode_position(s) for s in states]
    assert [decode(p)["columns"] for p in expand_game(data["positions"])] == [s.columns for s in states]
    assert data["won"] and data["result"].startswith("Won in 9 moves")
    assert "<b>" not in html.split("<body>")[0]  # the title is escaped
    lost = page_data(page_html(Replay(position(NEAR_WIN), ["s"], "one move")))
    assert not lost["won"] and "Lost" in lost["result"]


def test_agent_replay_plays_what_evaluate_plays() -> None:
    from agents.evaluation.evaluate import evaluate

    replay = agent_replay("heuristic", "classic", 3, seed=5)
    row = evaluate("heuristic", "classic", [3], seed=5, workers=1, progress=False).results[0]
    assert len(replay.moves) == row.moves
    assert replay.positions()[-1].cards_on_foundations == row.cards_on_foundations
    assert replay.start == deal("classic", 3)


def test_a_large_game_stays_small(tmp_path) -> None:
    """A position after the first costs what changed (two or three fields), not a whole table."""
    replay = agent_replay("random", "classic", 7, seed=0, max_moves=1000)
    states = replay.positions()
    encoded = encode_game(states)
    assert expand_game(encoded) == [encode_position(s) for s in states]
    assert len(encoded[0]) < 150
    later = sum(len(e) for e in encoded[1:]) / (len(encoded) - 1)
    assert later < 40, later
    whole = sum(len(encode_position(s)) for s in states) / len(states)
    assert later < whole / 3  # the diffs are what keeps a long game small
    path = write_page(replay, tmp_path / "r.html")
    assert path.stat().st_size < 20_000 + 60 * len(states), path.stat().st_size  # the page itself + moves


def test_cli_from_a_save_and_from_a_results_row(tmp_path) -> None:
    from agents.cli import main

    s = PlaySession("hard", deal=12)
    for _ in range(6):
        s.play(s.hint())
    save = s.save(tmp_path / "save.json")
    assert main(["replay", "--save", str(save), "--html", str(tmp_path / "s.html")]) == 0
    data = page_data((tmp_path / "s.html").read_text())
    assert data["moves"] == [m for e in s.history for m in e.moves]
    assert decode(expand_game(data["positions"])[-1])["columns"] == s.game.columns

    from agents.evaluation.evaluate import evaluate, write_results

    write_results(evaluate("heuristic", "classic", [3, 4], seed=1, workers=1, progress=False), tmp_path / "ev")
    out = tmp_path / "row.html"
    assert main(["replay", "--results", str(tmp_path / "ev" / "results.json"), "--deal", "4", "--html", str(out)]) == 0
    assert page_data(out.read_text())["moves"] == agent_replay("heuristic", "classic", 4, seed=1).moves
    assert main(["replay", "--agent", "heuristic", "--save", str(save), "--html", str(out)]) == 2  # one source only


# ------------------------------------------------------------------------------ the browser


def _driver(tmp_path):
    if not (CHROMIUM and CHROMEDRIVER):
        if os.environ.get("CI"):
            pytest.fail("CI must run the browser test: chromium and chromium-driver are missing (make browser)")
        pytest.skip("no chromium/chromedriver (Debian packages chromium, chromium-driver: `make browser`)")
    webdriver = pytest.importorskip("selenium.webdriver", reason="selenium is not installed (pip install .[play])")
    from selenium.webdriver.chrome.service import Service

    from agents.play.figures import CHROMIUM_FLAGS

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    # A closed network and a new, empty profile: nothing is fetched, nothing is remembered.
    for flag in (*CHROMIUM_FLAGS, f"--user-data-dir={tmp_path / 'chromium-profile'}", "--window-size=1100,800"):
        options.add_argument(flag)
    # The driver's path given, selenium never looks for (or downloads) one.
    return webdriver.Chrome(options=options, service=Service(executable_path=CHROMEDRIVER))


def test_replay_page_in_headless_chromium(tmp_path) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    replay = agent_replay("heuristic", "classic", 3, seed=0)
    states = replay.positions()
    path = write_page(replay, tmp_path / "replay.html")
    driver = _driver(tmp_path)
    try:
        driver.get(path.as_uri())
        canvas = driver.find_element(By.ID, "table")
        body = driver.find_element(By.TAG_NAME, "body")

        def shown() -> tuple[int, str]:
            return int(body.get_attribute("data-index")), canvas.get_attribute("data-position")

        assert shown() == (0, encode_position(states[0]))
        first_pixels = driver.execute_script("return document.getElementById('table').toDataURL()")
        # The canvas has the size of the env's rgb render of this variant.
        from forty_thieves_env.envs.render import table_image

        h, w, _ = table_image(states[0]).shape
        assert (int(canvas.get_attribute("width")), int(canvas.get_attribute("height"))) == (w, h)
        result = driver.find_element(By.ID, "result")
        assert not result.is_displayed()

        driver.find_element(By.ID, "next").click()
        assert shown() == (1, encode_position(states[1]))
        assert driver.execute_script("return document.getElementById('table').toDataURL()") != first_pixels
        current = driver.find_elements(By.CSS_SELECTOR, "#moves li.current")
        assert [li.text for li in current] == [replay.moves[0]]
        assert "after " + replay.moves[0] in driver.find_element(By.ID, "status").text

        body.send_keys(Keys.ARROW_RIGHT)
        assert shown() == (2, encode_position(states[2]))
        driver.find_element(By.ID, "back").click()
        body.send_keys(Keys.ARROW_LEFT)
        assert shown() == (0, encode_position(states[0]))

        driver.find_element(By.ID, "last").click()
        assert shown() == (len(replay.moves), encode_position(states[-1]))
        assert result.is_displayed()
        final = states[-1]
        expected = "Won" if final.is_won() else f"Lost: {final.cards_on_foundations} of 104 cards home"
        assert result.text.startswith(expected)
        errors = [e for e in driver.get_log("browser") if e["level"] == "SEVERE"]
        assert errors == []
        driver.get(path.as_uri() + "#5")  # a link to one moment of the game
        assert int(driver.find_element(By.TAG_NAME, "body").get_attribute("data-index")) == 5
    finally:
        driver.quit()


def test_replay_module_imports_no_torch() -> None:
    run_fresh("import sys, agents.play.replay, agents.play.session; assert 'torch' not in sys.modules")


def test_alphabet_covers_every_card_once() -> None:
    assert len(ALPHABET) == len(set(ALPHABET)) == 4 * N_RANKS
    assert "|" not in ALPHABET  # the field separator
