"""``dealer-assist demo``: a whole table on one machine (simulated shoe and players, real pipeline).

dealer-assist demo [--rounds N] [--headless] [--seed N] [--rules PRESET] [--port P] [--record DIR]
                   [--camera auto|on|off] [--camera-deck DESIGN] [--pace SECONDS] [--shoe on|off]
                   [--host HOST [--certfile PEM --keyfile PEM | --plain-http-on-network]]

The simulated dealer touches as the screen's paired page; the demo prints a one-time pairing URL
for a browser to watch (and touch) the screen.
"""

from __future__ import annotations

import argparse
import signal
import sys
from pathlib import Path
from types import FrameType

from dealer_assist.cli import number_in, rng_seed, tcp_port
from dealer_assist.table.camera_source import FRAME_QUALITIES, FRAME_QUALITY
from dealer_assist.table.simulation.synthetic_camera import HOUSE_DECK


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--rounds", type=int, metavar="N", help="play N rounds then stop (default: until Ctrl-C)"
    )
    parser.add_argument(
        "--headless",
        action="store_true",
        help="do not wait for anyone: deal at full speed and print each settlement",
    )
    parser.add_argument(
        "--seed", type=rng_seed, default=1,
        help="shuffle, betting and camera seed, 0 to 2**32 - 1 (default 1)",
    )
    parser.add_argument("--rules", default="h17-ddd-6", help="rules preset (default h17-ddd-6)")
    parser.add_argument(
        "--host", default="127.0.0.1",
        help="screen address (default 127.0.0.1: this machine only); any other needs "
             "--certfile and --keyfile, or --plain-http-on-network"
    )
    parser.add_argument("--certfile", metavar="PEM", help="serve the screen over TLS: its "
                        "certificate chain (with --keyfile)")
    parser.add_argument("--keyfile", metavar="PEM", help="the certificate's private key")
    parser.add_argument(
        "--plain-http-on-network", action="store_true",
        help="serve the screen on a --host beyond this machine over plain HTTP anyway (its "
             "traffic, pairing code and cookie readable on the network)")
    parser.add_argument(
        "--port",
        type=tcp_port,
        help="screen port (default 8021; with --headless any free port)",
    )
    parser.add_argument(
        "--record", metavar="DIR",
        help="record into DIR as a table does: round logs, alarms and the surveillance store, "
        "which 'dealer-assist replay DIR --verify' re-settles (default: a temporary one, removed "
        "when the demo ends)"
    )
    parser.add_argument(
        "--camera",
        choices=("off", "on", "auto"),
        default="auto",
        help="the synthetic overhead camera read by the card detector: auto (default: on when "
        "the model and the card artwork are installed, else shoe only, saying why), on (or "
        "fail), off (shoe only)",
    )
    parser.add_argument(
        "--camera-deck",
        default=HOUSE_DECK,
        metavar="DESIGN",
        help=f"the camera's card design (default {HOUSE_DECK}, one the models were trained on, "
        "as a casino's enrolled deck; kennard, tigullio and plastic were never trained on)",
    )
    parser.add_argument(
        "--frame-quality", type=number_in(int, FRAME_QUALITIES[0], FRAME_QUALITIES[-1],
                                          "a JPEG quality"),
        default=FRAME_QUALITY, metavar="Q",
        help=f"JPEG quality of the camera frames recorded, {FRAME_QUALITIES[0]} to "
        f"{FRAME_QUALITIES[-1]} (default {FRAME_QUALITY}, as table.toml's "
        "[recording] frame_quality)",
    )
    parser.add_argument(
        "--shoe",
        choices=("on", "off"),
        default="on",
        help="on (default): the simulated shoe deals every card; off: a hand-held game read by "
        "the camera alone, the dealer keying any card it cannot read and correcting any it "
        "misreads (needs the camera)",
    )
    parser.add_argument(
        "--pace",
        type=number_in(float, 0, 60, "a pace in seconds"),
        default=0.6,
        metavar="SECONDS",
        help="seconds between cards when not headless, 0 to 60 (default 0.6)",
    )


def run(args: argparse.Namespace) -> int:
    from dealer_assist.rules import RuleSetError
    from dealer_assist.table.journal import JournalError
    from dealer_assist.table.journal_codec import CodecError
    from dealer_assist.table.recording import RecordingError
    from dealer_assist.table.screen_site import TlsFiles, exposure_problem
    from dealer_assist.table.simulation.demo import DemoError, DemoOptions, run_demo

    if args.rounds is not None and args.rounds < 1:
        print("dealer-assist demo: --rounds must be at least 1", file=sys.stderr)
        return 2
    if args.shoe == "off" and args.camera == "off":
        print("dealer-assist demo: --shoe off needs the camera: a hand-held game is read by the "
              "camera alone", file=sys.stderr)
        return 2
    if (args.certfile is None) != (args.keyfile is None):
        print("dealer-assist demo: --certfile and --keyfile go together", file=sys.stderr)
        return 2
    tls = None if args.certfile is None else TlsFiles(Path(args.certfile), Path(args.keyfile))
    problem = exposure_problem(args.host, tls is not None, args.plain_http_on_network,
                               "--certfile and --keyfile", "--plain-http-on-network")
    if problem is not None:
        print(f"dealer-assist demo: --host {problem}", file=sys.stderr)
        return 2
    # A service manager's stop (SIGTERM) unwinds as Ctrl-C does, so the demo stops its table
    # and removes its temporary folders; untouched, SIGTERM would end the process where it is.
    signal.signal(signal.SIGTERM, _stop_by_signal)
    try:
        options = DemoOptions(
            rules=args.rules,
            rounds=args.rounds,
            seed=args.seed,
            host=args.host,
            tls=tls,
            port=args.port if args.port is not None else (0 if args.headless else 8021),
            recording_dir=args.record,
            # Headless still leaves 30 ms between cards: no dealer deals faster.
            pace_s=0.03 if args.headless else args.pace,
            pause_after_round_s=0.0 if args.headless else 4.0,
            camera=args.camera,
            camera_deck=args.camera_deck,
            frame_quality=args.frame_quality,
            shoe=args.shoe == "on",
        )
        run_demo(options, out=lambda line: print(line, flush=True))
    except RuleSetError as error:
        print(f"dealer-assist demo: --rules: {error}", file=sys.stderr)
        return 2
    except RecordingError as error:  # only the recorder's opening raises it: a bad --record
        print(f"dealer-assist demo: --record: {error}", file=sys.stderr)
        return 2
    except (CodecError, JournalError) as error:
        print(f"dealer-assist demo: --record: the table's journal: {error}", file=sys.stderr)
        return 2
    except DemoError as error:
        print(f"dealer-assist demo: {error}", file=sys.stderr)
        return 1
    except BrokenPipeError:
        raise  # the reader went away (| head): the dispatcher exits quietly
    except OSError as error:
        sys.stdout.flush()  # output that cannot be written fails again, for the dispatcher
        print(f"dealer-assist demo: {error}", file=sys.stderr)
        return 1
    return 0


def _stop_by_signal(signum: int, frame: FrameType | None) -> None:
    raise SystemExit(128 + signum)
