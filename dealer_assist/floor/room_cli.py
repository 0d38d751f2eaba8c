"""``dealer-assist room serve --config room.toml``: the surveillance room: the floor's consumer
(every table's records into the room's store, PostgreSQL as ``room.toml`` names it, verified as
they arrive, its retention policy applied) and the surveillance page over that store; ``room
verify`` (:mod:`.verify_cli`); ``room keygen`` makes the room's signing key. Every command that
writes the room's chain signs it with that key (:mod:`.room_signing`) and refuses without it."""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from dealer_assist.cli import number_in
from dealer_assist.floor import verify_cli
from dealer_assist.floor.retention_policy import RETENTION_EVERY_S

if TYPE_CHECKING:
    from dealer_assist.floor.config import RoomConfig
    from dealer_assist.floor.pgstore import PostgresStore

logger = logging.getLogger(__name__)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    commands = parser.add_subparsers(dest="action", required=True)
    serve = commands.add_parser("serve", help="consume the floor and serve the page")
    serve.add_argument("--config", required=True, metavar="ROOM_TOML")
    serve.add_argument("--sqlite", metavar="DIR",
                       help="keep the room's store in SQLite under DIR instead of the "
                       "[postgres] URL (a room on one machine, without PostgreSQL)")
    serve.add_argument("--silent-after", type=number_in(float, 1, 86400, "--silent-after"),
                       default=120.0, metavar="SECONDS",
                       help="alarm a table that sends nothing this long (default 120)")
    serve.add_argument("--no-page", action="store_true", help="consume only, serve no page")
    serve.add_argument("--retention-every-s", type=number_in(float, 1, 86400,
                                                             "--retention-every-s"),
                       default=RETENTION_EVERY_S, metavar="SECONDS",
                       help="apply room.toml's [retention] policy this often (default 3600;"
                       " also once at start)")
    keygen = commands.add_parser(
        "keygen", help="make the room's signing key (room.toml [signing] key, mode 0600) and "
        "its public key file, unless it is there already")
    keygen.add_argument("--config", required=True, metavar="ROOM_TOML")
    keygen.add_argument("--rotate", metavar="REASON",
                        help="replace the room's key with a new one, introduced in the room's "
                        "chain by a record the old key signs (stop 'room serve' first)")
    verify_cli.add_parser(commands)
    for action, text in (("hold", "put a round on legal hold: its frames are kept in the room"
                                  " and on the table's box past the retention policy"
                                  " (recorded: who, why, when)"),
                         ("release", "lift a round's legal hold (recorded: who, why, when)")):
        hold = commands.add_parser(action, help=text)
        hold.add_argument("--config", required=True, metavar="ROOM_TOML")
        hold.add_argument("table", metavar="TABLE", help="the table as its records name it")
        hold.add_argument("round", metavar="ROUND",
                          help="the round id, or CHAIN/KEY where the id is in several chains")
        hold.add_argument("--why", required=True, help="the reason, recorded with it")
    commands.add_parser("holds", help="list the rounds on hold and whether each reached its "
                        "table's box").add_argument(
        "--config", required=True, metavar="ROOM_TOML")
    prune = commands.add_parser(
        "prune", help="delete the room's frames and/or the tables' records older than a "
        "policy, but those of rounds on hold (recorded)")
    prune.add_argument("--config", required=True, metavar="ROOM_TOML")
    prune.add_argument("--older-than-hours", type=float, metavar="HOURS",
                       help="the frames policy: the room's frame copies older than this")
    prune.add_argument("--records-older-than-hours", type=float, metavar="HOURS",
                       help="the records policy: each table chain's records older than this "
                       "(its keys and rounds on hold kept; the cut recorded for 'room verify')")
    operator = commands.add_parser(
        "operator", help="add, remove, list or unlock the room page's logins (as "
        "'surveillance operator' does for a recording)")
    operator.add_argument("--config", required=True, metavar="ROOM_TOML")
    operator.add_argument("what", choices=("add", "remove", "list", "unlock"))
    operator.add_argument("name", nargs="?")
    operator.add_argument("--role", choices=("operator", "auditor"), default="auditor")
    operator.add_argument("--password-stdin", action="store_true",
                          help="read the password from standard input instead of prompting")


def run(args: argparse.Namespace) -> int:
    from dealer_assist.floor.config import RoomConfigError, load_room_config

    if args.action == "verify":
        return verify_cli.run(args)
    try:
        config = load_room_config(args.config)
    except RoomConfigError as error:
        print(f"dealer-assist room: {error}", file=sys.stderr)
        return 2
    if args.action == "keygen":
        return _keygen(config, args.rotate)
    if args.action == "operator":
        return _operator(config, args)
    if args.action in ("hold", "release", "holds", "prune"):
        return _retention(config, args)
    return _serve(config, args)


def _keygen(config: object, rotate: str | None = None) -> int:
    from dealer_assist.floor.config import RoomConfig
    from dealer_assist.floor.room_signing import make_room_key, rotate_room_key
    from dealer_assist.surveillance.signed_chain import recorded_reason
    from dealer_assist.surveillance.signing import KeyFileError
    from dealer_assist.surveillance.store import RecordingError

    assert isinstance(config, RoomConfig)
    if rotate is not None:
        try:
            why = recorded_reason(rotate)
        except ValueError as error:
            print(f"dealer-assist room keygen: --rotate: {error}", file=sys.stderr)
            return 2
        try:
            new = rotate_room_key(config, why)
        except (KeyFileError, RecordingError) as error:
            print(f"dealer-assist room keygen: {error}", file=sys.stderr)
            return 2
        print(f"the room's key is now {new.key_id} ({config.signing_key}); its public key is "
              f"added to {config.signing_public}: give that file to whoever runs 'room verify',"
              " and restart 'room serve'")
        return 0
    try:
        signer, made = make_room_key(config)
    except KeyFileError as error:
        print(f"dealer-assist room keygen: {error}", file=sys.stderr)
        return 2
    print(f"{'made' if made else 'kept'} the room's signing key {config.signing_key} (key id "
          f"{signer.public.key_id}); its public key is in {config.signing_public}: give that "
          "file to whoever runs 'room verify'")
    return 0


def _signed_store(config: RoomConfig, create: bool = False) -> PostgresStore:
    """The room's store, signing what is appended with the room's key (signing begun where the
    chain was unsigned); KeyFileError or RecordingError when it cannot be."""
    from dealer_assist.floor.config import open_room_store
    from dealer_assist.floor.room_signing import begin_room_signing, load_room_key

    signer = load_room_key(config)
    store = open_room_store(config, create=create, signer=signer)
    try:
        begin_room_signing(store, signer)
    except BaseException:
        store.close()
        raise
    return store


def _retention(config: object, args: argparse.Namespace) -> int:
    """``room hold|release|holds|prune``: legal holds and retention, recorded in the room's
    chain by the account this runs as."""
    from datetime import timedelta

    from dealer_assist.floor import hold_delivery, retention
    from dealer_assist.floor.config import RoomConfig, open_room_store
    from dealer_assist.floor.room_signing import room_public_keys
    from dealer_assist.surveillance.access import os_account
    from dealer_assist.surveillance.signing import KeyFileError
    from dealer_assist.surveillance.store import RecordingError

    assert isinstance(config, RoomConfig)
    try:
        if args.action == "holds":  # a reader: the public key vouches for the holds
            keys = room_public_keys(config)
            store = open_room_store(config)
        else:
            store = _signed_store(config)
    except (RecordingError, KeyFileError) as error:
        print(f"dealer-assist room: {error}", file=sys.stderr)
        return 2
    try:
        if args.action == "holds":
            delivered = hold_delivery.reached(store)
            for hold in retention.holds(store, keys).values():
                print(f"{hold.box} {hold.round} ({hold.chain}/{hold.round_key}): on hold since"
                      f" {hold.at} by {hold.user}: {hold.why};"
                      f" {_reach_text(delivered.get(hold.seq))}")
            return 0
        if args.action == "prune":
            policies = {}
            for name, hours in (("frames", args.older_than_hours),
                                ("records", args.records_older_than_hours)):
                if hours is not None and not 0 < hours <= retention.MAX_PRUNE_HOURS:  # NaN too
                    raise ValueError(f"--{'records-' if name == 'records' else ''}older-than-"
                                     f"hours must be above 0 and at most"
                                     f" {retention.MAX_PRUNE_HOURS} (100 years)")
                policies[name] = None if hours is None else timedelta(hours=hours)
            result = retention.prune_room(store, policies["frames"], os_account(),
                                          records_older_than=policies["records"])
            if result["records_cutoff"] is not None:
                print(f"pruned {result['records']} records recorded before"
                      f" {result['records_cutoff']}")
                for why in result["refused"]:
                    print(f"not pruned: {why}")
            if result["cutoff"] is not None:
                print(f"pruned {result['pruned']} frames recorded before {result['cutoff']};"
                      f" kept {len(result['held'])} round(s) on hold")
            print(f"{result['bytes']} bytes of frame files deleted")
            return 0
        found = retention.find_round(store, args.table, args.round)
        if args.action == "hold":
            hold = retention.put_hold(store, found, args.why, os_account())
            print(f"round {hold.round} of {hold.box} on hold (record {hold.seq}, {hold.at})")
            try:
                reached = hold_delivery.deliver_now(config.nats, store, hold)
            except hold_delivery.HoldNotReached as error:
                print(f"not on the table's box yet: {error}; 'room serve' sends it again every"
                      f" {hold_delivery.RETRY_S:.0f} s until the box takes it")
            else:
                print(_reach_text(reached))
        else:
            lifted = retention.lift_hold(store, found, args.why, os_account())
            print(f"hold on round {lifted.round} of {lifted.box} lifted (it was put on"
                  f" {lifted.at} by {lifted.user})")
        return 0
    except (RecordingError, ValueError) as error:
        print(f"dealer-assist room: {error}", file=sys.stderr)
        return 2
    finally:
        store.close()


def _reach_text(reached: object) -> str:
    """Whether a hold reached its table's box (a :class:`~.hold_delivery.Reached` or None)."""
    from dealer_assist.floor.hold_delivery import Reached

    if not isinstance(reached, Reached):
        return "not on the table's box yet"
    return (f"on the table's box since {reached.at} ({len(reached.kept)} frames kept there,"
            f" {len(reached.pruned)} pruned before the hold reached it)")


def _operator(config: object, args: argparse.Namespace) -> int:
    """The room's page logins, kept in the room's store (PostgreSQL as room.toml names it)."""
    from dealer_assist.floor.config import RoomConfig
    from dealer_assist.surveillance.admin_cli import operator_command
    from dealer_assist.surveillance.signing import KeyFileError
    from dealer_assist.surveillance.store import RecordingError

    assert isinstance(config, RoomConfig)
    try:  # its changes are recorded in the room's chain: signed
        store = _signed_store(config, create=True)
    except (RecordingError, KeyFileError) as error:
        print(f"dealer-assist room: {error}", file=sys.stderr)
        return 2
    try:
        return operator_command(store, args)
    except (RecordingError, ValueError) as error:
        print(f"dealer-assist room: {error}", file=sys.stderr)
        return 2
    finally:
        store.close()


def _serve(config: object, args: argparse.Namespace) -> int:
    import socket

    import uvicorn

    from dealer_assist.connection_limits import bounded_h11, raise_open_file_limit
    from dealer_assist.floor.config import RoomConfig, open_room_store
    from dealer_assist.floor.room import Room, RoomThread
    from dealer_assist.floor.room_signing import begin_room_signing, load_room_key
    from dealer_assist.surveillance.interface import RecordStore
    from dealer_assist.surveillance.page_guard import page_site
    from dealer_assist.surveillance.signing import KeyFileError
    from dealer_assist.surveillance.store import RecordingError, RecordingStore
    from dealer_assist.surveillance.web import PageSettings, create_app

    assert isinstance(config, RoomConfig)
    try:
        signer = load_room_key(config)
    except KeyFileError as error:
        print(f"dealer-assist room: {error}", file=sys.stderr)
        return 2
    if args.sqlite is not None:
        if config.retention:
            print(f"dealer-assist room: {config.path}: [retention] is applied to a PostgreSQL "
                  "store only: run without --sqlite, or without the policy", file=sys.stderr)
            return 2
        directory = Path(args.sqlite)

        def open_store() -> RecordStore:
            return RecordingStore(directory, create=True, signer=signer)

        where = str(directory)
    else:
        def open_store() -> RecordStore:
            return open_room_store(config, create=True, signer=signer)

        where = "PostgreSQL"
    try:  # refused now (unreachable, damaged, another key) rather than in the thread
        first = open_store()
        try:
            begin_room_signing(first, signer)
        finally:
            first.close()
    except RecordingError as error:
        print(f"dealer-assist room: {error}", file=sys.stderr)
        return 2
    room = RoomThread(Room(open_store, config.nats, config.tables,
                           silent_after_s=args.silent_after, retention=config.retention,
                           retention_every_s=args.retention_every_s)).start()
    print(f"room: consuming the floor from {config.nats.url} into {where}", file=sys.stderr)
    try:
        if args.no_page:
            room.join()
            return 0 if room.failed is None else 1
        listener = socket.create_server((config.page_host, config.page_port))
        port = listener.getsockname()[1]
        site = page_site(config.page_host, port, [], False)
        app = create_app(open_store, PageSettings(site=site, on_floor_hold=room.send_holds))
        print(f"surveillance page on {site.scheme}://{config.page_host}:{port}/",
              file=sys.stderr, flush=True)
        raise_open_file_limit()
        uvicorn.Server(uvicorn.Config(app, log_level="warning", http=bounded_h11())
                       ).run(sockets=[listener])
        return 0
    finally:
        room.stop()
