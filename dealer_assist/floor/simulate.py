"""``dealer-assist floor simulate``: many simulated table boxes in one process, each through the
real table loop, journal, recorder and signed store, each forwarding to the floor with the real
forwarder (all forwarders share one thread and one event loop).

A simulated table is dealt from a seeded shoe (:class:`~dealer_assist.table.simulation.world.
SimulatedTable`); its shoe cards and the dealer's touches go straight into its runner, as the
shoe's reader and the screen would hand them over (no serial port, no camera, no screen server:
200 tables fit in one process). The dealer answers any question from what truly happened.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dealer_assist.floor.forwarder import (
    CURSOR_NAME,
    Cursor,
    FloorLink,
    Forwarder,
    ForwarderHost,
)
from dealer_assist.rules import RuleSet
from dealer_assist.surveillance.store import RecordingStore
from dealer_assist.table.assembly import Table, TableSetup, assemble
from dealer_assist.table.loop import TableLoop
from dealer_assist.table.recording import EvidenceFiles
from dealer_assist.table.simulation.demo import VOID_REASON, true_choice
from dealer_assist.table.simulation.world import DEFAULT_PLAYERS, SimulatedTable
from dealer_assist.table.sources import (
    AnswerQuestion,
    NewShoe,
    ShoeCard,
    ShoeLink,
    SignIn,
    TableInput,
    VoidRound,
)

logger = logging.getLogger(__name__)

SIM_DEALER = "SIM-D1"
SIM_SUPERVISOR = "SIM-S1"


@dataclass(frozen=True, slots=True)
class SimOptions:
    """``tables`` tables of ``rounds`` rounds each, one round every ``every_s`` seconds per
    table (0: as fast as they go), recorded under ``directory`` and forwarded over ``link``."""

    directory: Path
    link: FloorLink
    tables: int = 2
    rounds: int = 3
    seed: int = 1
    every_s: float = 0.0
    rules: str = "h17-ddd-6"
    prefix: str = "SIM"
    timeout_s: float = 10.0


class SimTable:
    """One simulated table box: its assembled table (not its screen) and its simulated world."""

    def __init__(self, name: str, directory: Path, options: SimOptions, seed: int,
                 host: ForwarderHost):
        self.name = name
        evidence = EvidenceFiles(directory / f"{name}.evidence" / "table.key",
                                 directory / f"{name}.evidence" / "anchors.jsonl")
        self.table: Table = assemble(TableSetup(
            directory / name, name, options.rules, shoe_protocol="dealer-assist",
            has_camera=False, port=0, evidence=evidence,
            floor=options.link, round_prefix=f"{name}-sim"), lambda _: [])
        self.public_key = evidence.public_key
        self.world = SimulatedTable(RuleSet.from_spec(options.rules), list(DEFAULT_PLAYERS),
                                    seed=seed)
        self.world.camera_sees = False
        self.timeout_s = options.timeout_s
        self.rounds = 0
        self.voided = 0
        self._dealt = 0
        self.table.runner.start()
        self.table.start_forwarding(host)
        self.submit(ShoeLink(True, "simulated shoe"))
        self.submit(SignIn(SIM_DEALER))

    @property
    def forwarder(self) -> Forwarder:
        assert self.table.forwarder is not None
        return self.table.forwarder

    @property
    def loop(self) -> TableLoop:
        return self.table.loop

    def submit(self, item: TableInput) -> None:
        self.table.runner.submit(item)

    def play_round(self, number: int) -> None:
        """Deal one round; one the table could not complete as dealt is voided."""
        before = self.loop.rounds_played
        for channel, item in self.world.round(number):
            if channel == "camera":
                continue  # no camera fitted
            if isinstance(item, ShoeCard):
                self._dealt += 1
                self.submit(item)
                self._until(self._all_recorded)
            elif isinstance(item, NewShoe):
                self.submit(item)
            else:  # a dealer's touch, after what the dealer has seen recorded
                self.submit(item)
        self._until(lambda loop: loop.rounds_played > before)
        if self.loop.rounds_played > before:
            self.rounds += 1
            return
        if self.loop.round_open:
            self.submit(VoidRound(VOID_REASON, SIM_SUPERVISOR))
            self.voided += 1
            self._until(lambda loop: not loop.round_open)

    def _all_recorded(self, loop: TableLoop) -> bool:
        return loop.cards_committed >= self._dealt

    def _until(self, condition: Callable[[TableLoop], bool]) -> bool:
        """Wait for ``condition``, answering the table's questions from what truly happened."""
        runner = self.table.runner
        deadline = time.monotonic() + self.timeout_s
        while (left := deadline - time.monotonic()) > 0:
            if not runner.wait_until(lambda loop: condition(loop) or loop.question is not None,
                                     left):
                return False
            question = self.loop.question
            if question is None:
                return True
            choice = true_choice(question, self.world.placed)
            if choice is None:
                return runner.wait_until(condition, max(0.0, deadline - time.monotonic()))
            self.submit(AnswerQuestion(question.id, choice))
            runner.wait_until(_answered(question.id), max(0.0, deadline - time.monotonic()))
        return False

    def recorded(self) -> int:
        """Records in the table's store."""
        store = RecordingStore(self.table.recording.directory)
        try:
            return store.last_seq()
        finally:
            store.close()

    def behind(self) -> int:
        """Records the broker has not acknowledged (as the forwarder's cursor says)."""
        _, acked = Cursor(self.table.recording.directory / CURSOR_NAME).load()
        return max(0, self.recorded() - acked)

    def stop(self) -> None:
        self.table.runner.stop()
        self.table.recording.close()
        self.table.opened.journal.close()


def _answered(question: int) -> Callable[[TableLoop], bool]:
    def answered(loop: TableLoop) -> bool:
        return loop.question is None or loop.question.id != question

    return answered


def run_floor(options: SimOptions, *, until_forwarded_s: float = 120.0,
              progress: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Run the simulated floor to its end; the JSON summary (tables, rounds, records)."""
    options.directory.mkdir(parents=True, exist_ok=True)
    host = ForwarderHost().start()
    tables: list[SimTable] = []
    started = time.monotonic()
    try:
        for number in range(1, options.tables + 1):
            tables.append(SimTable(f"{options.prefix}{number:03d}", options.directory, options,
                                   options.seed * 10007 + number, host))
        failures: list[str] = []

        def deal(table: SimTable, offset: float) -> None:
            try:
                time.sleep(offset)
                for number in range(1, options.rounds + 1):
                    begun = time.monotonic()
                    table.play_round(number)
                    if options.every_s:
                        time.sleep(max(0.0, options.every_s - (time.monotonic() - begun)))
            except Exception as error:  # told in the summary, the other tables go on
                logger.exception("simulated table %s failed", table.name)
                failures.append(f"{table.name}: {error}")

        threads = [threading.Thread(target=deal, name=f"sim-{t.name}", daemon=True,
                                    args=(t, options.every_s * i / max(1, len(tables))))
                   for i, t in enumerate(tables)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        dealt_s = time.monotonic() - started
        for table in tables:
            table.table.runner.stop()  # what the tables recorded is all in their stores now
        if progress:
            progress(f"dealt in {dealt_s:.1f} s; waiting for the forwarders")
        # only set up (--rounds 0): the room, and its stream, may not be there yet
        deadline = time.monotonic() + (until_forwarded_s if options.rounds else 0.0)
        while time.monotonic() < deadline and any(t.behind() for t in tables):
            time.sleep(0.2)
        host.stop()
        return {
            "tables": len(tables),
            "rounds": sum(t.rounds for t in tables),
            "voided": sum(t.voided for t in tables),
            "records": sum(t.recorded() for t in tables),
            "records_behind": sum(t.behind() for t in tables),
            "dealt_s": round(dealt_s, 1),
            "seconds": round(time.monotonic() - started, 1),
            "failures": failures,
        }
    finally:
        host.stop()
        for table in tables:
            table.stop()
