"""``dealer-assist par-sheet``: house edge, hit and bonus frequencies, side-bet odds of rules."""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING

from dealer_assist.cli import number_in, rng_seed
from dealer_assist.gamemath.simulate import MAX_ROUNDS, GameRules, print_progress, simulate

if TYPE_CHECKING:
    from dealer_assist.rules import RuleSet


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--rules", required=True, metavar="PRESET",
        help='a rules preset (e.g. h17-ddd-6, s17-6) or a JSON object such as '
             '\'{"preset": "h17-ddd-6", "double_double_down": "off"}\'')
    parser.add_argument("--rounds", type=number_in(int, 1, MAX_ROUNDS, "a number of rounds"),
                        default=10_000_000,
                        help=f"rounds to simulate (default 10,000,000; at most {MAX_ROUNDS:,})")
    parser.add_argument("--seed", type=rng_seed, default=1,
                        help="seed, 0 to 2**32 - 1; same seed, same figures")
    parser.add_argument("--workers", type=number_in(int, 1, 256, "a number of processes"),
                        default=None, help="processes to use, 1 to 256 (default: every core)")
    parser.add_argument("--json", action="store_true", help="print the par sheet as JSON")
    parser.add_argument("--quiet", action="store_true", help="no progress line on stderr")


def _load_rules(text: str) -> RuleSet:
    from dealer_assist.roundlog.fold import StrictJSONError, load_strict
    from dealer_assist.rules import RuleSet

    spec: object = text
    if text.lstrip().startswith("{"):
        try:
            spec = load_strict(text)  # as settle reads a round's rules: a key given twice refused
        except StrictJSONError as error:
            raise ValueError(f"--rules: {error}") from None
    return RuleSet.from_spec(spec)


def run(args: argparse.Namespace) -> int:
    from dealer_assist.gamemath.parsheet import par_sheet, render

    try:
        rules = GameRules.from_ruleset(_load_rules(args.rules))
    except ValueError as error:
        print(f"par-sheet: {error}", file=sys.stderr)
        return 2
    progress = None if args.quiet or not sys.stderr.isatty() else print_progress
    result = simulate(rules, args.rounds, seed=args.seed, workers=args.workers,
                      progress=progress)
    sheet = par_sheet(rules, result)
    if args.json:
        print(json.dumps(sheet, indent=2))
    else:
        print(render(sheet))
    return 0
