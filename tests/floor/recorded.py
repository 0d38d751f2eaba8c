"""Table boxes' signed recordings, made by the real recorder and signer, and a room that holds
them in PostgreSQL: what the room's tests start from."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from dealer_assist.floor.pgstore import PostgresStore
from dealer_assist.surveillance import Recorder
from dealer_assist.surveillance.signed_chain import Evidence, chain_id
from dealer_assist.surveillance.signing import Signer
from dealer_assist.surveillance.store import Record, RecordingStore
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


def room_toml(folder: Path, url: str, schema: str, boxes: list[Box]) -> Path:
    """A room.toml trusting each box's key (its public key file beside it)."""
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
    return PostgresStore(url, folder / "room-frames", schema=schema, create=True)
