"""The perfect-information solver: :func:`agents.search.solver.solve` drives the searches.

Bottom-up: :mod:`.zobrist` (position hashes), :mod:`.moves` (the moves a search tries),
:mod:`.pruning` (provably lost positions), :mod:`.heuristics` (the ordering score),
:mod:`.control` (the progress array every search keeps), the searches :mod:`.dfs`,
:mod:`.best_first` and :mod:`.beam`, and :mod:`.solver` (the portfolio and its verdict).
"""
