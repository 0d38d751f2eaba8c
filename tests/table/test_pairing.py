"""Shoe/camera pairing alone: which sighting is which shoe card's landing, and only where surely
its (the loop's use of it is tested in test_no_guess.py)."""

from __future__ import annotations

from dealer_assist.rules import Card, CardTarget
from dealer_assist.table.pairing import CardsInFlight, LateSighting, MatchKind
from dealer_assist.table.sources import FeltCard, ShoeCard

C = Card.parse


def flight(*events: object) -> CardsInFlight:
    cards = CardsInFlight()
    for event in events:
        if isinstance(event, ShoeCard):
            cards.add_shoe(event, 0.0, rejected=False)
        else:
            assert isinstance(event, FeltCard)
            cards.add_felt(event, 0.0)
    return cards


def match(cards: CardsInFlight, now: float = 0.1, force: bool = False, behind: bool = False,
          shoe_down: bool = False):
    return cards.next_match(now, force=force, behind=behind, mismatch_wait_s=0.5,
                            sole=cards.sole_unsighted(), placeable=lambda pending: True,
                            shoe_down=shoe_down)


def test_a_landing_of_the_shoe_cards_code_is_its_landing():
    cards = flight(ShoeCard(C("7H")), FeltCard(C("7H"), CardTarget(2, 0), sideways=True))
    found = match(cards)
    assert found is not None and found.kind is MatchKind.LANDED and found.felt is not None
    assert found.felt.spot == CardTarget(2, 0) and found.felt.sideways
    assert not cards.shoe and not cards.felt


def test_a_sighting_two_cards_out_share_places_neither():
    cards = flight(ShoeCard(C("7H")), ShoeCard(C("7H")), FeltCard(C("7H"), CardTarget(3, 0)))
    found = match(cards)
    assert found is not None and found.kind is MatchKind.UNSEEN and not cards.felt


def test_a_later_cards_landing_places_the_earlier_one_unseen_first():
    cards = flight(ShoeCard(C("2S")), ShoeCard(C("9D")), FeltCard(C("9D"), CardTarget(3, 0)))
    first = match(cards)
    assert first is not None and first.kind is MatchKind.UNSEEN and first.shoe.card == C("2S")
    second = match(cards)
    assert second is not None and second.kind is MatchKind.LANDED


def test_an_unreadable_landing_is_a_cards_only_when_it_is_the_sole_card_out():
    sole = flight(ShoeCard(C("2S")), FeltCard(None, CardTarget(1, 0)))
    found = match(sole)
    assert found is not None and found.kind is MatchKind.LANDED
    two = flight(ShoeCard(C("2S")), ShoeCard(C("3D")), FeltCard(None, CardTarget(2, 0)))
    found = match(two)
    assert found is not None and found.kind is MatchKind.UNSEEN


def test_a_landing_of_another_code_waits_then_is_a_switched_card():
    cards = flight(ShoeCard(C("2S")), FeltCard(C("3S"), CardTarget(1, 0)))
    assert match(cards, now=0.1) is None
    found = match(cards, now=0.6)
    assert found is not None and found.kind is MatchKind.SWITCHED
    cards = flight(ShoeCard(C("2S")), FeltCard(C("3S"), CardTarget(1, 0)))
    forced = match(cards, now=0.1, force=True)
    assert forced is not None and forced.kind is MatchKind.SWITCHED


def test_behind_only_the_shoe_cards_own_code_pairs():
    cards = flight(ShoeCard(C("2S")), FeltCard(None, CardTarget(1, 0)))
    assert match(cards, behind=True) is None


def test_a_late_sighting_is_checked_against_where_the_card_was_placed_all_round():
    cards = CardsInFlight()
    cards.placed(C("JH"), CardTarget(2, 0))
    assert cards.late_sighting(C("JH"), CardTarget(2, 0)) == (LateSighting.TAKEN, None)
    cards.placed(C("JH"), CardTarget(2, 0))
    assert cards.late_sighting(C("JH"), CardTarget(3, 0)) == (
        LateSighting.MISPLACED, (C("JH"), CardTarget(2, 0)))
    assert cards.late_sighting(C("QS"), CardTarget(3, 0)) == (LateSighting.NEW, None)
    cards.placed(C("JH"), CardTarget(2, 0))
    assert cards.unsighted(C("JH")) == 1  # however long ago: no sighting of JH is surely new
    cards.new_round()
    assert cards.late_sighting(C("JH"), CardTarget(3, 0)) == (LateSighting.NEW, None)


def test_a_late_landing_is_never_a_landing_only_the_card_placed_unseen():
    """A landing whose frame came past the camera's lag limit: its own shoe card is placed as
    unseen (LATE, the landing handed back to check); another card's code or an unreadable one
    is never paired."""
    cards = CardsInFlight()
    cards.add_shoe(ShoeCard(C("7H")), 0.0, rejected=False)
    cards.add_felt(FeltCard(C("7H"), CardTarget(2, 0), sideways=True), 0.0, late=True)
    found = match(cards)
    assert found is not None and found.kind is MatchKind.LATE and found.felt is not None
    for felt in (FeltCard(None, CardTarget(1, 0)), FeltCard(C("3S"), CardTarget(1, 0))):
        cards = CardsInFlight()
        cards.add_shoe(ShoeCard(C("2S")), 0.0, rejected=False)
        cards.add_felt(felt, 0.0, late=True)
        assert match(cards, now=5.0, force=True) is None


def test_with_the_shoe_down_a_first_landing_of_another_code_is_a_card_drawn_after():
    """The shoe's link is down: a landing that reads as another code (surely not the shoe
    card's, or not checked against it) may be a card it has not reported: the shoe card waiting
    is placed first, as unseen, at once (UNREPORTED_AFTER, naming the landing), and the landing
    is left for the camera. Its own code, or an unreadable landing where it is the sole card
    out, is still its landing; one the camera is unsure of may be it misread (taken for it
    after the wait, as with the link up). A late landing counts too (it is read as it lands);
    a stray one does not."""
    for verdict in (None, "mismatch"):
        landing = FeltCard(C("3H"), CardTarget(1, 0), verdict=verdict, checked=C("2C"))
        cards = flight(ShoeCard(C("2C")), landing)
        found = match(cards, shoe_down=True)
        assert found is not None and found.kind is MatchKind.UNREPORTED_AFTER
        assert found.shoe.card == C("2C") and found.felt == landing
        assert not cards.shoe and [p.felt for p in cards.felt] == [landing]
    unsure = flight(ShoeCard(C("2C")),
                    FeltCard(C("3H"), CardTarget(1, 0), verdict="unsure", checked=C("2C")))
    assert match(unsure, shoe_down=True) is None
    found = match(unsure, now=0.5, shoe_down=True)
    assert found is not None and found.kind is MatchKind.UNSEEN and found.felt is not None
    up = flight(ShoeCard(C("2C")), FeltCard(C("3H"), CardTarget(1, 0)))
    assert match(up) is None  # with the link up it waits, then is a switched card
    own = flight(ShoeCard(C("2C")), FeltCard(C("3H"), CardTarget(1, 0)),
                 FeltCard(C("2C"), CardTarget(1, 0)))
    found = match(own, shoe_down=True)
    assert found is not None and found.kind is MatchKind.LANDED
    unreadable = flight(ShoeCard(C("2C")), FeltCard(None, CardTarget(1, 0)),
                        FeltCard(C("3H"), CardTarget(1, 0)))
    found = match(unreadable, shoe_down=True)
    assert found is not None and found.kind is MatchKind.LANDED
    late = CardsInFlight()
    late.add_shoe(ShoeCard(C("2C")), 0.0, rejected=False)
    late.add_felt(FeltCard(C("3H"), CardTarget(1, 0)), 0.0, late=True)
    found = match(late, shoe_down=True)  # late or not, a card read after it
    assert found is not None and found.kind is MatchKind.UNREPORTED_AFTER
    refused = CardsInFlight()
    refused.add_shoe(ShoeCard(C("5H")), 0.0, rejected=True)
    refused.add_felt(FeltCard(C("6H"), CardTarget(1, 0)), 0.0)
    assert match(refused, shoe_down=True) is None  # a card refused on sight: its landing
    found = match(refused, now=0.5, shoe_down=True)
    assert found is not None and found.kind is MatchKind.DROPPED and not refused.felt

