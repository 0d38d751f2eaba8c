"""Game math: exact side-bet odds, the published basic strategy, the par-sheet simulator.

``combinatorics`` (exact fractions), ``charts``/``strategy`` (the Wizard of Odds charts and the
one decision function), ``fastsim`` (numba fast path), ``simulate`` (seeded, every core),
``crosscheck`` (fast path against the round engine), ``parsheet`` and ``cli`` (the report).
"""

from dealer_assist.gamemath.strategy import BasicStrategy, Play

__all__ = ["BasicStrategy", "Play"]
