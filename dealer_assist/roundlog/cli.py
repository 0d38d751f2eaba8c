"""``dealer-assist settle FILE|- [--json]``: adjudicate a round log, print what is owed."""

from __future__ import annotations

import argparse
import json
import sys


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "file", metavar="FILE", help="round log (JSON Lines); '-' reads standard input"
    )
    parser.add_argument("--json", action="store_true", help="print the settlement as JSON")


def run(args: argparse.Namespace) -> int:
    from dealer_assist.roundlog.fold import LogError, settle_rounds
    from dealer_assist.roundlog.report import settlement_text

    source = "standard input" if args.file == "-" else args.file
    try:
        # bytes, so that a line that is not UTF-8 is refused by its number
        if args.file == "-":
            settlements = list(settle_rounds(sys.stdin.buffer))
        else:
            with open(args.file, "rb") as handle:
                settlements = list(settle_rounds(handle))
    except LogError as error:
        print(f"dealer-assist settle: {source}: {error}", file=sys.stderr)
        return 2
    except OSError as error:
        print(f"dealer-assist settle: cannot read {source}: {error}", file=sys.stderr)
        return 2
    for settlement in settlements:
        if args.json:
            print(json.dumps(settlement.to_json()))
        else:
            print(settlement_text(settlement))
    return 0
