"""Drawing the table: as text (``ansi``) and as a picture (``rgb_array``).

The text form needs nothing beyond the engine. The picture is drawn with Pillow, which this
module imports only when the first picture is made. Suit symbols are drawn as shapes rather
than taken from a font, so the picture does not depend on which fonts are installed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from ..engine.cards import N_FOUNDATIONS, N_RANKS, RANK_LETTERS, SUIT_SYMBOLS
from ..engine.variants import Variant
from ..text.game import GameState

if TYPE_CHECKING:
    from PIL import Image, ImageDraw

# ------------------------------------------------------------------------------ text


def _card(code: int) -> str:
    return RANK_LETTERS[code % N_RANKS] + SUIT_SYMBOLS[code // N_RANKS]


def table_text(game: GameState, title: str = "", waste_shown: int = 8) -> str:
    """The table as text: stock count, waste top, foundations, then the columns side by side.

    Face-down cards show as ``##``, an empty column as ``..``. Example (classic)::

        stock 63  redeals 0  waste (1): K♣
        foundations: -- -- -- -- -- -- -- --
          1   2   3   4   5   6   7   8   9  10
         6♦  A♠  ...
    """
    v = game.variant
    waste = game.waste
    shown = " ".join(_card(c) for c in waste[-waste_shown:])
    if len(waste) > waste_shown:
        shown = "… " + shown
    lines = [title] if title else []
    lines.append(f"stock {len(game.stock)}  redeals {game.redeals_left}  waste ({len(waste)}): {shown}".rstrip())
    tops = []
    for p, h in enumerate(game.foundations):
        tops.append(_card((p // 2) * N_RANKS + h - 1) if h else "--")
    lines.append("foundations: " + " ".join(tops))
    lines.append("".join(f"{i + 1:>4}" for i in range(v.columns)))
    columns, down = game.columns, game.face_down
    for row in range(max(1, *(len(col) for col in columns))):
        cells = []
        for col, dn in zip(columns, down, strict=True):
            if row < len(col):
                cells.append("##" if row < dn else _card(col[row]))
            else:
                cells.append(".." if row == 0 and not col else "")
        lines.append("".join(f"{cell:>4}" for cell in cells).rstrip())
    return "\n".join(lines) + "\n"


# ------------------------------------------------------------------------------ picture

CARD_W, CARD_H = 46, 64
GAP = 6
PITCH = CARD_W + GAP
STRIP = 20  # visible part of an overlapped card
MARGIN = 10
BAND = 18  # between the top row and the columns: column numbers
WASTE_FAN = 6  # waste cards shown, top last
FAN_STEP = 17
SUPERSAMPLE = 4  # sprites are drawn this many times larger, then scaled down

TABLE = (22, 96, 52)
FACE = (250, 250, 244)
EDGE = (70, 70, 70)
RED = (200, 24, 36)
BLACK = (18, 18, 18)
BACK = (38, 68, 158)
BACK_LINE = (150, 175, 235)
SLOT = (60, 140, 85)
LABEL = (235, 235, 220)


def _suit(draw: ImageDraw.ImageDraw, suit: int, x: float, y: float, s: float, fill: tuple[int, int, int]) -> None:
    """A suit symbol (C S H D = 0..3) filling the box ``(x, y, x+s, y+s)``."""
    cx = x + s / 2
    if suit == 3:  # diamond
        draw.polygon([(cx, y), (x + 0.88 * s, y + s / 2), (cx, y + s), (x + 0.12 * s, y + s / 2)], fill=fill)
    elif suit == 2:  # heart
        r = s / 4
        draw.ellipse([x, y + 0.05 * s, x + 2 * r + 0.04 * s, y + 0.05 * s + 2 * r], fill=fill)
        draw.ellipse([x + s - 2 * r - 0.04 * s, y + 0.05 * s, x + s, y + 0.05 * s + 2 * r], fill=fill)
        draw.polygon([(x + 0.02 * s, y + 0.38 * s), (x + 0.98 * s, y + 0.38 * s), (cx, y + s)], fill=fill)
    elif suit == 1:  # spade
        r = s / 4.4
        draw.polygon([(cx, y), (x + 0.98 * s, y + 0.6 * s), (x + 0.02 * s, y + 0.6 * s)], fill=fill)
        draw.ellipse([x, y + 0.42 * s, x + 2 * r, y + 0.42 * s + 2 * r], fill=fill)
        draw.ellipse([x + s - 2 * r, y + 0.42 * s, x + s, y + 0.42 * s + 2 * r], fill=fill)
        draw.polygon([(cx, y + 0.55 * s), (cx + 0.2 * s, y + s), (cx - 0.2 * s, y + s)], fill=fill)
    else:  # club
        r = s * 0.22
        for ox, oy in ((0.5, 0.24), (0.24, 0.56), (0.76, 0.56)):
            px, py = x + ox * s, y + oy * s
            draw.ellipse([px - r, py - r, px + r, py + r], fill=fill)
        draw.polygon([(cx, y + 0.45 * s), (cx + 0.2 * s, y + s), (cx - 0.2 * s, y + s)], fill=fill)


def _font(size: int) -> Any:
    from PIL import ImageFont

    try:
        return ImageFont.load_default(size=size)  # FreeType font, Pillow >= 10.1
    except (TypeError, ImportError):  # pragma: no cover - older Pillow or no FreeType
        return ImageFont.load_default()


class TableRenderer:
    """Draws positions of one variant as ``(H, W, 3) uint8`` pictures of a fixed size.

    Every card is drawn once as a sprite; a frame pastes sprites, so drawing is quick.
    Each card shows its rank and suit in the strip that stays visible when it is covered.
    """

    def __init__(self, variant: Variant) -> None:
        from PIL import Image, ImageDraw

        self._Image = Image
        self._ImageDraw = ImageDraw
        self.variant = variant
        top_w = 2 * MARGIN + PITCH + CARD_W + (WASTE_FAN - 1) * FAN_STEP + 2 * GAP + N_FOUNDATIONS * PITCH - GAP
        cols_w = 2 * MARGIN + variant.columns * PITCH - GAP
        self.width = max(top_w, cols_w)
        self.tableau_y = MARGIN + CARD_H + BAND
        self.height = self.tableau_y + (variant.max_depth - 1) * STRIP + CARD_H + MARGIN
        self.found_x = self.width - MARGIN - N_FOUNDATIONS * PITCH + GAP
        self._sprite_font = _font(16 * SUPERSAMPLE)
        self._small_font = _font(12)
        self._big_font = _font(20)
        self._faces = [self._face(code) for code in range(4 * N_RANKS)]
        self._back = self._card_back()
        self._slot = self._empty_slot()

    @property
    def shape(self) -> tuple[int, int, int]:
        return self.height, self.width, 3

    # ----- sprites (drawn at SUPERSAMPLE times the size, then scaled down smoothly) -----
    def _blank(self, fill: tuple[int, int, int], outline: tuple[int, int, int]) -> tuple[Image.Image, Any]:
        k = SUPERSAMPLE
        img = self._Image.new("RGB", (CARD_W * k, CARD_H * k), TABLE)
        draw = self._ImageDraw.Draw(img)
        draw.rounded_rectangle(
            [0, 0, CARD_W * k - 1, CARD_H * k - 1], radius=5 * k, fill=fill, outline=outline, width=k
        )
        return img, draw

    def _shrink(self, img: Image.Image) -> Image.Image:
        return img.resize((CARD_W, CARD_H), self._Image.Resampling.LANCZOS)

    def _face(self, code: int) -> Image.Image:
        k = SUPERSAMPLE
        rank, suit = code % N_RANKS, code // N_RANKS
        colour = RED if suit >= 2 else BLACK
        img, draw = self._blank(FACE, EDGE)
        text = "10" if rank == 9 else RANK_LETTERS[rank]
        draw.text((4 * k, 1 * k), text, font=self._sprite_font, fill=colour)
        right = draw.textbbox((4 * k, 1 * k), text, font=self._sprite_font)[2]
        _suit(draw, suit, max(right + 3 * k, 16 * k), 4 * k, 12 * k, colour)  # seen in a column's overlap
        _suit(draw, suit, 3 * k, (STRIP + 1) * k, 11 * k, colour)  # seen in the waste fan
        _suit(draw, suit, (CARD_W - 24) / 2 * k, (STRIP + 11) * k, 24 * k, colour)
        return self._shrink(img)

    def _card_back(self) -> Image.Image:
        k = SUPERSAMPLE
        img, draw = self._blank(BACK, EDGE)
        for x in range(-CARD_H, CARD_W, 7):
            draw.line([((x + 4) * k, 4 * k), ((x + CARD_H - 4) * k, (CARD_H - 4) * k)], fill=(60, 95, 185), width=k)
        draw.rounded_rectangle(
            [3 * k, 3 * k, (CARD_W - 4) * k, (CARD_H - 4) * k], radius=4 * k, outline=BACK_LINE, width=k
        )
        return self._shrink(img)

    def _empty_slot(self) -> Image.Image:
        img, _ = self._blank(TABLE, SLOT)
        return self._shrink(img)

    # ----- frames ---------------------------------------------------------------------
    def draw(self, game: GameState) -> np.ndarray:
        """A picture of ``game`` (a position of this renderer's variant)."""
        if game.variant.columns != self.variant.columns or game.variant.max_depth != self.variant.max_depth:
            raise ValueError(f"renderer for {self.variant.name} cannot draw a {game.variant.name} position")
        img = self._Image.new("RGB", (self.width, self.height), TABLE)
        draw = self._ImageDraw.Draw(img)
        y = MARGIN
        # Stock: a card back with the count on it.
        n_stock = len(game.stock)
        img.paste(self._back if n_stock else self._slot, (MARGIN, y))
        label = f"{n_stock}"
        draw.text((MARGIN + CARD_W / 2, y + CARD_H / 2 - 8), label, font=self._big_font, fill=LABEL, anchor="mm")
        if self.variant.redeals:
            draw.text(
                (MARGIN + CARD_W / 2, y + CARD_H - 14),
                f"redeal {game.redeals_left}",
                font=self._small_font,
                fill=LABEL,
                anchor="mm",
            )
        # Waste: the top cards fanned to the right, top card last and whole.
        waste = game.waste[-WASTE_FAN:]
        x = MARGIN + PITCH
        if not waste:
            img.paste(self._slot, (x, y))
        for k, code in enumerate(waste):
            img.paste(self._faces[code], (x + k * FAN_STEP, y))
        # Foundations: the top card of each pile.
        for p, h in enumerate(game.foundations):
            fx = self.found_x + p * PITCH
            img.paste(self._faces[(p // 2) * N_RANKS + h - 1] if h else self._slot, (fx, y))
        # Column numbers, then the columns.
        band_y = MARGIN + CARD_H + BAND / 2
        for i in range(self.variant.columns):
            cx = MARGIN + i * PITCH + CARD_W / 2
            draw.text((cx, band_y), str(i + 1), font=self._small_font, fill=LABEL, anchor="mm")
        for i, (col, down) in enumerate(zip(game.columns, game.face_down, strict=True)):
            cx = MARGIN + i * PITCH
            if not col:
                img.paste(self._slot, (cx, self.tableau_y))
            for t, code in enumerate(col):
                img.paste(self._back if t < down else self._faces[code], (cx, self.tableau_y + t * STRIP))
        return np.array(img, dtype=np.uint8)


_RENDERERS: dict[Variant, TableRenderer] = {}


def table_image(game: GameState) -> np.ndarray:
    """``(H, W, 3) uint8`` picture of ``game`` (renderers are cached per variant)."""
    renderer = _RENDERERS.get(game.variant)
    if renderer is None:
        renderer = _RENDERERS[game.variant] = TableRenderer(game.variant)
    return renderer.draw(game)
