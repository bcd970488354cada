"""Text and the ``GameState`` façade: cards, moves and positions as text, refusals in words.

Reading order, bottom-up: :mod:`.errors`, :mod:`.notation` (cards and moves),
:mod:`.explain` (why a move is illegal), :mod:`.position` (the position format),
:mod:`.game` (:class:`~.game.GameState`, :func:`~.game.deal`, :func:`~.game.parse_position`).
"""
