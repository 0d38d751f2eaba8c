"""The one place a table is put together, for ``dealer-assist table`` and the demo alike: its
recording directory, the journal that rebuilds its loop, the device sources, the runner and the
dealer's screen."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import dealer_assist
from dealer_assist.table.journal import LoopFactory, RecordingWatch, Resumed, open_table
from dealer_assist.table.loop import TableLoop
from dealer_assist.table.question_frames import QuestionFrames, Snapshots
from dealer_assist.table.recording import EvidenceFiles, TableRecording, open_recording
from dealer_assist.table.runner import TableRunner
from dealer_assist.table.screen import ScreenServer
from dealer_assist.table.screen_access import ScreenAccess
from dealer_assist.table.screen_site import TlsFiles
from dealer_assist.table.sources import RecordingFailed, Source
from dealer_assist.table.staff import StaffDesk

#: The device sources of a table, given the shoe's last durable position (None: none), from
#: which its reader resumes.
SourcesFactory = Callable[[tuple[int, int] | None], list[Source]]


@dataclass(frozen=True, slots=True)
class TableSetup:
    """What a table is: where it records, its id and rules, its devices (``shoe_protocol``
    None: no shoe), whether the surveillance store records, the screen's address, the name
    browsers open it at, its TLS files and who may drive it (default: credentials of this
    process only), notes the screen shows about devices, and the prefix of its round ids."""

    directory: Path
    table_id: str
    rules_spec: Any
    shoe_protocol: str | None
    has_camera: bool
    surveillance: bool = True
    host: str = "127.0.0.1"
    port: int = 8021
    screen_name: str | None = None
    tls: TlsFiles | None = None
    access: ScreenAccess = field(default_factory=ScreenAccess.ephemeral)
    notes: dict[str, str] = field(default_factory=dict)
    round_prefix: str = ""
    evidence: EvidenceFiles | None = None  # the store's key and anchor log (None: unsigned)
    #: carried on every round's ``round`` line: what reads the cards (``"models"``)
    round_fields: dict[str, Any] = field(default_factory=dict)

    def journal_config(self) -> dict[str, Any]:
        """What a journal's round may be resumed under: the same, or it is voided."""
        return {
            "table": self.table_id,
            "rules": self.rules_spec,
            "shoe": self.shoe_protocol,
            "camera": self.has_camera,
            "version": dealer_assist.__version__,
        }


class Table:
    """A table put together: ``recording``, ``opened`` (what its journal held: the loop, and a
    round resumed or voided), ``loop``, ``runner`` and ``screen``. :meth:`start` and
    :meth:`stop` run and end it all."""

    def __init__(self, setup: TableSetup, recording: TableRecording, opened: Resumed,
                 runner: TableRunner, screen: ScreenServer):
        self.setup = setup
        self.recording = recording
        self.opened = opened
        self.loop = opened.loop
        self.runner = runner
        self.screen = screen

    def start(self) -> Table:
        """Start the runner and the screen; an OSError from the screen (its port) ends it all."""
        self.runner.start()
        try:
            self.screen.start()
        except OSError:
            self.runner.stop()
            self._close()
            raise
        return self

    def stop(self) -> None:
        self.screen.stop()
        self.runner.stop()
        self._close()

    def _close(self) -> None:
        self.opened.journal.close()
        self.recording.close()


def assemble(setup: TableSetup, make_sources: SourcesFactory,
             clock: Callable[[], float] = time.monotonic, *,
             staff: StaffDesk | None = None) -> Table:
    """Open ``setup``'s recording directory and journal (resuming or voiding a round left in
    play), then the sources, runner and screen (``staff`` checks the PINs of its sign-ins,
    voids and corrections); nothing is started. Raises RecordingError
    (StoreOpenError for the store) for the directory, and CodecError, JournalError or OSError
    for the journal, having closed what it opened."""
    recording = open_recording(setup.directory, setup.table_id, surveillance=setup.surveillance,
                               evidence=setup.evidence)
    store = recording.store
    watch = RecordingWatch(recording.recorder)

    def make_loop(rules_spec: object, round_prefix: str, round_number: int) -> TableLoop:
        return TableLoop(
            rules_spec, watch, table_id=setup.table_id, round_prefix=round_prefix,
            round_number=round_number, has_shoe=setup.shoe_protocol is not None,
            has_camera=setup.has_camera, notes=dict(setup.notes) or None,
            round_fields=setup.round_fields,
        )

    def recorded(round_id: str) -> bool:
        return any((recording.directory / sub / f"{round_id}.jsonl").exists()
                   for sub in ("rounds", "void"))

    factory: LoopFactory = make_loop
    prefix = setup.round_prefix or \
        f"{setup.table_id}-{time.strftime('%Y%m%d-%H%M%S', time.gmtime())}"
    config = setup.journal_config()
    try:
        opened = open_table(
            recording.directory, config, setup.rules_spec, factory, prefix,
            recorded=recorded,
            repair=None if store is None else store.write_round_if_missing,
            cannot_resend=setup.shoe_protocol == "ascii",
            now=clock(),
        )
    except BaseException:
        recording.close()
        raise
    offset = opened.clock_offset
    sources = make_sources(opened.shoe)
    runner = TableRunner(
        opened.loop, sources, clock=lambda: clock() + offset,
        journal=opened.journal, journal_config=config,
        recording_pending=lambda: watch.failing or (store is not None and not store.idle),
        shoe_position=opened.shoe,
    )
    if store is not None:
        def report(detail: str) -> None:
            runner.submit(RecordingFailed(detail))

        store.on_failure = report
        for camera in sources:
            if isinstance(camera, Snapshots):
                runner.subscribe(QuestionFrames(camera, store.keep_question_frame))
    screen = ScreenServer(runner, setup.host, setup.port, staff, access=setup.access,
                          name=setup.screen_name, tls=setup.tls)
    return Table(setup, recording, opened, runner, screen)
