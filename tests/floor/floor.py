"""A floor in a test: tables recording signed rounds (the real recorder and store), their
forwarders, and a room consuming into a real store, over a real ``nats-server -js``."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from dealer_assist.floor.config import DEFAULT_ROOM_KEY, NatsConfig, TableKeys
from dealer_assist.floor.forwarder import FloorLink, Forwarder, ForwarderHost
from dealer_assist.floor.room import Room, RoomThread
from dealer_assist.floor.room_signing import begin_room_signing
from dealer_assist.surveillance.interface import ChainState, RecordStore
from dealer_assist.surveillance.recorder import Recorder
from dealer_assist.surveillance.signed_chain import Evidence, chain_id
from dealer_assist.surveillance.signing import Signer, add_public_key
from dealer_assist.surveillance.store import Record, RecordingError, RecordingStore
from tests.surveillance.factory import golden_logs, record_round

LOGS = golden_logs()


class BoxTable:
    """A table box's recording: rounds recorded on demand, signed with the table's own key."""

    def __init__(self, root: Path, name: str):
        self.name = name
        self.directory = root / name
        self.signer = Signer.generate()
        self.rounds = 0
        with self.recorder():
            pass

    def recorder(self) -> Recorder:
        return Recorder.open(self.directory, self.name, evidence=Evidence(self.signer))

    def play(self, rounds: int) -> None:
        with self.recorder() as recorder:
            for _ in range(rounds):
                record_round(recorder, LOGS[self.rounds % len(LOGS)])
                self.rounds += 1

    def records(self) -> list[Record]:
        store = RecordingStore(self.directory)
        try:
            return list(store.records())
        finally:
            store.close()

    @property
    def chain(self) -> str:
        store = RecordingStore(self.directory)
        try:
            found = chain_id(store)
        finally:
            store.close()
        assert found is not None
        return found

    def keys(self) -> TableKeys:
        return TableKeys(self.name, self.directory / "unused.pub", (self.signer.public,))


def forward(tables: list[BoxTable], url: str) -> tuple[ForwarderHost, list[Forwarder]]:
    host = ForwarderHost().start()
    return host, [host.add(Forwarder(t.directory, t.name, FloorLink(url), poll_s=0.05,
                                     signer=t.signer)) for t in tables]


class RoomBackend:
    """Where the room keeps its store: SQLite under ``directory``, or a PostgreSQL schema (its
    frame files under ``directory``)."""

    def __init__(self, directory: Path, postgres: tuple[str, str] | None = None):
        self.directory = directory
        self.postgres = postgres  # (url, schema)
        self.signer = Signer.generate()  # the room's key: it signs the room's own chain

    def open(self, create: bool = False) -> RecordStore:
        """The store, signing the room's chain with the room's key (as 'room serve' does)."""
        store: RecordStore
        if self.postgres is None:
            store = RecordingStore(self.directory, create=create, signer=self.signer)
        else:
            from dealer_assist.floor.pgstore import PostgresStore

            url, schema = self.postgres
            store = PostgresStore(url, self.directory, schema=schema, create=create,
                                  signer=self.signer)
        if create:
            begin_room_signing(store, self.signer)
        return store

    def save_key(self, folder: Path) -> None:
        """The room's key where a room.toml in ``folder`` looks for it by default (its public
        key file beside it), for the room's commands."""
        path = folder / DEFAULT_ROOM_KEY
        self.signer.save(path)
        add_public_key(path.with_suffix(".pub"), self.signer.public)


def open_room(backend: RoomBackend, url: str, tables: list[BoxTable], **options: object
              ) -> RoomThread:
    room = Room(lambda: backend.open(create=True), NatsConfig(url),
                {t.name: t.keys() for t in tables}, **options)  # type: ignore[arg-type]
    return RoomThread(room).start()


def held(backend: RoomBackend, table: BoxTable) -> list[Record]:
    """The records of ``table``'s chain the room holds, in order."""
    store = backend.open()
    try:
        return list(store.chain_records(table.name, table.chain))
    finally:
        store.close()


def chains(backend: RoomBackend) -> list[ChainState]:
    store = backend.open()
    try:
        return store.chains()
    finally:
        store.close()


def room_alarms(backend: RoomBackend) -> list[dict[str, object]]:
    """The floor alarms the room has recorded (none while it is still creating its store)."""
    try:
        store = backend.open()
    except RecordingError:
        return []
    try:
        return [r.body for r in store.records(kinds=("floor-alarm",))]
    finally:
        store.close()


def wait_for(condition: Callable[[], bool], timeout: float = 60.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.1)
    return condition()


def all_arrived(backend: RoomBackend, tables: list[BoxTable]) -> Callable[[], bool]:
    """Every record of ``tables`` is held, and each key frame that travels is in the room (it
    is written just after its record is held)."""
    def check() -> bool:
        try:
            if not all(len(held(backend, t)) == len(t.records()) for t in tables):
                return False
        except RecordingError:  # the room is still creating its store
            return False
        return all((backend.directory / "floor" / t.name / t.chain / str(r.file)).is_file()
                   for t in tables for r in t.records()
                   if r.kind == "frame" and '"key":true' in r.body_text
                   and (t.directory / str(r.file)).is_file())

    return check

