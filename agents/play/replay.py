"""``forty-thieves replay``: one self-contained HTML page that replays a game.

The game comes from an agent playing a deal (``--agent A [--model M] --deal N``), from a game
saved by ``forty-thieves play`` (``--save FILE``) or from a row of an ``evaluate`` results file
(``--results results.json --deal N``: the same agent, variant, seed and options, so the same
game for agents without a time budget; a result that differs from the row is reported).

The page needs no network: the positions are compact strings in a JSON block (the first whole,
about 130 characters, :func:`encode_position`; each later one as what changed, tens of
characters, :func:`encode_game`), the cards are drawn by the page on a
canvas with the geometry and colours of the env's ``rgb_array`` render
(:class:`~forty_thieves_env.envs.render.TableRenderer`). It has step / back / play controls,
the arrow keys, Home and End, the move list with the current move highlighted, and the final
result once the last position is shown.
"""

from __future__ import annotations

import argparse
import json
import os
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from forty_thieves_env.engine.cards import N_CODES
from forty_thieves_env.envs import render
from forty_thieves_env.text.game import GameState
from forty_thieves_env.text.notation import format_move

__all__ = [
    "ALPHABET",
    "FACE_DOWN",
    "Replay",
    "agent_replay",
    "encode_game",
    "encode_position",
    "expand_game",
    "page_html",
    "write_page",
]

#: One character per card code (``suit * 13 + rank``, suits C S H D): letters, so no escaping.
ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
assert len(ALPHABET) == N_CODES
#: A face-down card in a column (its identity stays out of the page).
FACE_DOWN = "#"
#: Milliseconds between moves when the page plays.
INTERVAL_MS = 500


def encode_position(game: GameState) -> str:
    """A position as ``stock|redeals|foundations|face-down|waste|column 1|...|column C``.

    Counts are decimal, the eight foundation heights hex digits, the face-down counts base-36
    digits (one a column), cards one :data:`ALPHABET` letter each (columns bottom first), a
    face-down card :data:`FACE_DOWN`. Neither the stock's cards nor the face-down ones are
    written: the page, like the render and a player, shows only their backs.
    """
    found = "".join(f"{h:x}" for h in game.foundations)
    down = "".join(_base36(d) for d in game.face_down)
    waste = "".join(ALPHABET[c] for c in game.waste)
    cols = [
        "".join(FACE_DOWN if t < d else ALPHABET[c] for t, c in enumerate(col))
        for col, d in zip(game.columns, game.face_down, strict=True)
    ]
    return "|".join([str(len(game.stock)), str(game.redeals_left), found, down, waste, *cols])


def _base36(n: int) -> str:
    return "0123456789abcdefghijklmnopqrstuvwxyz"[n]


def encode_game(positions: list[GameState]) -> list[str]:
    """The positions of a game for the page: the first whole (:func:`encode_position`), each
    later one as the fields that changed since the one before, ``"field=value;..."`` (a move
    changes two or three fields, so a position costs tens of characters, not a whole table)."""
    out: list[str] = []
    prev: list[str] | None = None
    for game in positions:
        fields = encode_position(game).split("|")
        if prev is None:
            out.append("|".join(fields))
        else:
            out.append(";".join(f"{i}={v}" for i, (old, v) in enumerate(zip(prev, fields, strict=True)) if old != v))
        prev = fields
    return out


def expand_game(encoded: list[str]) -> list[str]:
    """Every position whole again from :func:`encode_game`'s list (what the page does first)."""
    fields = encoded[0].split("|")
    out = [encoded[0]]
    for diff in encoded[1:]:
        fields = list(fields)
        for part in filter(None, diff.split(";")):
            index, _, value = part.partition("=")
            fields[int(index)] = value
        out.append("|".join(fields))
    return out


@dataclass
class Replay:
    """A game to show: the start, the moves (text) and what to call it.

    Attributes:
        start: The position before the first move.
        moves: The moves in order, as move text.
        title: The page's heading.
        summary: One line under it (agent, seed, deal, ...).
    """

    start: GameState
    moves: list[str]
    title: str
    summary: str = ""

    def positions(self) -> list[GameState]:
        """The start and the position after each move.

        Raises:
            IllegalMoveError: a move that is not legal where it is played.
        """
        game = self.start.copy()
        out = [game.copy()]
        for move in self.moves:
            game.play(move)
            out.append(game.copy())
        return out


def agent_replay(
    agent: str,
    variant: str,
    deal: int,
    seed: int = 0,
    agent_kwargs: dict[str, Any] | None = None,
    max_moves: int = 1000,
) -> Replay:
    """``agent`` plays ``deal`` as ``forty-thieves evaluate`` would (seed from ``(seed, deal)``)."""
    from agents.evaluation.games import agent_seed
    from agents.players.base import make_agent
    from forty_thieves_env.envs.env import FortyThievesEnv

    player = make_agent(agent, variant, **(agent_kwargs or {}))
    env = FortyThievesEnv(variant, observation=player.observation)
    obs, info = env.reset(options={"deal": int(deal)})
    start = env.game.copy()
    player.reset(seed=agent_seed(seed, deal))
    moves: list[str] = []
    done = False
    while not done and len(moves) < max_moves:
        action = int(player.act(obs, info["action_mask"]))
        moves.append(format_move(env.variant, action))
        obs, _, terminated, truncated, info = env.step(action)
        done = terminated or truncated
    options = "".join(f", {k}={v}" for k, v in sorted((agent_kwargs or {}).items()))
    return Replay(start, moves, f"{agent} on {env.variant.name}, deal {deal}", f"seed {seed}{options}")


def save_replay(path: str | os.PathLike[str]) -> Replay:
    """The game in a ``forty-thieves play`` save file, from its deal to where it was saved.

    Raises:
        ValueError: not a save file that replays.
    """
    from .session import PlaySession

    session = PlaySession.load(path)
    moves = [m for entry in session.history for m in entry.moves]
    start = session.history[0].before if session.history else session.game.array
    where = f"deal {session.deal}" if session.deal else "a position"
    return Replay(
        GameState(session.variant, start), moves, f"saved game: {session.label}, {where}", session.score_line()
    )


def results_replay(path: str | os.PathLike[str], deal: int) -> tuple[Replay, dict[str, Any]]:
    """Play again the game behind one row of an ``evaluate`` results file; return it and the row.

    Raises:
        ValueError: not a results file, or ``deal`` is not one of its rows.
    """
    try:
        doc = json.loads(Path(path).read_text(encoding="utf-8"))
        settings, rows = doc["settings"], doc["results"]
    except (ValueError, KeyError, TypeError) as err:
        raise ValueError(f"{path} is not an evaluate results.json: {err}") from None
    row = next((r for r in rows if int(r["deal"]) == int(deal)), None)
    if row is None:
        raise ValueError(f"deal {deal} is not a row of {path} ({len(rows)} rows)")
    options = {k: v for k, v in settings.get("agent_options", {}).items() if k not in ("batched", "batch_size")}
    replay = agent_replay(
        settings["agent"], settings["variant"], deal, settings["seed"], options, settings.get("max_moves", 1000)
    )
    return replay, row


def _geometry(game: GameState) -> dict[str, Any]:
    """The render's layout and colours for ``game``'s variant (what the page draws with)."""
    r = render.TableRenderer(game.variant)
    return {
        "width": r.width,
        "height": r.height,
        "tableau_y": r.tableau_y,
        "found_x": r.found_x,
        "card_w": render.CARD_W,
        "card_h": render.CARD_H,
        "pitch": render.PITCH,
        "strip": render.STRIP,
        "margin": render.MARGIN,
        "band": render.BAND,
        "waste_fan": render.WASTE_FAN,
        "fan_step": render.FAN_STEP,
        **{name.lower(): list(getattr(render, name)) for name in _COLOURS},
    }


_COLOURS = ("TABLE", "FACE", "EDGE", "RED", "BLACK", "BACK", "BACK_LINE", "SLOT", "LABEL")


def page_html(replay: Replay) -> str:
    """The whole page (see the module docstring)."""
    positions = replay.positions()
    final = positions[-1]
    won = final.is_won()
    n = len(replay.moves)
    if won:
        result = f"Won in {n} moves: all 104 cards home."
    else:
        why = "no legal move left" if final.is_stuck() else "stopped before the end"
        result = f"Lost: {final.cards_on_foundations} of 104 cards home after {n} moves ({why})."
    data = {
        "title": replay.title,
        "summary": (replay.summary + " · " if replay.summary else "") + f"{n} moves · {result}",
        "moves": replay.moves,
        "positions": encode_game(positions),
        "alphabet": ALPHABET,
        "redeals": replay.start.variant.redeals,
        "won": won,
        "result": result,
        "interval_ms": INTERVAL_MS,
        "geometry": _geometry(replay.start),
    }
    # Compact JSON; "</" escaped so nothing in it can close the script element.
    blob = json.dumps(data, separators=(",", ":")).replace("</", "<\\/")
    template = resources.files("agents.play").joinpath("replay.html").read_text(encoding="utf-8")
    title = replay.title.replace("&", "&amp;").replace("<", "&lt;")
    return template.replace("__TITLE__", title).replace("__DATA__", blob)


def write_page(replay: Replay, path: str | os.PathLike[str]) -> Path:
    """Write :func:`page_html` to ``path`` (atomically)."""
    from agents.storage.files import write_text

    return write_text(path, page_html(replay))


# ------------------------------------------------------------------- command line


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The ``forty-thieves replay`` arguments (read by :func:`run_cli`)."""
    parser.add_argument("--html", required=True, help="the page to write")
    parser.add_argument("--agent", help="random, heuristic, lookahead, solver or ppo")
    parser.add_argument("--model", help="ppo: a shipped model's name, a model .zip or a run folder")
    parser.add_argument("--variant", default="classic", help="preset name (default: classic)")
    parser.add_argument("--deal", type=int, help="the deal to play (with --agent or --results)")
    parser.add_argument("--seed", type=int, default=0, help="the agent's base seed, as in evaluate (default: 0)")
    parser.add_argument("--opt", action="append", metavar="KEY=VALUE", help="an agent option (repeatable)")
    parser.add_argument("--save", help="a game saved by forty-thieves play")
    parser.add_argument("--results", help="an evaluate results.json: replay its row of --deal")


def run_cli(args: argparse.Namespace) -> int:
    """The ``forty-thieves replay`` handler."""
    sources = [s for s in ("agent", "save", "results") if getattr(args, s)]
    if len(sources) != 1:
        raise ValueError("give exactly one of --agent, --save or --results")
    from agents.storage.files import check_writable

    check_writable(Path(args.html).parent, "the page")  # before an agent plays the game
    if args.save:
        replay = save_replay(args.save)
    else:
        if args.deal is None:
            raise ValueError("--deal is needed with --agent and --results")
        if args.results:
            replay, row = results_replay(args.results, args.deal)
            won = replay.positions()[-1].is_won()
            if bool(row["won"]) != won or int(row["moves"]) != len(replay.moves):
                print(
                    f"note: this replay ({'won' if won else 'lost'}, {len(replay.moves)} moves) differs from the "
                    f"row ({'won' if row['won'] else 'lost'}, {row['moves']} moves): "
                    "the agent does not play deterministically here"
                )
        else:
            from agents.evaluation.evaluate import parse_option

            options = dict(parse_option(t) for t in args.opt or ())
            if args.model:
                options["model"] = args.model
            replay = agent_replay(args.agent, args.variant, args.deal, args.seed, options)
    out = write_page(replay, args.html)
    print(f"wrote {out} ({out.stat().st_size // 1024} KiB, {len(replay.moves)} moves)")
    return 0
