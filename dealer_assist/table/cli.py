"""``dealer-assist table --config table.toml``: run the live table until stopped.

Reads the shoe (reconnecting when it drops), folds its cards and the dealer's touches into rounds,
records each round log, and serves the dealer's screen.
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

    from dealer_assist import logs
    from dealer_assist.table.config import ConfigError, load_config
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
    sources: list[Source] = []
    if config.shoe is not None:
        ascii_decks = config.shoe.decks if config.shoe.protocol == "ascii" else None
        sources.append(
            SerialShoeSource(config.shoe.url, ascii_decks=ascii_decks, decks=config.shoe.decks)
        )
    loop = TableLoop(
        config.rules_spec,
        recording.recorder,
        table_id=config.table_id,
        round_prefix=f"{config.table_id}-{time.strftime('%Y%m%d-%H%M%S', time.gmtime())}",
        has_shoe=config.shoe is not None,
        has_camera=camera is not None,
        notes=notes,
    )
    if camera is not None:
        sources.append(camera)
    runner = TableRunner(loop, sources)
    if recording.store is not None:
        recording.store.on_failure = lambda detail: runner.submit(RecordingFailed(detail))
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
        recording.close()
        logger.info("table %s stopped", config.table_id)
    return status
