"""``dealer-assist settle FILE|- [--json]``: adjudicate a round log, print what is owed."""

from __future__ import annotations

import argparse
import contextlib
import json
import sys


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "file", metavar="FILE", help="round log (JSON Lines); '-' reads standard input"
    )
    parser.add_argument("--json", action="store_true", help="print the settlement as JSON")


def run(args: argparse.Namespace) -> int:
    """Print each round's settlement as it settles, so that the rounds before a refused line
    are still shown; the refusal is one line on standard error and status 2."""
    from dealer_assist.roundlog.fold import LogError, settle_rounds
    from dealer_assist.roundlog.report import settlement_text

    source = "standard input" if args.file == "-" else args.file
    try:
        # bytes, so that a line that is not UTF-8 is refused by its number
        handle = sys.stdin.buffer if args.file == "-" else open(args.file, "rb")
    except OSError as error:
        print(f"dealer-assist settle: cannot read {source}: {error}", file=sys.stderr)
        return 2
    with handle if args.file != "-" else contextlib.nullcontext(handle):
        settlements = settle_rounds(handle)
        while True:
            try:
                settlement = next(settlements)
            except StopIteration:
                return 0
            except LogError as error:
                sys.stdout.flush()
                print(f"dealer-assist settle: {source}: {error}", file=sys.stderr)
                return 2
            except OSError as error:
                print(f"dealer-assist settle: cannot read {source}: {error}", file=sys.stderr)
                return 2
            # an error writing the output is standard output's: cli.main reports it
            print(json.dumps(settlement.to_json()) if args.json else settlement_text(settlement))
