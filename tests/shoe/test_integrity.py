"""Each integrity alarm, and the quiet path that raises none."""

from __future__ import annotations

from dealer_assist.rules.cards import SPANISH_DECK, Card
from dealer_assist.shoe.events import (
    BurnCard,
    CardDrawn,
    CountMismatch,
    LidClosed,
    LidOpened,
    LinkDown,
    MalformedFrame,
    ShoeAlarm,
    ShoeEmpty,
    ShoeLoaded,
    UnreadableCard,
)
from dealer_assist.shoe.integrity import IntegrityKind, ShoeIntegrity

S = 42


def loaded(decks: int = 2, spanish: bool = True, session: int = S) -> ShoeLoaded:
    return ShoeLoaded(session, 1, decks, spanish, decks * 48, 0, 0)


def kinds(checker: ShoeIntegrity, *events) -> list[IntegrityKind]:  # type: ignore[no-untyped-def]
    return [alarm.kind for event in events for alarm in checker.check(event)]


def draw(seq: int, code: str) -> CardDrawn:
    return CardDrawn(S, seq, Card.parse(code), seq - 1)


def test_a_whole_clean_shoe_raises_nothing() -> None:
    checker = ShoeIntegrity()
    events = [loaded(2), LidClosed(S, 2)]
    events += [draw(seq, c.code) for seq, c in enumerate(list(SPANISH_DECK) * 2, start=3)]
    events.append(ShoeEmpty(S, 200, 96))
    assert kinds(checker, *events) == []


def test_pip_ten_from_a_spanish_shoe() -> None:
    checker = ShoeIntegrity()
    checker.check(loaded())
    alarms = checker.check(draw(2, "TH"))
    assert [a.kind for a in alarms] == [IntegrityKind.PIP_TEN]
    assert "TH" in alarms[0].message and "index 1" in alarms[0].message


def test_pip_ten_as_a_burn_card_and_a_standard_shoe_loaded() -> None:
    checker = ShoeIntegrity()
    assert kinds(checker, loaded(6, spanish=False)) == [IntegrityKind.PIP_TEN]
    assert kinds(checker, BurnCard(S, 2, Card.parse("TS"), 1)) == [IntegrityKind.PIP_TEN]


def test_more_copies_than_the_decks_hold() -> None:
    checker = ShoeIntegrity()
    checker.check(loaded(2))
    assert kinds(checker, draw(2, "7S"), draw(3, "7S")) == []
    alarms = checker.check(draw(4, "7S"))
    assert [a.kind for a in alarms] == [IntegrityKind.EXCESS_COPIES]
    assert "7S seen 3 times" in alarms[0].message and "holds 2" in alarms[0].message


def test_decks_given_up_front_serve_a_shoe_that_never_says() -> None:
    checker = ShoeIntegrity(decks=2)
    assert kinds(checker, draw(2, "AS"), draw(3, "AS"), draw(4, "AS")) == [
        IntegrityKind.EXCESS_COPIES
    ]
    # a load without a deck count keeps the known composition, and starts counting afresh
    checker.check(ShoeLoaded(S + 1, 1, 0, True, 0, S, 4))
    assert kinds(checker, draw(2, "AS"), draw(3, "AS"), draw(4, "AS")) == [
        IntegrityKind.EXCESS_COPIES
    ]


def test_unreadable_card_and_unread_burn_card() -> None:
    checker = ShoeIntegrity(decks=6)
    assert kinds(checker, UnreadableCard(S, 2, 1)) == [IntegrityKind.UNREADABLE_CARD]
    assert kinds(checker, BurnCard(S, 3, None, 2)) == [IntegrityKind.UNREADABLE_CARD]


def test_card_while_the_shoe_is_empty() -> None:
    checker = ShoeIntegrity()
    checker.check(loaded())
    checker.check(draw(2, "4C"))
    checker.check(ShoeEmpty(S, 3, 1))
    alarms = checker.check(draw(4, "5C"))
    assert [a.kind for a in alarms] == [IntegrityKind.CARD_WHILE_EMPTY]
    # a new shoe clears it
    checker.check(loaded(session=S + 1))
    assert checker.check(CardDrawn(S + 1, 2, Card.parse("5C"), 1)) == []


def test_lid_opened_mid_shoe_but_not_at_loading_or_after_empty() -> None:
    checker = ShoeIntegrity()
    assert kinds(checker, loaded(), LidOpened(S, 2), LidClosed(S, 3)) == []
    checker.check(draw(4, "9D"))
    assert kinds(checker, LidOpened(S, 5)) == [IntegrityKind.LID_OPENED_MID_SHOE]
    checker.check(ShoeEmpty(S, 6, 1))
    assert kinds(checker, LidOpened(S, 7)) == []


def test_shoe_alarm_undecodable_count_mismatch_and_link_down_are_alarms() -> None:
    checker = ShoeIntegrity()
    got = kinds(
        checker,
        ShoeAlarm(S, 2, 3, "jam"),
        MalformedFrame(S, 3, 120, "bad card code"),
        CountMismatch(S, 95, 96, ("KH",), ()),
        LinkDown("socket://x:1", "port error"),
    )
    assert got == [
        IntegrityKind.SHOE_REPORTED,
        IntegrityKind.UNDECODABLE,
        IntegrityKind.COUNT_MISMATCH,
        IntegrityKind.LINK_DOWN,
    ]


def test_alarm_json_names_the_kind() -> None:
    checker = ShoeIntegrity()
    checker.check(loaded())
    (alarm,) = checker.check(draw(2, "TC"))
    assert alarm.to_json()["alarm"] == "pip_ten"
    assert alarm.event == draw(2, "TC")
