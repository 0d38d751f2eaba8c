"""``dealer-assist table --config table.toml``: run the live table until stopped.

Reads the shoe (reconnecting when it drops), folds its cards and the dealer's touches into rounds,
records each round log, and serves the dealer's screen. Every input is journaled before it is acted
on or acknowledged (``<recording dir>/table.journal``); started again after a crash, the table
rebuilds the round in play from the journal and asks the dealer to confirm the felt.

``dealer-assist table staff --config table.toml add|remove|list``: the dealers and supervisors
who sign in at its screen (:mod:`.staff_cli`); the table starts only with a dealer registered.

At each start the table prints a one-time pairing URL: the screen's browser opens it once and is
paired (a cookie); nothing else may see or drive the screen. ``--touch JSON`` sends one touch to
the running table as the paired screen (it reads the table's secret: run it as the table's user).
"""

from __future__ import annotations

import argparse
import faulthandler
import logging
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from dealer_assist.table.config import TableConfig

logger = logging.getLogger(__name__)

# The table's stop joins its screen (5 s), shoe (2 s + 2 s) and runner (5 s) threads and its
# store's writer (30 s): a stop still going after this long is stuck, and its threads' stacks
# are written to stderr.
STOP_BOUND_S = 50.0


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from dealer_assist.table import staff_cli

    parser.epilog = (
        "At each start the table prints the dealer's screen URL and a one-time pairing URL: "
        "open the pairing URL once in the screen's browser; only that browser then sees and "
        "drives the screen. A [screen] host beyond loopback needs TLS ([screen] certfile and "
        "keyfile) or plain_http_on_network = true. Details: docs/table.md.")
    parser.add_argument(
        "--config", metavar="TABLE.TOML", help="the table's configuration file (required)"
    )
    action = parser.add_mutually_exclusive_group()
    action.add_argument(
        "--check", action="store_true",
        help="validate the configuration (and where and how the screen is served), print it, "
             "try what the start does (the recording directory written in and locked, the "
             "journal read, the signing key read, the screen's host resolved and its port bound; "
             "all undone), and exit: 0 fit to start, 2 not"
    )
    action.add_argument(
        "--touch", metavar="JSON",
        help='send one touch to the RUNNING table as its paired screen (e.g. \'{"type": '
             '"finish"}\'), print the reply, exit 1 if refused; reads the screen\'s secret, '
             "so run it as the table's user"
    )
    parser.add_argument(
        "--new-chain", metavar="REASON",
        help="begin a new chain of surveillance records where one had been (its index.sqlite "
        "lost): refused without this; the reason is recorded and anchored")
    parser.add_argument(
        "--rotate-key", metavar="REASON",
        help="replace the table's signing key (the new one introduced by a record the old one "
        "signs; the public key file gains it) and exit")
    commands = parser.add_subparsers(dest="table_command", metavar="COMMAND")
    staff_cli.add_arguments(commands.add_parser(
        "staff", help="the dealers and supervisors who sign in at this table's screen",
        description="The table's staff registry: dealer and supervisor ids with their PINs "
        "(argon2id hashes), beside the configuration file, readable by its owner only."))


def run(args: argparse.Namespace) -> int:
    if args.table_command == "staff":
        from dealer_assist.table import staff_cli

        return staff_cli.run(args)
    if args.config is None:
        print("dealer-assist table: --config is required", file=sys.stderr)
        return 2
    return _run_table(args)


def _round_fields(camera: object) -> dict[str, object]:
    """What every round line carries of the table's devices: the camera's models."""
    models = getattr(camera, "models", None)
    return {"models": models} if models else {}


def _run_table(args: argparse.Namespace) -> int:

    from dealer_assist import logs
    from dealer_assist.surveillance.signed_chain import recorded_reason
    from dealer_assist.table.assembly import TableSetup, assemble
    from dealer_assist.table.config import CameraConfig, ConfigError, load_config
    from dealer_assist.table.journal import JournalError
    from dealer_assist.table.journal_codec import CodecError
    from dealer_assist.table.recording import (
        EvidenceFiles,
        RecordingError,
        rotate_table_key,
    )
    from dealer_assist.table.screen_access import ScreenAccess, SecretError, load_or_create_secret
    from dealer_assist.table.screen_site import exposure_warning
    from dealer_assist.table.shoe_source import SerialShoeSource
    from dealer_assist.table.sources import Source
    from dealer_assist.table.staff import StaffDesk, StaffError, StaffRegistry, staff_path
    from dealer_assist.table.stop_signals import StopSignals

    reasons: dict[str, str] = {}  # what the chain records, checked before anything starts
    for option, given in (("--new-chain", args.new_chain), ("--rotate-key", args.rotate_key)):
        if given is None:
            continue
        try:
            reasons[option] = recorded_reason(given)
        except ValueError as error:
            print(f"dealer-assist table: {option}: {error}", file=sys.stderr)
            return 2
    try:
        config = load_config(args.config)
    except ConfigError as error:
        print(f"dealer-assist table: {error}", file=sys.stderr)
        return 2
    if args.touch is not None:
        return touch(config, args.touch)
    log_file = args.log_file or config.log_file
    try:  # the command line's --log-level and --log-file before the config's [logging]
        logs.configure(args.log_level or config.log_level, log_file)
    except logs.LogFileError as error:
        key = "--log-file" if args.log_file else f"{config.path}: logging.file"
        print(f"dealer-assist table: {key}: {error}", file=sys.stderr)
        return 2
    notes: dict[str, str] = {}
    camera: Source | None = None
    camera_names = True
    if config.camera is not None:
        from dealer_assist.table.live_camera import open_live_camera
        from dealer_assist.vision.model_control import PinError
        from dealer_assist.vision.runtime import RuntimeUnavailable

        try:
            camera = live = open_live_camera(
                config.camera,
                warn=lambda message: print(
                    f"dealer-assist table: {config.path}: camera: warning: {message}",
                    file=sys.stderr,
                ),
                where=config.path,
                frame_quality=config.frame_quality,
                shoe=config.shoe is not None,
            )
            camera_names = live.names_cards
        except (PinError, RuntimeUnavailable) as error:  # models it may not run: no start
            print(f"dealer-assist table: {config.path}: vision: {error}", file=sys.stderr)
            return 2
        except ValueError as error:  # the detector's model, the calibration file
            notes["camera"] = f"unavailable: {error}"
            print(f"dealer-assist table: {config.path}: camera: {error}", file=sys.stderr)
    if config.shoe is None and camera is None:
        print(
            f"dealer-assist table: {config.path}: no shoe configured and the camera cannot "
            "run: nothing can read the cards",
            file=sys.stderr,
        )
        return 2
    devices = (
        f"table {config.table_id}: rules {config.rules.name}, "
        f"shoe {config.shoe.url if config.shoe else 'none'}, "
        f"camera {config.camera.source if camera is not None and config.camera else 'none'}, "
        f"recording to {config.recording_dir}"
    )
    print(f"{devices}\nlogging {(args.log_level or config.log_level).upper()} to "
          f"{log_file or 'standard error'}\n{screen_summary(config)}")
    print(f"recording store signed with {config.key} (public key file "
          f"{config.key.with_suffix('.pub')}, for surveillance), anchored in "
          f"{config.anchor_log}")
    evidence = EvidenceFiles(config.key, config.anchor_log, reasons.get("--new-chain"))
    if "--rotate-key" in reasons:
        try:
            key_id = rotate_table_key(config.recording_dir, config.table_id, evidence,
                                      reasons["--rotate-key"])
        except ValueError as error:  # RecordingError, the key file's
            print(f"dealer-assist table: {config.path}: recording.key: {error}", file=sys.stderr)
            return 2
        print(f"the table's key is now {key_id}; hand {evidence.public_key} to surveillance")
        return 0

    registry_path = staff_path(config.path)
    try:
        registry = StaffRegistry(registry_path)
        staff = StaffDesk(registry)  # the failed attempts' file read back
    except StaffError as error:
        print(f"dealer-assist table: staff: {error}", file=sys.stderr)
        return 2
    dealers = registry.count("dealer")
    advice = "" if dealers else (
        f"no dealer can sign in: add one with 'dealer-assist table staff --config {config.path}"
        " add ID --role dealer'")
    print(f"staff: {dealers} dealer(s), {registry.count('supervisor')} supervisor(s) in "
          f"{registry_path}{'; ' + advice if advice and args.check else ''}")
    if advice and not args.check:
        print(f"dealer-assist table: {advice}", file=sys.stderr)
        return 2
    exposed = exposure_warning(config.host, config.tls is not None)
    if exposed is not None:
        logger.warning("%s", exposed)
        print(f"dealer-assist table: warning: {exposed}", file=sys.stderr)
    if args.check:
        from dealer_assist.table.preflight import check_start

        started = check_start(config)
        logger.info("configuration %s checked (%s): %s", config.path,
                    "its start tried" if started else "its start would fail", devices)
        if camera is not None:
            camera.stop()
        # a camera configured but unable to start would leave the table shoe only: not a pass
        return 2 if "camera" in notes or not started else 0

    def make_sources(shoe_position: tuple[int, int] | None) -> list[Source]:
        sources: list[Source] = []
        if config.shoe is not None:
            ascii_decks = config.shoe.decks if config.shoe.protocol == "ascii" else None
            sources.append(SerialShoeSource(
                config.shoe.url, ascii_decks=ascii_decks, decks=config.shoe.decks,
                defer_ack=True, resume_from=shoe_position))
        if camera is not None:
            sources.append(camera)
        return sources

    try:
        secret = load_or_create_secret(config.screen_secret)
    except SecretError as error:
        print(f"dealer-assist table: {config.path}: screen.secret: {error}", file=sys.stderr)
        return 2
    setup = TableSetup(
        config.recording_dir, config.table_id, config.rules_spec,
        shoe_protocol=None if config.shoe is None else config.shoe.protocol,
        has_camera=camera is not None,
        camera_names=camera_names,
        host=config.host, port=config.port, screen_name=config.screen_name, tls=config.tls,
        access=ScreenAccess(secret), notes=notes,
        evidence=evidence, chips=config.chips, floor=config.floor,
        camera_wait_s=(config.camera or CameraConfig(0)).wait_s,
        max_camera_lag_s=(config.camera or CameraConfig(0)).max_lag_s,
        round_fields=_round_fields(camera))
    try:
        table = assemble(setup, make_sources, staff=staff)
    except RecordingError as error:
        print(f"dealer-assist table: {config.path}: recording.dir: {error}", file=sys.stderr)
        return 2
    except (CodecError, JournalError, OSError) as error:
        print(f"dealer-assist table: {config.path}: recording.dir: the table's journal: {error}"
              " (move it aside to start without it; the round in it is then lost)",
              file=sys.stderr)
        return 2
    opened = table.opened
    for warning in opened.warnings:
        print(f"dealer-assist table: warning: {warning}", file=sys.stderr)
    if opened.resumed is not None:
        print(f"round {opened.resumed} resumed from the journal ({opened.replayed} inputs): "
              "the dealer confirms the felt", flush=True)
    if opened.voided is not None:
        print(f"round {opened.voided[0]} voided: {opened.voided[1]}", flush=True)
    signals = StopSignals()
    # Installed before the screen's address is printed: whoever reads it may stop us at once.
    signals.install()
    try:
        table.start()
    except OSError as error:
        print(f"dealer-assist table: {config.path}: screen: {error}", file=sys.stderr)
        return 1
    screen = table.screen
    print(f"dealer's screen: {screen.url}\n"
          f"pair the screen's browser (open once there; the code works once): "
          f"{screen.pairing_url()}", flush=True)
    logger.info("started %s; screen %s", devices, screen.url)
    status = 0
    try:
        if not signals.wait(lambda: screen.running):
            # its thread ended (logged): no touch can reach the table
            print("dealer-assist table: the dealer's screen stopped (see the log): "
                  "the table stops", file=sys.stderr)
            status = 1
    finally:
        # a stop that outlasts the bounds of its joins is stuck: say where, for the technician
        # (on the process's own stderr: sys.stderr may be a stand-in with no file behind it)
        if sys.__stderr__ is not None:
            faulthandler.dump_traceback_later(STOP_BOUND_S, exit=False, file=sys.__stderr__)
        table.stop()
        faulthandler.cancel_dump_traceback_later()
        logger.info("table %s stopped", config.table_id)
    return status


def screen_summary(config: TableConfig) -> str:
    """Where and how the screen is served, and where its secret lies (``--check``'s line)."""
    from dealer_assist.table.screen_site import is_loopback, is_wildcard, shown_host, url_of

    url = url_of(shown_host(config.host, config.screen_name), config.port,
                 config.tls is not None)
    if is_loopback(config.host):
        reach = "this machine only"
    else:
        where = "every interface" if is_wildcard(config.host) else config.host
        reach = (f"listening on {where}, " + (f"TLS ({config.tls.certfile})" if config.tls
                                               else "PLAIN HTTP (plain_http_on_network)"))
    return f"screen {url} ({reach}), paired by the secret {config.screen_secret}"


def touch(config: TableConfig, text: str) -> int:
    """``--touch``: send ``text`` to the running table as its paired screen and print the
    reply; 0 accepted, 1 refused or no table answering, 2 no secret to send it with."""
    import ssl

    from dealer_assist.table.screen_access import ScreenAccess, SecretError, read_secret
    from dealer_assist.table.screen_client import local_url, pinned_context, send_touch

    if config.port == 0:
        print(f"dealer-assist table: {config.path}: screen.port: 0 (any free port) cannot be "
              "reached by --touch: set the port the table listens on", file=sys.stderr)
        return 2
    try:
        access = ScreenAccess(read_secret(config.screen_secret))
        context = pinned_context(config.tls)
    except (SecretError, OSError) as error:
        print(f"dealer-assist table: {config.path}: screen.secret: {error}", file=sys.stderr)
        return 2
    url = local_url(config.host, config.port, config.tls)
    try:
        reply = send_touch(url, text.encode("utf-8", "surrogateescape"), access.cookie_header(),
                           context)
    except OSError as error:
        reason = getattr(error, "reason", error)
        if isinstance(reason, ssl.SSLError) and config.tls is not None:
            print(f"dealer-assist table: the screen at {url} does not serve the certificate "
                  f"{config.tls.certfile}: {reason}", file=sys.stderr)
        else:
            print(f"dealer-assist table: no screen answers at {url} (is the table running?): "
                  f"{reason}", file=sys.stderr)
        return 1
    answer = reply.body.decode("utf-8", "replace")
    if not reply.accepted:
        print(f"dealer-assist table: the table refused the touch (HTTP {reply.status}): "
              f"{answer}", file=sys.stderr)
        return 1
    print(answer)
    return 0
