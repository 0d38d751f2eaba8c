"""What signing costs: record append latency signed and unsigned, and verify throughput over a
day's recording.

Run: python bench/evidence.py [--appends N] [--rounds N]
1. Appends ``N`` event-sized records to two stores in the same folder, alternating, one signing
   every record with Ed25519 and one not (each append its own fsync'd transaction, as at the
   table), and prints p50/p99 latency of each, and of the signature alone.
2. Records a day (default 60 rounds/hour for 16 hours = 960 random legal rounds, their events
   and settlements, no frames) through the real recorder with the table's key and an anchor log
   (fsync off while building, to build it quickly), then times ``replay --verify`` with the key
   and the anchor log, and the chain walk alone: hashes only, with the signatures as replay
   checks them (each record's key; the last signature under each key verified, vouching for
   the records before it through the chain), and verifying every signature.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.machine import cpu_model  # noqa: E402
from dealer_assist.roundlog import RoundFold, RoundStart  # noqa: E402
from dealer_assist.surveillance import Recorder, RecordingStore  # noqa: E402
from dealer_assist.surveillance.anchors import AnchorLog  # noqa: E402
from dealer_assist.surveillance.evidence_check import SignatureWalk, TrustedKeys  # noqa: E402
from dealer_assist.surveillance.replay import replay, verify_chain  # noqa: E402
from dealer_assist.surveillance.signed_chain import Evidence  # noqa: E402
from dealer_assist.surveillance.signing import Signer  # noqa: E402
from tests.rules.random_rounds import random_round  # noqa: E402

EVENT = {"type": "card", "card": "QH", "to": {"seat": 3, "hand": 0},
         "shoe": {"session": 1100213168, "seq": 22, "index": 21}}


def percentiles(samples: list[float]) -> str:
    cuts = statistics.quantiles(samples, n=100)
    return f"p50 {cuts[49] * 1000:.3f} ms, p99 {cuts[98] * 1000:.3f} ms"


def append_latency(folder: Path, count: int) -> None:
    signer = Signer.generate()
    plain = RecordingStore(folder / "unsigned", create=True)
    signed = RecordingStore(folder / "signed", create=True, signer=signer)
    times: dict[str, list[float]] = {"unsigned": [], "signed": []}
    for _ in range(count):
        for name, store in (("unsigned", plain), ("signed", signed)):
            start = time.perf_counter()
            store.append("event", EVENT, table="B1", round_key=1, round_id="b-1")
            times[name].append(time.perf_counter() - start)
    plain.close()
    signed.close()
    alone = []
    for number in range(count):
        start = time.perf_counter()
        signer.sign(f"{number:064x}")
        alone.append(time.perf_counter() - start)
    print(f"append, {count} each, fsync'd: unsigned {percentiles(times['unsigned'])}; "
          f"signed {percentiles(times['signed'])}")
    print(f"  the Ed25519 signature alone: {percentiles(alone)}")


def record_day(directory: Path, evidence: Evidence, rounds: int) -> int:
    rng = random.Random(8)
    with Recorder.open(directory, "B1", evidence=evidence) as recorder:
        recorder.store.conn.execute("PRAGMA synchronous=OFF")  # type: ignore[attr-defined]
        for _ in range(rounds):
            events = random_round(rng, "h17-ddd-6")
            head = events[0]
            assert isinstance(head, RoundStart)
            fold = RoundFold(head)
            recorder.begin_round(head)
            for event in events[1:]:
                recorder.event(event)
                fold.apply(event)
            assert fold.settlement is not None
            recorder.end_round(fold.settlement)
        return recorder.store.head()[0]


def verify_rate(folder: Path, rounds: int) -> None:
    signer = Signer.generate()
    log = AnchorLog(folder / "anchors.jsonl")
    directory = folder / "day"
    start = time.perf_counter()
    records = record_day(directory, Evidence(signer, log), rounds)
    print(f"a day: {rounds} rounds = {records} records, recorded in "
          f"{time.perf_counter() - start:.1f} s (fsync off)")
    trusted = TrustedKeys((signer.public,), "the bench's key")
    store = RecordingStore(directory)
    try:
        start = time.perf_counter()
        report = replay(store, verify=True, trusted=trusted, anchor_log=log)
        whole = time.perf_counter() - start
        assert not report.discrepancies, report.discrepancies[:3]
        start = time.perf_counter()
        verify_chain(store)
        chain = time.perf_counter() - start
        start = time.perf_counter()
        verify_chain(store, (SignatureWalk(trusted),))
        signed = time.perf_counter() - start
        start = time.perf_counter()
        verify_chain(store, (SignatureWalk(trusted, every=True),))
        every = time.perf_counter() - start
    finally:
        store.close()
    print(f"replay --verify --key --anchor-log (re-settles every round too): {whole:.2f} s = "
          f"{records / whole:.0f} records/s")
    print(f"chain walk alone: hashes {chain:.2f} s = {records / chain:.0f} records/s; with the"
          f" signatures (the last under each key verified, as replay does while they hold) "
          f"{signed:.2f} s = {records / signed:.0f} records/s; verifying every signature (as "
          f"replay does once one fails) {every:.2f} s = {records / every:.0f} records/s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--appends", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=60 * 16)
    args = parser.parse_args()
    print(f"CPU: {cpu_model()}, {os.cpu_count()} cores")
    with tempfile.TemporaryDirectory() as scratch:
        append_latency(Path(scratch), args.appends)
        verify_rate(Path(scratch), args.rounds)


if __name__ == "__main__":
    main()
