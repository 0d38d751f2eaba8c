"""What checking a round as the surveillance page shows it costs, and a PDF export.

Run: python bench/round_view.py [--repeat N]
Records every golden round log (tests/data/rounds) with a key and a video frame per card, signed
with a table key, then times, per round: the page's round view (events in words, every record's
hash, links and signature, every frame file's SHA-256, the settlement re-settled and compared line
by line) and the PDF incident report with its frames. Prints p50/p99 over all rounds x N.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.machine import cpu_model  # noqa: E402
from dealer_assist.surveillance import Recorder, RecordingStore  # noqa: E402
from dealer_assist.surveillance.query import frame_file, round_view  # noqa: E402
from dealer_assist.surveillance.report_pdf import incident_report_pdf  # noqa: E402
from dealer_assist.surveillance.signed_chain import Evidence  # noqa: E402
from dealer_assist.surveillance.signing import Signer  # noqa: E402
from tests.surveillance.factory import golden_logs, record_round  # noqa: E402


def _ms(samples: list[float]) -> str:
    ordered = sorted(samples)
    p99 = ordered[min(len(ordered) - 1, round(0.99 * (len(ordered) - 1)))]
    return f"p50 {statistics.median(ordered) * 1000:.1f} ms, p99 {p99 * 1000:.1f} ms"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    print(f"CPU: {cpu_model()}, {os.cpu_count()} cores")
    with tempfile.TemporaryDirectory() as folder:
        directory = Path(folder) / "recording"
        logs = golden_logs()
        with Recorder.open(directory, "T1", evidence=Evidence(Signer.generate())) as recorder:
            keys = [record_round(recorder, lines, video_frames=True) for lines in logs]
        store = RecordingStore(directory)
        views, pdfs, records, frames = [], [], 0, 0
        try:
            for _ in range(args.repeat):
                for key in keys:
                    started = time.perf_counter()
                    view = round_view(store, key)
                    views.append(time.perf_counter() - started)
                    assert view["integrity"]["intact"], view["integrity"]["problems"]
                    records += view["integrity"]["records_checked"]
                    frames += len(view["frames"])
                    started = time.perf_counter()
                    images = {f["seq"]: frame_file(store, f["seq"]) for f in view["frames"]}
                    incident_report_pdf(view, images, exported_by="bench", exported_at="now",
                                        chain_head=store.head())
                    pdfs.append(time.perf_counter() - started)
        finally:
            store.close()
    count = len(views)
    print(f"{len(keys)} rounds x {args.repeat}: {records // count} records and"
          f" {frames // count} frames a round on average (480x270 JPEG)")
    print(f"round view, checked as shown: {_ms(views)}")
    print(f"PDF incident report with its frames: {_ms(pdfs)}")


if __name__ == "__main__":
    main()
