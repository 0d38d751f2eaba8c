"""``dealer-assist floor simulate --config room.toml --tables N --rounds M [--seed S]``: N
simulated table boxes through the real table loop, recorder and forwarder, in one process,
forwarding to the JetStream ``room.toml`` names; prints a JSON summary at the end."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from dealer_assist.cli import number_in, rng_seed


def add_arguments(parser: argparse.ArgumentParser) -> None:
    commands = parser.add_subparsers(dest="action", required=True)
    simulate = commands.add_parser(
        "simulate", help="simulated tables forwarding to the floor (load tests and demos)")
    where = simulate.add_mutually_exclusive_group(required=True)
    where.add_argument("--config", metavar="ROOM_TOML",
                       help="the room's room.toml: the NATS URL and credentials")
    where.add_argument("--nats", metavar="URL", help="the floor's NATS URL (no credentials), "
                       "e.g. to set the tables up before room.toml names their keys")
    simulate.add_argument("--tables", type=number_in(int, 1, 2000, "--tables"), default=2)
    simulate.add_argument("--rounds", type=number_in(int, 0, 10**6, "--rounds"), default=3,
                          help="rounds per table (0: only set the tables up, e.g. their keys)")
    simulate.add_argument("--seed", type=rng_seed, default=1)
    simulate.add_argument("--every", type=number_in(float, 0, 3600, "--every"), default=0.0,
                          metavar="SECONDS", help="one round every SECONDS per table "
                          "(default 0: as fast as the tables go)")
    simulate.add_argument("--dir", metavar="DIR", help="where the tables record (default: "
                          "floor-sim beside room.toml, or here); a table's key lies in "
                          "DIR/TABLE.evidence/table.pub")
    simulate.add_argument("--prefix", default="SIM", help="table ids are PREFIX001, ...")


def run(args: argparse.Namespace) -> int:
    from dealer_assist.floor.config import RoomConfigError, load_room_config
    from dealer_assist.floor.forwarder import FloorLink
    from dealer_assist.floor.simulate import SimOptions, run_floor
    from dealer_assist.floor.wire import TABLE_TOKEN

    if args.config is not None:
        try:
            config = load_room_config(args.config)
        except RoomConfigError as error:
            print(f"dealer-assist floor: {error}", file=sys.stderr)
            return 2
        nats = config.nats
        link = FloorLink(nats.url, nats.credentials, nats.tls_ca, nats.tls_cert, nats.tls_key)
        beside = Path(config.path).resolve().parent
    else:
        if not args.nats.startswith(("nats://", "tls://")):
            print(f"dealer-assist floor: --nats {args.nats!r}: must be nats://HOST:PORT or "
                  "tls://HOST:PORT", file=sys.stderr)
            return 2
        link, beside = FloorLink(args.nats), Path.cwd()
    if not TABLE_TOKEN.fullmatch(f"{args.prefix}{args.tables:03d}"):
        print(f"dealer-assist floor: --prefix {args.prefix!r}: table ids are 1-32 letters, "
              "digits, '-' or '_'", file=sys.stderr)
        return 2
    directory = Path(args.dir) if args.dir else beside / "floor-sim"
    summary = run_floor(SimOptions(directory, link, args.tables, args.rounds, args.seed,
                                   args.every, prefix=args.prefix),
                        progress=lambda text: print(text, file=sys.stderr))
    print(json.dumps(summary, indent=2))
    behind = summary["records_behind"] and args.rounds
    return 1 if summary["failures"] or behind else 0
