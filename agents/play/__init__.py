"""Play and watch: a person's game in the terminal, and a browser replay of any game.

Reading order: :mod:`.score` (the score line), :mod:`.storage` (the small JSON files),
:mod:`.stats` (statistics per level), :mod:`.setup` (the rules and deals in play, the share
line), :mod:`.progress` (a tap's best place, auto-finish, the no-progress test),
:mod:`.results` (the results card), :mod:`.session` (:class:`~.session.PlaySession`, the whole
game without a screen), :mod:`.commands` (typed commands), :mod:`.tui` (the textual app of ``forty-thieves
play``), :mod:`.replay` (``forty-thieves replay``: one self-contained HTML page, drawn by the
``replay.html`` template), :mod:`.figures` (the pictures of ``docs/play.md``).
"""
