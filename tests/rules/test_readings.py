"""The no-guess rule, alone: a card's readings and what the evidence leaves of them."""

from __future__ import annotations

from decimal import Decimal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dealer_assist.rules import DEALER, Action, Card, CardTarget, RoundEngine, RuleSet
from dealer_assist.rules.readings import (
    Decision,
    Evidence,
    card_readings,
    remaining_readings,
    settled_reading,
)

C = Card.parse


def engine_after(rules: str, seats: list[int], deal: list[str],
                 actions: tuple[tuple[int, Action], ...] = (), cards: tuple[str, ...] = ()
                 ) -> RoundEngine:
    """A round dealt ``deal`` (seat by seat, then the dealer, twice), with ``actions`` each
    followed by the next of ``cards`` where it asks for one."""
    engine = RoundEngine(RuleSet.from_spec(rules), "t")
    for seat in seats:
        engine.bet(seat, Decimal("10"))
    for code in deal:
        engine.card(C(code))
    queue = list(cards)
    for seat, action in actions:
        engine.action(seat, action)
        while engine.next_card_target() is not None and engine.acting() is not None and queue:
            engine.card(C(queue.pop(0)))
    return engine


def outcomes(readings: tuple) -> set[tuple]:
    return {(tuple((d.seat, d.hand, d.action) for d in r.decisions), r.target)
            for r in readings}


def test_a_card_while_seat_two_decides_on_11_reads_as_hit_double_or_a_stand():
    # seat 2: 5+6 = 11; seat 3: 9+8 = 17; dealer 7 up.
    engine = engine_after("h17-ddd-6", [2, 3], ["5H", "9C", "7S", "6D", "8C", "5S"])
    readings = card_readings(engine)
    assert outcomes(readings) == {
        (((2, 0, Action.HIT),), CardTarget(2, 0)),
        (((2, 0, Action.DOUBLE),), CardTarget(2, 0)),
        (((2, 0, Action.STAND), (3, 0, Action.HIT)), CardTarget(3, 0)),
        (((2, 0, Action.STAND), (3, 0, Action.DOUBLE)), CardTarget(3, 0)),
        (((2, 0, Action.STAND), (3, 0, Action.STAND)), DEALER),
    }
    assert engine.acting() == (2, 0)  # the query changed nothing
    assert settled_reading(readings) is None  # the shoe alone cannot say: ask


@pytest.mark.parametrize(("landing", "sideways", "expected"), [
    (CardTarget(2, 0), False, Action.HIT),
    (CardTarget(2, 0), True, Action.DOUBLE),
    (CardTarget(3, 0), False, Action.HIT),
    (CardTarget(3, 0), True, Action.DOUBLE),
])
def test_a_landing_and_its_lie_leave_one_reading(landing: CardTarget, sideways: bool,
                                                 expected: Action):
    engine = engine_after("h17-ddd-6", [2, 3], ["5H", "9C", "7S", "6D", "8C", "5S"])
    left = remaining_readings(card_readings(engine), Evidence(landing, sideways))
    reading = settled_reading(left)
    assert reading is not None
    assert reading.target == landing and reading.asked_by is expected


def test_a_landing_at_the_dealer_means_every_hand_stood():
    engine = engine_after("h17-ddd-6", [2, 3], ["5H", "9C", "7S", "6D", "8C", "5S"])
    reading = settled_reading(remaining_readings(card_readings(engine), Evidence(DEALER)))
    assert reading is not None and reading.target == DEALER
    assert [d.action for d in reading.decisions] == [Action.STAND, Action.STAND]


def test_a_landing_before_the_hand_in_play_fits_no_reading():
    engine = engine_after("h17-ddd-6", [2, 3], ["5H", "9C", "7S", "6D", "8C", "5S"],
                          actions=((2, Action.STAND),))
    left = remaining_readings(card_readings(engine), Evidence(CardTarget(2, 0)))
    assert left == ()
    assert settled_reading(left) is None


def test_a_pair_without_a_landing_may_have_split():
    engine = engine_after("h17-ddd-6", [1], ["8H", "7S", "8D", "QS"])
    readings = card_readings(engine)
    splits = [r for r in readings if r.splits]
    assert len(splits) == 1 and splits[0].target == CardTarget(1, 0)
    assert splits[0].asked_by is None  # the split hand is owed the card
    # Seen landing there upright, it is a hit: a split would have shown two stacks first.
    seen = remaining_readings(readings, Evidence(CardTarget(1, 0)))
    assert [r.asked_by for r in seen] == [Action.HIT]


def test_after_a_double_the_next_card_is_a_redouble_or_belongs_to_the_next_hand():
    engine = engine_after("h17-ddd-6", [1, 2], ["2H", "9C", "7S", "3D", "8C", "QS"],
                          actions=((1, Action.DOUBLE),), cards=("2C",))
    readings = card_readings(engine)
    mine = [r for r in readings if r.target == CardTarget(1, 0)]
    assert [r.asked_by for r in mine] == [Action.DOUBLE]  # a doubled hand is never hit
    assert settled_reading(readings) is None
    # Upright at seat 1 is no legal play: the redouble lies sideways.
    assert remaining_readings(readings, Evidence(CardTarget(1, 0))) == ()


def test_surrender_is_never_read_into_a_card():
    engine = engine_after("h17-ddd-6", [1, 2], ["9H", "9C", "7S", "7D", "8C", "QS"])
    actions = {d.action for r in card_readings(engine) for d in r.decisions}
    assert Action.SURRENDER not in actions and Action.RESCUE not in actions


def test_an_owed_card_has_one_reading_with_no_decision():
    engine = RoundEngine(RuleSet.from_spec("h17-ddd-6"), "t")
    engine.bet(1, Decimal("10"))
    assert card_readings(engine) == (card_readings(engine)[0],)
    assert card_readings(engine)[0].decisions == ()
    assert settled_reading(card_readings(engine)) is not None


def test_readings_that_differ_only_in_a_wager_are_still_asked_about():
    engine = engine_after("h17-ddd-6", [2, 3], ["5H", "9C", "7S", "6D", "8C", "5S"])
    same_place = [r for r in card_readings(engine) if r.target == CardTarget(2, 0)]
    assert len(same_place) == 2
    assert settled_reading(same_place) is None
    assert settled_reading(same_place[:1]) is same_place[0]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from([c.code for c in
                                 (C("2S"), C("3H"), C("5D"), C("6C"), C("7S"), C("8H"), C("9D"),
                                  C("JC"), C("QH"), C("AS"))]),
                min_size=6, max_size=6),
       st.sampled_from(["h17-ddd-6", "s17-6"]))
def test_every_reading_is_a_legal_play_that_takes_the_card_where_it_says(deal: list[str],
                                                                          rules: str):
    engine = engine_after(rules, [1, 2], deal)
    for reading in card_readings(engine):
        import copy

        trial = copy.deepcopy(engine)
        for decision in reading.decisions:
            assert isinstance(decision, Decision)
            trial.action(decision.seat, decision.action, hand=decision.hand)
        assert trial.next_card_target() == reading.target


@settings(max_examples=80, deadline=None)
@given(st.lists(st.sampled_from(["2S", "3H", "5D", "6C", "7S", "8H", "9D", "JC", "QH", "AS",
                                 "8D"]), min_size=6, max_size=6),
       st.sampled_from(["h17-ddd-6", "s17-6"]),
       st.sampled_from([DEALER, CardTarget(1, 0), CardTarget(2, 0), CardTarget(3, 0),
                        CardTarget(1, 1)]),
       st.booleans())
def test_exploring_toward_a_landing_leaves_what_the_whole_exploration_leaves(
        deal: list[str], rules: str, landing: CardTarget, sideways: bool):
    engine = engine_after(rules, [1, 2], deal)
    evidence = Evidence(landing, sideways)
    assert remaining_readings(card_readings(engine, toward=landing), evidence) == \
        remaining_readings(card_readings(engine), evidence)
