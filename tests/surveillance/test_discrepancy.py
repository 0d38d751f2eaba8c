"""A discrepancy as an officer reads it (hands from 1) and as a program reads it (JSON, from 0)."""

from __future__ import annotations

from dealer_assist.surveillance.discrepancy import Discrepancy


def test_a_discrepancy_names_the_hand_from_1_in_words_and_from_0_in_json() -> None:
    found = Discrepancy("settlement", "hand net: recorded 150.00, replayed 15.00", round_key=5,
                        round_id="r-5", table="T1", seat=1, hand=0)
    assert found.text() == ("settlement: table T1, round r-5 (#5), seat 1, hand 1: hand net: "
                            "recorded 150.00, replayed 15.00")
    assert found.to_json()["hand"] == 0
    assert "hand" not in Discrepancy("chain", "broken link", seat=2).text()
