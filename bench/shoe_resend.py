"""How long after a shoe's link comes back its resend is known to have ended, and how many
cards dealt in that time the reader marks resent (the table then lines them up with what its
camera recorded while the link was down, not as live cards).

    PYTHONPATH=. python bench/shoe_resend.py [--rates 1 3] [--after 8]

A simulated shoe on a pseudo-terminal deals a card, is unplugged for 2 s while three more are
drawn, is plugged back in, and goes on dealing at each rate; the reader acknowledges each event
as it comes, or, as a table with a journal does, after a 5 ms write. Prints, per run, when the
link came up and when the reader said it had caught up (seconds after the plug went back in),
and how many of the cards dealt after it came up were marked resent.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from machine import cpu_model  # noqa: E402

from dealer_assist.shoe.events import CardDrawn, CaughtUp, LinkUp, SequencedEvent  # noqa: E402
from dealer_assist.shoe.reader import ShoeReader  # noqa: E402
from dealer_assist.shoe.simulator import PtyLink, ShoeSimulator, shuffled_spanish_shoe  # noqa: E402

WRITE_S = 0.005  # a journal's write before the table acknowledges an event


def run(rate: float, deferred: bool, after: int) -> tuple[float, float, int]:
    """(link up, caught up) in seconds after the plug went back in, and the cards dealt after
    the link came up that were marked resent."""
    shoe = shuffled_spanish_shoe(6, seed=1)
    with tempfile.TemporaryDirectory() as folder, \
            ShoeSimulator(PtyLink(str(Path(folder) / "shoe"))) as sim:
        sim.load_shoe(6)
        reader = ShoeReader(sim.url, defer_ack=deferred)
        log: list[tuple[float, object]] = []
        stop = threading.Event()

        def consume() -> None:
            while not stop.is_set():
                event = reader.get(timeout=0.2)
                if event is None:
                    continue
                log.append((time.monotonic(), event))
                if deferred and isinstance(event, SequencedEvent):
                    time.sleep(WRITE_S)
                    reader.acknowledge(event.session, event.seq)

        reader.start()
        consumer = threading.Thread(target=consume, daemon=True)
        consumer.start()
        sim.draw(shoe[0])
        time.sleep(1.0)
        sim.cut_link()
        time.sleep(2.0)
        for card in shoe[1:4]:
            sim.draw(card)
        sim.restore_link()
        plugged = time.monotonic()
        dealt_at = {}
        for card in shoe[4:4 + after]:
            time.sleep(1.0 / rate)
            sim.draw(card)
            dealt_at[card] = time.monotonic()
        time.sleep(1.5)
        stop.set()
        reader.stop()
        consumer.join(2)
    up = next(t for t, e in log if isinstance(e, LinkUp) and t > plugged)
    caught = next(t for t, e in log if isinstance(e, CaughtUp))
    marked = sum(1 for _, e in log if isinstance(e, CardDrawn) and e.card in dealt_at
                 and e.resent and dealt_at[e.card] > up)
    return up - plugged, caught - plugged, marked


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rates", type=float, nargs="+", default=[1.0, 3.0],
                        help="cards dealt a second after the link comes back")
    parser.add_argument("--after", type=int, default=8, help="cards dealt after it comes back")
    args = parser.parse_args()
    print(f"CPU: {cpu_model()}, {os.cpu_count()} cores")
    print("cards/s  acknowledged       link up  caught up  up to caught up  live cards marked")
    for rate in args.rates:
        for deferred in (False, True):
            up, caught, marked = run(rate, deferred, args.after)
            how = "after a write" if deferred else "on arrival"
            print(f"{rate:7.1f}  {how:<17} {up:6.2f} s  {caught:7.2f} s  {caught - up:13.2f} s"
                  f"  {marked:17d}")


if __name__ == "__main__":
    main()
