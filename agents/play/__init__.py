"""Play and watch: a person's game in the terminal, and a browser replay of any game.

Reading order: :mod:`.progress` (auto-finish and the no-progress test), :mod:`.stats` (the
statistics file), :mod:`.session` (:class:`~.session.PlaySession`, the whole game without a
screen), :mod:`.commands` (typed commands), :mod:`.tui` (the textual app of ``forty-thieves
play``), :mod:`.replay` (``forty-thieves replay``: one self-contained HTML page, drawn by the
``replay.html`` template), :mod:`.figures` (the pictures of ``docs/play.md``).
"""
