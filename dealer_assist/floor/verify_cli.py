"""``dealer-assist room verify --config room.toml [--json]``: every table chain the room holds
checked (:mod:`.verify`), and the room's own chain against the room's public key. Exit status:
0 clean, 1 discrepancies, 2 the configuration, the room's public key file or the store cannot be
read.

:func:`add_parser` adds ``verify`` to the ``room`` command's subcommands; :func:`add_arguments` and
:func:`run` make it the whole ``room`` command where no other is there.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any


def add_parser(commands: Any) -> None:
    """Add ``verify`` to the ``room`` command's subcommands (``commands``: its subparsers)."""
    verify = commands.add_parser(
        "verify", help="verify every table's chain the room holds: records, chain, signatures "
        "against the configured keys, rounds re-settled, gaps, forks")
    verify.add_argument("--config", required=True, metavar="ROOM.TOML",
                        help="the room's configuration (PostgreSQL, the tables' keys)")
    verify.add_argument("--json", action="store_true", help="print the report as JSON")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_parser(parser.add_subparsers(dest="action", required=True, metavar="COMMAND"))


def run(args: argparse.Namespace) -> int:
    if args.action == "verify":
        return _verify(args)
    raise AssertionError(args.action)


def _verify(args: argparse.Namespace) -> int:
    from dealer_assist.floor.config import RoomConfigError, load_room_config, open_room_store
    from dealer_assist.floor.verify import verify_room
    from dealer_assist.surveillance.signing import KeyFileError
    from dealer_assist.surveillance.store import RecordingError

    try:
        config = load_room_config(args.config)
        store = open_room_store(config)
    except (RoomConfigError, RecordingError) as error:
        print(f"dealer-assist room verify: {error}", file=sys.stderr)
        return 2
    try:
        report = verify_room(store, config)
    except (RecordingError, KeyFileError) as error:
        print(f"dealer-assist room verify: {error}", file=sys.stderr)
        return 2
    finally:
        store.close()
    if args.json:
        print(json.dumps(report.to_json(), indent=1))
    else:
        _print_text(report)
    return 1 if report.discrepancies else 0


def _print_text(report: Any) -> None:
    for chain in report.chains:
        gap = (f", records from {chain.next_seq} not all received" if
               chain.next_seq <= chain.last_seq else "")
        verdict = "CLEAN" if not chain.discrepancies else \
            f"{len(chain.discrepancies)} DISCREPANCIES"
        print(f"table {chain.table} chain {chain.chain}: {verdict}: {chain.held} records held "
              f"(to {chain.last_seq}{gap}), {chain.rounds_settled} settled rounds re-settled, "
              f"{chain.rounds_open} not settled")
        for discrepancy in chain.discrepancies:
            print(f"  {discrepancy.text()}")
        for notice in chain.notices:
            print(f"  note: {notice}")
    for discrepancy in report.room:
        print(f"room: {discrepancy.text()}")
    for notice in report.room_notices:
        print(f"room: note: {notice}")
    for table in report.silent:
        print(f"table {table}: no records held")
    total = len(report.discrepancies)
    print("CLEAN" if not total else f"{total} DISCREPANCIES", f"in {len(report.chains)} chain(s)")
