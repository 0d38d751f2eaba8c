"""``dealer-assist surveillance serve|stats|storage|prune|reindex|operator ...``: the page and
upkeep."""

from __future__ import annotations

import argparse
import getpass
import json
import sys
from typing import TYPE_CHECKING

from dealer_assist.cli import tcp_port

if TYPE_CHECKING:
    from dealer_assist.surveillance.interface import RecordStore


def add_arguments(parser: argparse.ArgumentParser) -> None:
    commands = parser.add_subparsers(dest="action", required=True, metavar="ACTION")

    serve = commands.add_parser(
        "serve", help="serve the surveillance page",
        description="Serve the surveillance page for one recording. Logins: argon2id passwords,"
        " growing delays after 5 failures per name and per address, a name locked after 20"
        " until 'operator RECORDING unlock NAME'. Every state-changing call needs the session's"
        " CSRF token and the page's Origin; every look is an access record. Over HTTPS with"
        " --certfile/--keyfile (the cookie is then Secure).")
    serve.add_argument("recording", metavar="RECORDING")
    serve.add_argument("--host", default="127.0.0.1",
                       help="address to bind (default loopback only: 127.0.0.1)")
    serve.add_argument("--port", type=tcp_port, default=8021,
                       help="port to listen on (default 8021; 0: any free port)")
    serve.add_argument("--certfile", metavar="PEM",
                       help="serve over HTTPS with this certificate (with --keyfile); the session"
                       " cookie is then Secure")
    serve.add_argument("--keyfile", metavar="PEM", help="the certificate's private key")
    serve.add_argument("--allowed-host", action="append", default=[], metavar="NAME",
                       help="a host name the page is reached by, beyond loopback and --host"
                       " (repeatable); requests naming any other Host are refused")
    serve.add_argument("--key", action="append", default=[], metavar="TABLE.PUB",
                       help="the table's public key file (from its technician; repeatable):"
                       " every round view checks the recording's signatures against it"
                       " (without it, against the key the recording itself names)")
    serve.add_argument("--retention-floor-hours", type=float, default=168.0, metavar="HOURS",
                       help="the page prunes no frame younger than this (default 168: 7 days;"
                       " set the house's retention policy)")

    stats = commands.add_parser("stats", help="rounds per hour, hands per seat, payouts, alarms")
    stats.add_argument("recording", metavar="RECORDING")
    stats.add_argument("--by", default="table,shift,dealer",
                       help="grouping: any of table,shift,dealer (default all three)")
    stats.add_argument("--shifts", default="day=6,swing=14,grave=22",
                       help="shift names and starting UTC hours (default day=6,swing=14,grave=22)")
    stats.add_argument("--json", action="store_true")

    storage = commands.add_parser("storage", help="storage used per hour of play")
    storage.add_argument("recording", metavar="RECORDING")
    storage.add_argument("--json", action="store_true")

    prune = commands.add_parser("prune", help="delete non-key frames older than a policy")
    prune.add_argument("recording", metavar="RECORDING")
    prune.add_argument("--older-than-hours", type=float, required=True, metavar="HOURS")

    reindex = commands.add_parser(
        "reindex", help="rebuild the search index from the records (after verify reports it)")
    reindex.add_argument("recording", metavar="RECORDING")

    operator = commands.add_parser(
        "operator", help="add, remove, list or unlock page logins (unlock: lift the page's"
        " lockout of a name after too many failed logins; recorded)",
        description="Page logins. 'add NAME' gives the auditor role (read-only: search, view,"
        " replay, export) unless --role operator (also prunes video frames and flags key"
        " frames); adding a name again replaces its password and role. Every change is an"
        " access record.")
    operator.add_argument("recording", metavar="RECORDING")
    operator.add_argument("what", choices=("add", "remove", "list", "unlock"))
    operator.add_argument("name", nargs="?")
    operator.add_argument("--role", choices=("operator", "auditor"), default="auditor",
                          help="the role 'add' gives (default: auditor, read-only)")
    operator.add_argument("--password-stdin", action="store_true",
                          help="read the password from standard input instead of prompting")


def run(args: argparse.Namespace) -> int:
    from dealer_assist.surveillance.store import RecordingError, RecordingStore

    try:
        if args.action == "serve":
            return _serve(args)
        store = RecordingStore(args.recording)
    except (RecordingError, ValueError) as error:
        print(f"dealer-assist surveillance: {error}", file=sys.stderr)
        return 2
    try:
        return {"stats": _stats, "storage": _storage, "prune": _prune, "reindex": _reindex,
                "operator": operator_command}[args.action](store, args)
    except (RecordingError, ValueError) as error:
        print(f"dealer-assist surveillance: {error}", file=sys.stderr)
        return 2
    finally:
        store.close()


def _serve(args: argparse.Namespace) -> int:
    import socket

    import uvicorn

    from dealer_assist.connection_limits import BOUNDED_LOOP, bounded_h11, raise_open_file_limit
    from dealer_assist.surveillance.evidence_check import trusted_keys
    from dealer_assist.surveillance.page_guard import page_site
    from dealer_assist.surveillance.web import PageSettings, create_app
    from dealer_assist.webguard import LOOPBACK_NAMES

    if bool(args.certfile) != bool(args.keyfile):
        raise ValueError("--certfile and --keyfile go together")
    if args.certfile:
        _check_certificate(args.certfile, args.keyfile)
    if not 0 < args.retention_floor_hours <= 876_000:
        raise ValueError("--retention-floor-hours must be above 0 and at most 876000")
    tls = bool(args.certfile)
    # bound first: the page checks each request's Origin against the port it listens on
    listener = socket.create_server(
        (args.host, args.port), family=socket.AF_INET6 if ":" in args.host else socket.AF_INET)
    port = listener.getsockname()[1]
    site = page_site(args.host, port, args.allowed_host, tls)
    try:
        trusted = trusted_keys(args.key)
    except (OSError, ValueError) as error:
        raise ValueError(f"--key: {error}") from None
    app = create_app(args.recording, PageSettings(
        site=site, retention_floor_hours=args.retention_floor_hours, trusted_keys=trusted))
    if args.host not in LOOPBACK_NAMES:
        print(f"warning: serving beyond this machine on {args.host}"
              + ("" if tls else " without TLS: passwords and the session cross the network in"
                 " clear (give --certfile and --keyfile)"), file=sys.stderr)
    shown = f"[{args.host}]" if ":" in args.host else args.host
    print(f"surveillance page on {site.scheme}://{shown}:{port}/", file=sys.stderr, flush=True)
    if not _has_operators(args.recording):
        print(f"no operator can log in yet: add one with 'dealer-assist surveillance operator"
              f" {args.recording} add NAME'", file=sys.stderr, flush=True)
    raise_open_file_limit()
    uvicorn.Server(uvicorn.Config(app, log_level="warning", ssl_certfile=args.certfile,
                                  ssl_keyfile=args.keyfile, http=bounded_h11(),
                                  loop=BOUNDED_LOOP)
                   ).run(sockets=[listener])
    return 0


def _has_operators(recording: str) -> bool:
    from dealer_assist.surveillance.store import RecordingStore

    store = RecordingStore(recording)
    try:
        return bool(store.operators())
    finally:
        store.close()


def _check_certificate(certfile: str, keyfile: str) -> None:
    """Refuse, by name, a certificate or key the TLS server could not load (before it starts)."""
    import ssl

    try:
        ssl.create_default_context(ssl.Purpose.CLIENT_AUTH).load_cert_chain(certfile, keyfile)
    except (OSError, ssl.SSLError) as error:
        raise ValueError(f"--certfile {certfile} / --keyfile {keyfile}: {error}") from None


def _stats(store: RecordStore, args: argparse.Namespace) -> int:
    from dealer_assist.surveillance.access import log_command
    from dealer_assist.surveillance.query import parse_shifts, table_statistics

    by = tuple(p.strip() for p in args.by.split(",") if p.strip())
    rows = table_statistics(store, by=by, shifts=parse_shifts(args.shifts))
    log_command(store, "statistics", {"by": args.by})
    if args.json:
        print(json.dumps(rows, indent=1))
        return 0
    for row in rows:
        group = " / ".join(str(row[name]) for name in by)
        print(f"{group}: {row['rounds']} rounds in {row['hours']} h "
              f"({row['rounds_per_hour']}/h), {row['partial_rounds']} partial; "
              f"paid {row['paid']}, taken {row['taken']}, house net {row['house_net']}")
        print("  hands per seat: " + " ".join(f"{k}:{v}" for k, v in row["hands_per_seat"].items()))
        print("  payouts by kind: " + ", ".join(f"{k} {v}" for k, v in row["payouts"].items()))
        print("  alarms by kind: " + (", ".join(f"{k} {v}" for k, v in row["alarms"].items())
                                      or "none"))
    return 0


def _storage(store: RecordStore, args: argparse.Namespace) -> int:
    from dealer_assist.surveillance.access import log_command
    from dealer_assist.surveillance.query import storage_report

    report = storage_report(store)
    log_command(store, "storage", {})
    if args.json:
        print(json.dumps(report, indent=1))
        return 0
    for hour in report["hours"]:
        print(f"{hour['table']:<8} {hour['hour']}  {hour['rounds']:>4} rounds "
              f"{hour['frames']:>6} frames {hour['record_bytes'] + hour['frame_bytes']:>12} bytes")
    print(f"{report['bytes_on_disk']} bytes on disk over {report['hours_of_play']} hour(s) of play:"
          f" {report['bytes_per_hour_of_play']} bytes per hour of play")
    return 0


def _prune(store: RecordStore, args: argparse.Namespace) -> int:
    from datetime import timedelta

    from dealer_assist.surveillance.access import os_account
    from dealer_assist.surveillance.query import MAX_PRUNE_HOURS, prune_frames

    if not 0 < args.older_than_hours <= MAX_PRUNE_HOURS:
        raise ValueError(f"--older-than-hours must be above 0 and at most {MAX_PRUNE_HOURS}"
                         " (100 years)")
    result = prune_frames(store, timedelta(hours=args.older_than_hours), os_account())
    print(f"pruned {result['pruned']} non-key frames ({result['bytes']} bytes) recorded before "
          f"{result['cutoff']}; logs and key frames kept")
    if result["refused"]:
        print(f"dealer-assist surveillance: kept {len(result['refused'])} frame(s) the index "
              f"calls old video but whose chained record does not agree (records "
              f"{', '.join(map(str, result['refused']))}): run 'dealer-assist replay "
              f"{args.recording} --verify'", file=sys.stderr)
        return 1
    return 0


def _reindex(store: RecordStore, args: argparse.Namespace) -> int:
    from dealer_assist.surveillance.access import log_command

    store.check()
    differed = store.index_mismatches()
    store.rebuild_index()
    log_command(store, "reindex", {"differed": len(differed)})
    for what in differed:
        print(f"was: {what}")
    print(f"search index rebuilt from the records of {args.recording}"
          + ("" if differed else " (it matched them already)"))
    return 0


def operator_command(store: RecordStore, args: argparse.Namespace) -> int:
    """`operator add|remove|list|unlock` on ``store`` (a recording, or the floor room's store)."""
    from dealer_assist.surveillance.access import (
        add_operator,
        list_operators,
        remove_operator,
        unlock_login,
    )

    if args.what == "list":
        for operator in list_operators(store):
            print(f"{operator.name}\t{operator.role}")
        return 0
    if not args.name:
        raise ValueError(f"'operator {args.what}' needs a NAME")
    if args.what == "unlock":
        unlock_login(store, args.name)
        print(f"unlocked {args.name}: the page accepts its logins again")
        return 0
    if args.what == "remove":
        if not remove_operator(store, args.name):
            raise ValueError(f"no operator {args.name!r}")
        print(f"removed {args.name}")
        return 0
    try:
        if args.password_stdin:
            password = sys.stdin.readline().rstrip("\n")
        else:
            password = getpass.getpass(f"password for {args.name}: ")
            if getpass.getpass("again: ") != password:
                raise ValueError("the two passwords differ")
    except EOFError:
        raise ValueError(f"no password given for {args.name} (end of input)") from None
    operator = add_operator(store, args.name, password, args.role)
    print(f"{operator.name} can log in as {operator.role}")
    return 0
