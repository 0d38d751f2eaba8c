"""Round-log events: every line of the spec reads; output is canonical; versions upgrade on read."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from decimal import Decimal

import pytest

from dealer_assist.roundlog import (
    Bet,
    CardDealt,
    EventError,
    LogError,
    PlayerAction,
    Reveal,
    ShoeOrigin,
    UnreadOrigin,
    check_at,
    dumps_event,
    format_at,
    parse_event,
    read_events,
    settle_log,
)
from dealer_assist.roundlog import events as events_module
from dealer_assist.rules import Action, Card, CardTarget

SPEC_LINES = """\
{"type": "round", "id": "r-0001", "rules": "h17-ddd-6"}
{"type": "bet", "seat": 1, "amount": "10"}
{"type": "bet", "seat": 1, "wager": "match", "amount": "5"}
{"type": "bet", "seat": 3, "amount": "25", "player": "P-7"}
{"type": "card", "card": "7S"}
{"type": "card", "card": "KH", "to": "dealer"}
{"type": "insurance", "seat": 1, "amount": "5"}
{"type": "action", "seat": 1, "action": "double", "amount": "10"}
{"type": "end"}
{"type": "card", "card": null, "face_down": true}
{"type": "reveal", "card": "KH"}
{"type": "card", "card": "10d", "to": {"seat": 1, "hand": 0}}
{"type": "bet", "seat": 2, "amount": 12.5}
{"type": "card", "card": "9C", "shoe": {"session": 3, "seq": 41, "index": 12}}
{"type": "card", "card": "4D", "keyed": true}
{"type": "reveal", "card": "QS", "keyed": true}
{"type": "card", "card": "7H", "corrected": "8h"}
{"type": "reveal", "card": "KD", "keyed": true, "corrected": "KC"}
{"type": "action", "seat": 1, "action": "stand", "by": "camera", "at": "2026-12-02T04:32:14.001Z"}
{"type": "card", "card": "5S", "at": "2026-12-02T04:32:14Z"}
{"type": "card", "card": "7C", "keyed": true, "unread": {"session": 3, "seq": 42, "index": 13}}
{"type": "card", "card": "6C", "keyed": true, "unread": {"session": 3, "seq": 44}}
"""


def test_every_line_of_the_spec_reads_and_round_trips() -> None:
    for logged in read_events(SPEC_LINES.splitlines()):
        again = parse_event(json.loads(dumps_event(logged.event), parse_float=Decimal))
        assert again == logged.event


def test_parsed_values() -> None:
    events = [e.event for e in read_events(SPEC_LINES.splitlines())]
    assert events[1] == Bet(1, Decimal("10.00"))
    assert events[5] == CardDealt(Card.parse("KH"), CardTarget(None))
    assert events[7] == PlayerAction(1, Action.DOUBLE, Decimal("10.00"))
    assert events[11] == CardDealt(Card.parse("TD"), CardTarget(1, 0))
    assert events[12] == Bet(2, Decimal("12.50"))  # a JSON number, read exactly
    assert json.loads(dumps_event(events[11]))["card"] == "TD"
    assert events[13] == CardDealt(Card.parse("9C"), shoe=ShoeOrigin(3, 41, 12))
    assert json.loads(dumps_event(events[13]))["shoe"] == {"session": 3, "seq": 41, "index": 12}
    assert events[14] == CardDealt(Card.parse("4D"), keyed=True)  # no reader saw it
    assert events[15] == Reveal(Card.parse("QS"), keyed=True)
    assert json.loads(dumps_event(events[15])) == {"type": "reveal", "card": "QS", "keyed": True}
    assert "keyed" not in json.loads(dumps_event(events[10]))
    # the card first recorded there, corrected by the dealer
    assert events[16] == CardDealt(Card.parse("7H"), corrected=Card.parse("8H"))
    assert json.loads(dumps_event(events[16]))["corrected"] == "8H"
    assert events[17] == Reveal(Card.parse("KD"), keyed=True, corrected=Card.parse("KC"))
    assert "corrected" not in json.loads(dumps_event(events[15]))
    # a card the shoe dealt but could not read, keyed by the dealer in its place
    assert events[20] == CardDealt(Card.parse("7C"), keyed=True,
                                   unread=UnreadOrigin(3, 42, 13))
    assert events[21].unread == UnreadOrigin(3, 44)  # its report undecodable: no index
    assert json.loads(dumps_event(events[21]))["unread"] == {"session": 3, "seq": 44}
    assert "unread" not in json.loads(dumps_event(events[14]))


def test_numbers_are_never_floats() -> None:
    event = parse_event(
        json.loads('{"type": "bet", "seat": 1, "amount": 0.1}', parse_float=Decimal)
    )
    assert event.amount == Decimal("0.10")


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ('{"type": "bet", "seat": "one", "amount": "10"}', "'seat' must be a whole number"),
        ('{"type": "bet", "seat": 1}', "missing 'amount'"),
        ('{"type": "bet", "seat": 1, "amount": "ten"}', "decimal amount"),
        ('{"type": "bet", "seat": 1, "amount": "10", "wager": "side"}', "'wager' must be"),
        ('{"type": "card"}', "'card' is missing"),
        ('{"type": "card", "card": "7S", "keyed": "yes"}', "'keyed' must be true or false"),
        ('{"type": "card", "card": null, "face_down": true, "keyed": true}',
         "a keyed card names its card"),
        ('{"type": "card", "card": "7S", "keyed": true, "shoe": {"session": 1, "seq": 1, '
         '"index": 1}}', "a keyed card has no 'shoe' numbering"),
        ('{"type": "reveal", "card": "7S", "keyed": 1}', "'keyed' must be true or false"),
        ('{"type": "card", "card": "7S", "unread": {"session": 1, "seq": 3, "index": 2}}',
         "it needs \"keyed\": true"),
        ('{"type": "card", "card": "7S", "keyed": true, "unread": {"seq": 3}}',
         "'unread' must be"),
        ('{"type": "card", "card": "7S", "keyed": true, "unread": {"session": 1, "seq": 3, '
         '"index": 2, "at": 1}}', "'unread' must be"),
        ('{"type": "card", "card": "7S", "keyed": true, "unread": {"session": 1, "seq": -3}}',
         "'unread' numbers must be whole numbers"),
        ('{"type": "card", "card": "7S", "corrected": "7"}', "'corrected': "),
        ('{"type": "reveal", "card": "7S", "corrected": 7}', "'corrected': "),
        ('{"type": "card", "card": null, "face_down": true, "corrected": "7S"}',
         "a corrected card names its card"),
        ('{"type": "card", "card": "7S", "to": "seat 3"}', "'to' must be"),
        ('{"type": "card", "card": "7S", "to": {"seat": true}}', "'to' must be"),
        ('{"type": "card", "card": "7S", "to": {"seat": 1, "hand": false}}', "'to' hand must"),
        ('{"type": "action", "seat": 1, "action": "fold"}', "unknown action"),
        ('{"type": "action", "seat": 1, "action": "hit", "amount": "5"}', "only a double"),
        ('{"type": "action", "seat": 1, "action": "hit", "hand": -1}', "'hand' must be"),
        ('{"type": "card", "card": "7S", "shoe": {"seq": 4}}', "'shoe' must be"),
        ('{"type": "card", "card": "7S", "shoe": {"session": 1, "seq": -4, "index": 2}}',
         "'shoe' numbers must be whole numbers"),
        ('{"type": "bet", "seat": 1, "amount": "5", "by": "player"}', "'by' must be one of"),
        ('{"type": "action", "seat": 1, "action": "hit", "by": 1}', "'by' must be one of"),
        ('{"type": "end", "at": "2026-12-02 04:32:14"}', "'at' must be a UTC time"),
        ('{"type": "card", "card": "7S", "at": "2026-12-02T04:32:14.001+01:00"}',
         "'at' must be a UTC time"),
        ('{"type": "round", "rules": "s17-6", "at": "2026-13-02T04:32:14.001Z"}',
         "'at' must be a UTC time"),
        ('{"type": "bet", "seat": 1, "amount": "5", "at": 1764649934}', "'at' must be a UTC"),
        ('{"type": "shuffle"}', "unknown event type"),
        ("[1, 2]", "must be a JSON object"),
    ],
)
def test_bad_events_name_the_problem(line: str, message: str) -> None:
    with pytest.raises(EventError, match=message):
        parse_event(json.loads(line))


def test_bad_line_names_its_number() -> None:
    lines = ['{"type": "round", "id": "x", "rules": "s17-6"}', "", '{"type": "bet", "seat": 1}']
    with pytest.raises(LogError, match=r"^line 3: .*missing 'amount'"):
        list(read_events(lines))


def test_newer_versions_are_refused_older_ones_upgraded(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(LogError, match="newer than this program reads"):
        list(read_events([json.dumps({"type": "round", "rules": "s17-6", "version": 99})]))
    # A recording from an older format keeps reading: simulate a v0 -> v1 upgrade step being due
    # by pretending the current version is 2 with a registered v1 -> v2 upgrade.
    monkeypatch.setattr(events_module, "LOG_VERSION", 2)
    monkeypatch.setitem(
        events_module.UPGRADES,
        1,
        lambda obj: {**obj, "amount": obj.get("stake", obj.get("amount"))},
    )
    old = {"type": "bet", "seat": 1, "stake": "10"}
    assert events_module.parse_event(old, version=1) == Bet(1, Decimal("10.00"))


def test_a_question_reads_back_as_written_and_a_bad_one_is_refused():
    from dealer_assist.roundlog import EventError, Question, dumps_event, parse_event

    raw = {"type": "question", "card": "JH", "text": "JH at seat 2: HIT or DOUBLE?",
           "why": "the camera did not see it land", "choices": ["HIT seat 2", "DOUBLE seat 2"],
           "answer": "DOUBLE seat 2", "by": "dealer", "waited_s": "2.40"}
    event = parse_event(raw)
    assert isinstance(event, Question) and event.answer == "DOUBLE seat 2"
    assert parse_event(json.loads(dumps_event(event))) == event
    for key, value, why in (("answer", "SPLIT seat 2", "not one of the choices"),
                            ("choices", ["HIT seat 2"], "2 to 64 texts"),
                            ("by", "floor", "'by' must be")):
        with pytest.raises(EventError, match=why):
            parse_event({**raw, key: value})


def test_when_and_by_whom_are_kept_and_the_adjudicator_ignores_them() -> None:
    """``at`` (any event; on the round line carried into the settlement, like every extra field)
    and ``by`` (bets, insurance, decisions) read back as written, and a round settles the same
    with or without them."""
    plain = [
        {"type": "round", "id": "r-1", "rules": "s17-6"},
        {"type": "bet", "seat": 1, "amount": "10.00"},
        {"type": "card", "card": "9S"}, {"type": "card", "card": "AH"},
        {"type": "card", "card": "7D"}, {"type": "card", "card": None, "face_down": True},
        {"type": "insurance", "seat": 1, "amount": "5.00"},
        {"type": "action", "seat": 1, "action": "stand"},
        {"type": "reveal", "card": "9C"},
        {"type": "end"},
    ]
    who = {"bet": "dealer", "insurance": "dealer", "action": "camera"}
    stamped = [{**e, **({"by": who[e["type"]]} if e["type"] in who else {}),
                "at": f"2026-12-02T04:32:{i:02d}.{i * 7:03d}Z"} for i, e in enumerate(plain)]
    for line, event in zip(stamped, (parse_event(e) for e in stamped), strict=True):
        assert dumps_event(event) == json.dumps(line, separators=(", ", ": "))  # by, at last
    lines = [json.dumps(e) for e in stamped]
    with_them, without = settle_log(lines).to_json(), settle_log(
        [json.dumps(e) for e in plain]).to_json()
    assert with_them.pop("at") == "2026-12-02T04:32:00.000Z"  # the round line's, carried
    assert with_them == without
    assert parse_event(stamped[7]) == parse_event(plain[7])  # who and when are not the play


def test_format_at_is_utc_to_the_millisecond() -> None:
    moment = datetime(2026, 12, 2, 5, 32, 14, 1999, tzinfo=timezone(timedelta(hours=1)))
    assert format_at(moment) == "2026-12-02T04:32:14.001Z"
    assert check_at(format_at(moment)) == "2026-12-02T04:32:14.001Z"
    with pytest.raises(ValueError, match="time zone"):
        format_at(datetime(2026, 12, 2))
