"""Run as a subprocess by test_crash: records rounds forever, printing each durable head.

Usage: python -m tests.surveillance.crash_writer RECORDING [PAUSE_AFTER]. Every line printed is
``SEQ HASH`` of a record whose append has returned (so must survive a SIGKILL). With PAUSE_AFTER,
the writer stops mid-round after that many heads and waits to be killed; without it, it keeps
writing, so a kill lands at any moment, possibly inside an append.
"""

from __future__ import annotations

import sys
import time
from itertools import cycle

from dealer_assist.roundlog import CardDealt, RoundStart, read_events
from dealer_assist.roundlog.fold import RoundFold
from dealer_assist.surveillance import Recorder
from tests.surveillance.factory import frame_jpeg, golden_logs


def main(directory: str, pause_after: int | None) -> None:
    recorder = Recorder.open(directory, "T2")
    printed = 0

    def durable() -> None:
        nonlocal printed
        seq, digest = recorder.store.head()
        print(seq, digest, flush=True)
        printed += 1
        if pause_after is not None and printed >= pause_after and recorder.round_key is not None:
            time.sleep(3600)

    logs = golden_logs(["split-resplit-order-and-bonus", "insurance-wins-on-dealer-blackjack"])
    for lines in cycle(logs):
        logged = list(read_events(lines))
        start = logged[0].event
        assert isinstance(start, RoundStart)
        fold = RoundFold(start)
        recorder.begin_round(start)
        durable()
        for slot, item in enumerate(logged[1:]):
            index = recorder.event(item.event)
            fold.apply(item.event)
            durable()
            if isinstance(item.event, CardDealt) and item.event.card is not None:
                jpeg, detections = frame_jpeg(item.event.card.code, slot)
                recorder.frame(jpeg, detections, index)
                durable()
        assert fold.settlement is not None
        recorder.end_round(fold.settlement)
        durable()


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else None)
