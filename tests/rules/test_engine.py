"""The engine's turn logic, refusals that leave state unchanged, and properties of random rounds."""

from __future__ import annotations

import copy
import random
from decimal import Decimal

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dealer_assist.roundlog import dumps_event, settle_log
from dealer_assist.rules import (
    DEALER,
    PRESETS,
    Action,
    Card,
    CardError,
    CardTarget,
    IllegalActionError,
    Outcome,
    RoundEngine,
    RoundError,
    RuleSet,
    WagerError,
)
from tests.rules.random_rounds import random_round

D = Decimal


def engine_with(
    cards: str, seats: tuple[int, ...] = (1,), preset: str = "h17-ddd-6"
) -> RoundEngine:
    engine = RoundEngine(RuleSet.preset(preset), "t")
    for seat in seats:
        engine.bet(seat, D("10"))
    for code in cards.split():
        engine.card(Card.parse(code))
    return engine


def snapshot(engine: RoundEngine) -> object:
    return copy.deepcopy(engine.view())


def test_deal_order_is_seats_then_up_card_then_seats_then_hole() -> None:
    engine = RoundEngine(RuleSet.preset("s17-6"))
    engine.bet(5, D("10"))
    engine.bet(2, D("10"))
    expected = [
        CardTarget(2, 0),
        CardTarget(5, 0),
        DEALER,
        CardTarget(2, 0),
        CardTarget(5, 0),
        DEALER,
    ]
    targets = [engine.card(Card.parse(c)) for c in "2S 3S 4S 5S 6S 7S".split()]
    assert targets == expected
    assert engine.acting() == (2, 0)


def test_legal_actions_on_a_fresh_pair() -> None:
    engine = engine_with("8S 9C 8H 7D")
    assert engine.legal_actions() == {
        Action.HIT,
        Action.STAND,
        Action.DOUBLE,
        Action.SPLIT,
        Action.SURRENDER,
    }
    engine.action(1, Action.DOUBLE)
    assert engine.legal_actions() == frozenset()  # owed its card
    assert engine.next_card_target() == CardTarget(1, 0)
    engine.card(Card.parse("2C"))
    assert engine.legal_actions() == {Action.STAND, Action.DOUBLE, Action.RESCUE}


def test_s17_table_after_double_offers_rescue_or_stand_only() -> None:
    engine = engine_with("5S 9C 6H 7D", preset="s17-6")
    engine.action(1, Action.DOUBLE)
    engine.card(Card.parse("2C"))
    assert engine.legal_actions() == {Action.STAND, Action.RESCUE}


def test_split_hand_gets_second_card_before_next_hand() -> None:
    engine = engine_with("AS 9C AH 7D")
    engine.action(1, Action.SPLIT)
    assert engine.next_card_target() == CardTarget(1, 0)
    engine.card(Card.parse("5D"))
    assert engine.acting() == (1, 0)
    assert engine.next_card_target() is None  # hand 0 decides before hand 1 gets its card
    engine.action(1, Action.STAND)
    assert engine.next_card_target() == CardTarget(1, 1)


def test_dealer_draws_only_while_a_result_depends_on_it() -> None:
    engine = engine_with("5S 9C 6H 5D")  # dealer 14
    engine.action(1, Action.HIT)
    engine.card(Card.parse("KD"))  # player 21: nothing depends on the dealer
    engine.settle()  # settles without dealer cards
    assert engine.next_card_target() is None
    with pytest.raises(CardError, match="no card is due.*no hand's result depends on the dealer"):
        engine.card(Card.parse("2C"))  # a card nobody is due (rules §6)
    assert engine.settle().dealer.cards == ("9C", "5D")


def test_refusals_leave_the_engine_unchanged() -> None:
    engine = RoundEngine(RuleSet.preset("h17-ddd-6"))
    engine.bet(1, D("10"))
    engine.bet(2, D("10"))
    for code in "5S 9S 9C 6H 7H 8D".split():
        engine.card(Card.parse(code))
    engine.action(1, Action.DOUBLE)
    engine.card(Card.parse("2C"))
    before = snapshot(engine)
    attempts = [
        lambda: engine.action(2, Action.SPLIT),  # implies seat 1 stood, then split is illegal
        lambda: engine.action(1, Action.HIT),
        lambda: engine.action(1, Action.DOUBLE, D("5")),
        lambda: engine.card(Card.parse("TS")),
        lambda: engine.bet(4, D("10")),
        lambda: engine.insurance(1, D("5")),
        lambda: engine.reveal(Card.parse("2S")),
        lambda: engine.card(Card.parse("2S"), to=CardTarget(1, 0)),
    ]
    for attempt in attempts:
        with pytest.raises(RoundError):
            attempt()
        assert snapshot(engine) == before


def test_face_down_only_for_the_hole_card() -> None:
    engine = RoundEngine(RuleSet.preset("s17-6"))
    engine.bet(1, D("10"))
    with pytest.raises(CardError, match="only the dealer's hole card"):
        engine.card(None, face_down=True)
    assert not engine.dealing_started


def test_missed_peek_is_refused() -> None:
    engine = RoundEngine(RuleSet.preset("s17-6"))
    engine.bet(1, D("10"))
    engine.card(Card.parse("5S"))
    engine.card(Card.parse("AS"))
    engine.card(Card.parse("6S"))
    engine.card(None, face_down=True)
    engine.action(1, Action.STAND)
    with pytest.raises(CardError, match="peek was missed"):
        engine.reveal(Card.parse("KD"))


def test_errors_are_value_errors_by_cause() -> None:
    assert issubclass(IllegalActionError, ValueError)
    assert issubclass(WagerError, RoundError) and issubclass(CardError, RoundError)


def test_rescue_of_capped_double_for_less_rounding() -> None:
    # Half of an odd-cent wager: breakage below a cent stays with the house.
    engine = RoundEngine(RuleSet.preset("s17-6"))
    engine.bet(1, D("5.25"))
    for code in "KS 9C 6H 8D".split():
        engine.card(Card.parse(code))
    engine.action(1, Action.SURRENDER)
    hand = engine.settle().seat(1).hands[0]
    assert hand.outcome is Outcome.SURRENDER and hand.net == D("-2.63")


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32 - 1), preset=st.sampled_from(sorted(PRESETS)))
def test_random_legal_rounds_settle_and_balance(seed: int, preset: str) -> None:
    events = random_round(random.Random(seed), preset)
    lines = [dumps_event(e) for e in events]
    settlement = settle_log(lines)
    assert settlement.house_result == -sum((s.net for s in settlement.seats), D(0))
    for seat in settlement.seats:
        parts = sum((h.net for h in seat.hands), D(0)) + seat.super_bonus + seat.envy
        parts += (seat.match.net if seat.match else 0) + (
            seat.insurance.net if seat.insurance else 0
        )
        assert parts == seat.net
        assert 1 <= len(seat.hands) <= 4
        for hand in seat.hands:
            assert -hand.wagered <= hand.net <= 3 * hand.wagered
            assert hand.wagered <= 8 * seat.wager
            if hand.outcome in (Outcome.BUST, Outcome.LOSE):
                assert hand.net == -hand.wagered
            if hand.outcome is Outcome.PUSH:
                assert hand.net == 0
            if hand.doublings:
                assert (
                    hand.bonus is None
                    and hand.net in (-hand.wagered, hand.wagered, 0)
                    or (hand.outcome is Outcome.RESCUE)
                )
    # The same log settles the same way every time (pure, deterministic).
    assert settle_log(lines).to_json() == settlement.to_json()


@settings(max_examples=200, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), cut=st.integers(0, 60), junk=st.binary(max_size=40))
def test_truncated_or_corrupted_streams_end_cleanly(seed: int, cut: int, junk: bytes) -> None:
    from dealer_assist.roundlog import LogError

    lines = [dumps_event(e) for e in random_round(random.Random(seed), "h17-ddd-6")]
    variants = [lines[:cut], lines[:cut] + [junk.decode("latin-1")] + lines[cut:]]
    for variant in variants:
        try:
            settle_log(variant)
        except LogError as error:
            assert str(error)  # one clean message, never a traceback of another type


def test_blackjack_on_odd_cents_rounds_down_to_the_cent() -> None:
    engine = RoundEngine(RuleSet.preset("s17-6"))
    engine.bet(1, D("5.25"))
    for code in "AS 9C KD 8D".split():
        engine.card(Card.parse(code))
    assert engine.settle().seat(1).net == D("7.87")


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-10, 2000)
    | st.floats(allow_nan=False, width=32)
    | st.text(max_size=6)
    | st.sampled_from(["7S", "AH", "TD", "dealer", "h17-ddd-6", "10", "main"]),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=8,
)
event_objects = st.fixed_dictionaries(
    {"type": st.sampled_from(["round", "bet", "card", "insurance", "action", "reveal", "end"])},
    optional={
        key: json_values
        for key in ("seat", "amount", "card", "to", "action", "hand", "wager", "rules", "face_down")
    },
)


@settings(max_examples=300, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1), at=st.integers(0, 40), junk=st.lists(event_objects, max_size=3)
)
def test_arbitrary_json_events_end_in_a_settlement_or_one_clean_error(
    seed: int, at: int, junk: list[dict[str, object]]
) -> None:
    import json

    from dealer_assist.roundlog import LogError

    lines = [dumps_event(e) for e in random_round(random.Random(seed), "s17-6")]
    lines[at:at] = [json.dumps(obj) for obj in junk]
    try:
        settle_log(lines)
    except LogError as error:
        assert str(error).startswith(("line ", "end of log"))


def test_typed_queries_say_what_the_view_says():
    from dealer_assist.rules import HandStatus

    engine = RoundEngine(RuleSet.preset("h17-ddd-6"), "q")
    engine.bet(2, Decimal("10"))
    engine.bet(5, Decimal("25"))
    for code in ("8H", "9C", "6S", "8D", "7C"):
        engine.card(Card.parse(code))
    assert engine.dealer_cards() == (Card.parse("6S"),)
    engine.card(Card.parse("QD"))
    engine.action(2, Action.SPLIT)
    engine.card(Card.parse("3C"))
    assert engine.seats() == (2, 5)
    first, second = engine.hands(2)
    assert first.cards == (Card.parse("8H"), Card.parse("3C")) and first.total == 11
    assert second.cards == (Card.parse("8D"),) and second.split and first.split
    assert first.status is HandStatus.OPEN and first.wagered == Decimal("10")
    engine.action(2, Action.DOUBLE)
    assert engine.hands(2)[0].doublings == (Decimal("10"),)
    assert engine.hands(2)[0].wagered == Decimal("20")
    assert engine.hands(7) == ()
    view = engine.view()
    assert [h["cards"] for h in view["seats"][0]["hands"]] == [
        [c.code for c in h.cards] for h in engine.hands(2)]


def test_a_clone_is_the_round_as_it_stands_and_moves_on_its_own():
    engine = RoundEngine(RuleSet.preset("h17-ddd-6"), "c")
    engine.bet(1, Decimal("10"))
    engine.bet(3, Decimal("10"))
    for code in ("8H", "5C", "6S", "8D", "6C", "QD"):
        engine.card(Card.parse(code))
    twin = engine.clone()
    assert twin.view() == engine.view()
    twin.action(1, Action.SPLIT)
    twin.card(Card.parse("3C"))
    twin.action(1, Action.DOUBLE)
    assert [len(h.cards) for h in engine.hands(1)] == [2]  # the original moved not at all
    assert engine.view()["shoe_counts"] != twin.view()["shoe_counts"]
    assert engine.acting() == (1, 0) and engine.legal_actions() != twin.legal_actions()
