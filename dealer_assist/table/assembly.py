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
from dealer_assist.floor.forwarder import FloorLink, Forwarder, ForwarderHost, ScreenReport
from dealer_assist.surveillance.signing import load_signer
from dealer_assist.table.chips import ChipSet
from dealer_assist.table.journal import LoopFactory, RecordingWatch, Resumed, open_table
from dealer_assist.table.loop import TableLoop
from dealer_assist.table.pairing import (
    CAMERA_WAIT_S,
    MAX_CAMERA_LAG_S,
    SHOE_SILENT_WAIT_S,
    SHOE_WAIT_S,
)
from dealer_assist.table.question_frames import QuestionFrames, Snapshots
from dealer_assist.table.recording import EvidenceFiles, TableRecording, open_recording
from dealer_assist.table.round_evidence import RoundEvidence
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
    None: no shoe), the screen's address, the name browsers open it at, its TLS files and who
    may drive it (default: credentials of this process only), notes the screen shows about
    devices, the prefix of its round ids, and the recording store's key and anchor log."""

    directory: Path
    table_id: str
    rules_spec: Any
    shoe_protocol: str | None
    has_camera: bool
    #: the camera's reading may be the card while the shoe is down (False: its deck is accepted
    #: only for checking cards against the shoe's)
    camera_names: bool = True
    host: str = "127.0.0.1"
    port: int = 8021
    screen_name: str | None = None
    tls: TlsFiles | None = None
    access: ScreenAccess = field(default_factory=ScreenAccess.ephemeral)
    notes: dict[str, str] = field(default_factory=dict)
    round_prefix: str = ""
    evidence: EvidenceFiles | None = None  # the store's key and anchor log (None: unsigned)
    camera_wait_s: float = CAMERA_WAIT_S  # see dealer_assist.table.pairing
    max_camera_lag_s: float = MAX_CAMERA_LAG_S
    chips: ChipSet = field(default_factory=ChipSet.default)  # each payout shown as these
    floor: FloorLink | None = None  # forward the store to the floor's room (None: alone)
    #: carried on every round's ``round`` line: what reads the cards (``"models"``)
    round_fields: dict[str, Any] = field(default_factory=dict)

    def journal_config(self) -> dict[str, Any]:
        """What a journal's round may be resumed under: the same, or it is voided."""
        return {
            "table": self.table_id,
            "rules": self.rules_spec,
            "shoe": self.shoe_protocol,
            "camera": self.has_camera,
            "camera_wait_s": self.camera_wait_s,
            "shoe_wait_s": SHOE_WAIT_S,
            "shoe_silent_wait_s": SHOE_SILENT_WAIT_S,
            "max_camera_lag_s": self.max_camera_lag_s,
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
        #: forwards the recording to the floor's room (None: no [floor], or not started)
        self.forwarder: Forwarder | None = None
        self._floor_host: ForwarderHost | None = None

    def start(self, screen: bool = True) -> Table:
        """Start the runner, the floor's forwarder and (``screen``) the screen; an OSError
        from the screen (its port) ends it all."""
        self.runner.start()
        self.start_forwarding()
        try:
            if screen:
                self.screen.start()
        except OSError:
            self.stop(screen=False)
            raise
        return self

    def start_forwarding(self, host: ForwarderHost | None = None) -> None:
        """Forward the recording to the floor (with ``setup.floor``), in ``host`` or in a
        thread of its own; its lag goes to the dealer's screen; the room's legal holds are
        marked in the recording with the table's key."""
        if self.setup.floor is None:
            return
        if host is None:
            host = self._floor_host = ForwarderHost(f"floor-{self.setup.table_id}").start()
        signer = None if self.setup.evidence is None else load_signer(self.setup.evidence.key)
        self.forwarder = host.add(Forwarder(
            self.recording.directory, self.setup.table_id, self.setup.floor,
            on_status=ScreenReport(self.runner.submit), signer=signer))

    def stop(self, screen: bool = True) -> None:
        if screen:
            self.screen.stop()
        if self._floor_host is not None:
            self._floor_host.stop()
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
    recording = open_recording(setup.directory, setup.table_id, evidence=setup.evidence)
    store = recording.store
    watch = RecordingWatch(recording.recorder)

    def make_loop(rules_spec: object, round_prefix: str, round_number: int) -> TableLoop:
        return TableLoop(
            rules_spec, watch, table_id=setup.table_id, round_prefix=round_prefix,
            round_number=round_number, has_shoe=setup.shoe_protocol is not None,
            shoe_heartbeats=setup.shoe_protocol == "dealer-assist",
            has_camera=setup.has_camera, camera_names=setup.camera_names,
            notes=dict(setup.notes) or None,
            camera_wait_s=setup.camera_wait_s, max_camera_lag_s=setup.max_camera_lag_s,
            round_fields=setup.round_fields,
        )

    factory: LoopFactory = make_loop
    prefix = setup.round_prefix or \
        f"{setup.table_id}-{time.strftime('%Y%m%d-%H%M%S', time.gmtime())}"
    config = setup.journal_config()
    try:
        opened = open_table(
            recording.directory, config, setup.rules_spec, factory, prefix,
            recording=recording,
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
        recording_pending=lambda: watch.failing or recording.pending,
        recorded_up_to=lambda: recording.recorded_up_to(0.0),
        shoe_position=opened.shoe, resumed_round=opened.resumed,
    )
    def report(detail: str) -> None:
        runner.submit(RecordingFailed(detail))

    store.on_failure = report
    cameras = [camera for camera in sources if isinstance(camera, Snapshots)]
    for camera in cameras:
        runner.subscribe(QuestionFrames(camera, store.keep_question_frame))
    runner.subscribe(RoundEvidence(cameras[0] if cameras else None, store.keep_card_frame,
                                   store.keep_screen))
    screen = ScreenServer(runner, setup.host, setup.port, staff, access=setup.access,
                          name=setup.screen_name, tls=setup.tls, chips=setup.chips)
    return Table(setup, recording, opened, runner, screen)
