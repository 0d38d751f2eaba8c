"""Table boxes' signed recordings, made by the real recorder and signer, and a room that holds
them in PostgreSQL: what the room's tests start from."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from dealer_assist.floor.config import DEFAULT_ROOM_KEY
from dealer_assist.floor.pgstore import PostgresStore
from dealer_assist.floor.room_signing import WHOSE, begin_room_signing
from dealer_assist.surveillance import Recorder
from dealer_assist.surveillance.signed_chain import Evidence, chain_id
from dealer_assist.surveillance.signing import Signer, add_public_key, load_signer
from dealer_assist.surveillance.store import Record, RecordingStore
from tests.postgres import server_url
from tests.surveillance.factory import StepClock, golden_logs, record_round


@dataclass(frozen=True)
class Box:
    """One table box's recording: its table, key, chain id and records."""

    table: str
    signer: Signer
    chain: str
    records: list[Record]
    directory: Path


def record_box(directory: Path, table: str, rounds: int, signer: Signer | None = None) -> Box:
    """``rounds`` golden rounds recorded and signed on ``table``'s box, as the live table does."""
    signer = signer or Signer.generate()
    with Recorder.open(directory, table, clock=StepClock(),
                       evidence=Evidence(signer)) as recorder:
        for number, lines in enumerate(golden_logs()[:rounds]):
            record_round(recorder, lines, alarm=("shoe", "E3 card not read")
                         if number % 3 == 1 else None)
    store = RecordingStore(directory)
    try:
        chain = chain_id(store)
        assert chain is not None
        return Box(table, signer, chain, list(store.records()), directory)
    finally:
        store.close()


def room_signer(folder: Path) -> Signer:
    """The room's signing key in ``folder`` (room.toml's default name), made there the first
    time with its public key file beside it, as 'room keygen' makes them."""
    path = folder / DEFAULT_ROOM_KEY
    if path.exists():
        return load_signer(path, WHOSE)
    signer = Signer.generate()
    signer.save(path)
    add_public_key(path.with_suffix(".pub"), signer.public)
    return signer


def room_toml(folder: Path, url: str, schema: str, boxes: list[Box]) -> Path:
    """A room.toml trusting each box's key (its public key file beside it), with the room's
    signing key in ``folder``."""
    room_signer(folder)
    lines = [f'[postgres]\nurl = "{url}"\nschema = "{schema}"\n',
             '[nats]\nurl = "nats://127.0.0.1:4222"\n', "[tables]"]
    for box in boxes:
        key = folder / f"{box.table}.pub"
        key.write_text(box.signer.public.text + "\n")
        lines.append(f'{box.table} = "{key.name}"')
    path = folder / "room.toml"
    path.write_text("\n".join(lines) + "\n")
    return path


def open_room(url: str, schema: str, folder: Path) -> PostgresStore:
    """The room's store, signing with the room's key in ``folder`` (as the room's commands)."""
    signer = room_signer(folder)
    store = PostgresStore(url, folder / "room-frames", schema=schema, create=True,
                          signer=signer)
    begin_room_signing(store, signer)
    return store


def take_in(room: PostgresStore, box: Box) -> None:
    """A box's records and its frame files in ``room``, as the room takes them from the floor."""
    room.ingest(box.table, box.chain, box.records)
    for record in box.records:
        if record.kind == "frame" and record.file:
            room.write_file(f"floor/{box.table}/{box.chain}/{record.file}",
                            (box.directory / record.file).read_bytes())


def held_seqs(folder: Path, schema: str, box: Box) -> list[int]:
    """The numbers of ``box``'s records the room (its store in ``folder``, on the test server)
    holds, in order."""
    room = open_room(server_url(), schema, folder)
    try:
        return [r.seq for r in room.chain_records(box.table, box.chain)]
    finally:
        room.close()
