"""The ``dealer-assist`` command: a thin dispatcher that imports only the chosen subcommand.

Each subcommand lives in its concern's ``cli`` module, which provides
``add_arguments(parser: argparse.ArgumentParser) -> None`` and ``run(args) -> int``.
Importing only the chosen module keeps ``dealer-assist settle`` free of OpenCV and ONNX Runtime.
"""

from __future__ import annotations

import argparse
import importlib
import os
import signal
import sys
from typing import Any

# name -> (module, one-line help)
COMMANDS: dict[str, tuple[str, str]] = {
    "settle": ("dealer_assist.roundlog.cli", "adjudicate a round log and print the payouts"),
    "calibrate": ("dealer_assist.calibration.cli", "camera lens, table plane, zones, drift"),
    "shoe": ("dealer_assist.shoe.cli", "simulate a card shoe, or listen to one on a serial line"),
    "replay": ("dealer_assist.surveillance.cli", "re-settle and verify a surveillance recording"),
    "surveillance": ("dealer_assist.surveillance.admin_cli",
                     "surveillance page, statistics, storage, retention, logins"),
    "par-sheet": ("dealer_assist.gamemath.cli", "house edge and bonus frequencies of a rule set"),
    "detect": ("dealer_assist.vision.cli", "read the cards in overhead-camera images or a video"),
    "evaluate": ("dealer_assist.evaluation.cli",
                 "score the card models on independent scenes of held-out designs"),
    "table": ("dealer_assist.table.cli", "run the live table: shoe, camera, dealer's screen"),
    "demo": ("dealer_assist.table.simulation.demo_cli",
             "a simulated table through the real pipeline"),
    "room": ("dealer_assist.floor.room_cli",
             "the surveillance room: every table's records from the floor, and the page"),
    "floor": ("dealer_assist.floor.cli", "simulated table boxes forwarding to the floor"),
}


def number_in(kind: type, least: float, most: float, what: str = "", *,
              above: bool = False) -> Any:
    """An argparse type: a ``kind`` (int or float) from ``least`` (or, with ``above``, more than
    it) to ``most``; NaN and infinities are refused with the rest, saying ``what`` it is."""

    def parse(text: str) -> Any:
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
        if not ((least < value) if above else (least <= value)) or not value <= most:
            low = f"above {_shown(least)} and at most" if above else f"from {_shown(least)} to"
            raise argparse.ArgumentTypeError(
                f"{what + ' ' if what else ''}must be {low} {_shown(most)}, got {text}")
        return value

    return parse


def _shown(bound: float) -> str:
    """A bound as given: a whole number in full (4294967295, not 4.29497e+09)."""
    return str(bound) if isinstance(bound, int) else f"{bound:g}"


#: An argparse type for a TCP port number (0: any free port).
tcp_port = number_in(int, 0, 65535, "a port")
#: An argparse type for a random seed, 0 to 2**32 - 1 (numpy's generators refuse negative seeds;
#: 32 bits is what the oldest of them takes, and the same range for every command).
rng_seed = number_in(int, 0, 2**32 - 1, "a seed")


def utf8_text(text: str) -> str:
    """An argparse type: text given in UTF-8 (text in another encoding arrives as bytes that
    no record, page or log line can carry)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise argparse.ArgumentTypeError(f"{text!r} is not UTF-8 text") from None
    return text


def _top_parser() -> argparse.ArgumentParser:
    lines = "\n".join(f"  {name:<12} {help_}" for name, (_, help_) in COMMANDS.items())
    return argparse.ArgumentParser(
        prog="dealer-assist",
        description="Spanish 21 dealer assistant.",
        epilog=f"commands:\n{lines}\n\nRun 'dealer-assist COMMAND --help' for a command's options.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )


def _add_logging_arguments(parser: argparse.ArgumentParser) -> None:
    """``--log-level`` and ``--log-file``, the same for every command (None where not given)."""
    from dealer_assist.logs import DEFAULT_LEVEL, LEVELS

    group = parser.add_argument_group("logging")
    group.add_argument("--log-level", type=str.lower, choices=LEVELS, metavar="LEVEL",
                       help=f"{', '.join(LEVELS)} (default {DEFAULT_LEVEL}; for table, its "
                       "config's [logging] level, else info)")
    group.add_argument("--log-file", metavar="FILE",
                       help="append the log to FILE (warnings and worse still on standard "
                       "error; default: all on standard error)")


def main(argv: list[str] | None = None) -> int:
    """Entry point of the console script; returns the process exit status. An I/O error that
    a command does not report itself (its output on a full disk) is one line and status 1."""
    argv = sys.argv[1:] if argv is None else argv
    # Ctrl-C reaches every command, even one started with SIGINT ignored (a shell starts a
    # background job so, and Python then leaves it ignored): KeyboardInterrupt, unless the
    # command handles SIGINT itself.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    if sys.stdin is None:  # started with standard input closed: it reads as empty
        sys.stdin = open(os.devnull)  # noqa: SIM115 (for the life of the process)
    if sys.stderr is None:  # closed: messages go nowhere, never into standard output
        sys.stderr = open(os.devnull, "w")  # noqa: SIM115 (for the life of the process)
    if sys.stdout is None:
        print("dealer-assist: standard output is closed: nowhere to print", file=sys.stderr)
        return 2
    top = _top_parser()
    top.add_argument("command", choices=sorted(COMMANDS), metavar="COMMAND")
    if not argv or argv[0] in ("-h", "--help"):
        top.print_help()
        return 0 if argv else 2
    if argv[0] == "--version":
        from dealer_assist import __version__

        print(f"dealer-assist {__version__}")
        return 0
    name = argv[0]
    if name not in COMMANDS:
        top.parse_args(argv[:1])  # exits 2 with argparse's "invalid choice" message
    module_name, help_ = COMMANDS[name]
    module = importlib.import_module(module_name)
    parser = argparse.ArgumentParser(prog=f"dealer-assist {name}", description=help_)
    module.add_arguments(parser)
    _add_logging_arguments(parser)
    args = parser.parse_args(argv[1:])
    from dealer_assist import logs

    try:
        logs.configure(args.log_level or logs.DEFAULT_LEVEL, args.log_file)
    except logs.LogFileError as error:
        print(f"dealer-assist {name}: --log-file: {error}", file=sys.stderr)
        return 2
    try:
        status = int(module.run(args) or 0)
        sys.stdout.flush()
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        _drop_unwritable_output()
        return 0  # the reader went away (| head): exit quietly, as Unix tools do
    except OSError as error:
        # an I/O failure the command did not report itself, most often its output's (a full disk)
        _drop_unwritable_output()
        where = f" ({error.filename})" if error.filename else ""
        print(f"dealer-assist {name}: I/O error{where}: {error.strerror or error}",
              file=sys.stderr)
        return 1
    return status


def _drop_unwritable_output() -> None:
    """Flush standard output; where that fails, point it at the null device, so that Python's
    own flush at exit does not fail again with a second message and status 120."""
    try:
        sys.stdout.flush()
    except OSError:
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, sys.stdout.fileno())
        os.close(null)
