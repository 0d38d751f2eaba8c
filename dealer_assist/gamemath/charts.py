"""Spanish 21 basic strategy charts, as published, for six decks (the charts exist for no other).

Source: Michael Shackleford, "Spanish 21", The Wizard of Odds,
https://wizardofodds.com/games/spanish-21/ (charts "dealer hits soft 17", "dealer stands on soft 17"
and "dealer hits soft 17, redoubling allowed"; the redoubling chart includes the table for a hand
already doubled; without redoubling the page gives the rescue line "Double down surrender: 12-16 vs
8-A; 17 vs A"). Squares were cross-read against the cell-by-cell transcription and source notes
of the sp21-ace trainer (github.com/aQuigs/sp21-ace, app/src/test/resources/strategy/SOURCES.md).
Where that transcription departs from the Wizard's current chart (H17 with redoubling: 10 vs 7-8,
11 vs 7-8, 17 vs 7) the Wizard's square is used here.

Notation (the Wizard's, as a grid of codes):
  H hit, S stand, D double (redouble in the after-doubling tables), P split,
  R surrender (late surrender; in the after-doubling tables: rescue),
  RH surrender if allowed, otherwise hit.
  A digit N after the play: hit instead once the hand holds N or more cards (D4: double a hand of
  two or three cards, hit one of four or more).
  * hit if a 6-7-8 is possible (the hand is two of 6, 7, 8, different), ' hit if a suited 6-7-8 is
  possible (spades included), " hit if a 6-7-8 of spades is possible,
  $ hit (do not split) when the Super Bonus is possible.
Rows: hard totals, soft totals (A-2 = soft 13 ... A-10 = soft 21, A-A = soft 12), pairs by value.
"""

from __future__ import annotations

SOURCE = (
    "Wizard of Odds, Spanish 21 basic strategy, https://wizardofodds.com/games/spanish-21/ "
    "(six decks, late surrender, double any number of cards, double after split, re-split and "
    "hit/double split aces, double down rescue, player 21 always wins)"
)

UPCARDS = ("2", "3", "4", "5", "6", "7", "8", "9", "10", "A")

H17_REDOUBLE = {
    "hard": """
        4     H     H     H     H     H     H     H     H     H     H
        5     H     H     H     H     D     H     H     H     H     H
        6     H     H     H     H     D     H     H     H     H     H
        7     H     H     H     H     D     H     H     H     H     H
        8     H     H     H     D     D     H     H     H     H     H
        9     H     D4    D     D     D     H     H     H     H     H
        10    D5    D5    D     D     D     D     D5    H     H     H
        11    D4    D5    D5    D5    D5    D5    D5    D4    D3    D3
        12    H     H     H     H     H     H     H     H     H     H
        13    H     H     H     H     S4*   H     H     H     H     H
        14    H     H     S4*   S5'   S6"   H     H     H     H     H
        15    S4*   S5'   S6    S6    S     H     H     H     H     H
        16    S6    S6    S6    S     S     H     H     H     H     RH
        17    S     S     S     S     S     S6    S6    S6    S6    RH
        18    S     S     S     S     S     S     S     S     S     S
        19    S     S     S     S     S     S     S     S     S     S
        20    S     S     S     S     S     S     S     S     S     S
        21    S     S     S     S     S     S     S     S     S     S
    """,
    "soft": """
        A-A   H     H     H     H     H     H     H     H     H     H
        A-2   H     D3    D     D     D     H     H     H     H     H
        A-3   H     D3    D4    D     D     H     H     H     H     H
        A-4   H     H     D4    D4    D5    H     H     H     H     H
        A-5   H     H     D3    D4    D5    H     H     H     H     H
        A-6   H     H     D3    D4    D5    H     H     H     H     H
        A-7   S4    S4    D4    D5    D6    S6    S4    H     H     H
        A-8   S     S     S     S     S     S     S     S     S6    S6
        A-9   S     S     S     S     S     S     S     S     S     S
        A-10  S     S     S     S     S     S     S     S     S     S
    """,
    "pairs": """
        2-2   P     P     P     P     P     P     P     H     H     H
        3-3   P     P     P     P     P     P     P     H     H     H
        4-4   H     H     H     D     D     H     H     H     H     H
        5-5   D     D     D     D     D     D     D     H     H     H
        6-6   H     H     P     P     P     H     H     H     H     H
        7-7   P     P     P     P     P     P$    H     H     H     H
        8-8   P     P     P     P     P     P     P     P     P     R
        9-9   S     P     P     P     P     S     P     P     S     S
        10-10 S     S     S     S     S     S     S     S     S     S
        A-A   P     P     P     P     P     P     P     P     P     P
    """,
    "doubled_hard": """
        6     S     D     D     D     D     D     R     R     R     R
        7     D     D     D     D     D     D     R     R     R     R
        8     D     D     D     D     D     D     D     D     R     R
        9     D     D     D     D     D     D     D     D     D     D
        10    D     D     D     D     D     D     D     D     D     D
        11    D     D     D     D     D     D     D     D     D     D
        12    S     S     S     S     S     D     D     R     R     R
        13    S     S     S     S     S     S     R     R     R     R
        14    S     S     S     S     S     S     R     R     R     R
        15    S     S     S     S     S     S     R     R     R     R
        16    S     S     S     S     S     S     R     R     R     R
        17    S     S     S     S     S     S     S     S     S     R
        18    S     S     S     S     S     S     S     S     S     S
        19    S     S     S     S     S     S     S     S     S     S
        20    S     S     S     S     S     S     S     S     S     S
        21    S     S     S     S     S     S     S     S     S     S
    """,
    "doubled_soft": """
        A-2   D     D     D     D     D     D     D     D     D     D
        A-3   D     D     D     D     D     D     D     D     D     D
        A-4   D     D     D     D     D     D     D     D     D     D
        A-5   D     D     D     D     D     D     D     D     D     D
        A-6   D     D     D     D     D     D     D     D     D     D
        A-7   S     S     D     D     D     S     S     S     S     S
        A-8   S     S     S     S     S     S     S     S     S     S
        A-9   S     S     S     S     S     S     S     S     S     S
        A-10  S     S     S     S     S     S     S     S     S     S
    """,
}

H17 = {
    "hard": """
        4     H     H     H     H     H     H     H     H     H     H
        5     H     H     H     H     H     H     H     H     H     H
        6     H     H     H     H     H     H     H     H     H     H
        7     H     H     H     H     H     H     H     H     H     H
        8     H     H     H     H     H     H     H     H     H     H
        9     H     H     H     H     D     H     H     H     H     H
        10    D5    D5    D     D     D     D4    D3    H     H     H
        11    D4    D5    D5    D5    D5    D4    D4    D4    D3    D3
        12    H     H     H     H     H     H     H     H     H     H
        13    H     H     H     H     S4*   H     H     H     H     H
        14    H     H     S4*   S5'   S6"   H     H     H     H     H
        15    S4*   S5'   S6    S6    S     H     H     H     H     H
        16    S6    S6    S6    S     S     H     H     H     H     RH
        17    S     S     S     S     S     S     S6    S6    S6    RH
        18    S     S     S     S     S     S     S     S     S     S
        19    S     S     S     S     S     S     S     S     S     S
        20    S     S     S     S     S     S     S     S     S     S
        21    S     S     S     S     S     S     S     S     S     S
    """,
    "soft": """
        A-A   H     H     H     H     H     H     H     H     H     H
        A-2   H     H     H     H     H     H     H     H     H     H
        A-3   H     H     H     H     H     H     H     H     H     H
        A-4   H     H     H     H     D4    H     H     H     H     H
        A-5   H     H     H     D3    D4    H     H     H     H     H
        A-6   H     H     D3    D4    D5    H     H     H     H     H
        A-7   S4    S4    D4    D5    D6    S6    S4    H     H     H
        A-8   S     S     S     S     S     S     S     S     S6    S6
        A-9   S     S     S     S     S     S     S     S     S     S
        A-10  S     S     S     S     S     S     S     S     S     S
    """,
    "pairs": """
        2-2   P     P     P     P     P     P     P     H     H     H
        3-3   P     P     P     P     P     P     P     H     H     H
        4-4   H     H     H     H     H     H     H     H     H     H
        5-5   D     D     D     D     D     D     D     H     H     H
        6-6   H     H     P     P     P     H     H     H     H     H
        7-7   P     P     P     P     P     P$    H     H     H     H
        8-8   P     P     P     P     P     P     P     P     P     R
        9-9   S     P     P     P     P     S     P     P     S     S
        10-10 S     S     S     S     S     S     S     S     S     S
        A-A   P     P     P     P     P     P     P     P     P     P
    """,
}

S17 = {
    "hard": """
        4     H     H     H     H     H     H     H     H     H     H
        5     H     H     H     H     H     H     H     H     H     H
        6     H     H     H     H     H     H     H     H     H     H
        7     H     H     H     H     H     H     H     H     H     H
        8     H     H     H     H     H     H     H     H     H     H
        9     H     H     H     H     D4    H     H     H     H     H
        10    D5    D5    D     D     D     D4    D3    H     H     H
        11    D4    D5    D5    D5    D5    D4    D4    D4    D3    D3
        12    H     H     H     H     H     H     H     H     H     H
        13    H     H     H     H     H     H     H     H     H     H
        14    H     H     S4*   S5*   S4*   H     H     H     H     H
        15    S4*   S5*   S5"   S6    S6"   H     H     H     H     H
        16    S5    S6    S6    S     S     H     H     H     H     H
        17    S     S     S     S     S     S     S6    S6    S6    RH
        18    S     S     S     S     S     S     S     S     S     S
        19    S     S     S     S     S     S     S     S     S     S
        20    S     S     S     S     S     S     S     S     S     S
        21    S     S     S     S     S     S     S     S     S     S
    """,
    "soft": """
        A-A   H     H     H     H     H     H     H     H     H     H
        A-2   H     H     H     H     H     H     H     H     H     H
        A-3   H     H     H     H     H     H     H     H     H     H
        A-4   H     H     H     H     H     H     H     H     H     H
        A-5   H     H     H     H     D4    H     H     H     H     H
        A-6   H     H     D3    D4    D5    H     H     H     H     H
        A-7   S4    S4    D4    D5    D5    S6    S4    H     H     H
        A-8   S     S     S     S     S     S     S     S     S6    S
        A-9   S     S     S     S     S     S     S     S     S     S
        A-10  S     S     S     S     S     S     S     S     S     S
    """,
    "pairs": """
        2-2   P     P     P     P     P     P     P     H     H     H
        3-3   P     P     P     P     P     P     P     H     H     H
        4-4   H     H     H     H     H     H     H     H     H     H
        5-5   D     D     D     D     D     D     D     H     H     H
        6-6   H     H     P     P     P     H     H     H     H     H
        7-7   P     P     P     P     P     P$    H     H     H     H
        8-8   P     P     P     P     P     P     P     P     P     P
        9-9   S     P     P     P     P     S     P     P     S     S
        10-10 S     S     S     S     S     S     S     S     S     S
        A-A   P     P     P     P     P     P     P     P     P     P
    """,
}

# Without redoubling a doubled hand may only stand or rescue: "12-16 vs 8-A; 17 vs A".
RESCUE_WITHOUT_REDOUBLING = """
        12    S     S     S     S     S     S     R     R     R     R
        13    S     S     S     S     S     S     R     R     R     R
        14    S     S     S     S     S     S     R     R     R     R
        15    S     S     S     S     S     S     R     R     R     R
        16    S     S     S     S     S     S     R     R     R     R
        17    S     S     S     S     S     S     S     S     S     R
"""

CHARTS = {"h17-redouble": H17_REDOUBLE, "h17": H17, "s17": S17}
