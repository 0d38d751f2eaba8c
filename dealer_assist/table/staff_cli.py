"""``dealer-assist table staff --config FILE add|remove|list``: the table's staff registry.

The registry lies beside the configuration (``<config>.staff.json``, mode 0600; see
:mod:`dealer_assist.table.staff`). ``add ID --role dealer|supervisor`` reads the PIN from a
prompt (asked twice), or with ``--pin-stdin`` one line of standard input; it is never an
argument (a command line is visible to every user of the machine).
"""

from __future__ import annotations

import argparse
import getpass
import sys

from dealer_assist.table.staff import ROLES, StaffError, StaffRegistry, check_pin, staff_path


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--config", required=True, metavar="TABLE.TOML",
                        help="the table's configuration file (the registry lies beside it)")
    actions = parser.add_subparsers(dest="staff_action", required=True, metavar="ACTION")
    add = actions.add_parser("add", help="register a dealer or supervisor (or set a new PIN)")
    add.add_argument("staff_id", metavar="ID", help="1 to 32 letters, digits or _.-")
    add.add_argument("--role", required=True, choices=ROLES)
    add.add_argument("--pin-stdin", action="store_true",
                     help="read the PIN (4 to 12 digits) from one line of standard input")
    remove = actions.add_parser("remove", help="remove an id: it can no longer sign in")
    remove.add_argument("staff_id", metavar="ID")
    actions.add_parser("list", help="the ids and their roles (never a PIN)")


def _read_pin(args: argparse.Namespace) -> str:
    if args.pin_stdin or not sys.stdin.isatty():
        return check_pin(sys.stdin.readline().rstrip("\r\n"))
    pin = check_pin(getpass.getpass(f"PIN for {args.staff_id}: "))
    if getpass.getpass("again: ") != pin:
        raise StaffError("the two PINs differ")
    return pin


def run(args: argparse.Namespace) -> int:
    path = staff_path(args.config)
    try:
        registry = StaffRegistry(path)
        if args.staff_action == "add":
            registry.add(args.staff_id, args.role, _read_pin(args))
            print(f"{args.staff_id} ({args.role}) saved in {path}")
        elif args.staff_action == "remove":
            registry.remove(args.staff_id)
            print(f"{args.staff_id} removed from {path}")
        else:
            for member in sorted(registry.members.values(), key=lambda m: m.staff_id):
                print(f"{member.staff_id}\t{member.role}")
    except StaffError as error:
        print(f"dealer-assist table staff: {error}", file=sys.stderr)
        return 2
    return 0
