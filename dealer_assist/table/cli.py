"""``dealer-assist table --config table.toml``: run the live table until stopped.

Reads the shoe (reconnecting when it drops), folds its cards and the dealer's touches into rounds,
records each round log, and serves the dealer's screen. Every input is journaled before it is acted
on or acknowledged (``<recording dir>/table.journal``); started again after a crash, the table
rebuilds the round in play from the journal and asks the dealer to confirm the felt.
"""

from __future__ import annotations

import argparse
import logging
import signal
import sys
import threading

logger = logging.getLogger(__name__)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--config", required=True, metavar="TABLE.TOML", help="the table's configuration file"
    )
    parser.add_argument(
        "--check", action="store_true", help="validate the configuration, print it, and exit"
    )


def run(args: argparse.Namespace) -> int:
    import time

    import dealer_assist
    from dealer_assist import logs
    from dealer_assist.table.config import ConfigError, load_config
    from dealer_assist.table.journal import (
        JournalError,
        LoopFactory,
        RecordingWatch,
        open_table,
    )
    from dealer_assist.table.journal_codec import CodecError
    from dealer_assist.table.loop import TableLoop
    from dealer_assist.table.recording import RecordingError, StoreOpenError, open_recording
    from dealer_assist.table.runner import TableRunner
    from dealer_assist.table.screen import ScreenServer
    from dealer_assist.table.shoe_source import SerialShoeSource
    from dealer_assist.table.sources import RecordingFailed, Source

    try:
        config = load_config(args.config)
    except ConfigError as error:
        print(f"dealer-assist table: {error}", file=sys.stderr)
        return 2
    log_file = args.log_file or config.log_file
    try:  # the command line's --log-level and --log-file before the config's [logging]
        logs.configure(args.log_level or config.log_level, log_file)
    except logs.LogFileError as error:
        key = "--log-file" if args.log_file else f"{config.path}: logging.file"
        print(f"dealer-assist table: {key}: {error}", file=sys.stderr)
        return 2
    notes: dict[str, str] = {}
    camera: Source | None = None
    if config.camera is not None:
        from dealer_assist.table.live_camera import open_live_camera

        try:
            camera = open_live_camera(
                config.camera,
                warn=lambda message: print(
                    f"dealer-assist table: {config.path}: camera: warning: {message}",
                    file=sys.stderr,
                ),
            )
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
          f"{log_file or 'standard error'}")
    if args.check:
        logger.info("configuration %s checked: %s", config.path, devices)
        if camera is not None:
            camera.stop()
        # a camera configured but unable to start would leave the table shoe only: not a pass
        return 2 if "camera" in notes else 0
    try:
        recording = open_recording(config.recording_dir, config.table_id,
                                   surveillance=config.surveillance)
    except RecordingError as error:
        key = "recording.surveillance" if isinstance(error, StoreOpenError) else "recording.dir"
        print(f"dealer-assist table: {config.path}: {key}: {error}", file=sys.stderr)
        return 2
    store = recording.store
    watch = RecordingWatch(recording.recorder)

    def make_loop(rules_spec: object, round_prefix: str, round_number: int) -> TableLoop:
        return TableLoop(
            rules_spec,
            watch,
            table_id=config.table_id,
            round_prefix=round_prefix,
            round_number=round_number,
            has_shoe=config.shoe is not None,
            has_camera=camera is not None,
            notes=notes,
        )

    factory: LoopFactory = make_loop
    journal_config = {
        "table": config.table_id,
        "rules": config.rules_spec,
        "decks": config.rules.decks,
        "shoe": None if config.shoe is None else config.shoe.protocol,
        "camera": camera is not None,
        "version": dealer_assist.__version__,
    }
    directory = config.recording_dir

    def recorded(round_id: str) -> bool:
        return any((directory / sub / f"{round_id}.jsonl").exists() for sub in ("rounds", "void"))

    try:
        table = open_table(
            directory, journal_config, config.rules_spec, factory,
            f"{config.table_id}-{time.strftime('%Y%m%d-%H%M%S', time.gmtime())}",
            recorded=recorded,
            repair=None if store is None else store.write_round_if_missing,
            cannot_resend=config.shoe is not None and config.shoe.protocol == "ascii",
            now=time.monotonic(),
        )
    except (CodecError, JournalError, OSError) as error:
        recording.close()
        print(f"dealer-assist table: {config.path}: recording.dir: the table's journal: {error}"
              " (move it aside to start without it; the round in it is then lost)",
              file=sys.stderr)
        return 2
    for warning in table.warnings:
        print(f"dealer-assist table: warning: {warning}", file=sys.stderr)
    if table.resumed is not None:
        print(f"round {table.resumed} resumed from the journal ({table.replayed} inputs): "
              "the dealer confirms the felt", flush=True)
    if table.voided is not None:
        print(f"round {table.voided[0]} voided: {table.voided[1]}", flush=True)
    loop = table.loop
    sources: list[Source] = []
    if config.shoe is not None:
        ascii_decks = config.shoe.decks if config.shoe.protocol == "ascii" else None
        sources.append(
            SerialShoeSource(config.shoe.url, ascii_decks=ascii_decks, decks=config.shoe.decks,
                             defer_ack=True, resume_from=table.shoe)
        )
    if camera is not None:
        sources.append(camera)
    offset = table.clock_offset
    runner = TableRunner(
        loop, sources, clock=lambda: time.monotonic() + offset, journal=table.journal,
        journal_config=journal_config,
        recording_pending=lambda: watch.failing or (store is not None and not store.idle),
        shoe_position=table.shoe,
    )
    if store is not None:
        def report(detail: str) -> None:
            runner.submit(RecordingFailed(detail))

        store.on_failure = report
    screen = ScreenServer(runner, config.host, config.port)
    stop = threading.Event()
    # Ctrl-C and a service manager's stop both end the table cleanly; SIGINT is handled here,
    # not left to Python, because a process started in the background inherits it ignored.
    # Installed before the screen's address is printed: whoever reads it may stop us at once.
    for stopping in (signal.SIGINT, signal.SIGTERM):
        signal.signal(stopping, lambda *_: stop.set())
    runner.start()
    try:
        screen.start()
    except OSError as error:
        runner.stop()
        table.journal.close()
        recording.close()
        print(f"dealer-assist table: {config.path}: screen: {error}", file=sys.stderr)
        return 1
    print(f"dealer's screen: {screen.url}", flush=True)
    logger.info("started %s; screen %s", devices, screen.url)
    status = 0
    try:
        while not stop.wait(1.0):
            if not screen.running:  # its thread ended (logged): no touch can reach the table
                print("dealer-assist table: the dealer's screen stopped (see the log): "
                      "the table stops", file=sys.stderr)
                status = 1
                break
    finally:
        screen.stop()
        runner.stop()
        table.journal.close()
        recording.close()
        logger.info("table %s stopped", config.table_id)
    return status
