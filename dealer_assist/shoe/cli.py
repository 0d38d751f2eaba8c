"""``dealer-assist shoe``: run a simulated shoe, or listen to a real one.

dealer-assist shoe simulate (--serve HOST:PORT | --pty) [--cards 7S,KH,...]
                            [--decks 6 --seed N] [--rate PER_SECOND] [faults]
dealer-assist shoe listen URL [--json] [--count N] [--ascii --decks D]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import threading
from typing import Any

from dealer_assist.cli import number_in

#: Seconds for --cut-every and --cut-for: above 0 (a cut every 0 s never delivers a card), at
#: most a day.
_SECONDS = number_in(float, 0, 86_400, "a time in seconds", above=True)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="action", required=True, metavar="ACTION")

    sim = sub.add_parser("simulate", help="a simulated shoe speaking the dealer-assist protocol")
    where = sim.add_mutually_exclusive_group(required=True)
    where.add_argument("--serve", metavar="HOST:PORT", help="serve on TCP (listen on socket://)")
    where.add_argument("--pty", action="store_true", help="on a pseudo-terminal; prints its path")
    sim.add_argument(
        "--link",
        metavar="PATH",
        help="with --pty: a stable symlink to the slave (needed with --cut-every)",
    )
    sim.add_argument(
        "--cards",
        metavar="7S,KH,...",
        help="emit exactly these cards in order, then exit once all are acknowledged",
    )
    sim.add_argument("--decks", type=int, default=6, help="decks in the shoe (default 6)")
    sim.add_argument("--seed", type=int, default=0, help="shuffle and fault seed (default 0)")
    sim.add_argument(
        "--rate",
        type=number_in(float, 0.001, 10_000, "a rate in cards per second"),
        metavar="PER_SECOND",
        help="cards per second, 0.001 to 10000 (default: as fast as acknowledgements allow)",
    )
    sim.add_argument(
        "--corrupt",
        type=float,
        default=0.0,
        metavar="P",
        help="probability of corrupting each byte sent",
    )
    sim.add_argument(
        "--drop", type=float, default=0.0, metavar="P", help="probability of dropping each frame"
    )
    sim.add_argument(
        "--duplicate",
        type=float,
        default=0.0,
        metavar="P",
        help="probability of sending a frame twice",
    )
    sim.add_argument(
        "--cut-every",
        type=_SECONDS,
        metavar="SECONDS",
        help="cut the link this often (unplug), restoring it after --cut-for (longer than it)",
    )
    sim.add_argument(
        "--cut-for",
        type=_SECONDS,
        default=0.5,
        metavar="SECONDS",
        help="how long each cut lasts (default 0.5)",
    )

    listen = sub.add_parser("listen", help="print a shoe's events, one per line")
    listen.add_argument(
        "url",
        metavar="URL",
        help="device path, /dev/serial/by-id/..., socket://HOST:PORT, loop://, spy://...",
    )
    listen.add_argument("--json", action="store_true", help="one JSON object per line")
    listen.add_argument("--count", type=int, metavar="N", help="exit after N card events")
    listen.add_argument(
        "--ascii", action="store_true", help="a plain ASCII shoe ([Game]<Card:4S>, 9600 8N1)"
    )
    listen.add_argument(
        "--decks", type=int, help="decks in the shoe (required information for --ascii; default 6)"
    )
    listen.add_argument(
        "--baud", type=number_in(int, 1, 12_000_000, "a baud rate"),
        help="baud rate, 1 to 12000000 (default 115200, 9600 with --ascii)",
    )
    listen.add_argument("--heartbeats", action="store_true", help="print heartbeats too")


def run(args: argparse.Namespace) -> int:
    if args.action == "simulate":
        return _simulate(args)
    return _listen(args)


def _fail(message: str) -> int:
    print(f"dealer-assist shoe: {message}", file=sys.stderr)
    return 2


def _simulate(args: argparse.Namespace) -> int:
    from dealer_assist.rules.cards import ALLOWED_DECKS, Card, CardCodeError
    from dealer_assist.shoe.simulator import (
        Faults,
        PtyLink,
        ShoeSimulator,
        SimLink,
        TcpLink,
        shuffled_spanish_shoe,
    )

    if args.decks not in ALLOWED_DECKS:
        return _fail(f"--decks must be one of {ALLOWED_DECKS}, got {args.decks}")
    cards: list[Card] | None = None
    if args.cards is not None:
        try:
            cards = [Card.parse(code) for code in args.cards.split(",") if code.strip()]
        except CardCodeError as exc:
            return _fail(f"--cards: {exc}")
    try:
        faults = Faults(args.corrupt, args.drop, args.duplicate, seed=args.seed)
    except ValueError as exc:
        return _fail(str(exc))
    if args.cut_every is not None and args.cut_every <= args.cut_for:
        return _fail(f"--cut-every {args.cut_every:g} must be longer than --cut-for "
                     f"{args.cut_for:g}, or the link is never up")
    if args.cut_every is not None and args.pty and not args.link:
        return _fail("--cut-every with --pty needs --link PATH, a path that survives the cut")
    link: SimLink
    if args.pty:
        if args.link and os.path.lexists(args.link) and not os.path.islink(args.link):
            return _fail(f"--link {args.link}: a file is there; the link replaces only a link")
        try:
            link = PtyLink(args.link)
        except OSError as exc:
            return _fail(f"--link {args.link}: {exc.strerror or exc}")
    else:
        host, sep, port = args.serve.rpartition(":")
        if not sep or not port.isdigit() or int(port) > 65535:
            return _fail(f"--serve wants HOST:PORT (port 0-65535), got {args.serve!r}")
        try:
            link = TcpLink(host or "127.0.0.1", int(port))
        except OSError as exc:
            return _fail(f"cannot listen on {args.serve}: {exc}")
    sim = ShoeSimulator(link, faults=faults)
    print(sim.url, flush=True)
    stop = threading.Event()
    with sim:
        if args.cut_every is not None:
            threading.Thread(target=_cutter, args=(sim, stop, args), daemon=True).start()
        try:
            sim.load_shoe(args.decks)
            if cards is not None:
                sim.deal(cards, args.rate)
            else:
                shoe = shuffled_spanish_shoe(args.decks, args.seed)
                cut_at = len(shoe) * 3 // 4
                sim.burn(shoe[0])
                for position, card in enumerate(shoe[1:], start=2):
                    sim.deal([card], args.rate)
                    if position == cut_at:
                        sim.cut_card()
                sim.shoe_empty()
            while not sim.wait_all_acked(1.0):
                pass
        finally:
            stop.set()
    print("every event acknowledged", file=sys.stderr)
    return 0


def _cutter(sim: Any, stop: threading.Event, args: argparse.Namespace) -> None:
    while not stop.wait(args.cut_every):
        sim.cut_link(args.cut_for)


def _listen(args: argparse.Namespace) -> int:
    from dealer_assist.rules.cards import ALLOWED_DECKS
    from dealer_assist.shoe.ascii import ASCII_BAUDRATE, AsciiShoeDecoder
    from dealer_assist.shoe.events import CardDrawn, ShoeEvent
    from dealer_assist.shoe.integrity import ShoeIntegrity
    from dealer_assist.shoe.protocol import SERIAL_BAUDRATE
    from dealer_assist.shoe.reader import ShoeReader, check_port_url

    if args.decks is not None and args.decks not in ALLOWED_DECKS:
        return _fail(f"--decks must be one of {ALLOWED_DECKS}, got {args.decks}")
    if args.count is not None and args.count < 1:
        return _fail(f"--count must be at least 1, got {args.count}")
    try:
        check_port_url(args.url)
    except ValueError as exc:
        return _fail(f"bad URL {args.url!r}: {exc}")
    if args.ascii:
        reader = ShoeReader(
            args.url,
            decoder=AsciiShoeDecoder(args.decks or 6),
            baudrate=args.baud or ASCII_BAUDRATE,
            heartbeat_timeout=None,
            pass_heartbeats=args.heartbeats,
        )
    else:
        reader = ShoeReader(
            args.url, baudrate=args.baud or SERIAL_BAUDRATE, pass_heartbeats=args.heartbeats
        )
    integrity = ShoeIntegrity(args.decks)

    def emit(item: ShoeEvent | Any) -> None:
        line = json.dumps(item.to_json()) if args.json else _text(item)
        print(line, flush=True)

    cards = 0
    with reader:
        for event in reader.events():
            emit(event)
            for alarm in integrity.check(event):
                emit(alarm)
            if isinstance(event, CardDrawn):
                cards += 1
                if args.count is not None and cards >= args.count:
                    break
    return 0


def _text(item: Any) -> str:
    """One line per event: control characters in text from the shoe (an alarm's) are escaped."""
    from dealer_assist.roundlog.report import printable
    from dealer_assist.shoe.integrity import IntegrityAlarm

    if isinstance(item, IntegrityAlarm):
        return printable(f"ALARM {item.kind.value}: {item.message}")
    return printable(item.describe())
